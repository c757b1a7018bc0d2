package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.epoll.WaitStrategy;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A completion queue that never comes back short (a dying connection failing hundreds of
 * thousands of operations) gets {@link EventLoop#MAX_BATCHES_PER_TURN} polls per loop turn; its
 * neighbours and the tasks are served in between. Counted in polls of the flooding queue, never
 * in time.
 */
class EventLoopFairnessTest {

    static final int BATCH = 32;
    /** 640,000 completions: unbounded next to the per-turn budget, yet quick to deliver. */
    static final long FLOOD_BATCHES = 20_000;
    /** The flooding queue may use up its budget in the turn it is cut off and the next one. */
    static final long MAX_POLLS_BEFORE_NEIGHBOUR = 2L * EventLoop.MAX_BATCHES_PER_TURN;

    static Stream<WaitStrategy> strategies() {
        return Stream.of(WaitStrategy.BLOCKING, WaitStrategy.adaptive(50), WaitStrategy.BUSY_POLL);
    }

    @ParameterizedTest
    @MethodSource("strategies")
    void drain_fullQueue_doesNotStarveNeighbour(WaitStrategy strategy) {
        // Resources close in reverse: the loop first, so that it no longer touches the queues.
        try (EventfdTestCompletionQueue flooding = new EventfdTestCompletionQueue("flooding");
                EventfdTestCompletionQueue neighbour = new EventfdTestCompletionQueue("neighbour");
                EventLoop loop = EventLoop.start(new LoopConfig("fair-" + strategy, strategy, BATCH, null))) {
            AtomicLong flooded = new AtomicLong();
            CompletableFuture<Long> floodPollsWhenNeighbourServed = new CompletableFuture<>();
            loop.register(flooding, c -> flooded.incrementAndGet());
            loop.register(neighbour, c -> floodPollsWhenNeighbourServed.complete(flooding.polls.get()));
            Await.roundTrip(loop);
            CompletableFuture<Void> release = Await.blockLoop(loop); // both become ready at once
            long pollsBefore = flooding.polls.get();
            flooding.flood(0, FLOOD_BATCHES);
            neighbour.add(1);
            release.complete(null);
            long polls = Await.done(floodPollsWhenNeighbourServed, "the neighbour's completion") - pollsBefore;
            assertTrue(polls <= MAX_POLLS_BEFORE_NEIGHBOUR, strategy + ": the flooding queue was polled " + polls
                    + " times before its neighbour's one completion was delivered (at most "
                    + MAX_POLLS_BEFORE_NEIGHBOUR + ")");
            // Delivered in full although its eventfd was signalled once: a queue cut off by the
            // budget is polled again before the loop sleeps.
            Await.until(() -> flooded.get() == FLOOD_BATCHES * BATCH, strategy + ": the whole flood, "
                    + FLOOD_BATCHES * BATCH + " completions");
        }
    }

    @ParameterizedTest
    @MethodSource("strategies")
    void drain_fullQueue_doesNotStarveTasks(WaitStrategy strategy) {
        try (EventfdTestCompletionQueue flooding = new EventfdTestCompletionQueue("flooding");
                EventLoop loop = EventLoop.start(new LoopConfig("fair-tasks-" + strategy, strategy, BATCH, null))) {
            AtomicLong flooded = new AtomicLong();
            AtomicBoolean submitted = new AtomicBoolean();
            AtomicLong pollsAtSubmit = new AtomicLong();
            CompletableFuture<Long> pollsWhenTaskRan = new CompletableFuture<>();
            loop.register(flooding, c -> {
                flooded.incrementAndGet();
                if (submitted.compareAndSet(false, true)) { // from within the drain, like a sink that posts again
                    pollsAtSubmit.set(flooding.polls.get());
                    loop.execute(() -> pollsWhenTaskRan.complete(flooding.polls.get()));
                }
            });
            Await.roundTrip(loop);
            flooding.flood(0, FLOOD_BATCHES);
            long polls = Await.done(pollsWhenTaskRan, "the task submitted during the flood") - pollsAtSubmit.get();
            assertTrue(polls <= MAX_POLLS_BEFORE_NEIGHBOUR, strategy + ": the flooding queue was polled " + polls
                    + " times before a task submitted during its drain ran (at most " + MAX_POLLS_BEFORE_NEIGHBOUR + ")");
            Await.until(() -> flooded.get() == FLOOD_BATCHES * BATCH, strategy + ": the whole flood");
        }
    }

    /**
     * A task that re-queues itself to continue a long job (a dying connection failing its backlog
     * a chunk at a time) gets {@link TaskTurn#TASK_BUDGET_NANOS} of a turn; a queue that becomes
     * ready meanwhile is served after a few of its steps, not after {@link TaskTurn#MAX_TASKS_PER_ROUND}.
     * Counted in steps: each step spins at least 50 µs, so a turn's budget holds at most
     * budget / 50 µs + 16 of them, however slow the machine.
     */
    @ParameterizedTest
    @MethodSource("strategies")
    void selfRequeuingTask_doesNotStarveAQueue(WaitStrategy strategy) {
        long stepNanos = 50_000;
        long bound = 2 * (1_000_000 / stepNanos + 16); // the 1 ms budget, in steps, with slack
        try (EventfdTestCompletionQueue neighbour = new EventfdTestCompletionQueue("neighbour");
                EventLoop loop = EventLoop.start(new LoopConfig("fair-requeue-" + strategy, strategy, BATCH, null))) {
            AtomicLong steps = new AtomicLong();
            AtomicLong stepsAtSignal = new AtomicLong(-1);
            CompletableFuture<Long> stepsWhenServed = new CompletableFuture<>();
            loop.register(neighbour, c -> stepsWhenServed.complete(steps.get()));
            Await.roundTrip(loop);
            Runnable[] step = new Runnable[1];
            step[0] = () -> {
                long t0 = System.nanoTime();
                while (System.nanoTime() - t0 < stepNanos) {
                    Thread.onSpinWait();
                }
                long n = steps.incrementAndGet();
                if (n == 100) {
                    stepsAtSignal.set(n);
                    neighbour.add(1);
                }
                if (n < 5_000 && !stepsWhenServed.isDone()) {
                    loop.execute(step[0]);
                }
            };
            loop.execute(step[0]);
            long served = Await.done(stepsWhenServed, "the neighbour's completion");
            assertTrue(served - stepsAtSignal.get() <= bound, strategy + ": " + (served - stepsAtSignal.get())
                    + " steps of a self-requeuing task ran before a ready queue was served (at most " + bound + ")");
        }
    }

    /**
     * Completions whose sinks are slow (each signals a subscriber and posts the next operation:
     * under an emulator tens of microseconds) and a backlog of thousands of tasks (operations
     * handed over from another thread, then a close): the tasks get as long as the last turn's
     * I/O took, not a fixed millisecond, so the last of them runs within a few turns instead of
     * after the whole backlog was served a millisecond per turn. Counted in polls of the flooding
     * queue (16 per turn), each sink and task spinning a fixed time, so the bound holds however
     * slow the machine; with a fixed task budget per turn the marker waits for tens of turns. The
     * bound, ten turns, leaves room for preemption on a loaded host (a spin that loses its CPU
     * counts the wait as work, on the I/O's side and the tasks' alike) and stays well below that.
     */
    @ParameterizedTest
    @MethodSource("strategies")
    void slowCompletions_doNotStarveABacklogOfTasks_theTasksGetAsLongAsTheIo(WaitStrategy strategy) {
        long sinkNanos = 20_000;
        long taskNanos = 5_000;
        int backlog = 4_000;
        long bound = 10L * EventLoop.MAX_BATCHES_PER_TURN;
        try (EventfdTestCompletionQueue flooding = new EventfdTestCompletionQueue("slow");
                EventLoop loop = EventLoop.start(new LoopConfig("fair-slow-" + strategy, strategy, BATCH, null))) {
            AtomicBoolean slow = new AtomicBoolean(true);
            loop.register(flooding, c -> {
                if (slow.get()) { // fast again once measured, so that the close drains the rest quickly
                    spin(sinkNanos);
                }
            });
            Await.roundTrip(loop);
            flooding.flood(0, FLOOD_BATCHES);
            Await.until(() -> flooding.polls.get() > 4L * EventLoop.MAX_BATCHES_PER_TURN, "the flood under way");
            CompletableFuture<Void> release = Await.blockLoop(loop);
            for (int i = 0; i < backlog; i++) {
                loop.execute(() -> spin(taskNanos));
            }
            CompletableFuture<Long> pollsWhenMarkerRan = new CompletableFuture<>();
            loop.execute(() -> pollsWhenMarkerRan.complete(flooding.polls.get()));
            long pollsAtSubmit = flooding.polls.get();
            release.complete(null);
            long polls = Await.done(pollsWhenMarkerRan, "the task behind the backlog") - pollsAtSubmit;
            slow.set(false);
            System.out.printf("FACT %s: a task behind %d tasks of %d us ran after %d polls (%d turns) of a queue whose"
                    + " sinks take %d us%n", strategy, backlog, taskNanos / 1000, polls,
                    polls / EventLoop.MAX_BATCHES_PER_TURN, sinkNanos / 1000);
            assertTrue(polls <= bound, strategy + ": the slow queue was polled " + polls + " times (" + polls
                    / EventLoop.MAX_BATCHES_PER_TURN + " turns) before the task behind " + backlog + " others ran"
                    + " (at most " + bound + ")");
        }
    }

    private static void spin(long nanos) {
        long t0 = System.nanoTime();
        while (System.nanoTime() - t0 < nanos) {
            Thread.onSpinWait();
        }
    }
}
