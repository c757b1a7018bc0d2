package io.cqflux.reactor;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/*
 * Design (issue 13: `write().block()` cost 1.9-2.2 x a chained write).
 *
 * Reactor's Mono.block() subscribes a CountDownLatch subscriber and parks at once. An operation's
 * completion then pays LockSupport.unpark (a futex wake-up) on the loop thread and a scheduler
 * wake-up of the caller's thread, which on a small VM is often the slowest part of the round trip.
 * This subscriber first spins for SPIN_NANOS (Thread.onSpinWait), long enough for a busy-polled
 * fabric/tcp or RDMA round trip, and only then announces itself as parked (the `waiter` field) and
 * parks. The loop thread unparks only an announced waiter: both sides store, then load, volatiles
 * (done; waiter), so (Dekker) either the waiter sees `done` before parking or the completer sees
 * the waiter and unparks it. A completion within the spin costs no system call on either side.
 * On one CPU spinning only delays the thread that would complete it: there the spin is skipped.
 *
 * What the caller sees is Mono.block()'s contract, unchanged: the same refusal on a non-blocking
 * thread, the same exceptions (Exceptions.propagate with "#block terminated with an error"
 * suppressed), the same timeout exception, and the same cancellation on timeout or interrupt.
 */

/**
 * A {@code block()} for one operation Mono that spins briefly before it parks (see the design
 * comment at the top of this file). Used once, by one caller thread.
 */
final class SpinThenParkBlock implements CoreSubscriber<Void> {

    /** How long a blocked caller spins before parking: a few busy-polled round trips. */
    static final long SPIN_NANOS = 20_000;
    private static final boolean SPIN = Runtime.getRuntime().availableProcessors() > 1;

    private static final VarHandle DONE;
    private static final VarHandle WAITER;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            DONE = l.findVarHandle(SpinThenParkBlock.class, "done", boolean.class);
            WAITER = l.findVarHandle(SpinThenParkBlock.class, "waiter", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // through DONE
    private volatile boolean done;
    @SuppressWarnings("unused") // through WAITER
    private volatile Thread waiter;
    private volatile Subscription subscription;
    /** Written before {@link #done}, read after it. */
    private Throwable error;

    private SpinThenParkBlock() {
    }

    /**
     * Subscribes to {@code mono} and waits for its terminal signal, like {@link Mono#block()} /
     * {@link Mono#block(Duration)}.
     *
     * @param mono the operation
     * @param timeout the longest wait, or {@code null} for none
     * @throws RuntimeException what the operation failed with (as {@link Mono#block()} throws
     *     it), or {@link IllegalStateException} on a non-blocking thread or after the timeout
     */
    static void block(Mono<Void> mono, Duration timeout) {
        if (Schedulers.isInNonBlockingThread()) {
            throw new IllegalStateException("block()/blockFirst()/blockLast() are blocking, which is not supported in thread "
                    + Thread.currentThread().getName());
        }
        SpinThenParkBlock s = new SpinThenParkBlock();
        mono.subscribe(s);
        s.await(timeout == null ? -1 : timeout.toNanos());
        Throwable e = s.error;
        if (e != null) {
            RuntimeException re = Exceptions.propagate(e);
            re = Exceptions.addSuppressed(re, new Exception("#block terminated with an error"));
            throw re;
        }
    }

    private void await(long timeoutNanos) {
        if ((boolean) DONE.getVolatile(this)) {
            return;
        }
        long start = System.nanoTime();
        if (SPIN) {
            while (System.nanoTime() - start < SPIN_NANOS) {
                Thread.onSpinWait();
                if ((boolean) DONE.getVolatile(this)) {
                    return;
                }
            }
        }
        WAITER.setVolatile(this, Thread.currentThread());
        while (!(boolean) DONE.getVolatile(this)) {
            if (timeoutNanos < 0) {
                LockSupport.park(this);
            } else {
                long left = timeoutNanos - (System.nanoTime() - start);
                if (left <= 0) {
                    cancel();
                    String message = "Timeout on blocking read for " + timeoutNanos + " " + TimeUnit.NANOSECONDS;
                    throw new IllegalStateException(message, new TimeoutException(message));
                }
                LockSupport.parkNanos(this, left);
            }
            if (Thread.interrupted()) {
                cancel();
                Thread.currentThread().interrupt();
                throw Exceptions.propagate(new InterruptedException());
            }
        }
    }

    private void cancel() {
        Subscription s = subscription;
        if (s != null) {
            s.cancel();
        }
    }

    private void signal() {
        DONE.setVolatile(this, true);
        Thread t = (Thread) WAITER.getVolatile(this);
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    @Override
    public void onSubscribe(Subscription s) {
        subscription = s;
        s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(Void v) {
        // a Mono<Void> emits no value
    }

    @Override
    public void onError(Throwable t) {
        error = t;
        signal();
    }

    @Override
    public void onComplete() {
        signal();
    }
}
