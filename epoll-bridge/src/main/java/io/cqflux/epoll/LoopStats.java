package io.cqflux.epoll;

/**
 * A snapshot of an event loop's counters. Each counter is exact; the snapshot as a whole is not
 * atomic (the loop keeps counting while it is read).
 *
 * @param wakeups returns from a sleeping {@code epoll_wait} with at least one ready fd (the
 *     non-blocking {@code epoll_wait} of busy rounds does not count)
 * @param emptyWakeups wake-ups after which no completion, event or task was found (spurious)
 * @param batches native drain calls that returned at least one completion
 * @param completions completions delivered
 * @param largestBatch most completions returned by one drain call
 * @param tasks tasks run from the task queue
 * @param droppedTasks queued tasks dropped by a forced shutdown (or a graceful one past its timeout)
 * @param blocked times a task, a completion batch (the subscriber code it ran) or a readiness
 *     handler held the loop thread longer than the loop's blocked threshold (0 when the detection
 *     is off)
 * @param lagNanos the most recent sample of the loop lag: nanoseconds from a task's hand-over to
 *     the start of its run (one task in eight is sampled; 0 before the first sample)
 * @param quietSkips polls of idle queues whose poll is not cheap (in practice fabric/tcp's) that a
 *     spinning round left to its one {@code epoll_wait(0)} over every fd: settled queues (a queue
 *     that watches its touches, said yes to {@code prepareToSleep()} and was not touched since;
 *     SettledSources' design comment), counted whatever their number, and
 *     quiet queues of a loop with two or more that can be quiet but do not watch their touches
 *     (SpinRound's design comment, "Busy rounds and quiet queues"): per round, one
 *     {@code epoll_wait(0)} stood for that many polls, each a system call on tcp
 * @param longestUnitNanos the longest a task, a completion batch or a readiness handler held the
 *     loop thread since the loop started, the library's own set-up work (connects, accepts,
 *     closes) included: how long the loop's other connections waited at worst. Taken by the
 *     blocked-loop detection from the clock reading it makes anyway; 0 when the detection is off
 * @param unitsOver1ms units (as for {@code longestUnitNanos}) that held the loop longer than 1 ms;
 *     0 when the detection is off. Unlike the maximum, differences of two snapshots tell what a
 *     period did, and a preempted loop thread shows as a few, a slow kind of work as many
 * @param unitsOver10ms units that held it longer than 10 ms (also counted in {@code unitsOver1ms})
 */
public record LoopStats(long wakeups, long emptyWakeups, long batches, long completions, int largestBatch, long tasks,
        long droppedTasks, long blocked, long lagNanos, long quietSkips, long longestUnitNanos, long unitsOver1ms,
        long unitsOver10ms) {

    /**
     * The counters without {@code longestUnitNanos}, {@code unitsOver1ms} and {@code unitsOver10ms} (0).
     *
     * @param wakeups wake-ups
     * @param emptyWakeups empty wake-ups
     * @param batches batches
     * @param completions completions
     * @param largestBatch largest batch
     * @param tasks tasks run
     * @param droppedTasks tasks dropped
     * @param blocked blocked units
     * @param lagNanos the latest lag sample
     * @param quietSkips polls left to one epoll ask
     */
    public LoopStats(long wakeups, long emptyWakeups, long batches, long completions, int largestBatch, long tasks,
            long droppedTasks, long blocked, long lagNanos, long quietSkips) {
        this(wakeups, emptyWakeups, batches, completions, largestBatch, tasks, droppedTasks, blocked, lagNanos,
                quietSkips, 0, 0, 0);
    }

    /**
     * The counters without {@code quietSkips} (0).
     *
     * @param wakeups wake-ups
     * @param emptyWakeups empty wake-ups
     * @param batches batches
     * @param completions completions
     * @param largestBatch largest batch
     * @param tasks tasks run
     * @param droppedTasks tasks dropped
     * @param blocked blocked units
     * @param lagNanos the latest lag sample
     */
    public LoopStats(long wakeups, long emptyWakeups, long batches, long completions, int largestBatch, long tasks,
            long droppedTasks, long blocked, long lagNanos) {
        this(wakeups, emptyWakeups, batches, completions, largestBatch, tasks, droppedTasks, blocked, lagNanos, 0, 0, 0, 0);
    }

    /**
     * The counters without {@code blocked}, {@code lagNanos} and {@code quietSkips} (0).
     *
     * @param wakeups wake-ups
     * @param emptyWakeups empty wake-ups
     * @param batches batches
     * @param completions completions
     * @param largestBatch largest batch
     * @param tasks tasks run
     * @param droppedTasks tasks dropped
     */
    public LoopStats(long wakeups, long emptyWakeups, long batches, long completions, int largestBatch, long tasks,
            long droppedTasks) {
        this(wakeups, emptyWakeups, batches, completions, largestBatch, tasks, droppedTasks, 0, 0, 0, 0, 0, 0);
    }

    /**
     * The counters without {@code droppedTasks}, {@code blocked}, {@code lagNanos} and {@code quietSkips} (0).
     *
     * @param wakeups wake-ups
     * @param emptyWakeups empty wake-ups
     * @param batches batches
     * @param completions completions
     * @param largestBatch largest batch
     * @param tasks tasks run
     */
    public LoopStats(long wakeups, long emptyWakeups, long batches, long completions, int largestBatch, long tasks) {
        this(wakeups, emptyWakeups, batches, completions, largestBatch, tasks, 0, 0, 0, 0, 0, 0, 0);
    }
}
