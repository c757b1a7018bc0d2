package io.cqflux.reactor.internal.op;

import io.cqflux.reactor.Cqflux;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The wait behind an operation's {@code block()}: Reactor's {@code Mono.block()} contract (the
 * same refusal on a {@code NonBlocking} thread, the same exceptions on error, timeout and
 * interrupt, cancel on timeout and interrupt), but the caller spins for up to a budget before it
 * parks.
 *
 * <p>Why: a parked caller is woken by the loop's {@code LockSupport.unpark}, which costs the
 * loop a futex system call and the caller a scheduler wake-up, which can take longer than the
 * operation itself. A caller that spins finds the completion
 * without either. The budget bounds what a slow operation costs in CPU; after it the caller parks
 * as Reactor's does. Spinning only helps where the caller has a core of its own: see
 * {@code Cqflux.Builder.blockSpin} for when the instance turns it off.
 */
public final class SpinThenParkSubscriber<T> extends CountDownLatch implements CoreSubscriber<T> {

    private volatile Subscription s;
    private volatile boolean cancelled;
    /** Written before {@link #countDown()}, read after the count reached 0 (happens-before). */
    private T value;
    /** As {@link #value}. */
    private Throwable error;

    public SpinThenParkSubscriber() {
        super(1);
    }

    /**
     * Subscribes a waiter to {@code mono} and blocks as Reactor's {@code block()} or
     * {@code block(Duration)} does, with a spin first. The caller has already called
     * {@link #refuseNonBlockingThread()}: before the subscription, on this path and on the one to
     * Reactor's own {@code block()} alike (Reactor's subscribes first, and an operation would be
     * posted with nobody to see its outcome).
     *
     * @param mono the operation
     * @param spinNanos the spin budget, above 0
     * @param timed whether {@code timeoutNanos} bounds the wait
     * @param timeoutNanos the bound, when {@code timed}
     * @param <T> the value's type
     * @return the value, or {@code null} when the operation completed empty
     */
    public static <T> T block(Mono<T> mono, long spinNanos, boolean timed, long timeoutNanos) {
        SpinThenParkSubscriber<T> w = new SpinThenParkSubscriber<>();
        mono.subscribe((Subscriber<T>) w);
        return w.blockingGet(spinNanos, timed, timeoutNanos);
    }

    @Override
    public void onSubscribe(Subscription s) {
        this.s = s;
        if (!cancelled) {
            s.request(Long.MAX_VALUE);
        }
    }

    @Override
    public void onNext(T t) {
        // As Reactor's BlockingMonoSubscriber: the first value ends the wait.
        if (value == null) {
            value = t;
            countDown();
        }
    }

    @Override
    public void onError(Throwable t) {
        if (value == null) {
            error = t;
            countDown();
        }
    }

    @Override
    public void onComplete() {
        countDown();
    }

    private void dispose() {
        cancelled = true;
        Subscription sub = s;
        if (sub != null) {
            s = null;
            sub.cancel();
        }
    }

    /**
     * Waits for the terminal signal: spins for up to {@code spinNanos}, then parks.
     *
     * @param spinNanos the spin budget, 0 for none
     * @param timed whether {@code timeoutNanos} bounds the wait ({@code block(Duration)})
     * @param timeoutNanos the whole wait's bound, spin included, when {@code timed}
     * @return the value, or {@code null} when the operation completed empty
     * @throws IllegalStateException on timeout (the operation is then cancelled)
     * @throws RuntimeException the operation's error, as {@link Exceptions#propagate} wraps it
     */
    private T blockingGet(long spinNanos, boolean timed, long timeoutNanos) {
        if (getCount() != 0) {
            long start = System.nanoTime();
            long spin = timed ? Math.min(spinNanos, timeoutNanos) : spinNanos;
            // An interrupted caller does not spin: the park throws at once, as Reactor's does.
            if (spin > 0 && !Thread.currentThread().isInterrupted()) {
                spin(start, spin);
            }
            if (getCount() != 0) {
                park(timed, timed ? timeoutNanos - (System.nanoTime() - start) : 0, timeoutNanos);
            }
        }
        Throwable e = error;
        if (e != null) {
            RuntimeException re = Exceptions.propagate(e);
            re.addSuppressed(new Exception("#block terminated with an error"));
            throw re;
        }
        return value;
    }

    private void park(boolean timed, long remaining, long timeoutNanos) {
        try {
            if (!timed) {
                await();
            } else if (!await(remaining, TimeUnit.NANOSECONDS)) {
                dispose();
                String m = "Timeout on blocking read for " + timeoutNanos + " " + TimeUnit.NANOSECONDS;
                throw new IllegalStateException(m, new TimeoutException(m));
            }
        } catch (InterruptedException ex) {
            dispose();
            Thread.currentThread().interrupt();
            RuntimeException re = Exceptions.propagate(ex);
            if (timed) {
                re.addSuppressed(new Exception("#block has been interrupted")); // as Reactor's timed wait
            }
            throw re;
        }
    }

    /**
     * Reactor's refusal to block a {@code NonBlocking} thread (an event loop's, a parallel
     * scheduler's), with its message.
     *
     * @throws IllegalStateException on such a thread
     */
    public static void refuseNonBlockingThread() {
        if (Schedulers.isInNonBlockingThread()) {
            throw new IllegalStateException("block()/blockFirst()/blockLast() are blocking, which is not supported in thread "
                    + Thread.currentThread().getName());
        }
    }

    /**
     * Spins until the count reaches 0, {@code budget} nanoseconds passed since {@code start}, or
     * the thread is interrupted; the clock and the interrupt are read every 64 rounds.
     */
    private void spin(long start, long budget) {
        for (int i = 1; getCount() != 0; i++) {
            Thread.onSpinWait();
            if ((i & 63) == 0 && (System.nanoTime() - start >= budget || Thread.currentThread().isInterrupted())) {
                return;
            }
        }
    }
}
