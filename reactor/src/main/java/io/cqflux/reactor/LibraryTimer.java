package io.cqflux.reactor;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The real-time clock of the library's own timers: a connection's deadlines (operation timeout,
 * ENDING, handshake), the bound of its goodbye, a starved sender's re-read of its credit word;
 * a peer pool's reconnect backoff and acquire bound.
 *
 * <p>Not Reactor's {@code Schedulers.parallel()}: {@code StepVerifier.withVirtualTime} replaces
 * every scheduler Reactor hands out while it runs with its virtual clock, and drops what was
 * scheduled on it when it ends. A timer of the library armed in that window would then wait for
 * a virtual clock that nothing advances, and be lost afterwards: a send would never see the
 * credit that came, a connection made in the window would never time out. The caller's own
 * {@code timeout()}s stay Reactor's, so virtual time still moves them.
 *
 * <p>One daemon thread; its tasks only hand work to an event loop, so they are short.
 */
final class LibraryTimer {
    private static final Logger LOG = Loggers.getLogger(LibraryTimer.class);

    private static final ScheduledThreadPoolExecutor EXECUTOR = create();

    private LibraryTimer() {
    }

    private static ScheduledThreadPoolExecutor create() {
        ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "cqflux-timer");
            t.setDaemon(true);
            return t;
        });
        // A cancelled deadline (every connection that ends has one) leaves the queue at once.
        e.setRemoveOnCancelPolicy(true);
        return e;
    }

    /**
     * Runs {@code task} once after {@code delay}, in real time.
     *
     * @return a handle that cancels it
     */
    static Disposable schedule(Runnable task, long delay, TimeUnit unit) {
        return handle(EXECUTOR.schedule(guarded(task), delay, unit));
    }

    /**
     * Runs {@code task} every {@code period}, first after {@code initialDelay}, in real time.
     *
     * @return a handle that cancels it
     */
    static Disposable schedulePeriodically(Runnable task, long initialDelay, long period, TimeUnit unit) {
        return handle(EXECUTOR.scheduleAtFixedRate(guarded(task), initialDelay, period, unit));
    }

    /** A task that throws is logged: a periodic one would otherwise stop without a word. */
    private static Runnable guarded(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                LOG.error("cqflux timer task failed", e);
            }
        };
    }

    private static Disposable handle(ScheduledFuture<?> f) {
        return new Disposable() {
            @Override
            public void dispose() {
                f.cancel(false);
            }

            @Override
            public boolean isDisposed() {
                return f.isDone();
            }
        };
    }
}
