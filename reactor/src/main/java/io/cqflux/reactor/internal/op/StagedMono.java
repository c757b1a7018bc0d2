package io.cqflux.reactor.internal.op;

import io.cqflux.core.FlushType;
import io.cqflux.core.internal.Checks;
import io.cqflux.reactor.BufferLease;
import io.cqflux.reactor.BufferPool;
import io.cqflux.reactor.CqfluxListener;
import io.cqflux.reactor.OperationOutcome;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import io.cqflux.reactor.internal.resources.ApiAccess;
import io.cqflux.reactor.internal.resources.Instrumentation;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Objects;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.util.annotation.Nullable;
import reactor.util.context.Context;

/**
 * An operation on data as the application holds it ({@code byte[]}, {@code ByteBuffer}), staged
 * through the {@link BufferPool}: each subscription checks the arguments (with the operation's own
 * {@link OpKind#check} against the pool's region as it will be registered,
 * {@link BufferPool#describedRegion()}, and {@link Checks#staged} against the buffer size, before
 * waiting for a buffer, so that a refused operation registers no staging memory), leases a buffer, copies the data in and subscribes an
 * {@link OpMono} that owns the lease. The lease comes back when that operation is terminal at the
 * NIC ({@link OpMono#releaseRegions}), never on cancel. A read copies the data out of the buffer at
 * that moment, right before the lease is given back, and emits the copy. The forms on a buffer
 * the caller leased and filled ({@link #leased}) stage nothing but are checked, handed over and
 * reported here too.
 *
 * <p>A message to a cqflux peer asks for its buffer only once the peer has a receive credit for
 * it and the messages before it went out (the connection's {@code MessageHold}): until then it
 * waits in the hold without a buffer, so that a peer that takes no messages keeps none of the
 * pool's buffers (a burst sent as its credits ran out keeps those it had asked for: whether to
 * hold is decided at subscription, off the loop, on mirrors). Every way such a subscription ends before its operation reaches the
 * send queue tells the hold once ({@code leaveHold}).
 *
 * <p>While it waits for a buffer, the connection knows it ({@link io.cqflux.reactor.internal.connection.Admission#addStagedWaiter}):
 * the connection's end withdraws it from the pool's queue and fails it, as it fails queued
 * operations. Outcomes that never reach an {@link OpMono} (a failed check, a refusal of the pool,
 * a cancel or the end while waiting) are reported to the {@link CqfluxListener} from here; the
 * {@link OpMono} of a granted one reports with this subscription's time, so the wait for a buffer
 * counts. Either way once.
 *
 * <p>{@link Scannable} under the same name as the operation it stages ({@code cqflux.write},
 * ...), and made through {@code Mono.onAssembly}, as {@link OpMono} is.
 *
 * @param <T> {@code Void} for writes and sends, {@code byte[]} for a read
 */
public final class StagedMono<T> extends Mono<T> implements Scannable {
    private static final ApiAccess API = ApiAccess.get();

    public final ConnectionCore core;
    public final BufferPool pool;
    public final OpKind kind;
    public final PeerRegion remote;
    public final long remoteOffset;
    public final FlushType flushType;
    /** Source: an array (with {@link #arrayOffset}), a buffer, or nothing (a read). */
    @Nullable
    public final byte[] array;
    public final int arrayOffset;
    @Nullable
    public final ByteBuffer buffer;
    /** The read's length; for the sources, taken at subscription. */
    public final int readLength;

    private StagedMono(ConnectionCore core, BufferPool pool, OpKind kind, PeerRegion remote, long remoteOffset,
                       FlushType flushType, byte[] array, int arrayOffset, ByteBuffer buffer, int readLength) {
        this.core = core;
        this.pool = pool;
        this.kind = kind;
        this.remote = remote;
        this.remoteOffset = remoteOffset;
        this.flushType = flushType;
        this.array = array;
        this.arrayOffset = arrayOffset;
        this.buffer = buffer;
        this.readLength = readLength;
    }

    @Override
    @Nullable
    @SuppressWarnings("rawtypes") // Scannable declares it with the raw Attr
    public Object scanUnsafe(Attr key) {
        return OpMono.scanOperation(kind, key);
    }

    public static Mono<Void> of(ConnectionCore core, BufferPool pool, OpKind kind, PeerRegion remote, long remoteOffset,
                         FlushType flushType, byte[] data) {
        return onAssembly(new StagedMono<>(core, pool, kind, remote, remoteOffset, flushType, data, 0, null, 0));
    }

    public static Mono<Void> of(ConnectionCore core, BufferPool pool, OpKind kind, PeerRegion remote, long remoteOffset,
                         FlushType flushType, ByteBuffer data) {
        return onAssembly(new StagedMono<>(core, pool, kind, remote, remoteOffset, flushType, null, 0, data, 0));
    }

    public static Mono<byte[]> read(ConnectionCore core, BufferPool pool, PeerRegion remote, long remoteOffset, int length) {
        return onAssembly(new StagedMono<>(core, pool, OpKind.READ, remote, remoteOffset, null, null, 0, null, length));
    }

    /** As {@link OpMono#block()}: a spin before the park, a refusal before the subscription. */
    @Override
    public T block() {
        SpinThenParkSubscriber.refuseNonBlockingThread();
        long spin = core.blockSpinNanos;
        return spin == 0 ? super.block() : SpinThenParkSubscriber.block(this, spin, false, 0);
    }

    /**
     * As {@link OpMono#block(java.time.Duration)}.
     *
     * @param timeout the longest wait
     */
    @Override
    public T block(java.time.Duration timeout) {
        SpinThenParkSubscriber.refuseNonBlockingThread();
        long spin = core.blockSpinNanos;
        return spin == 0 ? super.block(timeout) : SpinThenParkSubscriber.block(this, spin, true, timeout.toNanos());
    }

    /** Reactor's, refusing a {@code NonBlocking} thread before subscribing, as {@link #block()} does. */
    @Override
    public java.util.Optional<T> blockOptional() {
        SpinThenParkSubscriber.refuseNonBlockingThread();
        return super.blockOptional();
    }

    /**
     * Reactor's, refusing a {@code NonBlocking} thread before subscribing, as {@link #block()} does.
     *
     * @param timeout the longest wait
     */
    @Override
    public java.util.Optional<T> blockOptional(java.time.Duration timeout) {
        SpinThenParkSubscriber.refuseNonBlockingThread();
        return super.blockOptional(timeout);
    }

    /** A thread that owns no arena: memory it may not access is confined to one thread. */
    private static final Thread NO_OWNER = Thread.ofVirtual().inheritInheritableThreadLocals(false).unstarted(() -> { });

    /**
     * {@return the source itself, or a heap copy of it where its memory is confined to this
     * thread: bytes the copy into a leased buffer can read} That copy may run on another thread
     * (the one that hands the lease over, usually a loop), which may not read a confined arena's
     * memory, and memory freed by then fails it without a name.
     *
     * @throws IllegalArgumentException when its memory was freed, or this thread may not read it
     *     either (another thread's confined arena)
     */
    private static MemorySegment readableSource(MemorySegment source) {
        if (!source.scope().isAlive()) {
            // Told now, by name, rather than as the bare "Already closed" of the copy at the lease.
            throw new IllegalArgumentException("the ByteBuffer's memory was freed (its arena is closed)");
        }
        if (source.isAccessibleBy(NO_OWNER)) {
            return source;
        }
        if (!source.isAccessibleBy(Thread.currentThread())) {
            throw new IllegalArgumentException("the ByteBuffer's memory belongs to a confined arena of another thread"
                    + " than " + Thread.currentThread().getName() + ", which may not read it: subscribe on the arena's"
                    + " thread, or use a shared or automatic arena");
        }
        return MemorySegment.ofArray(io.cqflux.core.internal.Segments.copyOut(source, 0, source.byteSize()));
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        StagedSubscription<T> s = new StagedSubscription<>(this, actual);
        actual.onSubscribe(s);
        try {
            if (array != null) {
                s.source = MemorySegment.ofArray(array);
                s.length = array.length;
            } else if (buffer != null) {
                // The bytes between position and limit now; the buffer's position is not moved.
                s.source = MemorySegment.ofBuffer(buffer);
                s.length = (int) s.source.byteSize();
            } else {
                s.length = readLength;
            }
            Checks.staged(what(), s.length, kind == OpKind.SEND ? 0 : 1, pool.bufferSize());
            // The operation's own check, before waiting for a buffer and before the pool registers
            // its memory: against the region the pool will register, described, not registered.
            new OpMono(core, kind, remote, remoteOffset, API.describedRegion(pool), 0, s.length, 0, flushType).validate();
            if (buffer != null) {
                s.source = readableSource(s.source); // checked first: a refused size is never copied
            }
        } catch (RuntimeException e) {
            s.refused(e);
            return;
        }
        s.start();
    }

    /**
     * An operation on the first {@code length} bytes of a leased buffer the caller filled
     * ({@link RdmaConnection}'s {@code BufferLease} forms): nothing is copied, and the subscription
     * takes the lease over, giving it back when the operation is terminal at the NIC, or at once
     * when the operation is refused at subscription (a lease of another instance's pool, a length
     * outside the buffer), which is reported to the listener here since no {@link OpMono} ever
     * sees it.
     *
     * @param core the connection
     * @param kind a write, durable write or send
     * @param remote the peer's region, or null for a send
     * @param remoteOffset offset in {@code remote}
     * @param lease the lease, held
     * @param length bytes of the buffer, from its start
     * @param type the flush type of a durable write, else null
     * @return a cold Mono, for one subscription
     * @throws NullPointerException when {@code lease} is null
     */
    public static Mono<Void> leased(ConnectionCore core, OpKind kind, @Nullable PeerRegion remote, long remoteOffset,
                                    BufferLease lease, int length, @Nullable FlushType type) {
        Objects.requireNonNull(lease, "lease");
        // LoopSafeMono: Reactor's block() subscribes before it refuses an event-loop thread, and
        // this subscription takes the lease over and posts; a refused block() must post nothing.
        return LoopSafeMono.of(Mono.deferContextual(ctx -> {
            Region region;
            try {
                if (API.pool(lease) != core.buffers) {
                    throw new IllegalArgumentException(lease + " is from another Cqflux's pool than "
                            + core.description + "'s");
                }
                // The buffer, not the pool's region, bounds the length.
                Checks.staged(kind == OpKind.SEND ? "send data" : "write data", length,
                        kind == OpKind.SEND ? 0 : 1, lease.size());
                region = API.region(lease);
            } catch (RuntimeException e) {
                // The subscription owns the lease whatever the outcome: nothing was posted, it goes
                // back (to its own pool, for a lease of another one).
                lease.release();
                reportRefused(core, kind, e, Context.of(ctx));
                throw e;
            }
            return OpMono.assemble(new OpMono(core, kind, remote, remoteOffset, region, API.offset(lease), length, 0,
                    type, lease, null));
        }));
    }

    /**
     * Tells the listener, if any, of an operation of a lease form refused at its subscription,
     * before the subscriber's error: like the staged forms' refusals, it never reaches an
     * {@link OpMono} to report it.
     *
     * @param core the connection
     * @param kind what it was
     * @param error why
     * @param ctx the subscriber's context (for a listener that throws)
     */
    private static void reportRefused(ConnectionCore core, OpKind kind, Throwable error, Context ctx) {
        CqfluxListener l = core.instrumentation.listener;
        if (l != null) {
            l = Instrumentation.started(l, core, kind.publicKind(), 0, ctx);
        }
        if (l != null) {
            report(l, core, kind, OperationOutcome.ERROR, error, 0, ctx);
        }
    }

    /**
     * Calls the listener as {@link OpMono}'s report does (same arguments, same handling of a listener
     * that throws), for the outcomes of these forms that no operation reports.
     */
    static void report(CqfluxListener l, ConnectionCore core, OpKind kind, OperationOutcome outcome,
                               @Nullable Throwable error, long nanos, Context ctx) {
        try {
            l.operationFinished(core.api, kind.publicKind(), outcome, Instrumentation.errorName(error), nanos);
        } catch (Throwable t) {
            // One handling for a listener that throws, Op's: logged, never thrown into the loop.
            Instrumentation.listenerThrew(t);
        }
    }

    private String what() {
        return switch (kind) {
            case READ -> "read";
            case SEND -> "send data";
            case DURABLE_WRITE -> "durable write data";
            default -> "write data";
        };
    }
}
