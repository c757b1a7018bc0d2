package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.epoll.WaitStrategy;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class EventLoopStarvationTest {

    static WaitStrategy[] strategies() {
        return new WaitStrategy[] {WaitStrategy.BLOCKING, WaitStrategy.adaptive(50), WaitStrategy.BUSY_POLL};
    }

    /**
     * A task that re-queues itself (what a retry of a refused post does) keeps the task queue
     * non-empty forever; the ready queue must still be drained. The loop services ready fds after
     * every round of tasks for that reason (a review found BLOCKING mode reading epoll only when
     * it ran out of tasks; this test guards the behaviour for every strategy).
     */
    @ParameterizedTest
    @MethodSource("strategies")
    void selfRequeueingTask_neverStarvesAReadyCompletionQueue(WaitStrategy strategy) throws Exception {
        try (EventLoop loop = EventLoop.start(new LoopConfig("starve", strategy, 32, null));
                EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("starve")) {
            CountDownLatch seen = new CountDownLatch(3);
            loop.register(q, c -> seen.countDown());
            Await.roundTrip(loop);
            AtomicBoolean stop = new AtomicBoolean();
            Runnable[] again = new Runnable[1];
            again[0] = () -> {
                if (!stop.get()) {
                    loop.execute(again[0]);
                }
            };
            loop.execute(again[0]);
            try {
                q.add(1);
                q.add(2);
                q.add(3);
                assertTrue(seen.await(10, TimeUnit.SECONDS),
                        strategy + ": completions seen " + (3 - seen.getCount()) + " of 3 while a task re-queued itself");
            } finally {
                stop.set(true);
            }
        }
    }
}
