package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cqflux.core.Completion;
import io.cqflux.epoll.WaitStrategy;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * An ADAPTIVE loop that a queue's fd wakes spins again for its budget, even when the drain finds
 * no completion: the passive side of a libfabric tcp read or write is woken by the request's
 * bytes, gets no completion, and must keep calling fi_cq_read to move the data (design comment,
 * "ADAPTIVE after a wake-up"). The queue here is signalled without a completion, which is what
 * such a wake-up looks like to the loop. A BLOCKING loop goes back to sleep after one poll.
 */
class EventLoopAdaptiveWakeupTest {

    private static final int SPINS = 200;

    @Test
    void adaptiveLoop_wokenByAQueueWithNoCompletion_spinsItsBudgetAgain() {
        EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("target");
        try (EventLoop loop = EventLoop.start(new LoopConfig("adaptive-wake", WaitStrategy.adaptive(SPINS), 32, null))) {
            loop.register(q, (Completion c) -> { });
            Await.roundTrip(loop);
            q.signal(); // bytes on the target's socket: the fd is readable, the CQ stays empty
            Await.until(() -> q.acknowledged.get() == 1, "the wake-up by the queue's fd");
            long atWake = q.polledAtAcknowledge;
            // Without the rule the loop polls once (the drain after the acknowledge) and sleeps:
            // this wait then times out.
            Await.until(() -> q.polls.get() >= atWake + SPINS, Duration.ofSeconds(5),
                    "the woken adaptive loop polling its queue for another " + SPINS + " empty rounds");
        } finally {
            q.close();
        }
    }

    @Test
    void blockingLoop_wokenByAQueueWithNoCompletion_pollsOnceAndSleeps() {
        EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("target");
        try (EventLoop loop = EventLoop.start(new LoopConfig("blocking-wake", WaitStrategy.BLOCKING, 32, null))) {
            loop.register(q, (Completion c) -> { });
            Await.roundTrip(loop);
            q.signal();
            Await.until(() -> q.acknowledged.get() == 1, "the wake-up by the queue's fd");
            long atWake = q.polledAtAcknowledge;
            Await.roundTrip(loop); // the loop has been through its sleep path since the wake-up
            Await.roundTrip(loop);
            assertEquals(atWake + 1, q.polls.get(), "a BLOCKING loop drains once per wake-up and sleeps again");
            assertEquals(1, q.acknowledged.get());
        } finally {
            q.close();
        }
    }
}
