package io.cqflux.epoll.loop;

import io.cqflux.epoll.LoopStats;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The counters of one {@link EventLoop}, behind {@link EventLoop#stats()}.
 *
 * <p>Thread safety: written by the loop thread only (a plain read, then an opaque write: no
 * atomic read-modify-write on the hot path, since there is one writer), read from any thread
 * with opaque reads; each counter is exact, a snapshot of all of them is not atomic.
 */
final class LoopCounters {

    private static final VarHandle WAKEUPS;
    private static final VarHandle EMPTY_WAKEUPS;
    private static final VarHandle BATCHES;
    private static final VarHandle COMPLETIONS;
    private static final VarHandle LARGEST_BATCH;
    private static final VarHandle TASKS;
    private static final VarHandle DROPPED;
    private static final VarHandle BLOCKED;
    private static final VarHandle LAG;
    private static final VarHandle QUIET_SKIPS;
    private static final VarHandle LONGEST_UNIT;
    private static final VarHandle UNITS_OVER_1MS;
    private static final VarHandle UNITS_OVER_10MS;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            WAKEUPS = l.findVarHandle(LoopCounters.class, "wakeups", long.class);
            EMPTY_WAKEUPS = l.findVarHandle(LoopCounters.class, "emptyWakeups", long.class);
            BATCHES = l.findVarHandle(LoopCounters.class, "batches", long.class);
            COMPLETIONS = l.findVarHandle(LoopCounters.class, "completions", long.class);
            LARGEST_BATCH = l.findVarHandle(LoopCounters.class, "largestBatch", int.class);
            TASKS = l.findVarHandle(LoopCounters.class, "tasks", long.class);
            DROPPED = l.findVarHandle(LoopCounters.class, "droppedTasks", long.class);
            BLOCKED = l.findVarHandle(LoopCounters.class, "blocked", long.class);
            LAG = l.findVarHandle(LoopCounters.class, "lagNanos", long.class);
            QUIET_SKIPS = l.findVarHandle(LoopCounters.class, "quietSkips", long.class);
            LONGEST_UNIT = l.findVarHandle(LoopCounters.class, "longestUnitNanos", long.class);
            UNITS_OVER_1MS = l.findVarHandle(LoopCounters.class, "unitsOver1ms", long.class);
            UNITS_OVER_10MS = l.findVarHandle(LoopCounters.class, "unitsOver10ms", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private long wakeups;
    private long emptyWakeups;
    private long batches;
    private long completions;
    private int largestBatch;
    private long tasks;
    private long droppedTasks;
    private long blocked;
    private long lagNanos;
    private long quietSkips;
    private long longestUnitNanos;
    private long unitsOver1ms;
    private long unitsOver10ms;

    /** A sleep ended with ready fds. */
    void wakeup() {
        WAKEUPS.setOpaque(this, wakeups + 1);
    }

    /** A wake-up found no work. */
    void emptyWakeup() {
        EMPTY_WAKEUPS.setOpaque(this, emptyWakeups + 1);
    }

    /**
     * A poll delivered completions.
     *
     * @param n how many, at least 1
     */
    void batch(int n) {
        BATCHES.setOpaque(this, batches + 1);
        COMPLETIONS.setOpaque(this, completions + n);
        if (n > largestBatch) {
            LARGEST_BATCH.setOpaque(this, n);
        }
    }

    /** A task ran. */
    void task() {
        TASKS.setOpaque(this, tasks + 1);
    }

    /** A task was dropped by a shutdown. */
    void dropped() {
        DROPPED.setOpaque(this, droppedTasks + 1);
    }

    /** {@return the tasks dropped so far; loop thread} */
    long droppedTasks() {
        return droppedTasks;
    }

    /** A unit of work held the loop past the blocked threshold. */
    void blocked() {
        BLOCKED.setOpaque(this, blocked + 1);
    }

    /**
     * A sampled task's wait in the queue.
     *
     * @param nanos the wait
     */
    void lag(long nanos) {
        LAG.setOpaque(this, nanos);
    }

    /**
     * A spinning round left queues to one epoll ask instead of polling them.
     *
     * @param n the queues left
     */
    void quietSkips(int n) {
        QUIET_SKIPS.setOpaque(this, quietSkips + n);
    }

    /**
     * A measured unit (a task, a completion batch, a readiness handler) ended.
     *
     * @param nanos how long it held the loop thread
     */
    void unit(long nanos) {
        if (nanos > 1_000_000L) {
            UNITS_OVER_1MS.setOpaque(this, unitsOver1ms + 1);
            if (nanos > 10_000_000L) {
                UNITS_OVER_10MS.setOpaque(this, unitsOver10ms + 1);
            }
            if (nanos > longestUnitNanos) {
                LONGEST_UNIT.setOpaque(this, nanos);
            }
        } else if (nanos > longestUnitNanos) {
            LONGEST_UNIT.setOpaque(this, nanos);
        }
    }

    /** {@return a snapshot; any thread} */
    LoopStats snapshot() {
        return new LoopStats((long) WAKEUPS.getOpaque(this), (long) EMPTY_WAKEUPS.getOpaque(this),
                (long) BATCHES.getOpaque(this), (long) COMPLETIONS.getOpaque(this),
                (int) LARGEST_BATCH.getOpaque(this), (long) TASKS.getOpaque(this), (long) DROPPED.getOpaque(this),
                (long) BLOCKED.getOpaque(this), (long) LAG.getOpaque(this), (long) QUIET_SKIPS.getOpaque(this),
                (long) LONGEST_UNIT.getOpaque(this), (long) UNITS_OVER_1MS.getOpaque(this),
                (long) UNITS_OVER_10MS.getOpaque(this));
    }
}
