package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.epoll.WaitStrategy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link EventLoop#runAfterBatch}: work a sink puts off to the end of the batch it is in. */
class EventLoopAfterBatchTest {

    static Stream<WaitStrategy> strategies() {
        return Stream.of(WaitStrategy.BLOCKING, WaitStrategy.BUSY_POLL, WaitStrategy.adaptive(200));
    }

    @ParameterizedTest
    @MethodSource("strategies")
    void workPutOffBySinks_runsAfterTheBatchsLastCompletion_inOrder_beforeTheQueueIsPolledAgain(WaitStrategy strategy) {
        try (EventLoop loop = EventLoop.start(new LoopConfig("after-batch-" + strategy, strategy, 32, null));
                EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("after-batch")) {
            ConcurrentLinkedQueue<String> log = new ConcurrentLinkedQueue<>();
            List<Boolean> accepted = new ArrayList<>(); // loop thread only, read after the round trip
            loop.register(q, c -> {
                long ctx = c.context();
                log.add("c" + ctx);
                if (ctx == 2 || ctx == 5) {
                    long pollsNow = q.polls.get();
                    accepted.add(loop.runAfterBatch(() -> {
                        // the same poll: the queue was not polled between the batch and this
                        log.add("after" + ctx + (q.polls.get() == pollsNow ? "" : " (after another poll)"));
                    }));
                }
            });
            CompletableFuture<Void> release = Await.blockLoop(loop);
            q.addRange(0, 10); // one batch of 10
            release.complete(null);
            Await.until(() -> log.size() == 12, "the batch and the two put-off tasks");
            Await.roundTrip(loop);
            assertEquals(List.of("c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "after2", "after5"),
                    new ArrayList<>(log));
            assertEquals(List.of(true, true), accepted);
            assertEquals(1, loop.stats().batches());
        }
    }

    @Test
    void outsideABatch_theLoopRefuses_andTheCallerDoesTheWork() {
        try (EventLoop loop = EventLoop.start(LoopConfig.of("after-batch-refused"));
                EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("after-batch-refused")) {
            CompletableFuture<Boolean> fromTask = new CompletableFuture<>();
            loop.execute(() -> fromTask.complete(loop.runAfterBatch(() -> {
                throw new AssertionError("a refused task must not run");
            })));
            assertFalse(fromTask.orTimeout(10, TimeUnit.SECONDS).join(), "a task runs outside any batch");

            CompletableFuture<Boolean> fromPutOff = new CompletableFuture<>();
            loop.register(q, c -> assertTrue(loop.runAfterBatch(() -> fromPutOff.complete(loop.runAfterBatch(() -> {
                throw new AssertionError("a refused task must not run");
            })))));
            q.add(1);
            assertFalse(fromPutOff.orTimeout(10, TimeUnit.SECONDS).join(), "put-off work runs after its batch, outside it");
            Await.roundTrip(loop);
        }
    }

    @Test
    void aPutOffTaskThatThrows_isLogged_andTheOthersStillRun() {
        try (EventLoop loop = EventLoop.start(LoopConfig.of("after-batch-throws"));
                EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("after-batch-throws")) {
            AtomicInteger ran = new AtomicInteger();
            loop.register(q, c -> {
                loop.runAfterBatch(() -> {
                    throw new IllegalStateException("test: put-off work fails");
                });
                loop.runAfterBatch(ran::incrementAndGet);
            });
            q.add(1);
            Await.until(() -> ran.get() == 1, "the task after the one that threw");
            q.add(2);
            Await.until(() -> ran.get() == 2, "the next batch's work: the loop went on");
        }
    }

    @Test
    void aPollThatFailsAfterDelivering_stillRunsWhatItsSinksPutOff_afterTheOwnerIsTold() {
        try (EventLoop loop = EventLoop.start(LoopConfig.of("after-batch-poll-fails"));
                EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("after-batch-poll-fails")) {
            AtomicInteger ran = new AtomicInteger();
            AtomicInteger hook = new AtomicInteger();
            AtomicInteger ranWhenTold = new AtomicInteger(-1);
            loop.register(q, c -> loop.runAfterBatch(ran::incrementAndGet), () -> {
                ranWhenTold.set(ran.get());
                hook.incrementAndGet();
            });
            CompletableFuture<Void> release = Await.blockLoop(loop);
            q.addRange(0, 3);
            q.failAfterDelivering(new IllegalStateException("test: the queue fails mid-drain"));
            release.complete(null);
            Await.until(() -> hook.get() == 1, "the failed queue's shutdown hook");
            Await.roundTrip(loop);
            assertEquals(3, ran.get(), "each completion's put-off work ran although the poll threw");
            assertEquals(0, ranWhenTold.get(), "the queue's owner heard of its failure before the put-off work ran");
        }
    }
}
