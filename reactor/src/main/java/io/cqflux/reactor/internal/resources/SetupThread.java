package io.cqflux.reactor.internal.resources;

import io.cqflux.core.ResourceClosedException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * An instance's set-up thread: where the slow native part of a connect and of an accept runs
 * (address resolution, endpoint and queue creation, registrations, the connect or accept call),
 * so that the loop which serves the new connection, and every other connection of that loop,
 * waits for none of it. One daemon platform thread, {@code <prefix>-setup}, started with the
 * first task and ended by {@link #shutdown()}. Tasks run one at a time in the order given.
 *
 * <p><b>Threading contract.</b> A task builds native objects no loop knows yet, then hands them
 * to their loop through the loop's task queue ({@code EventLoop.execute}): the queue's hand-off
 * is the happens-before edge, and from then on only the loop touches them (its loop-only methods
 * assert it). What a task may call off the loop is the transport's to say
 * ({@code Transport.connectsOffLoop()}, {@code Transport.acceptsOffLoop()}); where it says no,
 * the work stays on the loop.
 *
 * <p><b>The close thread.</b> The same class, named {@code <prefix>-close} ({@link #forCloses}),
 * runs the native close of connections whose transport allows it off the loop
 * ({@code Transport.closesOffLoop()}; ConnectionCore's design comment): a thread of its own, so
 * that a close never waits behind a connect that holds the set-up thread (an address that takes
 * seconds to resolve), and so that the instance's shutdown can end the set-ups first and the
 * closes only after the loops, which hand over closes until they end.
 *
 * <p><b>Shutdown.</b> {@link #shutdown()} takes no new task and completes its future once every
 * task given before it has run: a task finds the instance closing and releases what it holds (or
 * builds nothing), so that the instance frees its transport only after the last set-up ended.
 * Thread-safe.
 */
public final class SetupThread {
    private static final Logger LOG = Loggers.getLogger(SetupThread.class);

    private final String name;
    private final CompletableFuture<Void> terminated = new CompletableFuture<>();
    /** Started with the first task (guarded by this). */
    private ExecutorService executor;
    /** The thread, once started: what {@link #inSetupThread()} compares with. */
    private volatile Thread thread;
    private boolean shutdown;

    /** @param prefix the instance's thread-name prefix; the thread is {@code <prefix>-setup} */
    public SetupThread(String prefix) {
        this.name = prefix + "-setup";
    }

    private SetupThread(String prefix, String role) {
        this.name = prefix + "-" + role;
    }

    /**
     * {@return an instance's close thread, {@code <prefix>-close}: where the native close of its
     * connections runs (see the class comment)}
     *
     * @param prefix the instance's thread-name prefix
     */
    public static SetupThread forCloses(String prefix) {
        return new SetupThread(prefix, "close");
    }

    /**
     * Runs {@code task} on this thread, after those given before it. A task that throws is
     * logged; it must have released what it built itself.
     *
     * @throws ResourceClosedException when the thread was shut down
     */
    public void execute(Runnable task) {
        ExecutorService e;
        synchronized (this) {
            if (shutdown) {
                throw new ResourceClosedException(name + " is shut down");
            }
            if (executor == null) {
                executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.NANOSECONDS, new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, name);
                    t.setDaemon(true);
                    thread = t;
                    return t;
                });
            }
            e = executor;
            try {
                e.execute(() -> run(task));
            } catch (RejectedExecutionException x) {
                throw new ResourceClosedException(name + " is shut down");
            }
        }
    }

    private void run(Runnable task) {
        try {
            task.run();
        } catch (RuntimeException | Error x) {
            LOG.error(name + ": a task failed", x);
        }
    }

    /** {@return whether the caller runs on this thread} */
    public boolean inSetupThread() {
        return Thread.currentThread() == thread;
    }

    /** {@return whether the thread was started (a task was given)} (tests) */
    public synchronized boolean started() {
        return executor != null;
    }

    /**
     * Takes no new task; the tasks given so far still run (each finds its instance closing).
     * Idempotent.
     *
     * @return completes once every task given before ran; it completes on the set-up thread
     *     itself, as its last task, so the thread may still be ending then (what the instance's
     *     shutdown waits for is the tasks, not the thread)
     */
    public CompletableFuture<Void> shutdown() {
        synchronized (this) {
            if (!shutdown) {
                shutdown = true;
                if (executor == null) {
                    terminated.complete(null);
                } else {
                    executor.execute(() -> terminated.complete(null)); // after every task given before
                    executor.shutdown();
                }
            }
        }
        return terminated;
    }

    @Override
    public String toString() {
        return name;
    }
}
