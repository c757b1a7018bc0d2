package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.Completion;
import io.cqflux.core.Opcode;
import io.cqflux.epoll.LoopStats;
import io.cqflux.epoll.WaitStrategy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Exact delivery of a million synthetic completions, for each wait strategy. */
class EventLoopCompletionTest {

    static final int TOTAL = 1_000_000;
    static final int PRODUCERS = 4;
    static final int QUEUES = 4;
    static final int BATCH = 32;

    static Stream<WaitStrategy> strategies() {
        return Stream.of(WaitStrategy.BLOCKING, WaitStrategy.BUSY_POLL, WaitStrategy.adaptive(200));
    }

    /** Loop-thread state of the sink: a bitmap of contexts seen. */
    private static final class Tally {
        final long[] seen = new long[TOTAL / 64 + 1];
        long delivered;
        long duplicates;
        long wrong;
        final CompletableFuture<Void> all = new CompletableFuture<>();

        void accept(Completion c) {
            long ctx = c.context();
            if (ctx < 0 || ctx >= TOTAL || !c.isSuccess() || c.opcode() != Opcode.WRITE) {
                wrong++;
                return;
            }
            long bit = 1L << (ctx & 63);
            int word = (int) (ctx >>> 6);
            if ((seen[word] & bit) != 0) {
                duplicates++;
            }
            seen[word] |= bit;
            if (++delivered == TOTAL) {
                all.complete(null);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("strategies")
    void millionCompletions_fromFourProducersToFourQueues_eachDeliveredExactlyOnce(WaitStrategy strategy) throws Exception {
        List<EventfdTestCompletionQueue> queues = new ArrayList<>();
        for (int q = 0; q < QUEUES; q++) {
            queues.add(new EventfdTestCompletionQueue("q" + q));
        }
        Tally tally = new Tally();
        try (EventLoop loop = EventLoop.start(new LoopConfig("million-" + strategy, strategy, BATCH, null))) {
            List<Registration> regs = new ArrayList<>();
            for (EventfdTestCompletionQueue q : queues) {
                regs.add(loop.register(q, tally::accept));
            }
            Await.roundTrip(loop); // registrations handed over before the producers start
            long t0 = System.nanoTime();
            AtomicReference<Throwable> producerFailure = new AtomicReference<>();
            List<Thread> producers = new ArrayList<>();
            int perProducer = TOTAL / PRODUCERS;
            for (int p = 0; p < PRODUCERS; p++) {
                int first = p * perProducer;
                Thread t = Thread.ofPlatform().name("producer-" + p).start(() -> {
                    try {
                        int next = first;
                        int chunk = 0;
                        while (next < first + perProducer) {
                            // chunks of 1..64: single signalled entries as well as ones that span batches
                            int n = Math.min(1 + (chunk * 7) % 64, first + perProducer - next);
                            queues.get(chunk % QUEUES).addRange(next, n);
                            next += n;
                            chunk++;
                        }
                    } catch (Throwable e) {
                        producerFailure.set(e);
                    }
                });
                producers.add(t);
            }
            for (Thread t : producers) {
                t.join(Await.TIMEOUT.toMillis());
                assertTrue(!t.isAlive(), t.getName() + " did not finish");
            }
            assertEquals(null, producerFailure.get());
            Await.done(tally.all, TOTAL + " completions with " + strategy);
            long elapsed = System.nanoTime() - t0;
            Await.roundTrip(loop); // the sink's plain fields are read below: happens-before via the task
            LoopStats stats = loop.stats();
            assertEquals(0, tally.duplicates, "duplicates");
            assertEquals(0, tally.wrong, "wrong entries");
            assertEquals(TOTAL, tally.delivered);
            for (int w = 0; w < TOTAL / 64; w++) {
                assertEquals(-1L, tally.seen[w], "bitmap word " + w);
            }
            assertEquals(TOTAL, stats.completions(), "completions counter " + stats);
            assertTrue(stats.largestBatch() <= BATCH && stats.largestBatch() >= 1, "largestBatch " + stats);
            assertTrue(stats.batches() >= TOTAL / BATCH && stats.batches() <= TOTAL, "batches " + stats);
            if (strategy == WaitStrategy.BUSY_POLL) {
                assertEquals(0, stats.wakeups(), "a busy-polling loop never sleeps: " + stats);
            }
            // Information only, never asserted: the machine is shared and noisy.
            System.out.printf("%s: %d completions in %.0f ms (%.2f M/s), %s%n", strategy, TOTAL, elapsed / 1e6,
                    TOTAL * 1e3 / elapsed, stats);
            regs.forEach(Registration::close);
        } finally {
            queues.forEach(EventfdTestCompletionQueue::close);
        }
    }
}
