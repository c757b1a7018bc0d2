package io.cqflux.epoll.loop;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;

/*
 * Design.
 *
 * The end of a batch. A sink is called once per completion; runAfterBatch lets it put work off
 * to the end of the batch it is in (a writeAll stream sends its results and asks its source for
 * more once per batch, not once per completion). pollOnce runs that work right after the poll
 * returns, before the queue is polled again, so nothing put off waits for another turn; when the
 * poll failed, once the queue's owner has been told (so that the work, a stream asking for more,
 * finds the connection ended and posts nothing new; a fatal error drops it: the loop ends). Work
 * put off outside a batch is refused and done by the caller at once.
 *
 * Fairness. One turn gives each ready queue up to MAX_BATCHES_PER_TURN polls; a queue that never comes back short (a dying connection
 * failing every operation) would otherwise hold the thread while its neighbours wait. A queue
 * that the budget cut off with a full last batch goes on the cut-off list, and the next turn polls
 * it again first, without waiting for its fd: after the drain was stopped early, neither kind of
 * fd promises to signal what is left (the rpma CQ was re-armed for new completions only, and a
 * libfabric wait fd need not be readable for buffered data). Those polls count as work, so the
 * loop does not sleep while a queue on the list still delivers.
 */

/**
 * The batched drain of one {@link EpollIoHandler}'s completion queues: polls a queue into the
 * loop's scratch batch and its sink, within the per-turn budget ({@link #MAX_BATCHES_PER_TURN})
 * and its cut-off list, and runs the work sinks put off to the end of a batch
 * ({@link #runAfterBatch}).
 *
 * <p>Thread safety and lifetime: loop thread only, not thread-safe; the scratch batch is the
 * loop's native memory, read only while the loop runs.
 */
final class QueueDrainer {

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

    private final EpollIoHandler io;
    private final EventLoop loop;
    private final MemorySegment scratch;
    private final int batchSize;
    private final LoopCounters counters;
    private final BlockedLoopDetector detector;
    /** {@link LoopConfig#blockedThreshold()} in nanoseconds; 0: off. */
    private final long blockedThresholdNanos;
    /** Queues that the per-turn budget cut off with completions left (each once; see LoopSource.cutOff). */
    private final ArrayDeque<LoopSource> cutOff = new ArrayDeque<>();
    /** A completion batch is being delivered to its sink ({@link #runAfterBatch}). */
    private boolean delivering;
    /** Work that sinks put off to the end of the batch being delivered ({@link #runAfterBatch}). */
    private final ArrayDeque<Runnable> afterBatch = new ArrayDeque<>();

    QueueDrainer(EpollIoHandler io, MemorySegment scratch, int batchSize, LoopCounters counters,
            BlockedLoopDetector detector, long blockedThresholdNanos) {
        this.io = io;
        this.loop = io.loop;
        this.scratch = scratch;
        this.batchSize = batchSize;
        this.counters = counters;
        this.detector = detector;
        this.blockedThresholdNanos = blockedThresholdNanos;
    }

    /**
     * Puts work off to the end of the batch being delivered (EventLoop.runAfterBatch).
     *
     * @return false when no batch is being delivered
     */
    boolean runAfterBatch(Runnable task) {
        if (!delivering) {
            return false;
        }
        afterBatch.add(task);
        return true;
    }

    /** The graceful shutdown's last drain: every queue until it comes back short, no budget. */
    void drainAllQueues() {
        for (LoopSource s : io.sources.queues()) {
            if (s.isActive()) {
                drainAll(s);
            }
        }
        // Queues that share a native one (SharedSources): it is read again, and they are drained
        // after each read, until it is empty.
        io.shared.dispatchForLastDrain(s -> {
            if (s.isActive()) {
                drainAll(s);
            }
        });
    }

    /** Acknowledges a ready queue before its drain; false when it failed (it is unregistered). */
    boolean acknowledge(LoopSource s) {
        assert loop.inEventLoop();
        try {
            s.cq.acknowledge();
            return true;
        } catch (Throwable t) {
            LoopLifecycle.rethrowIfFatal(t);
            io.registry.fail(s, "acknowledge", t);
            return false;
        }
    }

    /**
     * Polls the queues that {@link #MAX_BATCHES_PER_TURN} cut off in an earlier turn, each once
     * (with this turn's budget); one that is cut off again goes back on the list.
     *
     * @return completions delivered
     */
    int drainCutOff() {
        assert loop.inEventLoop();
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
    int drain(LoopSource s) {
        assert loop.inEventLoop();
        if (s.turn != io.turn) {
            s.turn = io.turn;
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
                io.listBeforeSleep(s);
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
        assert loop.inEventLoop();
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
        assert loop.inEventLoop();
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
                LoopLifecycle.rethrowIfFatal(t);
            }
            // The queue's owner hears of its failure first (the reactive layer ends the
            // connection, so that the put-off work, a stream asking for more, posts nothing
            // new on it; a stream's failure sends its completed results first on its own).
            io.registry.fail(s, "poll", t);
            runAfterBatchTasks();
            return -1;
        }
        delivering = false;
        if (n < 0 || n > batchSize) {
            io.registry.fail(s, "poll", new IllegalStateException("poll returned " + n + ", outside [0, " + batchSize + "]"));
            runAfterBatchTasks();
            return -1;
        }
        runAfterBatchTasks();
        if (n > 0) {
            counters.batch(n);
            if (blockedThresholdNanos != 0) {
                detector.endUnit(BlockedLoopDetector.UNIT_BATCH, s, n);
            }
        }
        return n;
    }

    private void runAfterBatchTasks() {
        assert loop.inEventLoop();
        if (afterBatch.isEmpty()) {
            return;
        }
        try {
            Runnable r;
            while ((r = afterBatch.poll()) != null) {
                loop.safeRun(r);
            }
        } finally {
            // Only a fatal error (safeRun rethrows nothing else) leaves work here: the loop ends.
            afterBatch.clear();
        }
    }
}
