package io.cqflux.reactor.internal.op;

import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.internal.Segments;
import io.cqflux.reactor.BufferLease;
import io.cqflux.reactor.CqfluxListener;
import io.cqflux.reactor.OperationOutcome;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import io.cqflux.reactor.internal.resources.ApiAccess;
import io.cqflux.reactor.internal.resources.Instrumentation;
import io.cqflux.reactor.internal.resources.LeaseTaker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Operators;
import reactor.util.annotation.Nullable;
import reactor.util.context.Context;

/**
 * One subscription of a {@link StagedMono} (its class comment has the life of one): waits for a
 * lease, a message first for its place in the connection's hold, then drives the {@link OpMono}
 * that owns the lease (as its subscriber) and relays its outcome.
 *
 * @param <T> {@code Void} for writes and sends, {@code byte[]} for a read
 */
public final class StagedSubscription<T> implements Subscription, LeaseTaker, CoreSubscriber<Void> {
    private static final ApiAccess API = ApiAccess.get();

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
    /** Held: waits, without a buffer, for the peer's credit and the messages before it. */
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
            STATE = l.findVarHandle(StagedSubscription.class, "state", int.class);
            DEMAND = l.findVarHandle(StagedSubscription.class, "demand", int.class);
            DONE = l.findVarHandle(StagedSubscription.class, "done", int.class);
            REPORTED = l.findVarHandle(StagedSubscription.class, "reported", int.class);
            HOLD = l.findVarHandle(StagedSubscription.class, "hold", int.class);
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

    StagedSubscription(StagedMono<T> spec, CoreSubscriber<? super T> actual) {
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
                spec.core.admission.checkNotEnded(); // admitted at its subscription: the end's verdict
                ended = new IllegalStateException("connection " + spec.core.description + " ended");
            } catch (RuntimeException e) {
                ended = e;
            }
            refused(ended);
            return;
        }
        if (holdIfMessagesWait()) {
            return;
        }
        requestLease();
    }

    /**
     * Puts a message in its connection's hold when messages wait there or the peer has no credit
     * (MessageHold): it then waits without a buffer, and the loop asks the pool for one for it
     * (releaseFromHold). {@return whether it was held}
     */
    private boolean holdIfMessagesWait() {
        if (!spec.kind.isMessage(spec.core.transport) || !spec.core.holdsStagedMessages()) {
            return false;
        }
        enterHold();
        return true;
    }

    /** Enters its connection's hold (holdIfMessagesWait). */
    private void enterHold() {
        hold = HELD;
        spec.core.holdStaged(this);
        // A cancel or the connection's end from another thread may have looked at the hold
        // before it was HELD: one of the two sides sees the other (hold written before state is
        // read here, state before hold there), and leaveHold counts it out once.
        int s = state;
        if (s == CANCELLED || s == FAILED) {
            leaveHold();
        }
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
     * Loop thread: takes it out of the hold to refuse it (then {@link #refuseHeld}), so that the
     * hold counts it out before its subscriber hears of it. {@return false when it left the hold
     * already}
     */
    public boolean leaveHoldRefused() {
        return HOLD.compareAndSet(this, HELD, LEFT);
    }

    /** Loop thread: fails it, out of the hold ({@link #leaveHoldRefused}), unless a cancel or the end came first. */
    public void refuseHeld(Throwable error) {
        if (state == WAITING) {
            refused(error);
        }
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
        meet(VALUE, REQUESTED);
    }

    /**
     * One side of the demand handshake (downstream's request, or the read's value): emits when
     * the other side arrived first ({@code other}), else records this side's arrival
     * ({@code mine}); whichever comes second emits, once.
     */
    private void meet(int other, int mine) {
        for (;;) {
            int d = demand;
            if (d == other) {
                if (DEMAND.compareAndSet(this, other, EMITTED)) {
                    emit();
                }
                return;
            }
            if (d != NO_REQUEST_NO_VALUE || DEMAND.compareAndSet(this, NO_REQUEST_NO_VALUE, mine)) {
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
        readBack = Segments.copyOut(buffer, 0, length); // not toArray, which builds a layout per call
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
        meet(REQUESTED, VALUE);
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
