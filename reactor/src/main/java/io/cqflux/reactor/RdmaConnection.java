package io.cqflux.reactor;

import io.cqflux.core.CompletionRecord;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.FlushType;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import io.cqflux.reactor.internal.connection.Lifecycle;
import io.cqflux.reactor.internal.op.LoopSafeMono;
import io.cqflux.reactor.internal.op.OpKind;
import io.cqflux.reactor.internal.op.OpMono;
import io.cqflux.reactor.internal.op.ReceiveFlux;
import io.cqflux.reactor.internal.op.StagedMono;
import io.cqflux.reactor.internal.op.WriteAllFlux;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * An established RDMA connection: one cold {@link Mono} per operation, a {@link Flux} of received
 * messages, the connection's events and a hot {@link Flux} of its completions.
 *
 * <p><b>Operations are cold.</b> Nothing is posted before subscription; each subscription posts
 * again. Arguments are checked at subscription, before posting: a bad offset, length, access or
 * flush type is signalled as the Mono's {@link IllegalArgumentException} naming the value and the
 * bound. An operation takes a send-queue credit; without one it waits in a bounded queue
 * ({@link Cqflux.Builder#pendingLimit}); when that is full the operation fails with
 * {@link io.cqflux.core.QueueFullException}. No thread ever blocks.
 *
 * <p><b>Signals and threads.</b> Operations complete on the connection's event-loop thread, a
 * {@link reactor.core.scheduler.NonBlocking} thread: {@code block()} there fails fast. Move heavy
 * work off it with {@code publishOn(Schedulers.boundedElastic())}. A failed completion fails its
 * own Mono with {@link io.cqflux.core.OperationFailedException} (and ends the connection: an error
 * completion puts the queue pair in the error state). Every end of the connection fails every
 * pending and queued operation with {@link io.cqflux.core.ConnectionException}: {@code CLOSED} for
 * an orderly close by either side, {@code LOST} otherwise (a peer that ended without its orderly
 * close, an error completion, an operation without a completion for
 * {@link Cqflux.Builder#operationTimeout(java.time.Duration)}). An operation subscribed after a
 * close by this side (once {@link #dispose()} returned, or the {@link Cqflux} began its shutdown)
 * fails with {@link io.cqflux.core.ResourceClosedException}; so does one that an earlier
 * subscription starts in the moment between the close call and its run on the loop (a staged
 * form that gets its buffer, the next write of a {@link #writeAll} stream). Timeouts are
 * Reactor's: {@code .timeout(...)} (virtual time works).
 *
 * <p><b>Cancellation</b> detaches the subscriber only: the NIC may still use the buffers, so the
 * operation keeps its credit and its regions until its completion arrives; a late failure of its
 * own is dropped ({@code Operators.onErrorDropped}), the connection's end is not (the connection
 * reports it once: {@link #events()}, and a WARN line when it is lost). The forms on
 * {@code byte[]} and {@code ByteBuffer} stage the data through the instance's {@link BufferPool}, whose buffer is likewise released only
 * then; for regions of your own, {@link Region#inFlight()} tells when a range may be reused.
 *
 * <p><b>Lifetime and thread safety.</b> Thread-safe. {@link #dispose()} (or {@link #close()}, the
 * same for try-with-resources) is idempotent, does not block, and frees the native connection on
 * its loop; {@link #onDispose()} tells when that is done and {@link #disposeNow(Duration)} waits for
 * it. The connection also ends on its own when the peer closes it or it is lost, and when its
 * {@link Cqflux} is disposed.
 */
public final class RdmaConnection implements Disposable, AutoCloseable {
    private final ConnectionCore core;

    RdmaConnection(ConnectionCore core) {
        this.core = core;
    }

    /** {@return transport, local and peer address} */
    public String description() {
        return core.description;
    }

    /** {@return the regions the peer exposed, in its order (empty on the server side of a plain client)} */
    public List<PeerRegion> remoteRegions() {
        return core.admission.peerRegions();
    }

    /**
     * {@return the peer's region at {@code index}}
     *
     * @param index position in {@link #remoteRegions()}
     * @throws IllegalArgumentException when there is no such region
     */
    public PeerRegion remoteRegion(int index) {
        List<PeerRegion> r = core.admission.peerRegions();
        if (index < 0 || index >= r.size()) {
            throw new IllegalArgumentException("remote region index " + index + " is outside [0, " + r.size()
                    + ") on " + description());
        }
        return r.get(index);
    }

    /**
     * {@return the private data the peer sent, exactly as the transport delivered it (a copy): on
     * the client the server's accept data, on the server the client's request data. RDMA CM pads
     * it with zeros (to 56 bytes in a connect, 196 in an accept, on rpma), and nothing is
     * removed: for a connection opened with raw private data
     * ({@link ConnectOptions#rawPrivateData(byte[])}, {@link AcceptOptions#rawPrivateData}) it is
     * the foreign peer's format, e.g. {@link RpmaCommonData#decode(byte[])}; for a cqflux peer, its
     * hello}
     */
    public byte[] peerPrivateData() {
        return core.intake.peerPrivateData();
    }

    /**
     * Makes a peer region from the transport's own descriptor of it, as a peer not written with
     * cqflux gives it out (librpma: the bytes of its {@code rpma_mr_get_descriptor(3)}, e.g.
     * {@link RpmaCommonData#mrDescriptor()}; fabric: key, base address and length,
     * {@link Region#rawDescriptor()} of a cqflux peer), with the access you state. The region
     * belongs to this connection: every operation takes it (durable writes included, with the
     * flush types the descriptor names), and it is freed when the connection closes. Its
     * {@link PeerRegion#index()} is -1: it is not in {@link #remoteRegions()}.
     *
     * <p>On rpma the descriptor carries the peer's usage bits (its last byte), and {@code access}
     * is checked against them: an access the peer did not grant is refused here, naming both,
     * rather than failing at the NIC after posting; a narrower {@code access} limits what this
     * side may do. {@link #remoteRegion(byte[])} takes the access from the descriptor. On fabric
     * the raw descriptor carries no access, and {@code access} is taken as stated.
     *
     * @param rawDescriptor the descriptor bytes, exactly
     * @param access what the peer granted, at least one: operations outside it are refused before
     *     posting
     * @return the peer region
     * @throws IllegalArgumentException when the descriptor is malformed (its size and the expected
     *     one named), {@code access} is empty, or (rpma) {@code access} claims a right the
     *     descriptor's usage does not carry (both named)
     * @throws io.cqflux.core.ResourceClosedException when this side closed the connection
     * @throws io.cqflux.core.ConnectionException when it ended otherwise (the peer closed it, it
     *     was lost), with the end's event
     */
    public PeerRegion remoteRegion(byte[] rawDescriptor, io.cqflux.core.RegionAccess... access) {
        Objects.requireNonNull(rawDescriptor, "rawDescriptor");
        return core.admission.foreignRegion(rawDescriptor.clone(), io.cqflux.core.internal.Checks.accesses(
                "access (what the peer granted)", access));
    }

    /**
     * Makes a peer region from librpma's own descriptor of it, with the access the descriptor
     * names: {@code rpma_mr_get_descriptor(3)} writes the usage the peer registered the region
     * with as its last byte, so nothing needs restating (see
     * {@link #remoteRegion(byte[], io.cqflux.core.RegionAccess...)} for the rest).
     *
     * @param rawDescriptor the descriptor bytes, exactly, e.g. {@link RpmaCommonData#mrDescriptor()}
     * @return the peer region, whose {@link PeerRegion#access()} is the descriptor's usage
     * @throws IllegalArgumentException when the descriptor is malformed or grants nothing, or the
     *     transport's raw descriptor carries no access (fabric: state it with the other overload)
     * @throws io.cqflux.core.ResourceClosedException when this side closed the connection
     * @throws io.cqflux.core.ConnectionException when it ended otherwise
     */
    public PeerRegion remoteRegion(byte[] rawDescriptor) {
        Objects.requireNonNull(rawDescriptor, "rawDescriptor");
        return core.admission.foreignRegion(rawDescriptor.clone(), java.util.Set.of());
    }

    /**
     * Applies a peer configuration descriptor to this connection, as a librpma peer gives it out
     * ({@code rpma_peer_cfg_get_descriptor(3)}, e.g. {@link RpmaCommonData#peerConfigDescriptor()}):
     * on rpma {@code rpma_peer_cfg_from_descriptor(3)} and
     * {@code rpma_conn_apply_remote_peer_cfg(3)}, which {@link FlushType#PERSISTENT} flushes to a
     * peer with direct write to persistent memory need. A connection with a cqflux hello applies
     * its peer's on its own; one opened with raw private data has librpma's default (no direct
     * write to persistent memory, so PERSISTENT flushes are refused) until this is applied. On
     * fabric only an empty descriptor is accepted.
     *
     * @param descriptor the peer's descriptor bytes, exactly
     * @return a cold Mono that completes once applied, on the connection's event loop; it fails
     *     with an {@link IllegalArgumentException} when the bytes are malformed and with a
     *     {@link io.cqflux.core.ResourceClosedException} or {@link io.cqflux.core.ConnectionException}
     *     when the connection is closed
     */
    public Mono<Void> applyPeerConfiguration(byte[] descriptor) {
        Objects.requireNonNull(descriptor, "descriptor");
        byte[] d = descriptor.clone();
        // LoopSafeMono: block() on an event-loop thread refuses before subscribing, so nothing is
        // applied for a caller that gets the refusal.
        return LoopSafeMono.of(Mono.create(sink -> core.runOnLoop(() -> {
            try {
                core.intake.applyPeerConfiguration(d);
                sink.success();
            } catch (RuntimeException e) {
                sink.error(e);
            }
        })));
    }

    /**
     * {@return the send-queue credits of the connection: the most send-queue slots operations may
     * hold at once (a durable write holds two, every other operation one)}
     */
    public int sendCredits() {
        return core.monitor.creditLimit();
    }

    /**
     * {@return the send-queue credits held right now by posted operations whose completion has
     * not arrived (cancelled ones included: the NIC may still use their buffers); for metrics,
     * read from any thread}
     */
    public int inFlight() {
        return core.monitor.inFlightOps();
    }

    /**
     * {@return the operations waiting right now for a send-queue credit or, for a message, for a
     * credit from the peer's receiver; bounded by {@link Cqflux.Builder#pendingLimit(int)}; for
     * metrics, read from any thread}
     */
    public int waiting() {
        return core.monitor.waitingOps();
    }

    /**
     * {@return the keep-alive probes this connection has sent to its peer so far}
     * ({@link Cqflux.Builder#keepAlive}): 0 on a connection that was never idle for a whole
     * interval, with the keep-alive off, and with a peer not written with cqflux. Any thread.
     */
    public long keepAliveProbes() {
        return core.monitor.keepAliveProbes();
    }

    /**
     * {@return the operations refused on this connection because {@link Cqflux.Builder#pendingLimit(int)}
     * operations already waited for a credit (each failed with a
     * {@link io.cqflux.core.QueueFullException}); for metrics, read from any thread}
     */
    public long rejections() {
        return core.monitor.rejections();
    }

    /** {@return the most send-queue credits ever held at once on this connection} */
    public int maxInFlight() {
        return core.monitor.maxInFlight();
    }

    /**
     * Reads from the peer's memory.
     *
     * @param dst local destination ({@code READ_DST})
     * @param dstOffset offset in {@code dst}
     * @param src the peer's region ({@code READ_SRC})
     * @param srcOffset offset in {@code src}
     * @param length bytes, at least 1
     * @return a cold Mono completing when the data is in {@code dst}
     */
    public Mono<Void> read(Region dst, long dstOffset, PeerRegion src, long srcOffset, long length) {
        return OpMono.assemble(new OpMono(core, OpKind.READ, src, srcOffset, dst, dstOffset, length, 0, null));
    }

    /**
     * Writes to the peer's memory. It completes when the peer has the data (delivery); durability
     * needs {@link #durableWrite} or a {@link #flush}.
     *
     * @param dst the peer's region ({@code WRITE_DST})
     * @param dstOffset offset in {@code dst}
     * @param src local source ({@code WRITE_SRC})
     * @param srcOffset offset in {@code src}
     * @param length bytes, at least 1
     * @return a cold Mono
     */
    public Mono<Void> write(PeerRegion dst, long dstOffset, Region src, long srcOffset, long length) {
        return OpMono.assemble(new OpMono(core, OpKind.WRITE, dst, dstOffset, src, srcOffset, length, 0, null));
    }

    /**
     * Writes durably: the write is posted unsignaled and followed by a signaled flush of the same
     * range of exactly the type {@link PeerRegion#strongestFlush()} reports: PERSISTENT on a
     * region the peer registered with {@link io.cqflux.core.RegionAccess#FLUSH_TYPE_PERSISTENT},
     * else VISIBILITY. The Mono completes when the flush did, and an error of either fails it; a
     * flush type the connection cannot honour fails it too (never a weaker one instead).
     *
     * @param dst the peer's region
     * @param dstOffset offset in {@code dst}
     * @param src local source
     * @param srcOffset offset in {@code src}
     * @param length bytes, at least 1
     * @return a cold Mono
     */
    public Mono<Void> durableWrite(PeerRegion dst, long dstOffset, Region src, long srcOffset, long length) {
        return durableWrite(dst, dstOffset, src, srcOffset, length, dst == null ? null : dst.strongestFlush());
    }

    /**
     * Writes and flushes with an explicit flush type, which is never downgraded: the Mono fails,
     * before anything is posted, with an {@link IllegalArgumentException} when the region does
     * not offer {@code type} ({@link PeerRegion#flushTypes()}; fabric regions never offer
     * PERSISTENT). On rpma a PERSISTENT flush also needs the peer's handshake to declare direct
     * write to persistent memory; peers of this version always do for the regions they register
     * as persistent, a peer that sent no handshake (an older version) does not, and the flush then
     * fails with an {@link IllegalStateException} naming the missing declaration (its write being
     * already posted, the connection closes).
     *
     * @param dst the peer's region
     * @param dstOffset offset in {@code dst}
     * @param src local source
     * @param srcOffset offset in {@code src}
     * @param length bytes, at least 1
     * @param type the flush type; one of {@code dst.flushTypes()}
     * @return a cold Mono
     */
    public Mono<Void> durableWrite(PeerRegion dst, long dstOffset, Region src, long srcOffset, long length,
                                   FlushType type) {
        return OpMono.assemble(new OpMono(core, OpKind.DURABLE_WRITE, dst, dstOffset, src, srcOffset, length, 0, type));
    }

    /**
     * Makes earlier writes to a range of the peer's region visible or persistent.
     *
     * @param dst the peer's region
     * @param dstOffset offset
     * @param length bytes
     * @param type {@link FlushType#PERSISTENT} or {@link FlushType#VISIBILITY}; one the region supports
     * @return a cold Mono
     */
    public Mono<Void> flush(PeerRegion dst, long dstOffset, long length, FlushType type) {
        return OpMono.assemble(new OpMono(core, OpKind.FLUSH, dst, dstOffset, null, 0, length, 0, type));
    }

    /**
     * Writes 8 bytes atomically.
     *
     * @param dst the peer's region
     * @param dstOffset offset, a multiple of 8
     * @param value the value, host byte order
     * @return a cold Mono; fails with {@link io.cqflux.core.UnsupportedCapabilityException} on a
     *     transport without atomics (fabric/tcp)
     */
    public Mono<Void> atomicWrite(PeerRegion dst, long dstOffset, long value) {
        return OpMono.assemble(new OpMono(core, OpKind.ATOMIC_WRITE, dst, dstOffset, null, 0, 8, value, null));
    }

    /**
     * Writes and consumes one of the peer's posted receives, which reports {@code immediate}.
     *
     * @param dst the peer's region
     * @param dstOffset offset in {@code dst}
     * @param src local source
     * @param srcOffset offset in {@code src}
     * @param length bytes, at least 1
     * @param immediate 32-bit value, host byte order
     * @return a cold Mono
     */
    public Mono<Void> writeWithImmediate(PeerRegion dst, long dstOffset, Region src, long srcOffset, long length,
                                         int immediate) {
        return OpMono.assemble(new OpMono(core, OpKind.WRITE_WITH_IMMEDIATE, dst, dstOffset, src, srcOffset, length,
                immediate & 0xFFFF_FFFFL, null));
    }

    /**
     * Sends a message into one of the peer's posted receives. Between cqflux peers it waits for a
     * receive the peer posted (its credits), and it is refused before posting when it is longer
     * than the receive buffer the peer told in its hello ({@link IllegalArgumentException}) or
     * when the peer posts no receives at all ({@link IllegalStateException}); see the guide,
     * "Message credits between cqflux peers".
     *
     * @param src local source ({@code SEND})
     * @param offset offset in {@code src}
     * @param length bytes (0 allowed)
     * @return a cold Mono
     */
    public Mono<Void> send(Region src, long offset, long length) {
        return OpMono.assemble(new OpMono(core, OpKind.SEND, null, 0, src, offset, length, 0, null));
    }

    /**
     * Sends a message with 32-bit immediate data.
     *
     * @param src local source
     * @param offset offset in {@code src}
     * @param length bytes (0 allowed)
     * @param immediate 32-bit value, host byte order
     * @return a cold Mono
     */
    public Mono<Void> sendWithImmediate(Region src, long offset, long length, int immediate) {
        return OpMono.assemble(new OpMono(core, OpKind.SEND_WITH_IMMEDIATE, null, 0, src, offset, length,
                immediate & 0xFFFF_FFFFL, null));
    }

    // ---------------------------------------------------------------- data as the application holds it

    /*
     * The forms below stage data through the instance's BufferPool (Cqflux.buffers()): on each
     * subscription the arguments are checked (the operation's own check and the buffer size), a
     * buffer is leased (waiting FIFO while all are leased), the data copied in, and the operation
     * posted as its Region form would be. The buffer goes back when the operation is terminal at
     * the NIC (OpMono.releaseRegions), never when the subscriber cancels.
     */

    /**
     * Writes {@code data} to the peer's memory through a pooled staging buffer (see
     * {@link BufferPool}): {@link #write(PeerRegion, long, Region, long, long)} without a region of
     * your own. The array is copied when a buffer is leased, at or after subscription and before
     * anything is posted: leave it unchanged until the Mono signals. Cancelling detaches the
     * subscriber; the buffer stays leased until the write is terminal at the NIC.
     *
     * @param dst the peer's region ({@code WRITE_DST})
     * @param dstOffset offset in {@code dst}
     * @param data the bytes, 1..{@link BufferPool#bufferSize()} of them (never split: a larger
     *     array fails with an {@link IllegalArgumentException} before anything is posted)
     * @return a cold Mono; it fails like the Region form, with
     *     {@link io.cqflux.core.QueueFullException} when the pool's waiters are at their limit and
     *     with {@link io.cqflux.core.ResourceClosedException} when its {@link Cqflux} is disposed
     * @throws NullPointerException when {@code data} is null
     */
    public Mono<Void> write(PeerRegion dst, long dstOffset, byte[] data) {
        Objects.requireNonNull(data, "data");
        return StagedMono.of(core, core.buffers, OpKind.WRITE, dst, dstOffset, null, data);
    }

    /**
     * Writes the bytes of {@code data} between its position and limit, as
     * {@link #write(PeerRegion, long, byte[])}: one copy into the staging buffer, from heap or
     * direct memory alike; the buffer's position and limit are read at subscription and never
     * moved. Leave its content unchanged until the Mono signals.
     *
     * @param dst the peer's region ({@code WRITE_DST})
     * @param dstOffset offset in {@code dst}
     * @param data the bytes, 1..{@link BufferPool#bufferSize()} remaining
     * @return a cold Mono
     * @throws NullPointerException when {@code data} is null
     */
    public Mono<Void> write(PeerRegion dst, long dstOffset, ByteBuffer data) {
        Objects.requireNonNull(data, "data");
        return StagedMono.of(core, core.buffers, OpKind.WRITE, dst, dstOffset, null, data);
    }

    /**
     * Writes {@code data} durably through a pooled staging buffer, as
     * {@link #durableWrite(PeerRegion, long, Region, long, long)}: flushed at
     * {@link PeerRegion#strongestFlush()}; the buffer stays leased until the flush is terminal at
     * the NIC.
     *
     * @param dst the peer's region
     * @param dstOffset offset in {@code dst}
     * @param data the bytes, 1..{@link BufferPool#bufferSize()} of them; leave them unchanged
     *     until the Mono signals
     * @return a cold Mono
     * @throws NullPointerException when {@code data} is null
     */
    public Mono<Void> durableWrite(PeerRegion dst, long dstOffset, byte[] data) {
        Objects.requireNonNull(data, "data");
        return StagedMono.of(core, core.buffers, OpKind.DURABLE_WRITE, dst, dstOffset,
                dst == null ? null : dst.strongestFlush(), data);
    }

    /**
     * Writes the remaining bytes of {@code data} durably, as
     * {@link #durableWrite(PeerRegion, long, byte[])}; its position is never moved.
     *
     * @param dst the peer's region
     * @param dstOffset offset in {@code dst}
     * @param data the bytes, 1..{@link BufferPool#bufferSize()} remaining
     * @return a cold Mono
     * @throws NullPointerException when {@code data} is null
     */
    public Mono<Void> durableWrite(PeerRegion dst, long dstOffset, ByteBuffer data) {
        Objects.requireNonNull(data, "data");
        return StagedMono.of(core, core.buffers, OpKind.DURABLE_WRITE, dst, dstOffset,
                dst == null ? null : dst.strongestFlush(), data);
    }

    /**
     * Sends {@code data} as one message through a pooled staging buffer, as
     * {@link #send(Region, long, long)}.
     *
     * @param data the message, 0..{@link BufferPool#bufferSize()} bytes (and at most the peer's
     *     receive buffer size); leave it unchanged until the Mono signals
     * @return a cold Mono
     * @throws NullPointerException when {@code data} is null
     */
    public Mono<Void> send(byte[] data) {
        Objects.requireNonNull(data, "data");
        return StagedMono.of(core, core.buffers, OpKind.SEND, null, 0, null, data);
    }

    /**
     * Sends the remaining bytes of {@code data} as one message, as {@link #send(byte[])}; its
     * position is never moved.
     *
     * @param data the message, 0..{@link BufferPool#bufferSize()} bytes remaining
     * @return a cold Mono
     * @throws NullPointerException when {@code data} is null
     */
    public Mono<Void> send(ByteBuffer data) {
        Objects.requireNonNull(data, "data");
        return StagedMono.of(core, core.buffers, OpKind.SEND, null, 0, null, data);
    }

    /**
     * Reads {@code length} bytes of the peer's memory into a new array, through a pooled staging
     * buffer: the data is copied out of the buffer once the read's completion arrived, then the
     * buffer goes back. A cancelled read keeps its buffer until the read is terminal at the NIC.
     *
     * @param src the peer's region ({@code READ_SRC})
     * @param srcOffset offset in {@code src}
     * @param length bytes, 1..{@link BufferPool#bufferSize()}
     * @return a cold Mono of the bytes read, emitted on the connection's event loop
     */
    public Mono<byte[]> read(PeerRegion src, long srcOffset, int length) {
        return StagedMono.read(core, core.buffers, src, srcOffset, length);
    }

    /**
     * Writes the first {@code length} bytes of a leased buffer you filled
     * ({@link BufferPool#acquire()}), without a copy. The subscription takes the lease over: it
     * goes back to the pool when the write is terminal at the NIC, never on cancel, and a second
     * subscription fails with {@link IllegalStateException}.
     *
     * @param dst the peer's region ({@code WRITE_DST})
     * @param dstOffset offset in {@code dst}
     * @param src a lease of this connection's {@link Cqflux}, held (not released, not handed on)
     * @param length bytes, 1..{@code src.size()}
     * @return a cold Mono, for one subscription; it fails with {@link IllegalArgumentException}
     *     for a length outside the buffer or a lease of another {@link Cqflux}, the lease then
     *     given back to its pool
     * @throws NullPointerException when {@code src} is null
     */
    public Mono<Void> write(PeerRegion dst, long dstOffset, BufferLease src, int length) {
        return leased(OpKind.WRITE, dst, dstOffset, src, length, null);
    }

    /**
     * Writes the first {@code length} bytes of a leased buffer durably (flushed at
     * {@link PeerRegion#strongestFlush()}), without a copy; the subscription takes the lease over
     * as {@link #write(PeerRegion, long, BufferLease, int)} does.
     *
     * @param dst the peer's region
     * @param dstOffset offset in {@code dst}
     * @param src a held lease of this connection's {@link Cqflux}
     * @param length bytes, 1..{@code src.size()}
     * @return a cold Mono, for one subscription
     * @throws NullPointerException when {@code src} is null
     */
    public Mono<Void> durableWrite(PeerRegion dst, long dstOffset, BufferLease src, int length) {
        return leased(OpKind.DURABLE_WRITE, dst, dstOffset, src, length, dst == null ? null : dst.strongestFlush());
    }

    /**
     * Sends the first {@code length} bytes of a leased buffer as one message, without a copy; the
     * subscription takes the lease over as {@link #write(PeerRegion, long, BufferLease, int)} does.
     *
     * @param src a held lease of this connection's {@link Cqflux}
     * @param length bytes, 0..{@code src.size()}
     * @return a cold Mono, for one subscription
     * @throws NullPointerException when {@code src} is null
     */
    public Mono<Void> send(BufferLease src, int length) {
        return leased(OpKind.SEND, null, 0, src, length, null);
    }

    private Mono<Void> leased(OpKind kind, PeerRegion remote, long remoteOffset, BufferLease lease, int length,
                              FlushType type) {
        Objects.requireNonNull(lease, "lease");
        // LoopSafeMono: Reactor's block() subscribes before it refuses an event-loop thread, and
        // this subscription takes the lease over and posts; a refused block() must post nothing.
        return LoopSafeMono.of(Mono.deferContextual(ctx -> {
            Region region;
            try {
                if (lease.pool() != core.buffers) {
                    throw new IllegalArgumentException(lease + " is from another Cqflux's pool than "
                            + description() + "'s");
                }
                // The buffer, not the pool's region, bounds the length.
                io.cqflux.core.internal.Checks.staged(kind == OpKind.SEND ? "send data" : "write data", length,
                        kind == OpKind.SEND ? 0 : 1, lease.size());
                region = lease.region();
            } catch (RuntimeException e) {
                // The subscription owns the lease whatever the outcome: nothing was posted, it goes
                // back (to its own pool, for a lease of another one).
                lease.release();
                StagedMono.reportRefused(core, kind, e, reactor.util.context.Context.of(ctx));
                throw e;
            }
            return OpMono.assemble(new OpMono(core, kind, remote, remoteOffset, region, lease.offset(), length, 0, type,
                    lease, null));
        }));
    }

    /**
     * Streams writes with demand tied to the send queue: at most {@code sendCredits() / 2}
     * requests (at least one) are in flight at once — half the credits, because a durable write
     * holds two — and no more are taken from {@code requests} until one completes, so nothing is
     * buffered without bound. Results come in request order; the first failure fails the stream.
     *
     * <p>In detail: requests are taken from {@code requests} only as results are emitted, so a
     * downstream that requests slowly holds at most that many completed results and upstream is
     * never asked beyond them. Durable requests run as {@link #durableWrite(PeerRegion, long, Region,
     * long, long)}, the others as {@link #write(PeerRegion, long, Region, long, long)}, with those
     * methods' checks. The first failure of a write (a check, its completion, the connection's end,
     * which fails it with a {@link io.cqflux.core.ConnectionException}) fails the stream at once and
     * cancels {@code requests}; an error of {@code requests} fails the stream at once too, without
     * waiting for the writes in flight. The connection's end fails a stream with no write in flight
     * as well (its {@code requests} quiet, not completed), with the end's
     * {@link io.cqflux.core.ConnectionException}, instead of waiting for the next request. Cancelling the stream cancels {@code requests}; writes
     * already posted keep their regions and credits until their completions arrive, as a cancelled
     * {@code write()} does. A subscriber whose {@code onNext} throws (Reactive Streams §2.13 forbids
     * it) fails the stream in the same way: {@code requests} is cancelled, the writes in flight are
     * cancelled, and the subscriber gets {@code onError} with its own exception (passed through
     * {@link reactor.core.publisher.Operators#onOperatorError}, so {@code Hooks.onOperatorError}
     * applies).
     *
     * <p>Discards: once the stream is cancelled or failed, every request taken from
     * {@code requests} that is not emitted as a result goes to the discard hook
     * ({@code doOnDiscard(WriteRequest.class, ...)} downstream of this stream), exactly once, and
     * never while the NIC may still read its buffer: at once for a result held for lack of
     * demand or a write never posted; for a write that failed or was in flight, once its local
     * regions are released: at its completion, or, when the connection's end failed it, after
     * the native close destroyed the queue pair (later than the stream's {@code onError}; never,
     * if that close failed and the buffers are kept). Every request taken is thus either emitted
     * or discarded,
     * so buffers a caller wraps in requests can go back to its pool from the hook. The hook may
     * run on the connection's loop thread: keep it short. It also sees what {@code requests}'s own
     * operators discard (the context reaches upstream). Reactor's unicast sink can discard a
     * request it delivers, when an emission on another thread races the cancel; such a
     * discard of a request this stream took (the one taken last, or one still in flight) is kept
     * from the hook, and, from a single producer, a request it discarded and then delivered is
     * not discarded again (with several producers, one held between its offer and its drain may
     * still see such a request discarded twice). Reactor asks discard hooks to be idempotent in
     * general.
     *
     * <p>Threads: results are usually emitted on the connection's loop thread (once per batch of
     * completions: the results the batch completed go out together, right after it), and the
     * next requests are then asked of {@code requests} from there, as many at once, so a
     * synchronous upstream's operators run on the loop too: keep them short, or move the source to
     * another scheduler ({@code subscribeOn}), and move slow downstream work off the loop with
     * {@code publishOn}. The writes are posted from the loop thread (once the loop has ended, from
     * the thread that closes it or emits, and they fail with the connection's end): a request emitted on
     * another thread waits in the window until one loop task posts every request waiting, so such
     * a producer costs one hand-over to the loop per burst, not one per write. Each write's checks,
     * assembly hooks and listener callbacks therefore run on the loop thread, and its time
     * (listener, metrics) counts from its post, not from the request's arrival.
     *
     * @param requests the writes
     * @return the results
     */
    public Flux<WriteResult> writeAll(Publisher<WriteRequest> requests) {
        Objects.requireNonNull(requests, "requests");
        return WriteAllFlux.create(this, requests, Math.max(1, core.monitor.creditLimit() / 2));
    }

    /**
     * Receives messages (and write-with-immediate notifications) as immutable copies. See
     * {@link #receive(Function)}.
     *
     * @return the messages
     */
    public Flux<Message> receive() {
        return receive(InboundMessage::copy);
    }

    /**
     * Receives messages, decoding each in place. Demand posts receive buffers: {@code request(n)}
     * posts up to {@code n} (at most the receive queue depth) from a registered pool, so a slow
     * subscriber makes the peer's sends wait. A connection with a receive prefetch keeps that many
     * more posted from establishment on, subscriber or not, and what lands in them waits for the
     * next subscriber: on by default for raw private data, whose peer sends without credits
     * ({@link ConnectOptions}, {@link AcceptOptions}). The {@link InboundMessage} is valid only during the
     * {@code decoder} call; its buffer is reposted right after. One subscriber at a time; it
     * completes when the peer closes the connection in order, fails with a
     * {@link io.cqflux.core.ConnectionException} when it is lost, and with a
     * {@link io.cqflux.core.ResourceClosedException} when this side closes it.
     *
     * <p>A peer's write-with-immediate normally consumes a posted receive; on libfabric's tcp
     * provider it does not (the notification arrives without one), so such notifications are
     * delivered even without demand, buffered until requested; they are the only thing a
     * connection built with a {@code receiveQueueSize} of 0 receives. Where nothing can arrive (that
     * size 0, and a write with immediate consumes a receive: rpma) the subscriber gets an
     * {@link IllegalStateException}, as a second subscriber does.
     *
     * @param decoder turns a message into a value (must not keep the message)
     * @param <T> the value type
     * @return the decoded messages, emitted on the loop thread
     */
    public <T> Flux<T> receive(Function<? super InboundMessage, ? extends T> decoder) {
        Objects.requireNonNull(decoder, "decoder");
        return new ReceiveFlux<>(core, decoder);
    }

    /** {@return the connection's events (ESTABLISHED, then CLOSED or LOST), replayed to late subscribers} */
    public Flux<ConnectionEvent> events() {
        return core.monitor.events();
    }

    /**
     * {@return a hot Flux of snapshots of every completion of this connection's queues, for
     * monitoring; it costs nothing while nobody subscribes (no snapshot is taken then). It
     * buffers nothing: a subscriber without outstanding demand misses the completions of that
     * moment (so a slow monitor never holds the loop or memory; put
     * {@code onBackpressureBuffer(...)} in front of a slow consumer that must see every one). It
     * completes once the connection is released}
     */
    public Flux<CompletionRecord> completions() {
        return core.monitor.completions();
    }

    /**
     * Closes the connection in order: pending and queued operations fail with a
     * {@link io.cqflux.core.ConnectionException} {@code CLOSED}, a cqflux peer is told (it sees
     * {@code CLOSED} too, not {@code LOST}), then the native connection is freed on its loop.
     * Idempotent, non-blocking, from any thread.
     */
    @Override
    public void dispose() {
        core.closeAsync(); // marks the core closed for new operations at once, then hops to the loop
    }

    /**
     * {@return whether the connection is unusable: {@link #dispose()} was called, or it ended
     * (peer closed, lost, its {@link Cqflux} disposed)}
     */
    @Override
    public boolean isDisposed() {
        return core.closeRequested() || !core.isOpen();
    }

    /**
     * {@return a Mono that completes once the connection is released: every pending operation
     * terminated and the native connection freed, however it ended (this side, the peer, loss).
     * It never fails; late subscribers complete at once}
     */
    public Mono<Void> onDispose() {
        return Mono.fromFuture(core.closed, true);
    }

    /**
     * Disposes the connection and blocks until it is released.
     *
     * @param timeout how long to wait, at least zero
     * @throws IllegalStateException when the connection was not released within {@code timeout}
     *     (the message says what it still waits for: its loop to run the close task, the goodbye
     *     write to a cqflux peer, awaited at most the shorter of 1 s and the connect timeout, or
     *     the teardown after it), or when called on a Reactor {@code NonBlocking} thread such as an
     *     event loop (nothing is disposed then)
     * @throws IllegalArgumentException when {@code timeout} is negative
     */
    public void disposeNow(Duration timeout) {
        Lifecycle.checkTimeout(timeout, "timeout");
        Lifecycle.checkMayBlock(this);
        dispose();
        Lifecycle.await(this, core.closed, timeout, core.monitor::releasePending);
    }

    /**
     * The same as {@link #dispose()}: starts closing and returns at once; for try-with-resources.
     * Use {@link #disposeNow(Duration)} to wait for the release.
     */
    @Override
    public void close() {
        dispose();
    }

    ConnectionCore core() {
        return core;
    }

    @Override
    public String toString() {
        return "RdmaConnection[" + description() + "]";
    }
}
