package io.cqflux.reactor.internal.op;

import io.cqflux.core.FlushType;
import io.cqflux.reactor.BufferLease;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.CqfluxListener;
import io.cqflux.reactor.OperationKind;
import io.cqflux.reactor.OperationOutcome;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import io.cqflux.reactor.internal.resources.ApiAccess;
import io.cqflux.reactor.internal.resources.Instrumentation;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.annotation.Nullable;

/**
 * A cold operation and, once subscribed, the pending operation itself: an {@code OpMono} is its
 * own first subscription, so that subscribing the Mono a method returned allocates nothing
 * between the subscription and the completion. The first subscriber claims it
 * atomically; a later subscription (a retry, a repeat, a second subscriber at the same time)
 * runs on a fresh copy made by {@link #copy()}, independent of the first: each subscription posts
 * again, as a cold Mono does.
 *
 * <p><b>As a Mono.</b> An immutable description of what to post ({@link OpRequest}, which also
 * keeps how far the loop got in posting it). Each subscription checks the
 * arguments (errors are signalled, never thrown), takes references on the local regions, and
 * hands the operation to the connection's loop, which posts it when a credit is free. One that
 * carries a {@link BufferLease} is for one subscription: the lease goes with it (the copy a second
 * subscription gets carries the same lease, whose hand-over then fails).
 *
 * <p><b>As a subscription</b> (the pending operation). Claimed on the subscribing thread; from the
 * hand-over to the loop on, every field but {@link #cancelled} and the flags is confined to the
 * connection's loop thread. Cancellation only detaches the subscriber: the slot, the credits and
 * the region references stay held until the completion arrives or the connection's native
 * objects are destroyed (the NIC may still use the buffers), and a late failure of its own is
 * dropped through {@link Operators#onErrorDropped} (the connection's end is not:
 * {@link #failOnConnectionEnd}). An operation cancelled while still waiting for a credit is
 * never posted. The terminal signal is sent at most once, whichever thread gets there first: the
 * loop (a completion, the connection's end) or the subscriber's own thread (a
 * {@code request(n <= 0)}, Reactive Streams §3.9).
 * The subscriber is forgotten (a plain store) once the operation is finished and its regions are
 * released, by whichever of the two steps comes last: a finished Mono the user keeps (to
 * subscribe it again later) does not keep its first subscriber, and what it references, reachable.
 *
 * <p>{@link Runnable}: only as the loop task that hands a subscription made on another thread
 * over to the loop ({@link #run()}).
 *
 * <p>{@link Scannable}: its {@link Attr#NAME} is its kind's {@link OperationKind#sequenceName()}
 * ({@code cqflux.write}, ...), which {@code tap(Micrometer.metrics(...))}, {@code checkpoint} and
 * {@code Scannable.from(mono).name()} show; as a subscription it also answers
 * {@link Attr#CANCELLED}, {@link Attr#TERMINATED} and {@link Attr#ACTUAL}. The public methods
 * create it through {@link #assemble} ({@code Mono.onAssembly}), so Reactor's assembly hooks see
 * it.
 */
public final class OpMono extends OpRequest implements Subscription, Scannable, Runnable {
    private static final ApiAccess API = ApiAccess.get();

    /** {@link #flags}: a subscriber owns this instance (the first subscription). */
    private static final int CLAIMED = 1;
    /** {@link #flags}: the subscriber got (or can no longer get) its terminal signal. */
    private static final int TERMINATED = 2;
    /** {@link #flags}: the listener heard of the outcome (cancel races the end). */
    private static final int REPORTED = 4;
    private static final VarHandle FLAGS;

    static {
        try {
            FLAGS = MethodHandles.lookup().findVarHandle(OpMono.class, "flags", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // ------------------------------------------------------------ the subscription

    /**
     * The subscriber; set when claimed, cleared (a plain store) once the operation is finished and
     * its regions are released, so that a finished Mono the user keeps does not keep its first
     * subscriber reachable: by whoever sends the terminal signal (or marks the operation finished
     * without one) when the regions are already released, else by {@link #releaseRegions()}, which
     * then tells a {@link ReleaseListener}. Only those threads read it after the terminal flag.
     */
    public CoreSubscriber<? super Void> actual;
    public volatile boolean cancelled;
    /** {@link #CLAIMED}, {@link #TERMINATED}, {@link #REPORTED}; through {@link #FLAGS}. */
    @SuppressWarnings("unused")
    private volatile int flags;
    /** Whether the region references were released. Loop thread. */
    public boolean released;
    /**
     * The listener when one was installed at subscription ({@link CqfluxListener}), else
     * {@code null}: then {@link #report} is one null check, and nothing reads the clock.
     */
    private CqfluxListener listener;
    /** {@code System.nanoTime()} at subscription when {@link #listener} is set. */
    private long subscribedAt;

    public OpMono(ConnectionCore core, OpKind kind, PeerRegion remote, long remoteOffset, Region local, long localOffset,
           long length, long value, FlushType flushType) {
        this(core, kind, remote, remoteOffset, local, localOffset, length, value, flushType, null, null);
    }

    public OpMono(ConnectionCore core, OpKind kind, PeerRegion remote, long remoteOffset, Region local, long localOffset,
           long length, long value, FlushType flushType, BufferLease lease, StagedSubscription<?> readBack) {
        this(core, kind, remote, remoteOffset, local, localOffset, length, value, flushType, lease, readBack, null);
    }

    /**
     * @param readBack a staged read to copy the data out to, or null; when set it is the staged
     *     subscription the operation runs for ({@code stagedBy}, or {@code stagedBy} is null)
     */
    public OpMono(ConnectionCore core, OpKind kind, PeerRegion remote, long remoteOffset, Region local, long localOffset,
           long length, long value, FlushType flushType, BufferLease lease, StagedSubscription<?> readBack,
           StagedSubscription<?> stagedBy) {
        super(core, kind, remote, remoteOffset, local, localOffset, length, value, flushType, lease, readBack, stagedBy);
    }

    /** {@return a fresh, unclaimed operation of the same description, for another subscription} */
    public OpMono copy() {
        return new OpMono(core, kind, remote, remoteOffset, local, localOffset, length, value, flushType(), lease,
                readBack ? stagedBy : null, stagedBy);
    }

    /**
     * Hands a new operation Mono to Reactor's assembly hooks ({@code Hooks.onEachOperator},
     * {@code Hooks.onOperatorDebug}, ...), as Reactor's own operators do.
     *
     * @param m the operation
     * @return what the hooks made of it ({@code m} itself when none is installed)
     */
    public static Mono<Void> assemble(OpMono m) {
        return onAssembly(m);
    }

    @Override
    @Nullable
    @SuppressWarnings("rawtypes") // Scannable declares it with the raw Attr
    public Object scanUnsafe(Attr key) {
        if (key == Attr.CANCELLED) {
            return cancelled;
        }
        if (key == Attr.TERMINATED) {
            return isTerminated();
        }
        if (key == Attr.ACTUAL) {
            return actual;
        }
        return scanOperation(kind, key);
    }

    /**
     * What an operation Mono of {@code kind} answers to {@link Scannable#scanUnsafe}: its name and
     * run style; the one answer for this class and {@link StagedMono}.
     */
    @Nullable
    @SuppressWarnings("rawtypes") // Scannable declares it with the raw Attr
    public static Object scanOperation(OpKind kind, Attr key) {
        if (key == Attr.NAME) {
            return kind.publicKind().sequenceName();
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        return null;
    }

    @Override
    public String toString() {
        return kind.publicKind().sequenceName() + "[" + core.description + "]";
    }

    @Override
    public void subscribe(CoreSubscriber<? super Void> actual) {
        // The first subscriber takes this instance; any other runs on a copy of its own. A plain
        // read first: a Mono subscribed again (repeat, retry) skips the failing CAS.
        OpMono op = (int) FLAGS.getAcquire(this) == 0 && FLAGS.compareAndSet(this, 0, CLAIMED) ? this : claimedCopy();
        op.start(actual);
    }

    /**
     * Reactor's {@code block()}, but the caller spins for {@code Cqflux.Builder.blockSpin} before
     * it parks ({@link SpinThenParkSubscriber}); with no spin budget, Reactor's own. On a
     * {@code NonBlocking} thread it throws as Reactor's does, but before subscribing: Reactor's
     * subscribes first, and the operation would be posted with nobody to see its outcome.
     */
    @Override
    public Void block() {
        SpinThenParkSubscriber.refuseNonBlockingThread();
        long spin = core.blockSpinNanos;
        return spin == 0 ? super.block() : SpinThenParkSubscriber.block(this, spin, false, 0);
    }

    /**
     * Reactor's {@code block(Duration)}, but the caller spins first, as {@link #block()} does.
     *
     * @param timeout the longest wait
     */
    @Override
    public Void block(Duration timeout) {
        SpinThenParkSubscriber.refuseNonBlockingThread();
        long spin = core.blockSpinNanos;
        return spin == 0 ? super.block(timeout) : SpinThenParkSubscriber.block(this, spin, true, timeout.toNanos());
    }

    /** Reactor's, refusing a {@code NonBlocking} thread before subscribing, as {@link #block()} does. */
    @Override
    public java.util.Optional<Void> blockOptional() {
        SpinThenParkSubscriber.refuseNonBlockingThread();
        return super.blockOptional();
    }

    /**
     * Reactor's, refusing a {@code NonBlocking} thread before subscribing, as {@link #block()} does.
     *
     * @param timeout the longest wait
     */
    @Override
    public java.util.Optional<Void> blockOptional(Duration timeout) {
        SpinThenParkSubscriber.refuseNonBlockingThread();
        return super.blockOptional(timeout);
    }

    private OpMono claimedCopy() {
        OpMono c = copy();
        c.flags = CLAIMED; // not yet shared: a plain volatile store
        return c;
    }

    /** The subscription, on a claimed instance: signal onSubscribe, check, hand over to the loop. */
    private void start(CoreSubscriber<? super Void> actual) {
        this.actual = actual;
        if (stagedBy == null) {
            CqfluxListener l = core.instrumentation.listener;
            if (l != null) {
                subscribedAt = System.nanoTime();
                listener = Instrumentation.started(l, core, kind.publicKind(), length, actual.currentContext());
            }
        } else {
            listener = stagedBy.listenerForOperation();
            subscribedAt = stagedBy.subscribedAt;
        }
        actual.onSubscribe(this);
        boolean owned = false;
        try {
            if (lease != null) {
                API.handOver(lease);
                owned = true;
            }
            validate();
            if (local != null) {
                API.acquire(local, kind.localRole);
            }
        } catch (RuntimeException e) {
            released = true;
            if (owned) {
                // nothing was posted: the buffer goes back now
                API.releaseFromOperation(lease);
            }
            fail(e);
            return;
        }
        core.enqueue(this);
    }

    /**
     * The hand-over from a subscribing thread that is not the loop's
     * ({@link ConnectionCore#enqueue}): the operation is its own loop task, so the hand-over
     * allocates no capturing lambda. Loop thread (or after the loop ended).
     */
    @Override
    public void run() {
        core.submit(this);
    }

    // ------------------------------------------------------------ the subscription's signals

    /** Sets a flag once; {@return whether this call set it} */
    private boolean setFlag(int flag) {
        for (;;) {
            int f = (int) FLAGS.getVolatile(this);
            if ((f & flag) != 0) {
                return false;
            }
            if (FLAGS.compareAndSet(this, f, f | flag)) {
                return true;
            }
        }
    }

    /**
     * Tells the listener, if any, how the operation ended; once. Called before the subscriber's
     * signal, so that the time excludes what the subscriber does with it.
     */
    private void report(OperationOutcome outcome, Throwable error) {
        CqfluxListener l = listener;
        if (l == null || !setFlag(REPORTED)) {
            return;
        }
        long nanos = System.nanoTime() - subscribedAt;
        try {
            l.operationFinished(core.api, kind.publicKind(), outcome, Instrumentation.errorName(error), nanos);
        } catch (Throwable t) {
            // As for several listeners (Instrumentation's composite): logged, never thrown; not
            // Operators.onErrorDropped, whose application hook may rethrow into the loop's poll
            // before the subscriber had its signal.
            Instrumentation.listenerThrew(t);
        }
    }

    @Override
    public void request(long n) {
        // A Mono<Void> emits no value: demand does not gate the terminal signal. A non-positive
        // request is a protocol error the subscriber must hear of (Reactive Streams §3.9); the
        // operation itself, if posted, keeps its resources until its completion.
        if (n <= 0) {
            cancelled = true;
            signalError(Exceptions.nullOrNegativeRequestException(n));
        }
    }

    @Override
    public void cancel() {
        cancelled = true;
        if (listener != null && !isTerminated()) {
            report(OperationOutcome.CANCELLED, null);
        }
    }

    /** {@return whether the subscriber got (or can no longer get) its terminal signal} */
    public boolean isTerminated() {
        return (flags & TERMINATED) != 0;
    }

    /** Signals success, unless already terminated; a throwing subscriber never escapes. */
    public void complete() {
        if (!setFlag(TERMINATED)) {
            return;
        }
        CoreSubscriber<? super Void> a = actual;
        actual = null;
        if (cancelled) {
            // cancel() reports only while not terminated: a cancel racing this completion may
            // have seen TERMINATED already, so the listener hears of it here (once: REPORTED).
            reportCancelled();
            ReleaseListener.tell(a); // the completion path released the regions before this
            return;
        }
        report(OperationOutcome.SUCCESS, null);
        try {
            a.onComplete();
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            Operators.onErrorDropped(t, a.currentContext());
        }
    }

    /**
     * Signals an error, unless already terminated; after cancellation it goes to
     * {@link Operators#onErrorDropped}.
     *
     * @param error the failure
     */
    public void fail(Throwable error) {
        fail(error, false);
    }

    /**
     * Signals the connection's end, unless already terminated. After cancellation nothing is
     * dropped: the end is the connection's news, told once by its {@code events()} (and a WARN
     * line when it is LOST), and a subscriber that let go of the operation has no use for it.
     * Otherwise every cancelled operation in flight (a {@code writeAll}'s window, a burst of
     * {@code timeout()}s) would report the same exception to {@link Operators#onErrorDropped},
     * whose default logs each at ERROR.
     *
     * @param cause what ended the connection
     */
    public void failOnConnectionEnd(Throwable cause) {
        fail(cause, true);
    }

    private void fail(Throwable error, boolean connectionEnd) {
        if (!setFlag(TERMINATED)) {
            return;
        }
        CoreSubscriber<? super Void> a = actual;
        // The connection's end fails an operation in flight before its queue pair is destroyed
        // and its regions released: the subscriber is then kept, for releaseRegions to tell a
        // ReleaseListener (the thread that fails is the one that releases: the loop's, or the
        // subscribing thread's for a check that failed before the hand-over).
        boolean releasedNow = released;
        if (releasedNow) {
            actual = null;
        }
        if (cancelled) {
            reportCancelled();
            try {
                if (!connectionEnd) {
                    Operators.onErrorDropped(error, a.currentContext());
                }
            } finally {
                if (releasedNow) {
                    ReleaseListener.tell(a);
                }
            }
            return;
        }
        report(OperationOutcome.ERROR, error);
        deliverError(a, error);
        if (releasedNow) {
            ReleaseListener.tell(a);
        }
    }

    /**
     * Fails an operation that was never posted: its regions and pooled buffer go back first, then
     * the subscriber hears of the failure, as after a completion, so that code in {@code onError}
     * that retries, reuses the buffer or reads {@link Region#inFlight()} finds them free. The one
     * place that order is kept for every refusal before posting (queue full, not established, a
     * peer that never receives, a post that threw, the end while it waited).
     *
     * @param error the failure
     */
    public void failUnposted(Throwable error) {
        releaseRegions();
        fail(error);
    }

    /**
     * {@link #failUnposted} for the connection's end: a queued operation, cancelled or not, that
     * the end fails (nothing dropped after a cancel, as {@link #failOnConnectionEnd}).
     *
     * @param cause what ended the connection
     */
    public void failUnpostedOnConnectionEnd(Throwable cause) {
        releaseRegions();
        fail(cause, true);
    }

    private void signalError(Throwable error) {
        if (setFlag(TERMINATED)) {
            CoreSubscriber<? super Void> a = actual;
            actual = null;
            report(OperationOutcome.ERROR, error);
            deliverError(a, error);
        }
    }

    private static void deliverError(CoreSubscriber<? super Void> a, Throwable error) {
        try {
            a.onError(error);
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            Operators.onErrorDropped(t, a.currentContext());
        }
    }

    /** Marks the operation finished without a signal (cancelled before it was posted). */
    public void discard() {
        if (setFlag(TERMINATED)) {
            CoreSubscriber<? super Void> a = actual;
            boolean releasedNow = released; // the callers release right after: then told there
            if (releasedNow) {
                actual = null;
            }
            reportCancelled();
            if (releasedNow) {
                ReleaseListener.tell(a);
            }
        } else {
            reportCancelled();
        }
    }

    /**
     * Reports a cancelled subscription, once: from {@link #cancel()} while not terminated, or from
     * the loop's terminal step when a cancel raced it (the cancel then saw TERMINATED and said
     * nothing); without this a cancel racing the completion or the discard went unreported.
     */
    private void reportCancelled() {
        if (listener != null) {
            report(OperationOutcome.CANCELLED, null);
        }
    }

    /**
     * Releases the local regions' in-flight references, once: when the operation is terminal at
     * the NIC (its completion arrived, or the queue pair was destroyed, or it was never posted).
     * A staged read's data is copied out first, then the pooled buffer goes back, then the region
     * reference (which may deregister a closed region and so free the buffer's memory).
     */
    public void releaseRegions() {
        if (released) {
            return;
        }
        released = true;
        try {
            releaseNow();
        } finally {
            // A failure that came before this release (the connection's end) kept its subscriber
            // to be told now; on the success path the operation is not terminated yet here.
            CoreSubscriber<? super Void> a = actual;
            if (a != null && isTerminated()) {
                actual = null;
                ReleaseListener.tell(a);
            }
        }
    }

    private void releaseNow() {
        try {
            if (readBack) {
                stagedBy.copyOut(lease.segment());
            }
        } finally {
            try {
                if (lease != null) {
                    API.releaseFromOperation(lease);
                }
            } finally {
                if (local != null) {
                    API.release(local);
                }
            }
        }
    }
}
