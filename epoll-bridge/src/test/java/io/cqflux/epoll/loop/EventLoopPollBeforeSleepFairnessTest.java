package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.Completion;
import io.cqflux.epoll.WaitStrategy;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The poll before the sleep must not turn a sleeping loop into one that polls a single busy
 * cheap queue forever: a queue whose every last-look poll finds a completion (a pipeline with
 * many operations in flight completes continuously) must not keep the loop from epoll, where
 * other queues' and other sources' readiness is seen.
 */
class EventLoopPollBeforeSleepFairnessTest {

    @Test
    void endlessChainOnACheapQueue_neverStarvesAnotherReadyQueue() throws Exception {
        EventfdTestCompletionQueue busy = new EventfdTestCompletionQueue("busy-cheap", true);
        EventfdTestCompletionQueue other = new EventfdTestCompletionQueue("other", false);
        AtomicBoolean stop = new AtomicBoolean();
        try (EventLoop loop = EventLoop.start(new LoopConfig("cheap-fair", WaitStrategy.BLOCKING, 32, null))) {
            loop.register(busy, (Completion c) -> {
                if (!stop.get()) {
                    busy.addSilently(c.context() + 1); // its successor is complete at once
                }
            });
            CountDownLatch seen = new CountDownLatch(1);
            loop.register(other, (Completion c) -> seen.countDown());
            Await.roundTrip(loop);
            busy.add(1);
            Await.until(() -> busy.polls.get() > 1000, "the chain runs");
            other.add(7);
            try {
                assertTrue(seen.await(5, TimeUnit.SECONDS),
                        "another queue's signalled completion while a cheap queue always had one ready");
            } finally {
                stop.set(true);
            }
        } finally {
            busy.close();
            other.close();
        }
    }

    @Test
    void endlessChainOnACheapQueue_neverStarvesAReadySource() throws Exception {
        EventfdTestCompletionQueue busy = new EventfdTestCompletionQueue("busy-cheap", true);
        AtomicBoolean stop = new AtomicBoolean();
        try (EventLoop loop = EventLoop.start(new LoopConfig("cheap-fair-src", WaitStrategy.BLOCKING, 32, null));
                EventfdTestSource src = new EventfdTestSource()) {
            loop.register(busy, (Completion c) -> {
                if (!stop.get()) {
                    busy.addSilently(c.context() + 1);
                }
            });
            CountDownLatch seen = new CountDownLatch(1);
            loop.register(src, () -> {
                src.consume();
                seen.countDown();
            });
            Await.roundTrip(loop);
            busy.add(1);
            Await.until(() -> busy.polls.get() > 1000, "the chain runs");
            src.signal();
            try {
                assertTrue(seen.await(5, TimeUnit.SECONDS),
                        "a ready source's handler while a cheap queue always had a completion ready");
            } finally {
                stop.set(true);
            }
        } finally {
            busy.close();
        }
    }
}
