package io.cqflux.reactor.internal.resources;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.Exceptions;
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
 * <p>One daemon thread for the JVM. Its tasks hand work to an event loop and return; only once
 * that loop has ended does the work run here ({@code executeOrAfterTermination}), which may then
 * be a subscriber's signal (a pool's events, a failed acquire). So the thread is
 * {@link reactor.core.scheduler.NonBlocking}, as the loops are: a {@code block()} there fails
 * fast instead of holding every instance's timers.
 */
public final class LibraryTimer {
    private static final Logger LOG = Loggers.getLogger(LibraryTimer.class);

    private static final ScheduledThreadPoolExecutor EXECUTOR = create();

    private LibraryTimer() {
    }

    private static ScheduledThreadPoolExecutor create() {
        ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, r -> {
            // Nothing of whichever thread schedules first: not its inheritable thread locals,
            // not its context class loader (an application's, which a redeploy would leave
            // pinned). Non-blocking for Reactor, as the loops: a block() there would hold every
            // instance's timers.
            Thread t = new LoopThreadFactory.LoopThread(r, "cqflux-timer", false);
            t.setContextClassLoader(LibraryTimer.class.getClassLoader());
            t.setDaemon(true);
            return t;
        });
        // A cancelled deadline (every connection that ends has one) leaves the queue at once.
        e.setRemoveOnCancelPolicy(true);
        return e;
    }

    /**
     * Starts the timer thread now, from the caller's thread, if it is not running yet: a thread
     * inherits its creator's CPU priority (sched(7)), and the timer must not inherit a lowered
     * set-up thread's ({@code Cqflux.Builder.backgroundPriority}). Any thread.
     */
    public static void prestart() {
        EXECUTOR.prestartAllCoreThreads();
    }

    /**
     * Runs {@code task} once after {@code delay}, in real time.
     *
     * @return a handle that cancels it
     */
    public static Disposable schedule(Runnable task, long delay, TimeUnit unit) {
        return handle(EXECUTOR.schedule(guarded(task), delay, unit));
    }

    /**
     * Runs {@code task} every {@code period}, first after {@code initialDelay}, in real time.
     *
     * @return a handle that cancels it
     */
    public static Disposable schedulePeriodically(Runnable task, long initialDelay, long period, TimeUnit unit) {
        return handle(EXECUTOR.scheduleAtFixedRate(guarded(task), initialDelay, period, unit));
    }

    /**
     * A task that throws is logged (a periodic one would otherwise stop without a word), and the
     * timer goes on; a fatal error is logged, then rethrown.
     */
    private static Runnable guarded(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (Throwable t) {
                // Logged first: a fatal error rethrown ends a periodic task inside its future,
                // where nobody looks.
                LOG.error("cqflux timer task failed", t);
                Exceptions.throwIfJvmFatal(t);
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
