package io.cqflux.reactor.internal.op;

import io.cqflux.core.FlushType;
import io.cqflux.core.ResourceClosedException;
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
import io.cqflux.reactor.internal.resources.LeaseTaker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.Objects;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
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
 * <p>A message to a cqflux peer asks for its buffer only once the messages before it went out
 * (the connection's hold, {@code SendQueue}): while messages wait for the peer's receive
 * credits, the next staged ones wait in the hold without a buffer and leave it one at a time, so
 * that a peer that takes no messages keeps one of the pool's buffers (a few, for a burst sent as
 * its credits ran out: the hold reads the credit off the loop, as a hint). Every way such a
 * subscription ends before its operation reaches the send queue tells the hold once
 * ({@code leaveHold}).
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

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        Staged<T> s = new Staged<>(this, actual);
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
    private static void report(CqfluxListener l, ConnectionCore core, OpKind kind, OperationOutcome outcome,
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

    /**
     * One subscription: waits for a lease, then drives the {@link OpMono} that owns it (as its
     * subscriber) and relays its outcome.
     */
    public static final class Staged<T> implements Subscription, LeaseTaker, CoreSubscriber<Void> {
        private static final int NEW = 0;
        private static final int WAITING = 1;
        private static final int RUNNING = 2;
        private static final int CANCELLED = 3;
        /** Never got a lease: refused (a check, the pool) or withdrawn by the connection's end. */
        private static final int FAILED = 4;
        /** Demand and value: a read's value waits for a request (Reactive Streams §1.1). */
        private static final int NO_REQUEST_NO_VALUE = 0;
        private static final int REQUESTED = 1;
        private static final int VALUE = 2;
        private static final int EMITTED = 3;

        /** Its place in the connection's hold of staged messages (ConnectionCore#holdStaged): never held. */
        private static final int NOT_HELD = 0;
        /** Held: waits, without a buffer, for the messages before it. */
        private static final int HELD = 1;
        /** Released by the loop: it asks the pool for a buffer, and its operation is on its way to the send queue. */
        private static final int RELEASED = 2;
        /** Out of the hold: its operation reached the send queue, or it ended first (the loop was told). */
        private static final int LEFT = 3;

        private static final VarHandle STATE;
        private static final VarHandle DEMAND;
        private static final VarHandle DONE;
        private static final VarHandle REPORTED;
        private static final VarHandle HOLD;

        static {
            try {
                MethodHandles.Lookup l = MethodHandles.lookup();
                STATE = l.findVarHandle(Staged.class, "state", int.class);
                DEMAND = l.findVarHandle(Staged.class, "demand", int.class);
                DONE = l.findVarHandle(Staged.class, "done", int.class);
                REPORTED = l.findVarHandle(Staged.class, "reported", int.class);
                HOLD = l.findVarHandle(Staged.class, "hold", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        public final StagedMono<T> spec;
        public final CoreSubscriber<? super T> actual;
        /** Set at subscription, before any hand-over. */
        public MemorySegment source;
        public int length;
        @SuppressWarnings("unused") // through STATE
        private volatile int state;
        @SuppressWarnings("unused") // through DEMAND
        private volatile int demand;
        @SuppressWarnings("unused") // through DONE
        private volatile int done;
        private volatile boolean cancelled;
        private volatile Subscription inner;
        /** The read's data, copied out at NIC-terminal (loop thread), published by the completion. */
        private byte[] readBack;
        /**
         * The listener installed at subscription ({@link CqfluxListener}), else {@code null}: then
         * nothing reads the clock, as for an {@link OpMono}.
         */
        private final CqfluxListener listener;
        /** {@code System.nanoTime()} at subscription when {@link #listener} is set; the operation's time counts from here. */
        public final long subscribedAt;
        /**
         * Who reports the outcome, once: this subscription (an outcome that never reached an
         * operation: a check, the pool, a cancel or the connection's end while waiting) or the
         * {@link OpMono} it subscribes ({@link #listenerForOperation}).
         */
        @SuppressWarnings("unused") // through REPORTED
        private volatile int reported;
        /** {@link #NOT_HELD}, {@link #HELD}, {@link #RELEASED} or {@link #LEFT} (through HOLD). */
        @SuppressWarnings("unused")
        private volatile int hold;

        public Staged(StagedMono<T> spec, CoreSubscriber<? super T> actual) {
            this.spec = spec;
            this.actual = actual;
            CqfluxListener l = spec.core.instrumentation.listener;
            this.subscribedAt = l == null ? 0 : System.nanoTime();
            this.listener = l == null ? null : Instrumentation.started(l, spec.core, spec.kind.publicKind(),
                    spec.array != null ? spec.array.length : spec.buffer != null ? spec.buffer.remaining() : spec.readLength,
                    actual.currentContext());
        }

        /**
         * {@return the listener the {@link OpMono} this subscription subscribes reports to (with
         * {@link #subscribedAt}, so that the wait for a buffer counts), or {@code null} when none
         * was installed at subscription or this subscription reported its outcome already}
         */
        public CqfluxListener listenerForOperation() {
            return listener != null && REPORTED.compareAndSet(this, 0, 1) ? listener : null;
        }

        /**
         * Tells the listener, if any, of an outcome that never reached an operation; once, before
         * the subscriber's signal (as {@link OpMono} does).
         */
        private void report(OperationOutcome outcome, @Nullable Throwable error) {
            CqfluxListener l = listener;
            if (l == null || !REPORTED.compareAndSet(this, 0, 1)) {
                return;
            }
            StagedMono.report(l, spec.core, spec.kind, outcome, error, System.nanoTime() - subscribedAt,
                    actual.currentContext());
        }

        public void start() {
            if (!STATE.compareAndSet(this, NEW, WAITING)) {
                return; // cancelled already
            }
            // The connection knows its waiters, so that its end fails them (ConnectionCore's
            // failEverything); one that ended since the subscription's check gets its error now.
            if (!spec.core.admission.addStagedWaiter(this)) {
                RuntimeException ended;
                try {
                    spec.core.admission.checkOpen();
                    ended = new IllegalStateException("connection " + spec.core.description + " ended");
                } catch (RuntimeException e) {
                    ended = e;
                }
                refused(ended);
                return;
            }
            if (spec.kind.isMessage(spec.core.transport) && spec.core.holdsStagedMessages()) {
                // Messages wait for the peer's credit: this one waits behind them without a
                // buffer, so that a peer that takes no messages holds none of the pool's
                // (SendQueue's hold); the loop asks the pool for it (releaseFromHold).
                hold = HELD;
                spec.core.holdStaged(this);
                // A cancel or the connection's end from another thread since the subscription
                // may have looked at the hold before it was HELD: one of the two sides sees the
                // other (hold written before state is read here, state before hold there), and
                // leaveHold counts it out once.
                int s = state;
                if (s == CANCELLED || s == FAILED) {
                    leaveHold();
                }
                return;
            }
            requestLease();
        }

        private void requestLease() {
            API.request(spec.pool, this);
            int s = state;
            if (s == CANCELLED || s == FAILED) {
                // Cancelled or withdrawn by the end while the request was on its way to the
                // queue (their withdraw found nothing yet): leave it now, never hold a place.
                API.withdraw(spec.pool, this);
            }
        }

        /**
         * Loop thread: the connection's hold releases this held message: it asks the pool for a
         * buffer now. {@return false when it left the hold already (cancelled, failed): the loop
         * releases the next}
         */
        public boolean releaseFromHold() {
            if (!HOLD.compareAndSet(this, HELD, RELEASED)) {
                return false;
            }
            requestLease();
            int s = state;
            if (s == CANCELLED || s == FAILED) {
                leaveHold(); // ended while released: no operation will reach the send queue for it
            }
            return true;
        }

        /** {@return whether it waits in its connection's hold (not released, not left)} */
        public boolean isHeld() {
            return hold == HELD;
        }

        /**
         * Loop thread: the hold refuses it (pendingLimit, as a waiting operation is refused).
         * {@return false when it left the hold already}
         */
        public boolean refuseFromHold(Throwable error) {
            if (!HOLD.compareAndSet(this, HELD, LEFT)) {
                return false;
            }
            if (state == WAITING) {
                refused(error); // not when a cancel or the end got here first: it has its outcome
            }
            return true;
        }

        /**
         * Loop thread: its operation reached the send queue. {@return whether it came from the
         * hold (the loop may release the next)}
         */
        public boolean reachedQueue() {
            return hold == RELEASED && HOLD.compareAndSet(this, RELEASED, LEFT);
        }

        /**
         * Any thread: it ends before its operation reached the send queue (or after: then a
         * no-op): a held one leaves the hold, a released one tells the loop, which releases the
         * next. Once.
         */
        private void leaveHold() {
            for (;;) {
                int h = hold;
                if (h == HELD) {
                    if (HOLD.compareAndSet(this, HELD, LEFT)) {
                        spec.core.dropHeld(this);
                        return;
                    }
                } else if (h == RELEASED) {
                    if (HOLD.compareAndSet(this, RELEASED, LEFT)) {
                        spec.core.heldGone();
                        return;
                    }
                } else {
                    return;
                }
            }
        }

        /**
         * The connection ended while this operation waits for a buffer: it leaves the pool's queue
         * and fails with the connection's end, as the connection's queued operations do. Called
         * by {@link ConnectionCore}'s end (loop thread); a no-op once a lease was taken (the
         * operation then fails on the ended connection itself), after a cancel or a refusal.
         *
         * @param cause the connection's terminal cause
         */
        public void connectionEnded(Throwable cause) {
            if (STATE.compareAndSet(this, WAITING, FAILED)) {
                leaveHold(); // after the state, as in cancel()
                API.withdraw(spec.pool, this);
                spec.core.admission.removeStagedWaiter(this);
                report(OperationOutcome.ERROR, cause);
                terminateWithError(cause, false);
            }
        }

        // ------------------------------------------------------------ Subscription (downstream)

        @Override
        public void request(long n) {
            if (n <= 0) {
                IllegalArgumentException e = Exceptions.nullOrNegativeRequestException(n);
                int s = state;
                if (s == NEW || s == WAITING) {
                    report(OperationOutcome.ERROR, e); // an operation under way reports its own
                }
                cancel();
                terminateWithError(e, true);
                return;
            }
            for (;;) {
                int d = demand;
                if (d == VALUE) {
                    if (DEMAND.compareAndSet(this, VALUE, EMITTED)) {
                        emit();
                    }
                    return;
                }
                if (d != NO_REQUEST_NO_VALUE || DEMAND.compareAndSet(this, NO_REQUEST_NO_VALUE, REQUESTED)) {
                    return;
                }
            }
        }

        /**
         * Detaches the subscriber. A wait for a buffer is left; an operation already under way
         * keeps its lease until it is terminal at the NIC.
         */
        @Override
        public void cancel() {
            cancelled = true;
            leaveHold();
            int s = state;
            if ((s == NEW || s == WAITING) && STATE.compareAndSet(this, s, CANCELLED)) {
                leaveHold(); // again, after the state: a start() holding it meanwhile sees one or the other
                if (s == WAITING) {
                    API.withdraw(spec.pool, this);
                    spec.core.admission.removeStagedWaiter(this);
                }
                report(OperationOutcome.CANCELLED, null);
                return;
            }
            Subscription in = inner;
            if (in != null) {
                in.cancel();
            }
        }

        // ------------------------------------------------------------ Taker (the pool)

        @Override
        public boolean take(BufferLease lease) {
            if (!STATE.compareAndSet(this, WAITING, RUNNING)) {
                return false;
            }
            spec.core.admission.removeStagedWaiter(this);
            // From here on the lease is this subscription's: whatever fails, the subscriber hears
            // of it and the buffer goes back (the pool's "must not throw").
            try {
                if (source != null) {
                    copyIn(lease);
                }
                StagedMono<T> m = spec;
                new OpMono(m.core, m.kind, m.remote, m.remoteOffset, API.region(lease), API.offset(lease), length, 0,
                        m.flushType, lease, m.kind == OpKind.READ ? this : null, this).subscribe(this);
            } catch (Throwable e) {
                Exceptions.throwIfJvmFatal(e);
                // Nothing posted. A no-op once the operation took the lease over: it gives the
                // buffer back itself and signals its own failure, which comes first.
                lease.release();
                leaveHold();
                // A no-op once the operation exists: it reports (a cancel included) itself.
                report(cancelled ? OperationOutcome.CANCELLED : OperationOutcome.ERROR, cancelled ? null : e);
                terminateWithError(e, false);
            }
            return true;
        }

        /** Copies the source into the leased buffer. */
        private void copyIn(BufferLease lease) {
            try {
                MemorySegment.copy(source, 0, lease.segment(), 0, length);
            } catch (IllegalStateException e) {
                // The pool closed after this grant and, with no operation left on its region,
                // freed the memory: the pool's closed error, as for a waiter the close refused.
                // (A ByteBuffer's own freed memory fails here too, while the pool is open.)
                if (spec.pool.isClosed()) {
                    ResourceClosedException closed = API.closedError(spec.pool);
                    closed.addSuppressed(e);
                    throw closed;
                }
                throw e;
            }
        }

        /** The pool refused it (full, closed), or a check did before it asked: it never gets a lease. */
        @Override
        public void refused(Throwable error) {
            leaveHold();
            for (;;) {
                int s = state;
                if (s != NEW && s != WAITING) {
                    break; // cancelled or failed already: dropped below
                }
                if (STATE.compareAndSet(this, s, FAILED)) {
                    if (s == WAITING) {
                        spec.core.admission.removeStagedWaiter(this);
                    }
                    report(OperationOutcome.ERROR, error);
                    break;
                }
            }
            terminateWithError(error, false);
        }

        /**
         * The read's data leaves the buffer: called by {@link OpMono#releaseRegions} once the
         * read is terminal at the NIC, right before the lease goes back (loop thread).
         */
        public void copyOut(MemorySegment buffer) {
            readBack = buffer.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE);
        }

        // ------------------------------------------------------------ CoreSubscriber<Void> (the OpMono)

        @Override
        public void onSubscribe(Subscription s) {
            inner = s;
            if (cancelled) {
                s.cancel();
            }
        }

        @Override
        public void onNext(Void v) {
            // an OpMono emits no value
        }

        @Override
        public void onError(Throwable t) {
            leaveHold(); // a no-op once its operation reached the send queue
            terminateWithError(t, false);
        }

        @Override
        public void onComplete() {
            leaveHold();
            if (!DONE.compareAndSet(this, 0, 1)) {
                return;
            }
            if (cancelled) {
                return;
            }
            if (spec.kind != OpKind.READ) {
                actual.onComplete();
                return;
            }
            for (;;) {
                int d = demand;
                if (d == REQUESTED) {
                    if (DEMAND.compareAndSet(this, REQUESTED, EMITTED)) {
                        emit();
                    }
                    return;
                }
                if (d != NO_REQUEST_NO_VALUE || DEMAND.compareAndSet(this, NO_REQUEST_NO_VALUE, VALUE)) {
                    return;
                }
            }
        }

        @Override
        public Context currentContext() {
            return actual.currentContext();
        }

        @SuppressWarnings("unchecked") // T is byte[] for a read
        private void emit() {
            if (cancelled) {
                return;
            }
            actual.onNext((T) readBack);
            actual.onComplete();
        }

        private void terminateWithError(Throwable t, boolean evenIfCancelled) {
            if (!DONE.compareAndSet(this, 0, 1)) {
                Operators.onErrorDropped(t, actual.currentContext());
                return;
            }
            if (cancelled && !evenIfCancelled) {
                Operators.onErrorDropped(t, actual.currentContext());
                return;
            }
            actual.onError(t);
        }
    }
}
