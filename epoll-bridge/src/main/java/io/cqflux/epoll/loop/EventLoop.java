package io.cqflux.epoll.loop;

import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.internal.Checks;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.CompletionSink;
import io.cqflux.core.spi.Pollable;
import io.cqflux.epoll.LoopStats;
import io.cqflux.epoll.WaitStrategy;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;

/*
 * Design.
 *
 * The split (after Netty 4.2's SingleThreadIoEventLoop / IoHandler). EventLoop is the thread, the
 * MPSC TaskQueue, the lifecycle's API (start, shutdownGracefully, shutdownNow, close,
 * terminationFuture; the states and the way out are LoopLifecycle's) and the run cycle: each turn
 * runs the tasks (TaskTurn, within their budget), the due timers (LoopTimer),
 * then one turn of the I/O handler (EpollIoHandler.runIo), which owns the wait, the sources and
 * the spin/sleep policy. EpollPoller owns the epoll fd, the wake-up eventfd, the epoll_event array
 * and the native half of the sleep/wake protocol; SourceTable maps the ids in epoll_event.data to
 * LoopSources (slot + generation, which is what keeps a reused fd from reaching a removed
 * source). LoopCounters holds the stats, BlockedLoopDetector the blocked-loop detection. None of
 * them is thread-safe except EpollPoller.wakeup() and the counters' reads; all are driven from
 * the loop thread.
 *
 * Ownership. One platform thread per loop owns everything native: the poller's fds and arrays,
 * the batch scratch (batchSize * CompletionQueue.MAX_ENTRY_BYTES bytes) and the source table. All
 * native memory comes from one arena, allocated once, in the constructor, and freed by the loop
 * thread itself as the very last thing it does. Sources are polled only on this thread; other
 * threads hand work over through the MPSC TaskQueue.
 *
 * Fairness: how long a turn's tasks may run before the I/O gets its turn, and how a turn's timed
 * I/O lengthens the next turn's task budget, is TaskTurn's design comment.
 *
 * Failure: what ends the loop, and how, is in LoopLifecycle's design comment. The I/O handler's
 * own parts: SourceRegistry (adding and removing sources), SettledSources (which
 * sources a sleep asks and a spinning round polls), QueueDrainer (the batched drain).
 */

/**
 * One event-loop thread: it sleeps in {@code epoll_wait} on registered completion queues and other
 * pollable sources (connection event channels, listeners), drains completion queues in batches
 * into their sinks, and runs tasks handed over from other threads.
 *
 * <p>Thread safety and lifetime: all methods may be called from any thread. The loop owns a native
 * epoll instance, an eventfd and preallocated native memory; they are released by the loop thread
 * when it ends, after a {@linkplain #shutdownGracefully graceful} or {@linkplain #shutdownNow
 * forced} shutdown or {@link #close()}. Registered sources are not closed by the loop: their owners
 * learn through the optional {@code onShutdown} hook that the loop let go of them.
 */
public final class EventLoop implements AutoCloseable {

    static final System.Logger LOG = System.getLogger(EventLoop.class.getName());

    /** {@link QueueDrainer#MAX_BATCHES_PER_TURN}. */
    static final int MAX_BATCHES_PER_TURN = QueueDrainer.MAX_BATCHES_PER_TURN;
    /** {@link EpollIoHandler#OTHERS_CHECK_INTERVAL_NANOS}. */
    static final long OTHERS_CHECK_INTERVAL_NANOS = EpollIoHandler.OTHERS_CHECK_INTERVAL_NANOS;
    /** {@link SpinRound#QUIET_TICK_NANOS}. */
    static final long QUIET_TICK_NANOS = SpinRound.QUIET_TICK_NANOS;
    /** How long {@link #close()} lets queued work finish before it forces. */
    static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);

    private final String name;
    private final int batchSize;
    /** Empty busy rounds before sleeping: 0 blocking, {@code Integer.MAX_VALUE} never. */
    private final int spinBudget;
    private final Thread thread;
    private final TaskQueue taskQueue = new TaskQueue();

    // Native resources, owned by the loop thread once it runs; all memory in `arena`.
    private final Arena arena;
    private final EpollPoller poller;
    private final MemorySegment scratch;

    /** The states, the shutdown requests (any thread) and the loop thread's way out. */
    private final LoopLifecycle lifecycle;

    /** The I/O half of the loop: the wait, the sources, the spin/sleep policy. */
    private final EpollIoHandler io;

    /** The task half of each turn, within its budget. */
    private final TaskTurn tasks;

    /** The loop's timers (LoopTimer); loop thread only. */
    private final LoopTimer timers = new LoopTimer(this);

    /** Test hook: runs on the loop thread right before it blocks in epoll_wait. */
    volatile Runnable beforeSleep;

    /** The counters behind {@link #stats()}: written by the loop thread, read anywhere. */
    private final LoopCounters counters = new LoopCounters();

    // Blocked-loop detection (loop thread only): BlockedLoopDetector.
    /** {@link LoopConfig#blockedThreshold()} in nanoseconds; 0: off (a final field: one check per unit). */
    private final long blockedThresholdNanos;
    private final BlockedLoopDetector detector;

    private EventLoop(LoopConfig config) {
        this.name = config.name();
        this.batchSize = config.batchSize();
        this.blockedThresholdNanos = config.blockedThreshold().toNanos();
        this.spinBudget = switch (config.waitStrategy()) {
            case WaitStrategy.Blocking b -> 0;
            case WaitStrategy.BusyPoll b -> Integer.MAX_VALUE;
            case WaitStrategy.Adaptive a -> a.spins();
        };
        Arena a = Arena.ofShared();
        EpollPoller p = null;
        try {
            p = new EpollPoller(a, this);
            // Read by the loop thread only, in polls that end before the arena is closed
            // (closeNative): unscoped, so a transport's poll acquires nothing (Libc.unscoped).
            scratch = Libc.unscoped(a.allocate((long) batchSize * CompletionQueue.MAX_ENTRY_BYTES, 64));
            ThreadFactory factory = config.threadFactory() != null ? config.threadFactory()
                    : r -> Thread.ofPlatform().name(name).daemon(true).unstarted(r);
            Thread t = factory.newThread(this::run);
            if (t == null) {
                throw new IllegalStateException("thread factory of loop " + name + " returned null");
            }
            this.thread = t;
        } catch (RuntimeException | Error e) {
            if (p != null) {
                p.close();
            }
            a.close();
            throw e;
        }
        this.poller = p;
        this.arena = a;
        this.detector = new BlockedLoopDetector(thread, blockedThresholdNanos, counters);
        this.io = new EpollIoHandler(this, poller, scratch, batchSize, spinBudget, counters, detector, blockedThresholdNanos,
                timers);
        this.lifecycle = new LoopLifecycle(this, taskQueue, counters, detector, io, timers);
        this.tasks = new TaskTurn(this, taskQueue, lifecycle, counters, detector, blockedThresholdNanos);
    }

    /**
     * Starts a loop thread.
     *
     * @param config the configuration
     * @return the running loop
     * @throws io.cqflux.core.NativeCallException when the epoll instance or the eventfd cannot be
     *     created
     */
    public static EventLoop start(LoopConfig config) {
        Objects.requireNonNull(config, "config");
        EventLoop loop = new EventLoop(config);
        try {
            loop.thread.start();
        } catch (RuntimeException | Error e) {
            loop.closeNative();
            throw e;
        }
        return loop;
    }

    /** {@return the loop's name} */
    public String name() {
        return name;
    }

    /**
     * Tells whether the caller runs on this loop's thread. The methods that must run there (the
     * run cycle, draining, registration bookkeeping) begin with {@code assert inEventLoop();}.
     *
     * @return whether the caller is this loop's thread
     */
    public boolean inEventLoop() {
        return Thread.currentThread() == thread;
    }

    /**
     * "Now" to within the work the loop is running, without a clock read when the blocked-loop
     * detection is on: then it is the loop's last clock reading, taken at the start of this turn,
     * at the end of the last measured unit (a task, a completion batch, a readiness handler) or
     * after a sleep, so it is behind {@link System#nanoTime()} by the current unit's time so far
     * (longer during a graceful shutdown's last tasks and a failed queue's hooks, which are not
     * measured units) and never ahead. With the detection off, it reads the clock. For deadlines
     * of a second or more that the loop keeps on its own thread (an operation's posting time),
     * where a clock read per operation would be a sizeable share of the Java path's cost. Loop
     * thread.
     *
     * @return a {@link System#nanoTime()} value, never ahead of the clock
     */
    public long unitClock() {
        assert inEventLoop();
        return blockedThresholdNanos != 0 ? detector.unitStart() : System.nanoTime();
    }

    /**
     * The same as {@link #inEventLoop()}, under the name the reactive module calls.
     *
     * @return whether the caller is this loop's thread
     */
    public boolean inLoop() {
        return inEventLoop();
    }

    /**
     * Runs a task on the loop thread after the tasks already queued. Also from the loop thread
     * itself, where it defers the task to a later round (run it inline when {@link #inEventLoop()}
     * if that is what you want).
     *
     * @param task the task; if it throws, the loop logs and goes on
     * @throws io.cqflux.core.ResourceClosedException after shutdown started
     */
    public void execute(Runnable task) {
        Objects.requireNonNull(task, "task");
        if (!lifecycle.isRunning() || !taskQueue.offer(task)) {
            throw new ResourceClosedException("event loop " + name + " is shut down: task rejected");
        }
        wakeup();
    }

    /**
     * Runs a task on the loop thread or, when the loop no longer takes tasks, once it has ended:
     * exactly once, and never beside the loop's last round. On the loop thread the task runs
     * inline, before this method returns. From another thread it is queued like
     * {@link #execute(Runnable)}; when the loop refuses it because a shutdown has begun, the task
     * runs once {@link #terminationFuture()} completes (normally or on a fatal error), on the
     * thread that completes it (the loop thread, after it let go of every source and freed its
     * native memory), or at once on the caller's thread when the loop has already ended. A task
     * that was queued and is then dropped by a forced shutdown also runs after termination
     * instead of being lost.
     *
     * <p>For clean-up work that must happen whatever the loop's state (closing a connection,
     * failing what is pending on it): while the loop runs it has the loop's thread confinement,
     * and after termination nothing can run concurrently with it on the loop's behalf.
     *
     * @param task the task; when it runs inline its exception reaches the caller, when it runs
     *     later the loop logs it
     */
    public void executeOrAfterTermination(Runnable task) {
        Objects.requireNonNull(task, "task");
        if (inEventLoop()) {
            task.run();
            return;
        }
        try {
            execute(lifecycle.orAfterTermination(task));
        } catch (ResourceClosedException e) {
            // Shutting down: the loop may still run its last round and its sources' hooks, so the
            // task waits for the thread to end.
            lifecycle.runAfterTermination(task);
        }
    }

    /**
     * Runs a task in a later turn of the loop — never inline, also when called on the loop, so
     * that it runs after the current drain — or, when the loop no longer takes tasks or drops it in
     * a forced shutdown, once the loop thread has ended. For work that must happen exactly once
     * whatever the loop's fate (freeing a connection's native objects).
     *
     * @param task the task; if it throws, the loop logs and goes on
     */
    public void executeLaterOrAfterTermination(Runnable task) {
        Objects.requireNonNull(task, "task");
        try {
            execute(lifecycle.orAfterTermination(task));
        } catch (ResourceClosedException e) {
            lifecycle.runAfterTermination(task);
        }
    }

    /**
     * Registers a completion queue; on readiness the loop acknowledges it and drains it in
     * batches into {@code sink}. On the loop thread it takes effect at once; from any other thread
     * it is handed over through the task queue and takes effect before any task submitted after it.
     *
     * @param cq the queue
     * @param sink receives each completion; an exception it throws is logged, the batch goes on
     * @return the registration
     * @throws io.cqflux.core.ResourceClosedException after shutdown started
     * @throws io.cqflux.core.NativeCallException on the loop thread, when epoll refuses the fd
     */
    public Registration register(CompletionQueue cq, CompletionSink sink) {
        return register(cq, sink, null);
    }

    /**
     * Registers a completion queue, with a hook that tells its owner when the loop let go of it
     * without being asked: shutdown, a fatal loop error, a queue that failed ({@code poll} or
     * {@code acknowledge} threw), or a registration handed over from another thread that epoll
     * refused. The hook runs on the loop thread, at most once, never after
     * {@link Registration#close()}.
     *
     * @param cq the queue
     * @param sink receives each completion; an exception it throws is logged, the batch goes on
     * @param onShutdown the hook, or {@code null}
     * @return the registration
     * @throws io.cqflux.core.ResourceClosedException after shutdown started
     * @throws io.cqflux.core.NativeCallException on the loop thread, when epoll refuses the fd
     */
    public Registration register(CompletionQueue cq, CompletionSink sink, Runnable onShutdown) {
        Objects.requireNonNull(cq, "cq");
        Objects.requireNonNull(sink, "sink");
        return register(new LoopSource(this, cq, sink, onShutdown));
    }

    /**
     * Registers any pollable source (event channel, listener); {@code onReadable} runs on the
     * loop thread when its fd is readable. Same threading as
     * {@link #register(CompletionQueue, CompletionSink)}.
     *
     * @param source the source
     * @param onReadable the handler
     * @return the registration
     * @throws io.cqflux.core.ResourceClosedException after shutdown started
     */
    public Registration register(Pollable source, Runnable onReadable) {
        return register(source, onReadable, null);
    }

    /**
     * Registers any pollable source with a shutdown hook (see
     * {@link #register(CompletionQueue, CompletionSink, Runnable)}).
     *
     * @param source the source; a {@link CompletionQueue} registered this way is treated as a
     *     plain source: {@code onReadable} runs and nothing is drained
     * @param onReadable the handler
     * @param onShutdown the hook, or {@code null}
     * @return the registration
     * @throws io.cqflux.core.ResourceClosedException after shutdown started
     */
    public Registration register(Pollable source, Runnable onReadable, Runnable onShutdown) {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(onReadable, "onReadable");
        return register(new LoopSource(this, source, onReadable, onShutdown));
    }

    private Registration register(LoopSource s) {
        return io.registry.register(s);
    }

    /**
     * {@return the timers pending on this loop ({@link #schedule}): diagnostics and tests} Loop
     * thread only.
     *
     * @throws IllegalStateException off the loop thread
     */
    public int pendingTimers() {
        if (!inEventLoop()) {
            throw new IllegalStateException("pendingTimers is for the loop thread of " + name + ", called on "
                    + Thread.currentThread().getName());
        }
        return timers.size();
    }

    /** {@return a snapshot of the counters; any thread (each counter is exact, the set is not atomic)} */
    public LoopStats stats() {
        return counters.snapshot();
    }

    /**
     * Graceful shutdown: stop taking tasks, run those queued, drain the queues, unregister every
     * source (running its shutdown hook), free native memory, end the thread. Idempotent: a second
     * call returns the same future and keeps the first deadline.
     *
     * @param timeout how long to let queued work finish before forcing
     * @return completes when the thread ended (exceptionally if it ended on a fatal error)
     */
    public CompletableFuture<Void> shutdownGracefully(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        return lifecycle.shutdownGracefully(timeout);
    }

    /** Forced shutdown: queued tasks are dropped (logged, counted), the thread ends as soon as possible. */
    public void shutdownNow() {
        lifecycle.shutdownNow();
    }

    /** {@return completes when the loop thread has ended and its native memory is freed} */
    public CompletableFuture<Void> terminationFuture() {
        return lifecycle.termination();
    }

    /**
     * Graceful shutdown and wait for it; idempotent. Queued work gets 10 s, then the shutdown is
     * forced. On the loop thread itself (a task or handler closing its own loop) it only begins the
     * shutdown and returns, so it cannot deadlock.
     */
    @Override
    public void close() {
        lifecycle.close(CLOSE_TIMEOUT);
    }

    @Override
    public String toString() {
        return "EventLoop[" + name + "]";
    }

    // ---------------------------------------------------------------- wake-up

    /** Makes a sleeping loop return from epoll_wait; a no-op (one volatile read) when it runs. */
    void wakeup() {
        poller.wakeup(inEventLoop());
    }

    // ---------------------------------------------------------------- the loop

    private void loop() {
        assert inEventLoop();
        while (lifecycle.isRunning()) {
            if (blockedThresholdNanos != 0) {
                detector.turnStarted();
            }
            int work = tasks.run();
            if (!timers.isEmpty()) {
                work += timers.runExpired(System.nanoTime(), this::runTimer);
            }
            if (tasks.cutOff()) {
                long ioStart = System.nanoTime();
                io.runIo(work);
                tasks.ioTook(System.nanoTime() - ioStart);
            } else {
                io.runIo(work);
                tasks.ioTook(0);
            }
        }
    }

    /** {@return whether tasks are queued; any thread} */
    boolean hasTasks() {
        return !taskQueue.isEmpty();
    }

    /** {@return whether the loop still runs (no shutdown requested); any thread} */
    boolean isRunning() {
        return lifecycle.isRunning();
    }

    /**
     * {@return whether the loop ends, or ended, on a fatal error: true from the start of that end,
     * before it fails what it owns (and before {@link #terminationFuture()} completes); any thread}
     */
    public boolean endedOnFatalError() {
        return lifecycle.failed();
    }

    /** {@return whether the loop has ended; any thread} */
    boolean isTerminated() {
        return lifecycle.isTerminated();
    }

    private void run() {
        assert inEventLoop();
        Throwable fatal = null;
        try {
            loop();
            lifecycle.shutdownSequence();
        } catch (Throwable t) {
            fatal = t;
            LOG.log(System.Logger.Level.ERROR, "event loop " + name + " ends on a fatal error; failing everything it owns", t);
        }
        lifecycle.end(fatal);
    }

    /**
     * Runs {@code task} on this loop's thread once {@code delay} has passed, from the loop's one
     * timer heap ({@link LoopTimer}): for per-connection deadlines and keep-alives, which then
     * cost the loop nothing per turn while they are not due, and its sleep lasts until the
     * earliest of them. A timer due in a turn runs in that turn, after the turn's tasks; one
     * scheduled by a running timer waits for the next turn. Timers pending when the loop ends
     * are cancelled without running. Loop thread only (hand the call over with
     * {@link #execute} from elsewhere).
     *
     * @param delay the delay, in [0, 365 days]
     * @param task the task; if it throws, the loop logs and goes on
     * @return the timer's handle, to cancel it (loop thread)
     * @throws IllegalStateException off the loop thread
     * @throws IllegalArgumentException when {@code delay} is negative or above 365 days
     */
    public LoopTimer.Timeout schedule(Duration delay, Runnable task) {
        Objects.requireNonNull(delay, "delay");
        Objects.requireNonNull(task, "task");
        if (!inEventLoop()) {
            throw new IllegalStateException("schedule is for the loop thread of " + name + ", called on "
                    + Thread.currentThread().getName());
        }
        Checks.inRange("timer delay", delay, Duration.ZERO, Duration.ofNanos(LoopTimer.MAX_DELAY_NANOS));
        return timers.schedule(System.nanoTime(), delay.toNanos(), task);
    }

    /** Runs one due timer's task as the loop runs a task (logged if it throws, measured). */
    private void runTimer(Runnable task) {
        safeRun(task);
        if (blockedThresholdNanos != 0) {
            endUnit(BlockedLoopDetector.UNIT_TASK, task, 0);
        }
    }

    /**
     * Puts work off to the end of the completion batch being delivered: a sink that is called once
     * per completion (a stream's results, each of which would otherwise ask its source for one more
     * and post one write) does once per batch what it need not do per completion, as a C program
     * reads a batch of completions before it posts again ({@code writeAll}'s per-write path). The tasks run in the order given, on this thread, right after the sink
     * had the batch's last completion, before the queue is polled again; when the poll failed,
     * once the queue is unregistered and its owner told (a fatal error drops them: the loop
     * ends). One that throws is logged, as a task is. Loop thread.
     *
     * @param task the work; queued as given, so a caller queues it once per batch
     * @return false when no batch is being delivered (not called from a sink, or called from
     *     another put-off task): the caller then does the work itself, at once
     */
    public boolean runAfterBatch(Runnable task) {
        assert inEventLoop();
        return io.drainer.runAfterBatch(task);
    }

    void safeRun(Runnable r) {
        assert inEventLoop();
        try {
            r.run();
        } catch (Throwable t) {
            LoopLifecycle.rethrowIfFatal(t);
            LOG.log(System.Logger.Level.WARNING, "task " + r + " on event loop " + name + " threw; the loop goes on", t);
        }
    }

    // ---------------------------------------------------------------- blocked-loop detection

    /** The least time between two blocked-loop warnings of one loop: 10 s. */
    public static final Duration BLOCKED_LOG_INTERVAL = BlockedLoopDetector.LOG_INTERVAL;

    /**
     * Names what the loop is about to run for the blocked-loop report, e.g. the kind of the
     * operation whose subscriber is about to be signalled ({@code cqflux.read}); one plain store.
     * Loop thread only (elsewhere it does nothing).
     *
     * @param label a constant string (kept, not copied), or {@code null}
     */
    public void noteOperation(String label) {
        if (Thread.currentThread() == thread) {
            detector.noteOperation(label);
        }
    }

    /**
     * Names the library's own set-up work about to run (a connect or a bind: native calls and, the
     * first time in a JVM, linking the native bindings, which can take a few hundred ms). A unit
     * so marked that exceeds the threshold is logged at DEBUG and not counted in
     * {@link LoopStats#blocked()}, which is about subscriber code and tasks: a WARN at every
     * application start would teach users to ignore the warning. A later
     * {@link #noteOperation} in the same unit (subscriber code about to run) ends the set-up part
     * (judged as above) and measures what follows as an ordinary unit; named subscriber code
     * before this call is judged on its own likewise. Loop thread only.
     *
     * @param label a constant string, e.g. {@code cqflux.connect}
     */
    public void noteSetup(String label) {
        if (Thread.currentThread() == thread) {
            detector.noteSetup(label);
        }
    }

    private void endUnit(int unit, Object what, int n) {
        detector.endUnit(unit, what, n);
    }

    /** Frees the poller and the loop's native memory: the loop thread's last step, or a failed start. */
    void closeNative() {
        poller.close();
        arena.close();
    }

    // ---------------------------------------------------------------- registrations

    /** Registration.close() from another thread: hand over and wait until the loop let go. */
    void removeFromOtherThread(LoopSource s) {
        io.registry.removeFromOtherThread(s);
    }

    /**
     * Removes a source; loop thread; idempotent (LoopSource.close).
     *
     * @param runHook whether to run the owner's hook (not when the owner asked)
     */
    void unregister(LoopSource s, boolean runHook) {
        io.registry.unregister(s, runHook);
    }
}
