package io.cqflux.reactor.internal.resources;

import io.cqflux.core.ResourceClosedException;
import io.cqflux.epoll.loop.BackgroundPriority;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * An instance's set-up thread: where the slow native part of a connect and of an accept runs
 * (address resolution, endpoint and queue creation, registrations, the connect or accept call),
 * so that the loop which serves the new connection, and every other connection of that loop,
 * waits for none of it. A daemon platform thread, {@code <prefix>-setup}, started with the first
 * task and ended by {@link #shutdown()}; tasks run one at a time in the order given, except that
 * a task given up on finishes beside the queue on the thread it ran on (below).
 *
 * <p><b>Priority.</b> Its work is throughput, the loops' is latency. Where the instance asks for it
 * ({@code Cqflux.Builder.backgroundPriority}), each worker lowers its own CPU priority when it
 * starts ({@link BackgroundPriority}), so that a loop that wakes preempts it, and a storm of
 * connects or closes takes from the established connections only the CPU their loops leave; under
 * a saturated host set-ups slow down rather than the operations of connections already up. It is
 * the instance's choice because whatever runs here passes the lowered priority on to any thread
 * it starts (sched(7)): the credentials supplier, a completion that finds its loop ended, the end
 * of the instance's shutdown (the close thread).
 *
 * <p><b>Threading contract.</b> A task builds native objects no loop knows yet (an accept also
 * the connection's loop-side objects around them: plain objects that touch nothing of any loop,
 * ConnectionFactory#newConnection), then hands them to their loop through the loop's task queue
 * ({@code EventLoop.execute}): the queue's hand-off is the happens-before edge, and from then on
 * only the loop touches them (its loop-only methods assert it); adopting them, registering them
 * with the loop's epoll set and setting their timers stay the loop's. What a task may call off
 * the loop is the transport's to say ({@code Transport.connectsOffLoop()},
 * {@code Transport.acceptsOffLoop()}); where it says no, the work stays on the loop.
 *
 * <p><b>The close thread.</b> The same class, named {@code <prefix>-close} ({@link #forCloses}),
 * runs the native close of connections whose transport allows it off the loop
 * ({@code Transport.closesOffLoop()}; Teardown's design comment): a thread of its own, so
 * that a close never waits behind a connect that holds the set-up thread (an address that takes
 * seconds to resolve), and so that the instance's shutdown can end the set-ups first and the
 * closes only after the loops, which hand over closes until they end.
 *
 * <p><b>A task given up on.</b> A native set-up can block for as long as the library lets it
 * (librpma resolves an address and a route inside {@code rpma_conn_req_new}, each for up to the
 * connect timeout, {@code rpma_conn_req_new(3)}), and nothing can interrupt it. When its caller
 * gives up on the task that is running ({@link #giveUp}: a connect cancelled or timed out, a
 * pool's attempt abandoned), the thread hands the queue to a fresh worker of the same name and
 * finishes the given-up task alone, then ends; so the connects behind it do not wait for it. The
 * task itself still runs to its end and releases what it built (it finds itself cancelled). At
 * most {@value #MAX_GIVEN_UP} given-up tasks run beside the queue at once; past that the queue
 * waits until one of them ends, and the task given up on past that bound is handed over then.
 * So a given-up task runs beside the next ones, which the transport's SPI allows of calls it
 * lets leave the loop ({@code Transport.connectsOffLoop()}, {@code acceptsOffLoop()}).
 *
 * <p><b>Shutdown.</b> {@link #shutdown()} takes no new task and completes its future once every
 * task given before it has run, given-up ones included: a task finds the instance closing and
 * releases what it holds (or builds nothing), so that the instance frees its transport only
 * after the last set-up ended. Thread-safe.
 */
public final class SetupThread {
    private static final Logger LOG = Loggers.getLogger(SetupThread.class);
    /** The most given-up tasks that may run beside the queue at once. */
    static final int MAX_GIVEN_UP = 4;
    /** Which SetupThread, if any, the current thread works for ({@link #inSetupThread()}). */
    private static final ThreadLocal<SetupThread> CURRENT = new ThreadLocal<>();

    private final String name;
    /** Whether its workers lower their CPU priority (the class comment's "Priority"). */
    private final boolean background;
    private final CompletableFuture<Void> terminated = new CompletableFuture<>();
    /** Tasks not yet taken (guarded by this). */
    private final ArrayDeque<Runnable> queue = new ArrayDeque<>();
    /** The worker that takes the queue's tasks; null before the first task and once ended (guarded by this). */
    private Thread worker;
    /** The task the worker runs now, or null (guarded by this). */
    private Runnable running;
    /** Given-up tasks still running on the workers they were left to (guarded by this). */
    private int givenUpRunning;
    /** The running task given up on past {@link #MAX_GIVEN_UP}: handed over once a given-up task ends (guarded by this). */
    private Runnable deferredGiveUp;
    private boolean started;
    private boolean shutdown;

    /**
     * A set-up thread at the priority of the threads that start it.
     *
     * @param prefix the instance's thread-name prefix; the thread is {@code <prefix>-setup}
     */
    public SetupThread(String prefix) {
        this(prefix, "setup", false);
    }

    /**
     * @param prefix the instance's thread-name prefix; the thread is {@code <prefix>-setup}
     * @param background whether it lowers its priority (the class comment's "Priority")
     */
    public SetupThread(String prefix, boolean background) {
        this(prefix, "setup", background);
    }

    private SetupThread(String prefix, String role, boolean background) {
        this.name = prefix + "-" + role;
        this.background = background;
    }

    /**
     * {@return an instance's close thread, {@code <prefix>-close}: where the native close of its
     * connections runs (see the class comment)}
     *
     * @param prefix the instance's thread-name prefix
     * @param background whether it lowers its priority (the class comment's "Priority")
     */
    public static SetupThread forCloses(String prefix, boolean background) {
        return new SetupThread(prefix, "close", background);
    }

    /** {@return whether its workers run at background priority} */
    public boolean background() {
        return background;
    }

    /**
     * Runs {@code task} on this thread, after those given before it. A task that throws is
     * logged; it must have released what it built itself.
     *
     * @throws ResourceClosedException when the thread was shut down
     */
    public void execute(Runnable task) {
        synchronized (this) {
            if (shutdown) {
                throw new ResourceClosedException(name + " is shut down");
            }
            if (worker == null) {
                worker = startWorker(); // before the task is queued: a start that throws leaves nothing
            } else {
                notifyAll();
            }
            queue.add(task);
            started = true;
        }
    }

    /**
     * The caller gives up on {@code task} (compared by identity): if it is the one running now,
     * the queue goes on on a fresh worker while it finishes alone (the class comment); with
     * {@value #MAX_GIVEN_UP} given-up tasks running already, that happens once one of them ends.
     * If it is queued, nothing happens here (it runs in its turn and finds itself cancelled).
     * Any thread.
     *
     * @return whether the queue was handed to a fresh worker now
     */
    public boolean giveUp(Runnable task) {
        synchronized (this) {
            if (task == null || running != task) {
                return false;
            }
            if (givenUpRunning >= MAX_GIVEN_UP) {
                deferredGiveUp = task;
                return false;
            }
            return handOver();
        }
    }

    /**
     * Under the lock: leaves the running task to its worker and starts a fresh one for the queue
     * (none when the queue is shut down and empty). A thread that cannot be made changes nothing.
     */
    private boolean handOver() {
        Thread fresh = null;
        if (!(queue.isEmpty() && shutdown)) {
            try {
                fresh = startWorker(); // it waits for this lock before it looks at the fields
            } catch (RuntimeException | OutOfMemoryError e) {
                LOG.warn(name + ": no thread for the queue beside a given-up task; the queue waits for it", e);
                return false;
            }
        }
        givenUpRunning++;
        running = null;
        deferredGiveUp = null;
        worker = fresh;
        return true;
    }

    /**
     * A daemon worker that inherits nothing of the thread that happens to start it (a canceller's
     * or a finishing worker's inheritable thread-locals, its context class loader).
     */
    private Thread startWorker() {
        Thread t = Thread.ofPlatform().name(name).daemon(true).inheritInheritableThreadLocals(false)
                .unstarted(this::work);
        t.setContextClassLoader(SetupThread.class.getClassLoader());
        t.start();
        return t;
    }

    /** A worker: takes tasks while it is the worker; a given-up task's worker ends after it. */
    private void work() {
        CURRENT.set(this);
        if (background) {
            int nice = BackgroundPriority.lowerCallingThread();
            LOG.debug(name + ": background priority, nice " + nice);
        }
        Thread me = Thread.currentThread();
        boolean last = false;
        while (true) {
            Runnable task;
            synchronized (this) {
                while (worker == me && queue.isEmpty() && !shutdown) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        // Not an end: the instance's shutdown ends this thread.
                    }
                }
                if (worker != me) {
                    return; // a fresh worker took over (only possible after a given-up task)
                }
                task = queue.poll();
                if (task == null) { // shut down and drained
                    worker = null;
                    last = givenUpRunning == 0;
                } else {
                    running = task;
                }
            }
            Thread.interrupted(); // a task's interrupt is not the next one's
            if (task == null) {
                if (last) {
                    terminated.complete(null); // outside the lock: its dependents may call in
                }
                return;
            }
            run(task);
            synchronized (this) {
                if (worker != me) {
                    // Given up on while it ran: the queue is another worker's now, and a task
                    // given up on past the bound may leave it now.
                    givenUpRunning--;
                    if (deferredGiveUp != null && running == deferredGiveUp) {
                        handOver();
                    }
                    last = shutdown && worker == null && queue.isEmpty() && givenUpRunning == 0;
                } else {
                    if (deferredGiveUp == task) {
                        deferredGiveUp = null;
                    }
                    running = null;
                    continue;
                }
            }
            if (last) {
                terminated.complete(null);
            }
            return;
        }
    }

    private void run(Runnable task) {
        try {
            task.run();
        } catch (RuntimeException | Error x) {
            LOG.error(name + ": a task failed", x);
        }
    }

    /** {@return whether the caller runs on this thread (or finishes a given-up task of it)} */
    public boolean inSetupThread() {
        return CURRENT.get() == this;
    }

    /** {@return whether the thread was started (a task was given)} (tests) */
    public synchronized boolean started() {
        return started;
    }

    /**
     * Takes no new task; the tasks given so far still run (each finds its instance closing).
     * Idempotent.
     *
     * @return completes once every task given before ran, given-up ones included (the threads
     *     may still be ending then: what the instance's shutdown waits for is the tasks)
     */
    public CompletableFuture<Void> shutdown() {
        boolean now = false;
        synchronized (this) {
            if (!shutdown) {
                shutdown = true;
                if (worker == null && givenUpRunning == 0) {
                    now = true;
                } else {
                    notifyAll();
                }
            }
        }
        if (now) {
            terminated.complete(null);
        }
        return terminated;
    }

    @Override
    public String toString() {
        return name;
    }
}
