package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cqflux.core.Completion;
import io.cqflux.epoll.WaitStrategy;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A sleeping loop polls a cheap queue ({@code CompletionQueue.pollIsCheap()}, librpma's) once more
 * before it sleeps when its last drain delivered: a completion of work its sinks posted that is
 * already in the ring is found without a wake-up. The completions here are added without a
 * signal, so only that extra poll can find them.
 */
class EventLoopPollBeforeSleepTest {

    @Test
    void chainedCompletion_onACheapQueue_isFoundBeforeTheLoopSleeps() {
        EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("cheap", true);
        try (EventLoop loop = EventLoop.start(new LoopConfig("cheap-chain", WaitStrategy.BLOCKING, 32, null))) {
            AtomicLong delivered = new AtomicLong();
            CompletableFuture<Void> all = new CompletableFuture<>();
            // Each completion "posts" the next one, whose completion is in the ring at once but
            // never signalled: a chain of 1,000 operations.
            loop.register(q, (Completion c) -> {
                long n = delivered.incrementAndGet();
                if (n < 1000) {
                    q.addSilently(c.context() + 1);
                } else {
                    all.complete(null);
                }
            });
            Await.roundTrip(loop);
            q.add(1);
            Await.done(all, "1,000 chained completions, 999 of them unsignalled");
            assertEquals(1000, delivered.get());
            assertEquals(1, q.acknowledged.get(), "one wake-up for the whole chain");
        } finally {
            q.close();
        }
    }

    @Test
    void chainedCompletion_onAQueueThatIsNotCheap_waitsForItsSignal() {
        EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("not-cheap", false);
        try (EventLoop loop = EventLoop.start(new LoopConfig("plain-chain", WaitStrategy.BLOCKING, 32, null))) {
            AtomicInteger delivered = new AtomicInteger();
            loop.register(q, (Completion c) -> {
                if (delivered.incrementAndGet() == 1) {
                    q.addSilently(2);
                }
            });
            Await.roundTrip(loop);
            q.add(1);
            Await.until(() -> delivered.get() == 1, "the first completion");
            // Two task round trips: the loop has been through its sleep path since the drain, and
            // a queue whose poll drives software progress (libfabric tcp) is only polled on its fd.
            Await.roundTrip(loop);
            Await.roundTrip(loop);
            assertEquals(1, delivered.get(), "an unsignalled completion of a not-cheap queue waits for its fd");
            q.signal();
            Await.until(() -> delivered.get() == 2, "the second completion after its signal");
        } finally {
            q.close();
        }
    }

    @Test
    void idleCheapQueue_isNotPolledBeforeEverySleep() {
        EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("idle", true);
        try (EventLoop loop = EventLoop.start(new LoopConfig("cheap-idle", WaitStrategy.BLOCKING, 32, null))) {
            loop.register(q, (Completion c) -> { });
            Await.roundTrip(loop);
            q.add(1);
            Await.until(() -> q.polls.get() >= 2, "the drain and the poll before the sleep");
            Await.roundTrip(loop);
            long polls = q.polls.get();
            for (int i = 0; i < 20; i++) {
                Await.roundTrip(loop); // each wakes the loop and lets it sleep again
            }
            assertEquals(polls, q.polls.get(), "a queue whose last poll before sleeping found nothing is not polled again");
        } finally {
            q.close();
        }
    }
}
