package io.cqflux.epoll.loop;

/*
 * Design: the task half of a loop turn, and its budget.
 *
 * Fairness. One turn of the loop runs up to MAX_TASKS_PER_ROUND tasks, for at most
 * TASK_BUDGET_NANOS (a task that re-queues itself to continue a long job, such as failing a dying
 * connection's backlog a chunk at a time, would otherwise fill the whole turn); the I/O handler
 * bounds its own share in batches (see its design comment), not in time. Where a completion's
 * sink is slow (it signals a subscriber and posts the next waiting operation, which under an
 * emulator is a costly system call into the RDMA driver), a turn's I/O share of 16 batches per
 * queue can take many times the tasks' budget: a backlog of operations handed over from another
 * thread then reached the loop only at the pace their own queue completed them, and a close (or
 * any task) queued behind it waited for all of it. So when a turn's tasks stopped on their
 * budget, the turn's I/O is timed, and the next turn's tasks get as long as that I/O took (and no
 * count limit), up to MAX_TASK_BUDGET_NANOS: tasks and completions then share the thread about
 * evenly while both have work, and a turn whose timed I/O was stretched by a GC pause or the
 * host's preemption does not hand the tasks that whole time. A turn whose tasks ran out times
 * nothing (no clock read) and the next gets the plain budget.
 */

/**
 * Runs the tasks of one loop turn within the turn's budget (see the design comment at the top of
 * this file); the {@link EventLoop}'s run cycle times the turn's I/O when the tasks were cut off
 * and tells it back. Loop thread only.
 */
final class TaskTurn {
    /** Tasks run per loop round before the ready fds get their turn again (every strategy). */
    static final int MAX_TASKS_PER_ROUND = 1024;
    /** Time one turn may spend on tasks before the ready fds get their turn; read every 16 tasks. */
    static final long TASK_BUDGET_NANOS = 1_000_000;
    /** The most a turn's tasks get after a timed turn of I/O (see Fairness in the design comment). */
    static final long MAX_TASK_BUDGET_NANOS = 16 * TASK_BUDGET_NANOS;

    private final EventLoop loop;
    private final TaskQueue taskQueue;
    private final LoopLifecycle lifecycle;
    private final LoopCounters counters;
    private final BlockedLoopDetector detector;
    /** {@link LoopConfig#blockedThreshold()} in nanoseconds; 0: off. */
    private final long blockedThresholdNanos;

    /**
     * How long the last turn's I/O took, timed only when that turn's tasks stopped on their budget
     * with tasks still queued, else 0: the next turn's task budget when it is above
     * {@link #TASK_BUDGET_NANOS} (see Fairness in the design comment).
     */
    private long lastIoNanos;
    /** Whether the last {@link #run()} stopped on its budget with tasks still queued. */
    private boolean cutOff;

    TaskTurn(EventLoop loop, TaskQueue taskQueue, LoopLifecycle lifecycle, LoopCounters counters,
            BlockedLoopDetector detector, long blockedThresholdNanos) {
        this.loop = loop;
        this.taskQueue = taskQueue;
        this.lifecycle = lifecycle;
        this.counters = counters;
        this.detector = detector;
        this.blockedThresholdNanos = blockedThresholdNanos;
    }

    /** {@return whether the last {@link #run()} stopped on its budget: then the turn's I/O is timed} */
    boolean cutOff() {
        return cutOff;
    }

    /**
     * How long this turn's I/O took, timed only after a {@link #run()} that was {@link #cutOff()}.
     *
     * @param nanos the time, or 0 when it was not timed
     */
    void ioTook(long nanos) {
        lastIoNanos = nanos;
    }

    /** Runs this turn's tasks; {@return how many ran} */
    int run() {
        assert loop.inEventLoop();
        int n = 0;
        Runnable r;
        long start = 0;
        // As long as the last turn's I/O, when that was longer than the plain budget (Fairness).
        long budget = Math.clamp(lastIoNanos, TASK_BUDGET_NANOS, MAX_TASK_BUDGET_NANOS);
        int maxTasks = budget > TASK_BUDGET_NANOS ? Integer.MAX_VALUE : MAX_TASKS_PER_ROUND;
        cutOff = false;
        // The state is re-read per task: a task may be long, and a shutdown requested meanwhile
        // decides what happens to the rest (graceful: run with a deadline; forced: dropped).
        while (n < maxTasks && lifecycle.isRunning() && (r = taskQueue.poll()) != null) {
            if (n == 0) {
                // The budget's start, read only when there is a task: a busy turn with an empty
                // queue reads no clock here (the unit start is "now" when the detection is on).
                start = loop.unitClock();
            }
            n++;
            long submitted = taskQueue.polledSubmittedAt;
            if (submitted != 0) {
                // A sampled task: its wait in the queue (the unit start is "now" when the
                // detection is on; otherwise one extra clock read per sampled task).
                long now = loop.unitClock();
                counters.lag(Math.max(0, now - submitted));
            }
            loop.safeRun(r);
            counters.task();
            if (blockedThresholdNanos != 0) {
                detector.endUnit(BlockedLoopDetector.UNIT_TASK, r, 0);
            }
            if ((n & 15) == 0 && System.nanoTime() - start > budget) {
                cutOff = true;
                break;
            }
        }
        if (n == maxTasks) {
            cutOff = true;
        }
        return n;
    }
}
