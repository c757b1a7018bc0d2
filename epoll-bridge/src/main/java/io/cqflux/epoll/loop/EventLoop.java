package io.cqflux.epoll.loop;

import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.CompletionSink;
import io.cqflux.core.internal.NativeErrors;
import io.cqflux.core.spi.Pollable;
import io.cqflux.epoll.LoopStats;
import io.cqflux.epoll.WaitStrategy;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/*
 * Design.
 *
 * The split (after Netty 4.2's IoEventLoop / IoHandler). EventLoop is the thread, the MPSC
 * TaskQueue, the lifecycle (start, shutdownGracefully, shutdownNow, close, terminationFuture), the
 * stats, and the run cycle below that drives the other two. EpollPoller owns the epoll fd, the
 * wake-up eventfd, the epoll_event array and the native half of the sleep/wake protocol (its own
 * design comment says how). SourceTable maps the ids in epoll_event.data to LoopSources (slot +
 * generation). Neither of them is thread-safe except EpollPoller.wakeup(); both are driven from
 * this class on the loop thread.
 *
 * Ownership. One platform thread per loop owns everything native: the poller's fds and arrays,
 * the batch scratch (batchSize * CompletionQueue.MAX_ENTRY_BYTES bytes) and the source table. All
 * native memory comes from one arena, allocated once, in the constructor, and freed by the loop
 * thread itself as the very last thing it does. Sources are polled only on this thread; other
 * threads hand work over through the MPSC TaskQueue.
 *
 * The sleep/wake protocol. Producers enqueue, then call EpollPoller.wakeup(), which writes the
 * eventfd only when the loop announced a sleep (one volatile read otherwise). Before it blocks, the
 * loop announces the sleep, then re-reads the queue tail (and the lifecycle state); both sides do
 * "store, then load" on volatiles, so (Dekker) either the loop sees the task and does not sleep, or
 * the producer sees the announcement and writes the eventfd, which is in the epoll set. Shutdown
 * requests use the same path.
 *
 * Completion queues. Level-triggered EPOLLIN, the registration id in epoll_event.data. On
 * readiness the loop calls acknowledge() first, then poll() until a batch comes back short or the
 * queue has had MAX_BATCHES_PER_TURN polls in this loop turn. For
 * librpma, acknowledge() is rpma_cq_wait(3): it consumes the channel event and re-arms the CQ
 * (ibv_req_notify_cq) before the drain, so a completion that lands during or after the drain
 * signals the fd again; one that landed before the re-arm is found by the drain. Arm-then-drain
 * therefore never loses a completion (drain-then-arm would: a completion between the last empty
 * poll and the arm would sit unsignalled). The price is the occasional empty wake-up, which
 * rpma_cq_wait(3) documents as normal. libfabric's wait fd has no such re-arm step: data can be
 * buffered in the provider without the fd being readable, so fi_trywait(3) must have said
 * FI_SUCCESS before blocking; it fails with -FI_EAGAIN when the queue has to be read first. That
 * is Pollable.prepareToSleep(), asked of every source before every sleep; any "no" turns the
 * sleep into another polling round. (The fabric transport answers it without the call for a
 * queue that nothing read, posted to or shut down since its last FI_SUCCESS, given under 1 ms
 * ago; its TrywaitAnswer says on which providers' behaviour that rests. The loop does not know.)
 * A sleep also waits for one more poll of every queue whose last drain delivered, when its poll
 * costs no system call (CompletionQueue.pollIsCheap(): librpma's
 * ibv_poll_cq reads a ring in user space): the sinks may have posted work, and a chained
 * operation's completion that is already in the ring is found without epoll_wait, the channel
 * read and the re-arm. "Short batch, so empty" is true of the ring when it was read, not after
 * the sinks ran. Only queues whose last drain delivered are asked, so an idle loop's sleep costs
 * nothing more; while the last look keeps finding completions it puts the sleep off, and after
 * MAX_SLEEPS_PUT_OFF (16) such sleeps in a row, or SLEEPS_PUT_OFF_NANOS (1 ms), the loop asks epoll
 * about every fd, so the other queues and the event channels are not starved; libfabric's tcp
 * queues are not cheap (fi_cq_read drives socket progress), and fi_trywait(3) already answers
 * for them. Busy rounds poll queues directly without acknowledging them (their fds may stay
 * readable; epoll is then only consulted for the other sources).
 *
 * ADAPTIVE after a wake-up. An adaptive loop spins for its budget of empty rounds, sleeps, and
 * spins again once something wakes it: a task, a completion, or any readable source fd, even one
 * whose drain delivered nothing. The last matters for libfabric's tcp provider: the target of a
 * read or write gets no completion (the transport does not ask for FI_RMA_EVENT, fi_cq(3)), but
 * its FI_WAIT_FD fd turns readable when the request's bytes arrive on the socket, and only its
 * fi_cq_read moves them (tcp has no progress thread). Counted as idle, that wake-up sent the
 * target's loop straight back to epoll_wait, so an ADAPTIVE pair paid an epoll wake-up per
 * operation on the passive side and sat between BUSY_POLL and BLOCKING (issue 13: 8 B write
 * 12.3 µs against 8.0 busy and 17.3 blocking, 2026-11-23). A wake-up by a fd therefore counts as
 * activity in sleep()'s result. BLOCKING is unaffected (its budget is 0).
 *
 * Busy rounds and the other sources. A busy round (BUSY_POLL always, ADAPTIVE while it spins)
 * polls the queues (all but the quiet ones, below) and runs the tasks straight from the
 * TaskQueue; neither needs a system call of the loop's own. What only epoll can tell is whether a
 * non-queue source (a connection's event channel, a listener) is readable, and asking costs an
 * epoll_wait(2) with timeout 0. Asked every round, that call was a third of the loop's system
 * calls per operation (issue 13: 6-8 epoll_wait per 8-byte write against C's 2.4-4.5, C calling
 * none of its own). So a busy round asks only when OTHERS_CHECK_INTERVAL_NANOS have passed since
 * the last ask, or when a source was registered since (othersDue: a new listener or channel is
 * asked at once). The bound: one ask returns at most EpollPoller.MAX_EVENTS (64) ready fds, and
 * it is over the whole epoll set, queue fds included; busy rounds never acknowledge a queue, so
 * its fd stays readable and takes an entry in every ask. With N readable fds a connection event
 * or an incoming connection request can therefore take ceil(N / 64) asks, each
 * OTHERS_CHECK_INTERVAL_NANOS plus a round apart: 50 µs plus one round when the loop has fewer
 * than 64 readable fds (the usual case: one queue or two per connection), proportionally more
 * beyond. Nothing starves: epoll_wait(2) moves the level-triggered entries it returns to the back
 * of its ready list, so successive asks go round all of them; the time check runs every round
 * whatever the queues deliver; and a long round (a flood of completions, a task budget) makes the
 * next one ask at once. (Asking about the other sources alone would need them in an epoll set of
 * their own, nested in the loop's: not done.) Completions, tasks and the sleep path are
 * unaffected: a loop that goes to sleep asks every source in prepareToSleep() and then waits on
 * all fds together.
 *
 * A readable source in a busy round. A libfabric wait fd stays readable after its events were
 * read, until fi_trywait(3) resets its signal (util_wait_fd_try): a loop that never sleeps would
 * find every connection's event queue readable at every ask and run its handler each time. So a
 * busy round asks the source prepareToSleep() first, then runs the handler. An event that comes
 * after the reset signals again; one that was there before it is the handler's to read, and when
 * the answer was "not yet" (something was there) the next round asks again and runs the handler
 * again while the answer stays so (askAgain), in case the handler left some of it unread: the
 * reset took away the readiness that would have brought the loop back.
 *
 * Busy rounds and quiet queues. Polling a queue whose poll is not cheap costs system calls
 * (libfabric's tcp provider: fi_cq_read runs socket progress, an epoll_wait of its own): a busy
 * round that polled every queue of one busy connection and 16 idle ones would make 17 of them
 * (docs/performance.md, "Spinning loops and idle connections", has the figures). A queue whose
 * poll is not cheap and that CompletionQueue.canBeQuiet() (asked once: fabric's on libfabric 1.17
 * tcp, whose fi_trywait answers TrywaitAnswer keeps) may be left unpolled while it is quiet (CompletionQueue.quiet():
 * its last prepareToSleep() said the fd will signal whatever comes, and nothing has read it,
 * posted to it or shut it down since). The rules, while the loop has two or more such queues:
 *   - Once QUIET_AFTER_EMPTY_POLLS (256) busy polls in a row found a queue empty, it is asked
 *     prepareToSleep() on the next quiet tick (every QUIET_TICK_NANOS, 100 µs, one tick for
 *     all queues, so that idle queues turn quiet in the same round), provided the round before
 *     found at least one other queue quiet or idle that long (quietCandidates): a yes makes it
 *     quiet, a "not yet" keeps it polled and asked again on the next tick. A lone idle queue is
 *     not asked at all, since a single quiet queue would be polled anyway. 256 rounds outlast an
 *     operation in flight, whose completion would otherwise wait for an epoll_wait before its
 *     poll; an idle queue pays them once after its last activity.
 *   - When a round left two or more quiet queues, one epoll_wait(0) over the whole set stands for
 *     their polls, and a quiet queue whose fd is readable is drained in the same round. The other
 *     sources it finds ready are handled only when they are due anyway (othersDue). A single
 *     quiet queue is polled after all: its poll costs what the ask would, without a system call
 *     before what came (a connection with a separate receive queue, idle beside its send queue).
 *   - On each tick a round asks each quiet queue prepareToSleep() again, which answers from the
 *     transport's standing answer and calls fi_trywait again once that is older than
 *     TrywaitAnswer's trust interval (1 ms); a "not yet" has the queue polled at once.
 * The same rule as a sleep, so a quiet queue loses nothing a sleeping loop would not, within the
 * same bound. A readable quiet queue beyond the 64 entries one ask returns waits for a later
 * round (epoll_wait(2) goes round its ready list). Cheap queues (librpma's, verbs') and queues
 * that cannot be quiet are polled every round, and are asked nothing outside the sleep path.
 *
 * The end of a batch. A sink is called once per completion; runAfterBatch lets it put work off
 * to the end of the batch it is in (a writeAll stream sends its results and asks its source for
 * more once per batch, not once per completion). pollOnce runs that work right after the poll
 * returns, before the queue is polled again, so nothing put off waits for another turn; when the
 * poll failed, once the queue's owner has been told (so that the work, a stream asking for more,
 * finds the connection ended and posts nothing new; a fatal error drops it: the loop ends). Work
 * put off outside a batch is refused and done by the caller at once.
 *
 * Fairness. One turn of the loop runs up to MAX_TASKS_PER_ROUND tasks, for at most
 * TASK_BUDGET_NANOS (a task that re-queues itself to continue a long job, such as failing a dying
 * connection's backlog a chunk at a time, would otherwise fill the whole turn), and gives each
 * ready queue up to MAX_BATCHES_PER_TURN polls; a queue that never comes back short (a dying connection
 * failing every operation) would otherwise hold the thread while its neighbours wait. A queue
 * that the budget cut off with a full last batch goes on the cut-off list, and the next turn polls
 * it again first, without waiting for its fd: after the drain was stopped early, neither kind of
 * fd promises to signal what is left (the rpma CQ was re-armed for new completions only, and a
 * libfabric wait fd need not be readable for buffered data). Those polls count as work, so the
 * loop does not sleep while a queue on the list still delivers.
 *
 * Failure. A handler (sink entry, onReadable, task, hook) that throws is logged and the loop goes
 * on. A queue whose poll()/acknowledge() throws is unregistered and its owner told through the
 * shutdown hook. Only a fatal Error (VirtualMachineError, LinkageError), or a failure of the
 * loop's own epoll_wait / eventfd (other than EINTR), ends the loop: it then
 * drops its tasks, unregisters every source with its hook, frees its native memory and completes
 * terminationFuture exceptionally.
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

    /** Tasks run per loop round before the ready fds get their turn again (every strategy). */
    static final int MAX_TASKS_PER_ROUND = 1024;
    /** Time one turn may spend on tasks before the ready fds get their turn; read every 16 tasks. */
    static final long TASK_BUDGET_NANOS = 1_000_000;
    /**
     * Native poll calls per completion queue per loop turn. A queue whose polls keep coming back
     * full (a dying connection failing 500,000 operations) used to be drained to the end while
     * every other source on the loop waited: a healthy neighbour stalled for seconds. After this
     * many batches the queue is cut off for the turn and polled again first thing in the next one;
     * the other ready sources and the tasks run in between. 16 is Netty's default
     * {@code maxMessagesPerRead} for the same job: enough batches to amortise a turn's
     * {@code epoll_wait} and acknowledge over, few enough that a neighbour waits at most 16 polls
     * per flooding queue (at the default batch of 32: 512 completions).
     */
    static final int MAX_BATCHES_PER_TURN = 16;
    /**
     * Longest time a busy round goes without asking epoll about the non-queue sources (event
     * channels, listeners); see "Busy rounds and the other sources" in the design comment. 50 µs
     * is a few operations' round trip on fabric/tcp and a fraction of what establishing or
     * ending a connection takes, so the delay it adds to a connection event is invisible, while
     * an 8-byte write loop asks once per several operations instead of several times per one.
     */
    static final long OTHERS_CHECK_INTERVAL_NANOS = 50_000;
    /**
     * Sleeps the poll before sleeping may put off in a row before the loop asks epoll about every
     * fd (see {@link #sleep()}): 16, as {@link #MAX_BATCHES_PER_TURN}, so a neighbour of a queue
     * that completes continuously waits at most 16 of its operations.
     */
    static final int MAX_SLEEPS_PUT_OFF = 16;
    /**
     * Busy polls in a row that must find a queue that can be quiet empty before a busy round asks
     * it {@link Pollable#prepareToSleep()} (on tcp a {@code fi_trywait(3)}), whose yes makes it
     * {@link CompletionQueue#quiet()}: 256, a few hundred microseconds of rounds, so that a queue
     * waiting for the completion of an operation in flight stays polled (the completion of a
     * quiet queue waits for an {@code epoll_wait} before its poll), while an idle queue pays those
     * polls once after its last activity.
     */
    static final int QUIET_AFTER_EMPTY_POLLS = 256;
    /**
     * The tick on which a spinning round asks {@link Pollable#prepareToSleep()} of the queues that
     * have been idle long enough and of the quiet ones, the latter to renew an answer their
     * transport no longer trusts (fabric: after 1 ms): every 100 µs. One tick for all, so that
     * idle queues turn quiet in the same round, and no clock read per queue.
     */
    static final long QUIET_TICK_NANOS = 100_000;
    /** Longest time the poll before sleeping may put sleeps off before the loop asks epoll. */
    static final long SLEEPS_PUT_OFF_NANOS = 1_000_000;
    /** How long {@link #close()} lets queued work finish before it forces. */
    static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);

    private static final int RUNNING = 0;
    private static final int SHUTTING_DOWN = 1;
    private static final int FORCED = 2;
    private static final int TERMINATED = 3;

    private static final VarHandle STATE;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            STATE = l.findVarHandle(EventLoop.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String name;
    private final int batchSize;
    /** Empty busy rounds before sleeping: 0 blocking, {@code Integer.MAX_VALUE} never. */
    private final int spinBudget;
    private final Thread thread;
    private final TaskQueue taskQueue = new TaskQueue();
    private final CompletableFuture<Void> termination = new CompletableFuture<>();
    private final Object lifecycleLock = new Object();

    // Native resources, owned by the loop thread once it runs; all memory in `arena`.
    private final Arena arena;
    private final EpollPoller poller;
    private final MemorySegment scratch;

    // Lifecycle (any thread).
    @SuppressWarnings("unused")
    private volatile int state = RUNNING;
    private long gracefulDeadline;

    // Registrations (loop thread only).
    private final SourceTable sources = new SourceTable(this);
    private boolean sourcesClosed;
    /** Queues that the per-turn budget cut off with completions left (each once; see LoopSource.cutOff). */
    private final ArrayDeque<LoopSource> cutOff = new ArrayDeque<>();
    /** Non-queue sources that a spinning round asks again (each once; see LoopSource.askAgain). */
    private final ArrayDeque<LoopSource> askAgain = new ArrayDeque<>();
    /** The last quiet tick of a spinning round ({@link #unitClock()}; see QUIET_TICK_NANOS). */
    private long quietTickAt;
    /**
     * Queues that the last skipping round found quiet or idle long enough to be asked: a tick asks
     * an idle queue only while this is two or more, since a lone quiet queue is polled anyway.
     */
    private int quietCandidates;
    /** Loop turns so far; a queue's batch budget is per turn. */
    private long turn;
    /** A completion batch is being delivered to its sink ({@link #runAfterBatch}). */
    private boolean delivering;
    /** Work that sinks put off to the end of the batch being delivered ({@link #runAfterBatch}). */
    private final ArrayDeque<Runnable> afterBatch = new ArrayDeque<>();
    /** When a busy round last asked epoll about the non-queue sources ({@code System.nanoTime()}). */
    private long othersCheckedAt;
    /** A non-queue source was registered since the last ask: the next busy round asks at once. */
    private boolean othersDue;
    /** Sleeps put off in a row by the poll before sleeping (see {@link #sleep()}). */
    private int sleepsPutOff;
    /**
     * Sources to ask {@link Pollable#prepareToSleep()} before the next sleep: every source but the
     * settled ones (each once; see LoopSource.toAsk). Settled sources leave it when met; a touch
     * puts them back.
     */
    private final ArrayDeque<LoopSource> toAsk = new ArrayDeque<>();
    /** Queues a spinning round polls: every queue but the settled costly ones (LoopSource.polled). */
    private LoopSource[] polled = new LoopSource[16];
    private int polledCount;
    /** Entries of {@link #polled} that left it since the last compaction. */
    private boolean polledHoles;
    /** Settled queues whose poll is not cheap: a spinning round asks epoll about them instead. */
    private int settledQueues;
    /** Watched queues whose poll is not cheap: a spinning round counts their empty polls. */
    private int watchedCostly;
    /** A source was touched while {@link #prepareToSleep()} asked: the loop asks it before sleeping. */
    private boolean unsettledWhileAsking;
    /** Queues whose last drain delivered and whose poll is cheap (LoopSource.listedBeforeSleep). */
    private final ArrayDeque<LoopSource> pollBeforeSleepList = new ArrayDeque<>();

    /** The loop's timers (LoopTimer); loop thread only. */
    private final LoopTimer timers = new LoopTimer();

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
     * where a clock read per operation would be a tenth of the Java path's cost (issue 13). Loop
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
        if ((int) STATE.getVolatile(this) != RUNNING || !taskQueue.offer(task)) {
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
            execute(new OrAfterTermination(task));
        } catch (ResourceClosedException e) {
            // Shutting down: the loop may still run its last round and its sources' hooks, so the
            // task waits for the thread to end.
            runAfterTermination(task);
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
            execute(new OrAfterTermination(task));
        } catch (ResourceClosedException e) {
            runAfterTermination(task);
        }
    }

    private void runAfterTermination(Runnable task) {
        termination.whenComplete((v, t) -> {
            try {
                task.run();
            } catch (Throwable x) {
                LOG.log(System.Logger.Level.WARNING, "task " + task + " run after event loop " + name + " ended threw", x);
            }
        });
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
        if (inEventLoop()) {
            add(s);
        } else {
            execute(new AddTask(s));
        }
        return s;
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
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout " + timeout + " is negative");
        }
        synchronized (lifecycleLock) {
            if ((int) STATE.getVolatile(this) == RUNNING) {
                long nanos = timeout.compareTo(Duration.ofDays(365)) > 0 ? TimeUnit.DAYS.toNanos(365) : timeout.toNanos();
                gracefulDeadline = System.nanoTime() + nanos;
                STATE.setVolatile(this, SHUTTING_DOWN);
            }
        }
        wakeup();
        return termination;
    }

    /** Forced shutdown: queued tasks are dropped (logged, counted), the thread ends as soon as possible. */
    public void shutdownNow() {
        synchronized (lifecycleLock) {
            if ((int) STATE.getVolatile(this) < FORCED) {
                STATE.setVolatile(this, FORCED);
            }
        }
        wakeup();
    }

    /** {@return completes when the loop thread has ended and its native memory is freed} */
    public CompletableFuture<Void> terminationFuture() {
        return termination;
    }

    /**
     * Graceful shutdown and wait for it; idempotent. Queued work gets 10 s, then the shutdown is
     * forced. On the loop thread itself (a task or handler closing its own loop) it only begins the
     * shutdown and returns, so it cannot deadlock.
     */
    @Override
    public void close() {
        shutdownGracefully(CLOSE_TIMEOUT);
        if (inEventLoop()) {
            return;
        }
        if (!await(CLOSE_TIMEOUT.plusSeconds(5))) {
            LOG.log(System.Logger.Level.WARNING, "event loop {0} did not finish its graceful shutdown in time; forcing", name);
            shutdownNow();
            if (!await(Duration.ofSeconds(10))) {
                LOG.log(System.Logger.Level.ERROR, "event loop {0} did not terminate; a handler is blocking its thread", name);
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

    @Override
    public String toString() {
        return "EventLoop[" + name + "]";
    }

    // ---------------------------------------------------------------- wake-up

    /** Makes a sleeping loop return from epoll_wait; a no-op (one volatile read) when it runs. */
    private void wakeup() {
        poller.wakeup(inEventLoop());
    }

    // ---------------------------------------------------------------- the loop

    private void run() {
        assert inEventLoop();
        Throwable fatal = null;
        try {
            loop();
            shutdownSequence();
        } catch (Throwable t) {
            fatal = t;
            LOG.log(System.Logger.Level.ERROR, "event loop " + name + " ends on a fatal error; failing everything it owns", t);
        }
        try {
            if (fatal != null) {
                failEverything();
            }
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "event loop " + name + ": cleanup after the fatal error failed", t);
        } finally {
            try {
                closeNative();
            } catch (Throwable t) {
                LOG.log(System.Logger.Level.ERROR, "event loop " + name + ": releasing its native resources failed", t);
            } finally {
                STATE.setVolatile(this, TERMINATED);
                if (fatal != null) {
                    termination.completeExceptionally(fatal);
                } else {
                    termination.complete(null);
                }
            }
        }
    }

    private void loop() {
        assert inEventLoop();
        int idle = 0;
        while ((int) STATE.getVolatile(this) == RUNNING) {
            turn++;
            if (blockedThresholdNanos != 0) {
                // One per turn, so that a spinning turn is not a blocked unit; unless the last
                // turn judged a unit (clockFresh): its judge read the clock after all the work
                // that could be long, and only the turn's own few instructions came since. A busy
                // loop that does one operation per turn reads the clock once per operation, not
                // twice (issue 13: a clock read is ~30 ns on the project's VM).
                detector.turnStarted();
            }
            int work = runTasks();
            if (!timers.isEmpty()) {
                work += timers.runExpired(System.nanoTime(), this::runTimer);
            }
            // Queues cut off by the budget last turn: their fds may not signal what is left
            // (rpma_cq_wait(3) re-armed the CQ for new completions only; a libfabric wait fd need
            // not be readable for buffered data, fi_trywait(3)), so they are polled here, before
            // the loop may sleep; while one still has work, `work` keeps the loop awake.
            work += drainCutOff();
            if (idle < spinBudget) {
                work += pollQueues();
                if (!askAgain.isEmpty()) {
                    work += askAgain();
                }
                if (sources.others().length > 0 && othersDue()) {
                    int n = poller.selectNow();
                    if (n > 0) {
                        work += dispatch(n, true);
                    }
                }
                if (work == 0) {
                    if (spinBudget != Integer.MAX_VALUE) {
                        idle++; // BUSY_POLL never counts, so it never reaches the sleep branch
                    }
                    SpinWait.pause();
                } else {
                    idle = 0;
                }
            } else {
                if (work == 0) {
                    work = sleep();
                } else {
                    // Tasks ran: still service the fds that are ready, without blocking. Otherwise
                    // a stream of tasks (a producer that never pauses, a task that re-queues itself
                    // to retry a post) would keep the loop from ever reading its queues.
                    int n = poller.selectNow();
                    if (n > 0) {
                        work += dispatch(n, false);
                    }
                }
                if (work > 0) {
                    idle = 0; // activity: an adaptive loop goes back to spinning
                }
            }
        }
    }

    /**
     * Whether this busy round (or a sleep put off by the poll before it) asks epoll about the
     * non-queue sources: when a source was registered since the last ask, or
     * {@link #OTHERS_CHECK_INTERVAL_NANOS} have passed.
     *
     * @return whether to call {@code epoll_wait(0)} now (the ask is then recorded as done)
     */
    private boolean othersDue() {
        return othersDue(OTHERS_CHECK_INTERVAL_NANOS);
    }

    /**
     * {@link #othersDue()} with another interval.
     *
     * @param interval nanoseconds since the last ask after which to ask again
     * @return whether to call {@code epoll_wait(0)} now (the ask is then recorded as done)
     */
    private boolean othersDue(long interval) {
        assert inEventLoop();
        // "Now" to within the turn, without another clock read per round when the detection is on.
        long now = unitClock();
        if (!othersDue && now - othersCheckedAt < interval) {
            return false;
        }
        othersDue = false;
        othersCheckedAt = now;
        return true;
    }

    /**
     * One sleep: announce it, re-check for tasks, ask every source ({@code fi_trywait(3)}), block,
     * dispatch.
     *
     * @return the work found
     */
    private int sleep() {
        assert inEventLoop();
        int again = pollBeforeSleep();
        if (again > 0) {
            // While the last look keeps finding completions (a pipeline completes continuously)
            // the loop never reaches epoll_wait: ask epoll about every fd after
            // MAX_SLEEPS_PUT_OFF sleeps put off in a row, or SLEEPS_PUT_OFF_NANOS, whichever
            // comes first, or one busy cheap queue starves the other queues and the event
            // channels for as long as it stays busy. Counted, not only timed: the ask costs
            // epoll_wait and, for the busy queue whose fd is readable, its re-arm
            // (rpma_cq_wait(3)); asked every 50 µs as a busy round does, an operation slower
            // than that (rpma under the lane's emulation: 40-100 µs) paid both every time and
            // lost what the last look saves (epoll 8 B write 1.35 -> 2.45 x C, 2026-11-23).
            // One call decides and records the ask: a streak of MAX_SLEEPS_PUT_OFF asks at once
            // (interval 0), a shorter one once SLEEPS_PUT_OFF_NANOS have passed since the last.
            if (othersDue(++sleepsPutOff >= MAX_SLEEPS_PUT_OFF ? 0 : SLEEPS_PUT_OFF_NANOS)) {
                sleepsPutOff = 0;
                int n = poller.selectNow();
                if (n > 0) {
                    again += dispatch(n, false);
                }
            }
            return again;
        }
        sleepsPutOff = 0;
        poller.announceSleep();
        if (!taskQueue.isEmpty() || (int) STATE.getVolatile(this) != RUNNING) {
            poller.cancelSleep();
            return 1;
        }
        int work = prepareToSleep();
        if (work > 0) {
            poller.cancelSleep();
            return work;
        }
        Runnable hook = beforeSleep;
        if (hook != null) {
            hook.run();
        }
        int timeout = -1;
        if (!timers.isEmpty()) {
            long wait = timers.nanosUntilNext(System.nanoTime());
            if (wait == 0) {
                poller.cancelSleep();
                return 1; // a timer is due: the next turn runs it
            }
            // epoll_wait(2) counts whole milliseconds: rounded up, so the loop never wakes early.
            timeout = (int) Math.min(Integer.MAX_VALUE, (wait + 999_999) / 1_000_000);
        }
        int n = poller.sleep(timeout);
        if (blockedThresholdNanos != 0) {
            detector.restart(); // the sleep is not a blocked unit
        }
        if (n <= 0) {
            return 0; // EINTR
        }
        counters.wakeup();
        boolean bySource = false; // read before dispatch: its handlers may register sources
        for (int i = 0; i < n && !bySource; i++) {
            bySource = poller.readyId(i) != EpollPoller.WAKE_ID;
        }
        work = dispatch(n, false);
        if (work == 0) {
            counters.emptyWakeup();
            if (bySource) {
                return 1; // "ADAPTIVE after a wake-up" in the design comment: the loop spins again
            }
        }
        return work;
    }

    /**
     * Polls, once more, each queue whose last drain delivered and whose poll is cheap (see
     * "sleep/wake" in the design comment).
     *
     * @return completions delivered (0: the loop may go on towards the sleep)
     */
    private int pollBeforeSleep() {
        assert inEventLoop();
        int work = 0;
        for (int i = pollBeforeSleepList.size(); i > 0; i--) {
            LoopSource s = pollBeforeSleepList.poll();
            s.listedBeforeSleep = false;
            if (s.pollBeforeSleep) {
                s.pollBeforeSleep = false;
                if (s.isActive()) {
                    work += drain(s);
                }
            }
        }
        return work;
    }

    /**
     * Calls {@link Pollable#prepareToSleep()} on every source; a source that says "not yet" is
     * polled (queue) or handled (other source) right away.
     *
     * @return 0 when the loop may sleep, else the work done
     */
    private int prepareToSleep() {
        assert inEventLoop();
        int work = 0;
        unsettledWhileAsking = false;
        for (int i = toAsk.size(); i > 0; i--) {
            LoopSource s = toAsk.poll();
            s.toAsk = false;
            if (!s.isActive() || s.settled) {
                continue; // unregistered, or settled in a spinning round: a touch lists it again
            }
            boolean yes = askToSleep(s);
            if (!s.isActive()) {
                continue; // failed in prepareToSleep()
            }
            if (yes && s.watched) {
                settle(s);
                continue;
            }
            listToAsk(s);
            if (!yes) {
                if (s.cq != null) {
                    work += 1 + drain(s);
                } else {
                    handleReadable(s);
                    work++;
                }
            }
        }
        // A source touched during the asks (a handler posted) is listed but was not asked: one
        // more turn asks it before any sleep.
        return work == 0 && unsettledWhileAsking ? 1 : work;
    }

    /** Lists a source to be asked before the next sleep (once). */
    private void listToAsk(LoopSource s) {
        if (!s.toAsk) {
            s.toAsk = true;
            toAsk.add(s);
        }
    }

    /**
     * A watched source said yes: it is asked no more, and a costly queue is polled no more, until
     * it is touched or epoll reports its fd.
     */
    private void settle(LoopSource s) {
        assert inEventLoop();
        s.settled = true;
        if (s.cq != null && !s.cheapPoll && s.polled) {
            s.polled = false;
            polledHoles = true;
            settledQueues++;
        }
    }

    /** A settled source was touched or reported ready: asked before the next sleep, polled again. */
    private void unsettle(LoopSource s) {
        assert inEventLoop();
        if (!s.settled || !s.isActive()) {
            return;
        }
        s.settled = false;
        s.emptyPolls = 0; // touched: an operation may be in flight
        if (s.cq != null && !s.cheapPoll && !s.polled) {
            settledQueues--;
            addPolled(s);
        }
        listToAsk(s);
        unsettledWhileAsking = true;
    }

    /** The listener a watched source calls when its yes stops standing. */
    private void touched(LoopSource s) {
        if (inEventLoop()) {
            unsettle(s);
            return;
        }
        try {
            execute(() -> unsettle(s));
        } catch (ResourceClosedException e) {
            // shutting down: nothing sleeps on the source any more
        }
    }

    private void addPolled(LoopSource s) {
        if (polledCount == polled.length) {
            polled = java.util.Arrays.copyOf(polled, polled.length * 2);
        }
        polled[polledCount++] = s;
        s.polled = true;
    }

    /** Drops the queues that left {@link #polled} (settled, unregistered); after a round, never inside one. */
    private void compactPolled() {
        if (!polledHoles) {
            return;
        }
        polledHoles = false;
        int n = 0;
        for (int i = 0; i < polledCount; i++) {
            LoopSource s = polled[i];
            if (s.polled) {
                polled[n++] = s;
            }
        }
        java.util.Arrays.fill(polled, n, polledCount, null);
        polledCount = n;
    }

    private boolean askToSleep(LoopSource s) {
        assert inEventLoop();
        try {
            return s.pollable.prepareToSleep();
        } catch (Throwable t) {
            rethrowIfFatal(t);
            fail(s, "prepareToSleep", t);
            return true;
        }
    }

    /**
     * Handles ready entries of the epoll array, the non-queue sources included.
     *
     * @param n entries
     * @param busy a busy round: queues were polled already, do not acknowledge them
     * @return the work found
     */
    private int dispatch(int n, boolean busy) {
        return dispatch(n, busy, true);
    }

    /**
     * Handles ready entries of the epoll array.
     *
     * @param n entries
     * @param busy a busy round: queues were polled already (but the quiet ones it left), do not
     *     acknowledge them
     * @param others whether to handle the non-queue sources among them
     * @return the work found
     */
    private int dispatch(int n, boolean busy, boolean others) {
        assert inEventLoop();
        int work = 0;
        for (int i = 0; i < n; i++) {
            long id = poller.readyId(i);
            if (id == EpollPoller.WAKE_ID) {
                poller.consumeWakeup();
                if (!taskQueue.isEmpty()) {
                    work++;
                }
                continue;
            }
            LoopSource s = sources.lookup(id);
            if (s == null) {
                continue; // unregistered by a handler earlier in this batch
            }
            if (s.cq != null) {
                if (!busy) {
                    unsettle(s);
                    if (acknowledge(s)) {
                        work += drain(s);
                    }
                } else if ((s.skippedTurn == turn || s.settled) && s.isActive()) {
                    // A quiet or settled queue that this busy round left unpolled, and whose fd is readable.
                    unsettle(s);
                    s.skippedTurn = -1;
                    work += drainCountingEmpty(s);
                }
            } else if (others) {
                unsettle(s);
                // Busy: ask first, then handle ("A readable source in a busy round" above).
                boolean settled = !busy || askToSleep(s);
                if (s.isActive()) {
                    handleReadable(s);
                    if (!settled && s.isActive()) {
                        queueAskAgain(s);
                    }
                }
                work++;
            }
        }
        return work;
    }

    private boolean acknowledge(LoopSource s) {
        assert inEventLoop();
        try {
            s.cq.acknowledge();
            return true;
        } catch (Throwable t) {
            rethrowIfFatal(t);
            fail(s, "acknowledge", t);
            return false;
        }
    }

    /**
     * Busy round: every queue polled directly, no acknowledge; while the loop has two or more
     * queues that can be quiet, two or more quiet ones are left to one {@code epoll_wait(0)}
     * ("Busy rounds and quiet queues" in the design comment).
     */
    private int pollQueues() {
        assert inEventLoop();
        if (sources.quietCapableQueues() >= 2 || watchedCostly > 0) {
            return pollQueuesSkippingQuiet();
        }
        // The usual loop without costly watched queues (RDMA queues): kept as small as it always
        // was, so that the JIT compiles the busy round's hottest path as before.
        int work = 0;
        for (int i = 0; i < polledCount; i++) {
            LoopSource s = polled[i];
            if (s.polled && s.isActive()) {
                work += drain(s);
            }
        }
        compactPolled();
        return work;
    }

    /** {@link #pollQueues()} while the loop has two or more queues that can be quiet. */
    private int pollQueuesSkippingQuiet() {
        assert inEventLoop();
        boolean tick = false;
        long now = unitClock();
        if (now - quietTickAt >= QUIET_TICK_NANOS) {
            quietTickAt = now;
            tick = true;
        }
        int work = 0;
        int skipped = 0;
        int candidates = 0;
        // An idle queue is asked only where another could turn quiet with it (last round's count).
        boolean askIdle = tick && quietCandidates >= 2;
        LoopSource lastSkipped = null;
        for (int i = 0; i < polledCount; i++) {
            LoopSource s = polled[i];
            if (!s.polled || !s.isActive()) {
                continue;
            }
            if (s.watched && !s.cheapPoll) {
                // Idle long enough: asked on the tick; a yes settles it, and epoll then stands for
                // its polls until it is touched or its fd turns readable.
                if (tick && s.emptyPolls >= QUIET_AFTER_EMPTY_POLLS) {
                    boolean yes = askToSleep(s);
                    if (!s.isActive()) {
                        continue;
                    }
                    if (yes) {
                        settle(s);
                        continue;
                    }
                }
                work += drainCountingEmpty(s);
                continue;
            }
            if (!s.quietCapable) {
                work += drain(s);
                continue;
            }
            boolean quiet = isQuiet(s);
            if (!s.isActive()) {
                continue; // failed in quiet()
            }
            boolean skip;
            if (quiet) {
                // The tick renews its answer (prepareToSleep answers from the transport's last
                // call while it trusts that, and calls again after); a "not yet" has it polled.
                skip = !tick || askToSleep(s);
            } else {
                if (s.skippedTurn == turn - 1) {
                    s.emptyPolls = 0; // quiet last round, touched since (a post): work in flight
                }
                // Idle long enough: asked on the tick, so that idle queues turn quiet together,
                // and only beside another candidate (a round skips only when it leaves two or more).
                skip = askIdle && s.emptyPolls >= QUIET_AFTER_EMPTY_POLLS && askToSleep(s) && s.isActive()
                        && isQuiet(s);
            }
            if (!s.isActive()) {
                continue; // failed in prepareToSleep() or quiet()
            }
            if (skip) {
                s.skippedTurn = turn;
                skipped++;
                lastSkipped = s;
            } else {
                work += drainCountingEmpty(s);
            }
            if (skip || s.emptyPolls >= QUIET_AFTER_EMPTY_POLLS) {
                candidates++;
            }
        }
        quietCandidates = candidates;
        compactPolled();
        if (skipped == 1) {
            // A single quiet queue: its poll costs what the ask would, and finds what came
            // without an epoll_wait before it.
            lastSkipped.skippedTurn = -1;
            work += drainCountingEmpty(lastSkipped);
            skipped = 0;
        }
        if (skipped > 1 || settledQueues > 0) {
            // One ask about every fd stands for the polls of all the quiet and settled queues; the
            // other sources it finds ready are handled only when they are due anyway.
            counters.quietSkips(skipped + settledQueues);
            boolean others = sources.others().length > 0 && othersDue();
            int n = poller.selectNow();
            if (n > 0) {
                work += dispatch(n, true, others);
            }
        }
        return work;
    }

    /**
     * Drains a queue that can be quiet and counts a poll that found it empty towards
     * {@link #QUIET_AFTER_EMPTY_POLLS} (a delivery, in any path, restarts the count in
     * {@link #drain}); a cut-off (full batches) or a failure does not count.
     *
     * @return completions delivered
     */
    private int drainCountingEmpty(LoopSource s) {
        assert inEventLoop();
        int n = drain(s);
        if (s.cutOff) {
            s.emptyPolls = 0;
        } else if (n == 0 && s.isActive() && s.emptyPolls < QUIET_AFTER_EMPTY_POLLS) {
            s.emptyPolls++;
        }
        return n;
    }

    /** {@return {@link CompletionQueue#quiet()} of a queue that can be quiet; one that throws is failed (and inactive)} */
    private boolean isQuiet(LoopSource s) {
        assert inEventLoop();
        try {
            return s.cq.quiet();
        } catch (Throwable t) {
            rethrowIfFatal(t);
            fail(s, "quiet", t);
            return false;
        }
    }

    /**
     * Asks again the sources whose handler a spinning round ran while their prepareToSleep said
     * "not yet", and runs the handler again for each that still says so ("A readable source in a
     * busy round" in the design comment).
     *
     * @return the handlers run
     */
    private int askAgain() {
        assert inEventLoop();
        int work = 0;
        for (int i = askAgain.size(); i > 0; i--) {
            LoopSource s = askAgain.poll();
            s.askAgain = false;
            if (s.isActive() && !askToSleep(s) && s.isActive()) {
                handleReadable(s);
                work++;
                queueAskAgain(s);
            }
        }
        return work;
    }

    private void queueAskAgain(LoopSource s) {
        assert inEventLoop();
        if (!s.askAgain) {
            s.askAgain = true;
            askAgain.add(s);
        }
    }

    /**
     * Polls the queues that {@link #MAX_BATCHES_PER_TURN} cut off in an earlier turn, each once
     * (with this turn's budget); one that is cut off again goes back on the list.
     *
     * @return completions delivered
     */
    private int drainCutOff() {
        assert inEventLoop();
        int work = 0;
        for (int i = cutOff.size(); i > 0; i--) {
            LoopSource s = cutOff.poll();
            s.cutOff = false;
            if (s.isActive()) {
                work += drain(s);
            }
        }
        return work;
    }

    /**
     * Polls a queue until a batch comes back short or the queue has had its
     * {@link #MAX_BATCHES_PER_TURN} polls of this turn; in the latter case, while the last batch
     * was full, the queue goes on the cut-off list so that the next turn polls it again without
     * waiting for its fd.
     *
     * @return completions delivered
     */
    private int drain(LoopSource s) {
        assert inEventLoop();
        if (s.turn != turn) {
            s.turn = turn;
            s.pollsThisTurn = 0;
        }
        int total = 0;
        int n;
        do {
            if (s.pollsThisTurn == MAX_BATCHES_PER_TURN) {
                if (!s.cutOff) {
                    s.cutOff = true;
                    cutOff.add(s);
                }
                return total;
            }
            s.pollsThisTurn++;
            n = pollOnce(s);
            if (n < 0) {
                return total;
            }
            total += n;
        } while (n == batchSize && s.isActive());
        if (total > 0) {
            if (s.cheapPoll) {
                s.pollBeforeSleep = true;
                if (!s.listedBeforeSleep) {
                    s.listedBeforeSleep = true;
                    pollBeforeSleepList.add(s);
                }
            }
            s.emptyPolls = 0; // a queue that can be quiet counts its empty polls from here
        }
        return total;
    }

    /**
     * Polls a queue until a batch comes back short, with no budget: the graceful shutdown's last
     * drain, after which nothing else runs on the loop.
     *
     * @return completions delivered
     */
    private int drainAll(LoopSource s) {
        assert inEventLoop();
        int total = 0;
        int n;
        do {
            n = pollOnce(s);
            if (n < 0) {
                return total;
            }
            total += n;
        } while (n == batchSize && s.isActive());
        return total;
    }

    /**
     * One native poll into the scratch batch, counted.
     *
     * @return the completions delivered, or -1 when the queue failed (it is unregistered)
     */
    private int pollOnce(LoopSource s) {
        assert inEventLoop();
        assert !delivering : "a poll from inside a sink";
        int n;
        delivering = true;
        try {
            n = s.cq.poll(scratch, batchSize, s.sink);
        } catch (Throwable t) {
            delivering = false;
            if (t instanceof VirtualMachineError || t instanceof LinkageError) {
                // The loop ends (run() handles it): no subscriber code runs on the way out.
                afterBatch.clear();
                rethrowIfFatal(t);
            }
            // The queue's owner hears of its failure first (the reactive layer ends the
            // connection, so that the put-off work, a stream asking for more, posts nothing
            // new on it; a stream's failure sends its completed results first on its own).
            fail(s, "poll", t);
            runAfterBatchTasks();
            return -1;
        }
        delivering = false;
        if (n < 0 || n > batchSize) {
            fail(s, "poll", new IllegalStateException("poll returned " + n + ", outside [0, " + batchSize + "]"));
            runAfterBatchTasks();
            return -1;
        }
        runAfterBatchTasks();
        if (n > 0) {
            counters.batch(n);
            if (blockedThresholdNanos != 0) {
                endUnit(BlockedLoopDetector.UNIT_BATCH, s, n);
            }
        }
        return n;
    }

    private void handleReadable(LoopSource s) {
        assert inEventLoop();
        try {
            s.onReadable.run();
        } catch (Throwable t) {
            rethrowIfFatal(t);
            LOG.log(System.Logger.Level.WARNING, "readiness handler of " + s + " threw; the loop goes on", t);
        }
        if (blockedThresholdNanos != 0) {
            endUnit(BlockedLoopDetector.UNIT_HANDLER, s, 0);
        }
    }

    private int runTasks() {
        assert inEventLoop();
        int n = 0;
        Runnable r;
        long start = 0;
        // The state is re-read per task: a task may be long, and a shutdown requested meanwhile
        // decides what happens to the rest (graceful: run with a deadline; forced: dropped).
        while (n < MAX_TASKS_PER_ROUND && (int) STATE.getVolatile(this) == RUNNING && (r = taskQueue.poll()) != null) {
            if (n == 0) {
                // The budget's start, read only when there is a task: a busy turn with an empty
                // queue reads no clock here (the unit start is "now" when the detection is on).
                start = unitClock();
            }
            n++;
            long submitted = taskQueue.polledSubmittedAt;
            if (submitted != 0) {
                // A sampled task: its wait in the queue (the unit start is "now" when the
                // detection is on; otherwise one extra clock read per sampled task).
                long now = unitClock();
                counters.lag(Math.max(0, now - submitted));
            }
            safeRun(r);
            counters.task();
            if (blockedThresholdNanos != 0) {
                endUnit(BlockedLoopDetector.UNIT_TASK, r, 0);
            }
            if ((n & 15) == 0 && System.nanoTime() - start > TASK_BUDGET_NANOS) {
                break;
            }
        }
        return n;
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
        if (delay.isNegative() || delay.compareTo(Duration.ofNanos(LoopTimer.MAX_DELAY_NANOS)) > 0) {
            throw new IllegalArgumentException("timer delay " + delay + " is outside [PT0S, "
                    + Duration.ofNanos(LoopTimer.MAX_DELAY_NANOS) + "]");
        }
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
     * reads a batch of completions before it posts again (issue 13: {@code writeAll}'s
     * per-write path). The tasks run in the order given, on this thread, right after the sink
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
        if (!delivering) {
            return false;
        }
        afterBatch.add(task);
        return true;
    }

    private void runAfterBatchTasks() {
        assert inEventLoop();
        if (afterBatch.isEmpty()) {
            return;
        }
        try {
            Runnable r;
            while ((r = afterBatch.poll()) != null) {
                safeRun(r);
            }
        } finally {
            // Only a fatal error (safeRun rethrows nothing else) leaves work here: the loop ends.
            afterBatch.clear();
        }
    }

    private void safeRun(Runnable r) {
        assert inEventLoop();
        try {
            r.run();
        } catch (Throwable t) {
            rethrowIfFatal(t);
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

    /** A queue or source that failed itself is dropped and its owner told. */
    private void fail(LoopSource s, String call, Throwable t) {
        assert inEventLoop();
        LOG.log(System.Logger.Level.ERROR, call + " of " + s + " failed; it is unregistered from event loop " + name, t);
        unregister(s, true);
    }

    // ---------------------------------------------------------------- shutdown

    private void shutdownSequence() {
        assert inEventLoop();
        taskQueue.close();
        boolean forced = (int) STATE.getVolatile(this) == FORCED;
        if (!forced) {
            long deadline = gracefulDeadline;
            Runnable r;
            while ((r = taskQueue.pollClosed()) != null) {
                if ((int) STATE.getVolatile(this) == FORCED || System.nanoTime() - deadline > 0) {
                    drop(r);
                    forced = true;
                    LOG.log(System.Logger.Level.WARNING, "event loop {0}: graceful shutdown forced (timeout or shutdownNow)", name);
                    break;
                }
                safeRun(r);
                counters.task();
            }
            if (!forced) {
                // The last drain: completions that are already in the queues reach their sinks.
                // No budget: nothing else runs on the loop any more, so no neighbour can starve.
                detector.restart(); // the shutdown's tasks are not the drain's time
                for (LoopSource s : sources.queues()) {
                    if (s.isActive()) {
                        drainAll(s);
                    }
                }
            }
        }
        dropRemainingTasks();
        closeSources();
    }

    private void failEverything() {
        assert inEventLoop();
        taskQueue.close();
        dropRemainingTasks();
        closeSources();
    }

    private void dropRemainingTasks() {
        assert inEventLoop();
        long before = counters.droppedTasks();
        Runnable r;
        while ((r = taskQueue.pollClosed()) != null) {
            drop(r);
        }
        if (counters.droppedTasks() != before) {
            LOG.log(System.Logger.Level.WARNING, "event loop {0} shut down: dropped {1} queued task(s)", name,
                    counters.droppedTasks() - before);
        }
    }

    private void drop(Runnable r) {
        assert inEventLoop();
        counters.dropped();
        LOG.log(System.Logger.Level.DEBUG, "event loop {0} shut down: dropped task {1}", name, r);
        if (r instanceof AddTask a) {
            a.source.phase = LoopSource.REMOVED;
            a.source.removed.complete(null);
            runHook(a.source);
        } else if (r instanceof OrAfterTermination o) {
            runAfterTermination(o.task);
        }
    }

    /** Unregisters every source and runs its hook; no registration is accepted afterwards. */
    private void closeSources() {
        assert inEventLoop();
        sourcesClosed = true;
        timers.cancelAll();
        for (LoopSource s : sources.all()) {
            try {
                unregister(s, true);
            } catch (Throwable t) {
                rethrowIfFatal(t);
                LOG.log(System.Logger.Level.WARNING, "unregistering " + s + " failed", t);
            }
        }
    }

    private void closeNative() {
        poller.close();
        arena.close();
    }

    // ---------------------------------------------------------------- registrations (loop thread)

    /** Adds a source to epoll; loop thread. */
    private void add(LoopSource s) {
        assert inEventLoop();
        if (sourcesClosed || (int) STATE.getVolatile(this) >= TERMINATED) {
            throw new ResourceClosedException("event loop " + name + " is shut down: " + s + " not registered");
        }
        if (s.phase != LoopSource.PENDING) {
            return; // closed before the hand-over ran
        }
        int fd = s.pollable.fd();
        if (fd < 0) {
            throw new IllegalArgumentException("source " + s.pollable + " has fd " + fd + " (must be >= 0)");
        }
        s.watched = watch(s);
        if (s.watched) {
            s.quietCapable = false; // settling replaces the quiet-queue rules for it
        }
        long id = sources.add(s);
        int e = poller.add(fd, id);
        if (e != 0) {
            sources.remove(s);
            unwatch(s);
            throw NativeErrors.errno("epoll_ctl", e, "EPOLL_CTL_ADD of fd " + fd + " (" + s.pollable + ")");
        }
        s.phase = LoopSource.ACTIVE;
        listToAsk(s);
        if (s.cq != null) {
            addPolled(s);
            if (s.watched && !s.cheapPoll) {
                watchedCostly++;
            }
        }
        if (s.cq == null) {
            othersDue = true; // a busy round asks about it at once, not after the interval
        }
    }

    /**
     * Removes a source; loop thread; idempotent.
     *
     * @param runHook whether to run the owner's hook (not when the owner asked)
     */
    void unregister(LoopSource s, boolean runHook) {
        assert inEventLoop();
        if (s.phase == LoopSource.PENDING) {
            s.phase = LoopSource.REMOVED;
            s.removed.complete(null);
            return;
        }
        if (s.phase != LoopSource.ACTIVE) {
            return;
        }
        s.phase = LoopSource.REMOVED;
        sources.remove(s);
        if (s.watched) {
            if (s.settled && s.cq != null && !s.cheapPoll) {
                settledQueues--;
            }
            if (s.cq != null && !s.cheapPoll) {
                watchedCostly--;
            }
            s.settled = false;
            unwatch(s);
        }
        if (s.polled) {
            s.polled = false;
            polledHoles = true;
        }
        int fd = -1;
        try {
            fd = s.pollable.fd();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "fd of " + s.pollable + " unavailable at unregistration", e);
        }
        if (fd >= 0) {
            int e = poller.delete(fd);
            if (e != 0) {
                // EBADF/ENOENT: the owner closed the fd first; epoll(7) drops a file description
                // from every set when its last fd is closed, so there is nothing left to remove.
                LOG.log(System.Logger.Level.DEBUG, "EPOLL_CTL_DEL of fd {0}: {1}", fd, NativeErrors.errnoName(e));
            }
        }
        s.removed.complete(null);
        if (runHook) {
            runHook(s);
        }
    }

    /** {@return whether the source accepted {@link Pollable#watchTouches}; one that throws is asked every sleep} */
    private boolean watch(LoopSource s) {
        try {
            return s.pollable.watchTouches(() -> touched(s));
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "watchTouches of " + s + " threw; it is asked before every sleep", e);
            return false;
        }
    }

    private void unwatch(LoopSource s) {
        s.watched = false;
        try {
            s.pollable.watchTouches(null);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "watchTouches(null) of " + s + " threw", e);
        }
    }

    private void runHook(LoopSource s) {
        assert inEventLoop();
        if (s.onShutdown == null || s.closeRequested) {
            return;
        }
        try {
            s.onShutdown.run();
        } catch (Throwable t) {
            rethrowIfFatal(t);
            LOG.log(System.Logger.Level.WARNING, "shutdown hook of " + s + " threw", t);
        }
    }

    /** Registration.close() from another thread: hand over and wait until the loop let go. */
    void removeFromOtherThread(LoopSource s) {
        try {
            execute(new RemoveTask(s));
        } catch (ResourceClosedException e) {
            // Shutdown has begun: the loop removes every source itself before it ends.
        }
        boolean interrupted = false;
        while (true) {
            try {
                s.removed.get();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            } catch (ExecutionException e) {
                break;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
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

    /** Hand-over of a registration from another thread. */
    private final class AddTask implements Runnable {
        final LoopSource source;

        AddTask(LoopSource source) {
            this.source = source;
        }

        @Override
        public void run() {
            try {
                add(source);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "registering " + source + " on event loop " + name + " failed", e);
                source.phase = LoopSource.REMOVED;
                source.removed.complete(null);
                runHook(source);
            }
        }

        @Override
        public String toString() {
            return "register " + source;
        }
    }

    /** A task of {@link #executeOrAfterTermination}: when dropped, it runs after termination. */
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

    /** Hand-over of an unregistration from another thread. */
    private final class RemoveTask implements Runnable {
        final LoopSource source;

        RemoveTask(LoopSource source) {
            this.source = source;
        }

        @Override
        public void run() {
            unregister(source, false);
        }

        @Override
        public String toString() {
            return "unregister " + source;
        }
    }
}
