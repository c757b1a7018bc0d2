package io.cqflux.epoll.loop;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/*
 * Design.
 *
 * States. RUNNING; SHUTTING_DOWN after shutdownGracefully; FORCED after shutdownNow (also from
 * SHUTTING_DOWN); TERMINATED once the loop thread is done. Any thread requests a shutdown, under
 * one lock so that the first graceful deadline stands, and wakes the loop through the same path
 * as a task (EpollIoHandler's sleep/wake protocol re-reads the state after announcing a sleep).
 * Only the loop thread walks the way out: a graceful shutdown that passes its deadline drops what
 * is left as a forced one does, and TERMINATED is written as the very last step, after the
 * native memory is freed; the termination future completes right after.
 *
 * Failure. A handler (sink entry, onReadable, task, hook) that throws is logged and the loop goes
 * on. A queue whose poll()/acknowledge() throws is unregistered and its owner told through the
 * shutdown hook. Only a fatal Error (VirtualMachineError, LinkageError), or a failure of the
 * loop's own epoll_wait / eventfd (other than EINTR), ends the loop: it then
 * drops its tasks, unregisters every source with its hook, frees its native memory and completes
 * terminationFuture exceptionally.
 */

/**
 * The lifecycle of one {@link EventLoop}: its state, the shutdown requests of any thread, the way
 * out its thread takes (graceful: the queued tasks within the deadline and a last drain; forced
 * or fatal: the tasks dropped), and the termination future with the tasks that wait for it.
 *
 * <p>Thread safety and lifetime: the requests and the state reads are for any thread; the way
 * out ({@link #shutdownSequence()}, {@link #end}) is the loop thread's. Lives as long as its loop.
 */
final class LoopLifecycle {

    private static final int RUNNING = 0;
    private static final int SHUTTING_DOWN = 1;
    private static final int FORCED = 2;
    private static final int TERMINATED = 3;

    private final EventLoop loop;
    private final TaskQueue taskQueue;
    private final LoopCounters counters;
    private final BlockedLoopDetector detector;
    private final EpollIoHandler io;
    private final LoopTimer timers;
    private final CompletableFuture<Void> termination = new CompletableFuture<>();
    private final Object lock = new Object();
    private volatile int state = RUNNING;
    /** The loop ends, or ended, on a fatal error ({@link #end}); set before what it owns is failed. */
    private volatile boolean failed;
    /** Written under {@link #lock} before the state leaves RUNNING, read by the loop thread after. */
    private long gracefulDeadline;

    LoopLifecycle(EventLoop loop, TaskQueue taskQueue, LoopCounters counters, BlockedLoopDetector detector,
            EpollIoHandler io, LoopTimer timers) {
        this.loop = loop;
        this.taskQueue = taskQueue;
        this.counters = counters;
        this.detector = detector;
        this.io = io;
        this.timers = timers;
    }

    /**
     * Rethrows what must end the loop: a {@link VirtualMachineError} (out of memory, stack
     * overflow, internal error) or a {@link LinkageError}; anything else a handler throws is
     * logged and survived.
     *
     * @param t the throwable
     */
    static void rethrowIfFatal(Throwable t) {
        if (t instanceof VirtualMachineError v) {
            throw v;
        }
        if (t instanceof LinkageError l) {
            throw l;
        }
    }

    /** {@return whether the loop ends, or ended, on a fatal error; any thread} */
    boolean failed() {
        return failed;
    }

    /** {@return whether the loop still runs (no shutdown requested); any thread} */
    boolean isRunning() {
        return state == RUNNING;
    }

    /** {@return whether the loop has ended; any thread} */
    boolean isTerminated() {
        return state >= TERMINATED;
    }

    /** {@return completes when the loop thread has ended and its native memory is freed} */
    CompletableFuture<Void> termination() {
        return termination;
    }

    /** EventLoop.shutdownGracefully: the first deadline stands; any thread. */
    CompletableFuture<Void> shutdownGracefully(Duration timeout) {
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout " + timeout + " is negative");
        }
        synchronized (lock) {
            if (state == RUNNING) {
                long nanos = timeout.compareTo(Duration.ofDays(365)) > 0 ? TimeUnit.DAYS.toNanos(365) : timeout.toNanos();
                gracefulDeadline = System.nanoTime() + nanos;
                state = SHUTTING_DOWN;
            }
        }
        loop.wakeup();
        return termination;
    }

    /** EventLoop.shutdownNow; any thread. */
    void shutdownNow() {
        synchronized (lock) {
            if (state < FORCED) {
                state = FORCED;
            }
        }
        loop.wakeup();
    }

    /** EventLoop.close: graceful, then forced when that takes too long; returns at once on the loop thread. */
    void close(Duration timeout) {
        shutdownGracefully(timeout);
        if (loop.inEventLoop()) {
            return;
        }
        if (!await(timeout.plusSeconds(5))) {
            EventLoop.LOG.log(System.Logger.Level.WARNING, "event loop {0} did not finish its graceful shutdown in time; forcing", loop.name());
            shutdownNow();
            if (!await(Duration.ofSeconds(10))) {
                EventLoop.LOG.log(System.Logger.Level.ERROR, "event loop {0} did not terminate; a handler is blocking its thread", loop.name());
            }
        }
    }

    private boolean await(Duration d) {
        try {
            termination.get(d.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (ExecutionException e) {
            return true; // ended on a fatal error, already logged by the loop
        } catch (TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        }
    }

    /**
     * Wraps a task that must run exactly once: run by the loop, or, when a forced shutdown drops
     * it, once the loop has ended.
     */
    Runnable orAfterTermination(Runnable task) {
        return new OrAfterTermination(task);
    }

    /** Runs {@code task} once the loop has ended (at once when it has); a throw is logged. */
    void runAfterTermination(Runnable task) {
        termination.whenComplete((v, t) -> {
            try {
                task.run();
            } catch (Throwable x) {
                EventLoop.LOG.log(System.Logger.Level.WARNING, "task " + task + " run after event loop " + loop.name() + " ended threw", x);
            }
        });
    }

    /**
     * The loop thread's last step: after a fatal error, fails everything the loop owns; then frees
     * the native memory, marks the loop terminated and completes the termination future.
     *
     * @param fatal what ended the loop, or {@code null} after a shutdown
     */
    void end(Throwable fatal) {
        assert loop.inEventLoop();
        try {
            if (fatal != null) {
                // Told before anything it owns hears of the end: the connection failed here may
                // be replaced at once, and the replacement must not be handed to this loop
                // (LoopGroup#next in the reactive module reads it).
                failed = true;
                failEverything();
            }
        } catch (Throwable t) {
            EventLoop.LOG.log(System.Logger.Level.ERROR, "event loop " + loop.name() + ": cleanup after the fatal error failed", t);
        } finally {
            try {
                loop.closeNative();
            } catch (Throwable t) {
                EventLoop.LOG.log(System.Logger.Level.ERROR, "event loop " + loop.name() + ": releasing its native resources failed", t);
            } finally {
                state = TERMINATED;
                if (fatal != null) {
                    termination.completeExceptionally(fatal);
                } else {
                    termination.complete(null);
                }
            }
        }
    }

    /** The way out after the last turn: graceful (tasks within the deadline, a last drain) or forced. */
    void shutdownSequence() {
        assert loop.inEventLoop();
        taskQueue.close();
        boolean forced = state == FORCED;
        if (!forced) {
            long deadline = gracefulDeadline;
            Runnable r;
            while ((r = taskQueue.pollClosed()) != null) {
                if (state == FORCED || System.nanoTime() - deadline > 0) {
                    drop(r);
                    forced = true;
                    EventLoop.LOG.log(System.Logger.Level.WARNING, "event loop {0}: graceful shutdown forced (timeout or shutdownNow)", loop.name());
                    break;
                }
                loop.safeRun(r);
                counters.task();
            }
            if (!forced) {
                // The last drain: completions that are already in the queues reach their sinks.
                // No budget: nothing else runs on the loop any more, so no neighbour can starve.
                detector.restart(); // the shutdown's tasks are not the drain's time
                io.drainer.drainAllQueues();
            }
        }
        dropRemainingTasks();
        timers.cancelAll();
        io.registry.closeSources();
    }

    private void failEverything() {
        assert loop.inEventLoop();
        taskQueue.close();
        dropRemainingTasks();
        timers.cancelAll();
        io.registry.closeSources();
    }

    private void dropRemainingTasks() {
        assert loop.inEventLoop();
        long before = counters.droppedTasks();
        Runnable r;
        while ((r = taskQueue.pollClosed()) != null) {
            drop(r);
        }
        if (counters.droppedTasks() != before) {
            EventLoop.LOG.log(System.Logger.Level.WARNING, "event loop {0} shut down: dropped {1} queued task(s)", loop.name(),
                    counters.droppedTasks() - before);
        }
    }

    private void drop(Runnable r) {
        assert loop.inEventLoop();
        counters.dropped();
        EventLoop.LOG.log(System.Logger.Level.DEBUG, "event loop {0} shut down: dropped task {1}", loop.name(), r);
        if (io.registry.dropped(r)) {
            return; // a registration's hand-over: its source let go, with its hook
        }
        if (r instanceof OrAfterTermination o) {
            runAfterTermination(o.task);
        }
    }

    /** A task of {@link #orAfterTermination}: when dropped, it runs after termination. */
    private static final class OrAfterTermination implements Runnable {
        final Runnable task;

        OrAfterTermination(Runnable task) {
            this.task = task;
        }

        @Override
        public void run() {
            task.run();
        }

        @Override
        public String toString() {
            return task.toString();
        }
    }
}
