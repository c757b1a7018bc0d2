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
 * flush type fails the Mono with an {@link IllegalArgumentException} naming the value and the
 * bound. An operation takes a send-queue credit, or waits for one in a bounded queue
 * ({@link Cqflux.Builder#pendingLimit}, beyond it {@link io.cqflux.core.QueueFullException}); no
 * thread ever blocks.
 *
 * <p><b>Signals and threads.</b> Operations complete on the connection's event-loop thread, a
 * {@link reactor.core.scheduler.NonBlocking} thread ({@code block()} there fails fast; move heavy
 * work off with {@code publishOn}). A failed completion fails its Mono with
 * {@link io.cqflux.core.OperationFailedException} and ends the connection. Every end of the
 * connection fails what is pending with a {@link io.cqflux.core.ConnectionException}:
 * {@code CLOSED} for an orderly close by either side, {@code LOST} otherwise (the peer gone, an
 * error completion, {@link Cqflux.Builder#operationTimeout(java.time.Duration)}). An operation
 * started after this side's close fails with {@link io.cqflux.core.ResourceClosedException}.
 * Timeouts are Reactor's {@code .timeout(...)}. See {@code docs/guide/errors.md}.
 *
 * <p><b>Cancellation</b> detaches the subscriber only: the operation keeps its credit, its regions
 * and a staging buffer until its completion arrives, since the NIC may still use them
 * ({@link Region#inFlight()} tells when a range of your own may be reused); a late failure of its
 * own is dropped, the connection's end is reported once ({@link #events()}). See the guide's
 * "Cancellation" ({@code docs/guide/operations.md}).
 *
 * <p><b>Lifetime and thread safety.</b> Thread-safe. {@link #dispose()} closes without blocking;
 * {@link #onDispose()} tells when the native connection is freed, {@link #disposeNow(Duration)}
 * waits for it. The connection also ends when the peer closes it, it is lost, or its
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
     * {@return a copy of the private data the peer sent, as the transport delivered it (RDMA CM's
     * zero padding included): on the client the server's accept data, on the server the client's
     * request. With raw private data ({@link ConnectOptions#rawPrivateData(byte[])},
     * {@link AcceptOptions#rawPrivateData}) the foreign peer's format, e.g.
     * {@link RpmaCommonData#decode(byte[])}; from a cqflux peer, its hello}
     */
    public byte[] peerPrivateData() {
        return core.intake.peerPrivateData();
    }

    /**
     * Makes a peer region from the transport's own descriptor of it, as a peer not written with
     * cqflux gives it out (librpma: its {@code rpma_mr_get_descriptor(3)} bytes, e.g.
     * {@link RpmaCommonData#mrDescriptor()}; fabric: key, base address and length, as
     * {@link Region#rawDescriptor()}), with the access you state. It belongs to this connection
     * and is freed when it closes; its {@link PeerRegion#index()} is -1. On rpma {@code access} is
     * checked against the descriptor's usage bits (a narrower one limits this side); on fabric it
     * is taken as stated. See the guide's interop section ({@code docs/guide/messaging.md}). A
     * region handed out by its {@link Region#rawDescriptor()} by a server whose connections have
     * keys scoped to them (its default on fabric/tcp: {@link AcceptOptions.KeyScoping}) is out of
     * reach here: the access fails and the server ends this connection, as for a forged key.
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
     * Makes a peer region from librpma's own descriptor of it with the access the descriptor
     * names (its last byte), as {@link #remoteRegion(byte[], io.cqflux.core.RegionAccess...)}.
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
     * Applies a librpma peer's configuration descriptor ({@code rpma_peer_cfg_get_descriptor(3)},
     * e.g. {@link RpmaCommonData#peerConfigDescriptor()}) to this connection, which
     * {@link FlushType#PERSISTENT} flushes to it need: a cqflux peer's is applied on its own, while
     * a connection with raw private data refuses PERSISTENT flushes until this is applied. On
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
        return LoopSafeMono.onLoop(core, () -> core.intake.applyPeerConfiguration(d));
    }

    /**
     * {@return the send-queue credits of the connection: the most send-queue slots operations may
     * hold at once (a durable write holds two, every other operation one)}
     */
    public int sendCredits() {
        return core.monitor.creditLimit();
    }

    /**
     * {@return the send-queue credits held now by posted operations without their completion yet
     * (cancelled ones included); for metrics, any thread}
     */
    public int inFlight() {
        return core.monitor.inFlightOps();
    }

    /**
     * {@return the operations waiting now for a send-queue credit (a message: for the peer's),
     * at most {@link Cqflux.Builder#pendingLimit(int)}; for metrics, any thread}
     */
    public int waiting() {
        return core.monitor.waitingOps();
    }

    /**
     * {@return the keep-alive probes ({@link Cqflux.Builder#keepAlive}) sent to the peer so far}
     * 0 on a connection never idle for an interval, or without a keep-alive. Any thread.
     */
    public long keepAliveProbes() {
        return core.monitor.keepAliveProbes();
    }

    /**
     * {@return the operations refused with a {@link io.cqflux.core.QueueFullException} because
     * {@link Cqflux.Builder#pendingLimit(int)} already waited; for metrics, any thread}
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
     * Writes durably: the write, then a flush of the same range at exactly
     * {@link PeerRegion#strongestFlush()} (never a weaker type instead); the Mono completes when
     * the flush did, and an error of either fails it. See the guide's "Durable writes"
     * ({@code docs/guide/operations.md}).
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
     * Writes and flushes with an explicit flush type, which is never downgraded: the Mono fails
     * before posting with an {@link IllegalArgumentException} when the region does not offer
     * {@code type} ({@link PeerRegion#flushTypes()}). On rpma a PERSISTENT flush to a peer whose
     * handshake declared no direct write to persistent memory (an older version) fails with an
     * {@link IllegalStateException}, and the connection closes, its write being posted already.
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
     * receive the peer posted, and is refused before posting when longer than the peer's receive
     * buffer ({@link IllegalArgumentException}) or when the peer posts none
     * ({@link IllegalStateException}); see the guide, "Message credits between cqflux peers".
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
     * The forms below stage data through the instance's BufferPool (Cqflux.buffers()), checked,
     * leased (FIFO), copied in and posted as their Region forms; the buffer goes back when the
     * operation is terminal at the NIC, never on cancel (StagedMono has the details).
     */

    /**
     * Writes {@code data} to the peer's memory through a pooled staging buffer ({@link BufferPool}),
     * as {@link #write(PeerRegion, long, Region, long, long)} without a region of your own. The
     * array is copied when a buffer is leased, after subscription: leave it unchanged until the
     * Mono signals. The buffer stays leased until the write is terminal at the NIC.
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
     * Writes the bytes of {@code data} between its position and limit (read at subscription,
     * never moved), as {@link #write(PeerRegion, long, byte[])}: one copy, heap or direct alike
     * (two for a confined arena's memory: the first at subscription, which another thread than the
     * arena's fails with {@code IllegalArgumentException}; docs/guide/buffers.md).
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
     * Writes {@code data} durably (flushed at {@link PeerRegion#strongestFlush()}) through a pooled
     * staging buffer, as {@link #durableWrite(PeerRegion, long, Region, long, long)}.
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
     * Reads {@code length} bytes of the peer's memory into a new array through a pooled staging
     * buffer, copied out once the read's completion arrived (a cancelled read keeps the buffer
     * until then).
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
     * ({@link BufferPool#acquire()}) without a copy. The subscription takes the lease over (a
     * second one fails with {@link IllegalStateException}); it goes back to the pool when the
     * write is terminal at the NIC, never on cancel.
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
        return StagedMono.leased(core, OpKind.WRITE, dst, dstOffset, src, length, null);
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
        return StagedMono.leased(core, OpKind.DURABLE_WRITE, dst, dstOffset, src, length,
                dst == null ? null : dst.strongestFlush());
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
        return StagedMono.leased(core, OpKind.SEND, null, 0, src, length, null);
    }

    /**
     * Streams writes with demand tied to the send queue: at most {@code sendCredits() / 2}
     * requests (at least one; a durable write holds two credits) are in flight at once, and
     * requests are taken from {@code requests} only as results are emitted, so nothing is buffered
     * without bound. Durable requests run as {@link #durableWrite(PeerRegion, long, Region, long,
     * long)}, the others as {@link #write(PeerRegion, long, Region, long, long)}, with their checks.
     * Results come in request order. The first failure of a write, an error of {@code requests}, a
     * throwing {@code onNext}, or the connection's end (also with no write in flight) fails the
     * stream at once and cancels {@code requests}; cancelling the stream cancels it too, and
     * posted writes keep their regions and credits until their completions arrive.
     *
     * <p>Discards: once the stream is cancelled or failed, every request taken and not emitted goes
     * to the discard hook ({@code doOnDiscard(WriteRequest.class, ...)} downstream), exactly once,
     * and never while the NIC may still read its buffer, so buffers wrapped in requests can go back
     * to a pool from the hook; keep it short (it may run on the loop thread) and idempotent, as
     * Reactor asks of discard hooks.
     *
     * <p>Threads: results are emitted, the next requests asked for and the writes posted on the
     * connection's loop thread, so a synchronous upstream's operators run there: keep them short
     * or move them off ({@code subscribeOn}, {@code publishOn}). See the guide's "Bulk writes"
     * ({@code docs/guide/operations.md}).
     *
     * @param requests the writes
     * @return the results
     */
    public Flux<WriteResult> writeAll(Publisher<WriteRequest> requests) {
        Objects.requireNonNull(requests, "requests");
        return WriteAllFlux.create(this, requests, Math.max(1, core.monitor.creditLimit() / 2));
    }

    /**
     * {@return the messages (and write-with-immediate notifications) as immutable copies; see
     * {@link #receive(Function)}}
     */
    public Flux<Message> receive() {
        return receive(InboundMessage::copy);
    }

    /**
     * Receives messages, decoding each in place. Demand posts receive buffers: {@code request(n)}
     * posts up to {@code n} (at most the receive queue depth), so a slow subscriber makes the
     * peer's sends wait; a receive prefetch ({@link ConnectOptions}, {@link AcceptOptions}) keeps
     * more posted, subscriber or not. The {@link InboundMessage} is valid only during the
     * {@code decoder} call. One subscriber at a time (a second one gets an
     * {@link IllegalStateException}, as does one where nothing can arrive); it completes when the
     * peer closes the connection in order, fails with a {@link io.cqflux.core.ConnectionException}
     * when it is lost and with a {@link io.cqflux.core.ResourceClosedException} when this side
     * closes it. The guide's "Receiving" ({@code docs/guide/messaging.md}) has the rest, such as
     * fabric/tcp's write-with-immediate notifications, which arrive without demand.
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
     * monitoring; free while nobody subscribes. It buffers nothing: a subscriber without demand
     * misses the completions of that moment (put {@code onBackpressureBuffer(...)} in front of one
     * that must see every one). It completes once the connection is released}
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
     *     (the message names what it still waits for), or when called on a Reactor
     *     {@code NonBlocking} thread such as an event loop (nothing is disposed then)
     * @throws IllegalArgumentException when {@code timeout} is negative
     */
    public void disposeNow(Duration timeout) {
        Lifecycle.checkTimeout(timeout, "timeout");
        Lifecycle.checkMayBlock(this);
        dispose();
        Lifecycle.await(this, core.closed, timeout, core.monitor::releasePending);
    }

    /** The same as {@link #dispose()}, for try-with-resources; {@link #disposeNow(Duration)} waits. */
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
