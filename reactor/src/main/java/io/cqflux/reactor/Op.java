package io.cqflux.reactor;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.util.annotation.Nullable;

/**
 * One subscription to an {@link OpMono}: the pending operation. Created on the subscribing
 * thread; from the hand-over to the loop on, every field but {@link #cancelled} and the terminal
 * flag is confined to the connection's loop thread.
 *
 * <p>Cancellation only detaches the subscriber: the slot, the credits and the region references
 * stay held until the completion arrives or the connection's native objects are destroyed (the
 * NIC may still use the buffers), and a late outcome is dropped through
 * {@link Operators#onErrorDropped}. An operation cancelled while still waiting for a credit is
 * never posted.
 *
 * <p>The terminal signal is sent at most once, whichever thread gets there first: the loop (a
 * completion, the connection's end) or the subscriber's own thread (a {@code request(n <= 0)},
 * Reactive Streams §3.9).
 */
final class Op implements Subscription, Scannable {
    static final int NEW = 0;
    /** First part of a two-part operation posted, the second still to post. */
    static final int SECOND_PENDING = 1;
    static final int POSTED = 2;

    private static final VarHandle TERMINATED;
    private static final VarHandle REPORTED;

    static {
        try {
            TERMINATED = MethodHandles.lookup().findVarHandle(Op.class, "terminated", int.class);
            REPORTED = MethodHandles.lookup().findVarHandle(Op.class, "reported", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final OpMono spec;
    final CoreSubscriber<? super Void> actual;
    volatile boolean cancelled;
    @SuppressWarnings("unused") // through TERMINATED
    private volatile int terminated;
    /** Whether the region references were released. Loop thread. */
    boolean released;
    /** Loop thread. */
    int stage = NEW;
    /** The in-flight table context, or -1. Loop thread. */
    long context = -1;
    /** {@code System.nanoTime()} when posted (the operation deadline counts from here). Loop thread. */
    long postedAt;
    /**
     * This operation's own failure (its error completion), which the end of the connection that
     * follows must not replace with the connection's. Loop thread.
     */
    Throwable ownError;

    /**
     * The listener when one was installed at subscription ({@link CqfluxListener}), else
     * {@code null}: then {@link #report} is one null check, and nothing reads the clock.
     */
    private final CqfluxListener listener;
    /** {@code System.nanoTime()} at subscription when {@link #listener} is set. */
    private final long subscribedAt;
    @SuppressWarnings("unused") // through REPORTED: the outcome is reported once (cancel races the end)
    private volatile int reported;

    Op(OpMono spec, CoreSubscriber<? super Void> actual) {
        this.spec = spec;
        this.actual = actual;
        this.listener = spec.core.instrumentation.listener;
        this.subscribedAt = listener == null ? 0 : System.nanoTime();
    }

    /**
     * An operation staged through the buffer pool ({@link StagedMono}): the listener and the
     * time come from the staged subscription, so that the time includes the wait for a buffer.
     *
     * @param listener the listener to report to, or {@code null} (none installed, or the staged
     *     subscription reported the outcome itself)
     * @param subscribedAt {@code System.nanoTime()} at the staged subscription
     */
    Op(OpMono spec, CoreSubscriber<? super Void> actual, CqfluxListener listener, long subscribedAt) {
        this.spec = spec;
        this.actual = actual;
        this.listener = listener;
        this.subscribedAt = subscribedAt;
    }

    /**
     * Tells the listener, if any, how the operation ended; once. Called before the subscriber's
     * signal, so that the time excludes what the subscriber does with it.
     */
    private void report(OperationOutcome outcome, Throwable error) {
        CqfluxListener l = listener;
        if (l == null || !REPORTED.compareAndSet(this, 0, 1)) {
            return;
        }
        long nanos = System.nanoTime() - subscribedAt;
        try {
            l.operationFinished(spec.core.api, OperationKind.of(spec.kind), outcome, Instrumentation.errorName(error),
                    nanos);
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
    boolean isTerminated() {
        return terminated != 0;
    }

    /** Signals success, unless already terminated; a throwing subscriber never escapes. */
    void complete() {
        if (!TERMINATED.compareAndSet(this, 0, 1)) {
            return;
        }
        if (cancelled) {
            return;
        }
        report(OperationOutcome.SUCCESS, null);
        try {
            actual.onComplete();
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            Operators.onErrorDropped(t, actual.currentContext());
        }
    }

    /**
     * Signals an error, unless already terminated; after cancellation it goes to
     * {@link Operators#onErrorDropped}.
     *
     * @param error the failure
     */
    void fail(Throwable error) {
        if (!TERMINATED.compareAndSet(this, 0, 1)) {
            return;
        }
        if (cancelled) {
            Operators.onErrorDropped(error, actual.currentContext());
            return;
        }
        report(OperationOutcome.ERROR, error);
        deliverError(error);
    }

    private void signalError(Throwable error) {
        if (TERMINATED.compareAndSet(this, 0, 1)) {
            report(OperationOutcome.ERROR, error);
            deliverError(error);
        }
    }

    private void deliverError(Throwable error) {
        try {
            actual.onError(error);
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            Operators.onErrorDropped(t, actual.currentContext());
        }
    }

    /** Marks the operation finished without a signal (cancelled before it was posted). */
    void discard() {
        TERMINATED.compareAndSet(this, 0, 1);
    }

    /** Releases the local regions' in-flight references, once. */
    void releaseRegions() {
        if (!released) {
            released = true;
            spec.releaseRegions();
        }
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
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        return null;
    }
}
