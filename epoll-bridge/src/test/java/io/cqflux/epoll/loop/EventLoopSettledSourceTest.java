package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.Completion;
import io.cqflux.epoll.WaitStrategy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Work per loop turn follows what is ready, not what is registered: a source that
 * {@code Pollable.watchTouches} and whose last prepareToSleep said yes is neither asked again
 * before a sleep nor, when its poll is not cheap, polled in a spinning round, until it is touched
 * (read, posted to) or epoll reports its fd. The queues here are test doubles that keep their
 * answers and report touches as the fabric transport's queues do.
 */
class EventLoopSettledSourceTest {

    private static final int IDLE = 50;

    @ParameterizedTest
    @ValueSource(strings = {"BLOCKING", "ADAPTIVE", "BUSY_POLL"})
    void idleWatchedQueues_areAskedOnce_andNeitherAskedNorPolledWhileABusyNeighbourWorks(String strategy) {
        List<EventfdTestCompletionQueue> idle = watching(IDLE);
        EventfdTestCompletionQueue busy = new EventfdTestCompletionQueue("busy", false);
        busy.watchTouchesLikeFabric();
        try (EventLoop loop = EventLoop.start(new LoopConfig("settled-" + strategy, strategy(strategy), 32, null))) {
            List<Long> seen = new CopyOnWriteArrayList<>();
            idle.forEach(q -> loop.register(q, (Completion c) -> { }));
            loop.register(busy, (Completion c) -> seen.add(c.context()));
            awaitSettled(loop, idle);
            long[] before = counters(loop, idle);
            for (long ctx = 1; ctx <= 200; ctx++) {
                busy.add(ctx); // a completion: its fd wakes a sleeping loop, a spinning one polls it
                long want = ctx;
                Await.until(() -> seen.size() == want, "completion " + want + " of the busy queue");
            }
            long[] after = counters(loop, idle);
            assertEquals(before[0], after[0], "asks of the idle queues while the busy one delivered 200 completions");
            assertEquals(before[1], after[1], "polls of the idle queues meanwhile");
            for (EventfdTestCompletionQueue q : idle) {
                assertTrue(q.watched(), q + " watched by the loop");
            }
        } finally {
            closeAll(idle, busy);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"BLOCKING", "BUSY_POLL"})
    void aSettledQueueWhoseFdSignals_isDrained_andSettlesAgain(String strategy) {
        List<EventfdTestCompletionQueue> qs = watching(3);
        EventfdTestCompletionQueue q = qs.get(0);
        try (EventLoop loop = EventLoop.start(new LoopConfig("settled-signal", strategy(strategy), 32, null))) {
            List<Long> seen = new CopyOnWriteArrayList<>();
            loop.register(q, (Completion c) -> seen.add(c.context()));
            loop.register(qs.get(1), (Completion c) -> { });
            loop.register(qs.get(2), (Completion c) -> { });
            for (long ctx = 1; ctx <= 20; ctx++) {
                awaitSettled(loop, qs);
                q.add(ctx); // signals the eventfd, as a completion signals a libfabric wait fd
                long want = ctx;
                Await.until(() -> seen.size() == want, "completion " + want + " of a settled queue");
            }
            awaitSettled(loop, qs);
        } finally {
            closeAll(qs);
        }
    }

    @Test
    void aTouchedQueue_isAskedAgainBeforeTheNextSleep_andAnUntouchedOneIsNot() {
        List<EventfdTestCompletionQueue> qs = watching(2);
        AtomicLong sleeps = new AtomicLong();
        try (EventLoop loop = EventLoop.start(new LoopConfig("settled-touch", WaitStrategy.BLOCKING, 32, null))) {
            loop.beforeSleep = sleeps::incrementAndGet;
            qs.forEach(q -> loop.register(q, (Completion c) -> { }));
            awaitSettled(loop, qs);
            long asked0 = qs.get(0).sleepAsks.get();
            long asked1 = qs.get(1).sleepAsks.get();
            long slept = sleeps.get();
            CompletableFuture<Void> touched = new CompletableFuture<>();
            loop.execute(() -> {
                qs.get(0).touch(); // a post to its endpoint, from the loop thread as the reactor posts
                touched.complete(null);
            });
            Await.done(touched, "the touch");
            Await.until(() -> sleeps.get() > slept && qs.get(0).quiet(), "a sleep after the touch, the queue settled");
            Await.roundTrip(loop);
            assertEquals(asked0 + 1, qs.get(0).sleepAsks.get(), "the touched queue asked once before the sleep");
            assertEquals(asked1, qs.get(1).sleepAsks.get(), "the untouched queue not asked");
        } finally {
            closeAll(qs);
        }
    }

    @Test
    void sourcesThatDoNotWatch_areStillAskedBeforeEverySleep() {
        EventfdTestCompletionQueue plain = new EventfdTestCompletionQueue("plain", false);
        EventfdTestCompletionQueue busy = new EventfdTestCompletionQueue("busy", false);
        AtomicLong sleeps = new AtomicLong();
        try (EventLoop loop = EventLoop.start(new LoopConfig("settled-plain", WaitStrategy.BLOCKING, 32, null))) {
            List<Long> seen = new CopyOnWriteArrayList<>();
            // The hook first: a loop that went to sleep after the registrations, before the hook
            // was set, would sleep until something wakes it, and the first sleep would never count.
            loop.beforeSleep = sleeps::incrementAndGet;
            loop.register(plain, (Completion c) -> { });
            loop.register(busy, (Completion c) -> seen.add(c.context()));
            Await.until(() -> sleeps.get() > 0, "a first sleep");
            long asks = plain.sleepAsks.get();
            for (long ctx = 1; ctx <= 10; ctx++) {
                long slept = sleeps.get();
                busy.add(ctx);
                long want = ctx;
                Await.until(() -> seen.size() == want && sleeps.get() > slept, "completion " + want + ", then a sleep");
            }
            assertTrue(plain.sleepAsks.get() - asks >= 10, "asked before each of the 10 sleeps: "
                    + (plain.sleepAsks.get() - asks));
            assertFalse(plain.watched());
        } finally {
            plain.close();
            busy.close();
        }
    }

    @Test
    void unregistering_dropsTheLoopsListener() {
        EventfdTestCompletionQueue q = watching(1).get(0);
        try (EventLoop loop = EventLoop.start(new LoopConfig("settled-unregister", WaitStrategy.BLOCKING, 32, null))) {
            Registration r = loop.register(q, (Completion c) -> { });
            awaitSettled(loop, List.of(q));
            assertTrue(q.watched());
            r.close();
            assertFalse(q.watched(), "the loop let go of its touch listener");
        } finally {
            q.close();
        }
    }

    private static WaitStrategy strategy(String name) {
        return switch (name) {
            case "BLOCKING" -> WaitStrategy.BLOCKING;
            case "BUSY_POLL" -> WaitStrategy.BUSY_POLL;
            case "ADAPTIVE" -> WaitStrategy.adaptive(1000);
            default -> throw new IllegalArgumentException(name);
        };
    }

    private static List<EventfdTestCompletionQueue> watching(int n) {
        List<EventfdTestCompletionQueue> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("watching-" + i, false);
            q.watchTouchesLikeFabric();
            out.add(q);
        }
        return out;
    }

    /** Waits until every queue's yes stands, read between two rounds, and its asks have stopped. */
    private static void awaitSettled(EventLoop loop, List<EventfdTestCompletionQueue> qs) {
        Await.until(() -> snapshot(loop, () -> qs.stream().allMatch(EventfdTestCompletionQueue::quiet) ? 1 : 0)[0] == 1,
                qs.size() + " queues settled");
    }

    /** {@return the idle queues' asks and polls, summed, read together in a loop task} */
    private static long[] counters(EventLoop loop, List<EventfdTestCompletionQueue> qs) {
        return snapshot(loop, () -> qs.stream().mapToLong(q -> q.sleepAsks.get()).sum(),
                () -> qs.stream().mapToLong(q -> q.polls.get()).sum());
    }

    private static long[] snapshot(EventLoop loop, LongSupplier... counters) {
        CompletableFuture<long[]> f = new CompletableFuture<>();
        loop.execute(() -> {
            long[] v = new long[counters.length];
            for (int i = 0; i < v.length; i++) {
                v[i] = counters[i].getAsLong();
            }
            f.complete(v);
        });
        return Await.done(f, "a snapshot on the loop thread");
    }

    private static void closeAll(List<EventfdTestCompletionQueue> qs, EventfdTestCompletionQueue... more) {
        qs.forEach(EventfdTestCompletionQueue::close);
        for (EventfdTestCompletionQueue q : more) {
            q.close();
        }
    }
}
