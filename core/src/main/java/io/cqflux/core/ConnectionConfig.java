package io.cqflux.core;

import io.cqflux.core.internal.Checks;
import java.time.Duration;
import java.util.Objects;

/**
 * Queue sizes and options of one connection; validated on construction.
 *
 * @param sendQueueSize send queue depth: the most operations in flight (credits)
 * @param receiveQueueSize receive queue depth: the most receives posted at once
 * @param completionQueueSize main completion queue size; at least {@code sendQueueSize}
 *     (plus {@code receiveQueueSize} when receives share it) so that the CQ cannot overrun
 * @param receiveCompletionQueueSize size of a separate receive CQ, or 0 to share the main CQ
 * @param timeout connection set-up timeout
 * @param sharedCompletionChannel whether both CQs signal one fd (librpma ≥ 1.0 only)
 * @param writeCompletion when a write completes (libfabric; librpma is always {@link CompletionLevel#DELIVERY})
 */
public record ConnectionConfig(int sendQueueSize, int receiveQueueSize, int completionQueueSize,
                               int receiveCompletionQueueSize, Duration timeout, boolean sharedCompletionChannel,
                               CompletionLevel writeCompletion) {

    /** Largest queue size accepted; verbs devices rarely allow more. */
    public static final int MAX_QUEUE_SIZE = 1 << 16;

    /**
     * The defaults: 128 sends, 128 receives, one 256-entry CQ for both (no separate receive CQ),
     * a 5 s set-up timeout, writes complete at {@link CompletionLevel#DELIVERY}.
     *
     * <p>Why one CQ: the loop polls every CQ of a connection on each busy round and on each wake-up,
     * and on libfabric's tcp provider every {@code fi_cq_read(3)} drives the provider's socket
     * progress (an {@code epoll_wait} of its own), so a second CQ doubles what a round costs. A
     * completion that the receive CQ's read progressed then waits for the main CQ's next read.
     * {@code ./cqflux bench paired -r} over tcp compares the two (benchmarks/results/README.md):
     * one CQ was the faster in every figure. A separate receive CQ is one
     * {@link #withReceiveCompletionQueueSize(int)} away.
     */
    public static final ConnectionConfig DEFAULT =
            new ConnectionConfig(128, 128, 256, 0, Duration.ofSeconds(5), false, CompletionLevel.DELIVERY);

    /** Validates the sizes and their relation. */
    public ConnectionConfig {
        checkSize("sendQueueSize", sendQueueSize, 1);
        checkSize("receiveQueueSize", receiveQueueSize, 0);
        checkSize("completionQueueSize", completionQueueSize, 1);
        checkSize("receiveCompletionQueueSize", receiveCompletionQueueSize, 0);
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(writeCompletion, "writeCompletion");
        // compareTo, not toMillis(): the latter throws ArithmeticException past Long.MAX_VALUE ms,
        // and the bounds that use it count whole milliseconds, so below 1 ms it would read 0.
        if (timeout.compareTo(Duration.ofMillis(1)) < 0 || timeout.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) > 0) {
            throw new IllegalArgumentException("timeout " + timeout + " must be at least 1 ms and at most "
                    + Integer.MAX_VALUE + " ms");
        }
        int needed = sendQueueSize + (receiveCompletionQueueSize == 0 ? receiveQueueSize : 0);
        if (completionQueueSize < needed) {
            throw new IllegalArgumentException("completionQueueSize " + completionQueueSize
                    + " is below the " + needed + " entries the queues it serves can produce"
                    + " (sendQueueSize " + sendQueueSize
                    + (receiveCompletionQueueSize == 0 ? " + receiveQueueSize " + receiveQueueSize : "")
                    + "): the CQ could overrun");
        }
        if (receiveCompletionQueueSize != 0 && receiveCompletionQueueSize < receiveQueueSize) {
            throw new IllegalArgumentException("receiveCompletionQueueSize " + receiveCompletionQueueSize
                    + " is below receiveQueueSize " + receiveQueueSize + ": the receive CQ could overrun");
        }
    }

    private static void checkSize(String name, int v, int min) {
        Checks.inRange(name, v, min, MAX_QUEUE_SIZE);
    }

    /**
     * The main CQ's least size for these queues: the sends, plus the receives when they share it.
     * A sum beyond {@link #MAX_QUEUE_SIZE} is refused here, naming the two queues that make it, not
     * as a main CQ size the caller never chose.
     */
    private static int mainCqNeeds(int sq, int rq, int rcq) {
        // Each queue against its own bound first: the sum's advice below would not help them.
        checkSize("sendQueueSize", sq, 1);
        checkSize("receiveQueueSize", rq, 0);
        long needs = (long) sq + (rcq == 0 ? rq : 0);
        if (rcq == 0 && needs > MAX_QUEUE_SIZE) {
            throw new IllegalArgumentException("sendQueueSize " + sq + " + receiveQueueSize " + rq + " = " + needs
                    + " entries on one shared CQ, above its bound " + MAX_QUEUE_SIZE
                    + "; withReceiveCompletionQueueSize(" + rq + ") gives the receives a CQ of their own");
        }
        return (int) needs;
    }

    /**
     * @param sq the send queue depth
     * @return a copy with that send queue depth and a main CQ large enough for it
     * @throws IllegalArgumentException when {@code sq} is outside [1, {@value #MAX_QUEUE_SIZE}], or the
     *     sends and receives together exceed that on one shared CQ
     */
    public ConnectionConfig withSendQueueSize(int sq) {
        int cq = Math.max(completionQueueSize, mainCqNeeds(sq, receiveQueueSize, receiveCompletionQueueSize));
        return new ConnectionConfig(sq, receiveQueueSize, cq, receiveCompletionQueueSize, timeout,
                sharedCompletionChannel, writeCompletion);
    }

    /**
     * @param rq the receive queue depth
     * @return a copy with that receive queue depth and CQs large enough for it
     * @throws IllegalArgumentException when {@code rq} is outside [0, {@value #MAX_QUEUE_SIZE}], or the
     *     sends and receives together exceed that on one shared CQ
     */
    public ConnectionConfig withReceiveQueueSize(int rq) {
        int rcq = receiveCompletionQueueSize == 0 ? 0 : Math.max(receiveCompletionQueueSize, rq);
        int cq = Math.max(completionQueueSize, mainCqNeeds(sendQueueSize, rq, rcq));
        return new ConnectionConfig(sendQueueSize, rq, cq, rcq, timeout, sharedCompletionChannel, writeCompletion);
    }

    /**
     * @param rcq the size of a separate receive CQ, at least {@link #receiveQueueSize()}; or 0 for
     *     none, in which case receives complete on the main CQ
     * @return a copy with that receive CQ and a main CQ large enough for what it then holds
     * @throws IllegalArgumentException when {@code rcq} is outside [0, {@value #MAX_QUEUE_SIZE}] or
     *     below {@link #receiveQueueSize()}, or (0) the sends and receives together exceed
     *     {@value #MAX_QUEUE_SIZE} on one shared CQ
     */
    public ConnectionConfig withReceiveCompletionQueueSize(int rcq) {
        // rcq's own bounds: the constructor's check, with the same message.
        int cq = Math.max(completionQueueSize, mainCqNeeds(sendQueueSize, receiveQueueSize, rcq));
        return new ConnectionConfig(sendQueueSize, receiveQueueSize, cq, rcq, timeout, sharedCompletionChannel,
                writeCompletion);
    }

    /**
     * @param shared whether both CQs share one completion channel
     * @return a copy with that setting
     */
    public ConnectionConfig withSharedCompletionChannel(boolean shared) {
        return new ConnectionConfig(sendQueueSize, receiveQueueSize, completionQueueSize, receiveCompletionQueueSize,
                timeout, shared, writeCompletion);
    }

    /**
     * @param level the write completion level
     * @return a copy with that level
     */
    public ConnectionConfig withWriteCompletion(CompletionLevel level) {
        return new ConnectionConfig(sendQueueSize, receiveQueueSize, completionQueueSize, receiveCompletionQueueSize,
                timeout, sharedCompletionChannel, level);
    }

    /**
     * @param t the connection set-up timeout
     * @return a copy with that timeout
     */
    public ConnectionConfig withTimeout(Duration t) {
        return new ConnectionConfig(sendQueueSize, receiveQueueSize, completionQueueSize, receiveCompletionQueueSize,
                t, sharedCompletionChannel, writeCompletion);
    }
}
