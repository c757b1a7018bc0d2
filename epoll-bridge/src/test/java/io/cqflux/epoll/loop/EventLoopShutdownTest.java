package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ResourceClosedException;
import io.cqflux.epoll.WaitStrategy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Graceful and forced shutdown, close semantics, the thread factory, no thread left behind. */
class EventLoopShutdownTest {

    /** Records the threads it makes, so a test can check they ended. */
    private static final class RecordingFactory implements ThreadFactory {
        final List<Thread> threads = new CopyOnWriteArrayList<>();

        @Override
        public Thread newThread(Runnable r) {
            Thread t = Thread.ofPlatform().name("recorded-loop").daemon(true).unstarted(r);
            threads.add(t);
            return t;
        }

        void assertAllEnded() throws InterruptedException {
            for (Thread t : threads) {
                t.join(Await.TIMEOUT.toMillis());
                assertFalse(t.isAlive(), t + " is still alive");
            }
        }
    }

    @Test
    void graceful_runsQueuedTasks_drainsQueues_andCallsEveryHook() throws Exception {
        RecordingFactory factory = new RecordingFactory();
        EventLoop loop = EventLoop.start(new LoopConfig("graceful", WaitStrategy.BLOCKING, 32, factory));
        try (EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("graceful");
                EventfdTestSource s = new EventfdTestSource()) {
            ConcurrentLinkedQueue<Long> delivered = new ConcurrentLinkedQueue<>();
            AtomicInteger qHook = new AtomicInteger();
            AtomicInteger sHook = new AtomicInteger();
            loop.register(q, c -> delivered.add(c.context()), qHook::incrementAndGet);
            loop.register(s, s::consume, sHook::incrementAndGet);
            CompletableFuture<Void> release = Await.blockLoop(loop);
            AtomicInteger ran = new AtomicInteger();
            loop.execute(ran::incrementAndGet);
            loop.execute(ran::incrementAndGet);
            q.addSilently(1); // in the queue, never signalled: only the final drain finds it
            q.addSilently(2);
            CompletableFuture<Void> terminated = loop.shutdownGracefully(Duration.ofSeconds(30));
            assertSame(loop.terminationFuture(), terminated);
            assertThrows(ResourceClosedException.class, () -> loop.execute(() -> { }));
            assertThrows(ResourceClosedException.class, () -> loop.register(new EventfdTestSource(), () -> { }));
            release.complete(null);
            Await.done(terminated, "graceful termination");
            assertEquals(2, ran.get(), "tasks queued before the shutdown ran");
            assertEquals(List.of(1L, 2L), List.copyOf(delivered), "the last drain delivered what was queued");
            assertEquals(1, qHook.get());
            assertEquals(1, sHook.get());
            assertEquals(0, loop.stats().droppedTasks());
            assertThrows(ResourceClosedException.class, () -> loop.execute(() -> { }));
            factory.assertAllEnded();
            assertEquals(1, factory.threads.size());
        }
    }

    @Test
    void forced_dropsQueuedTasks_countsThem_andCallsEveryHook() throws Exception {
        EventLoop loop = EventLoop.start(LoopConfig.of("forced"));
        try (EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("forced")) {
            AtomicInteger hook = new AtomicInteger();
            loop.register(q, c -> { }, hook::incrementAndGet);
            CompletableFuture<Void> release = Await.blockLoop(loop);
            AtomicInteger ran = new AtomicInteger();
            loop.execute(ran::incrementAndGet);
            loop.execute(ran::incrementAndGet);
            AtomicInteger lateHook = new AtomicInteger();
            EventfdTestSource late = new EventfdTestSource();
            loop.register(late, () -> { }, lateHook::incrementAndGet); // a hand-over that will be dropped
            loop.shutdownNow();
            assertThrows(ResourceClosedException.class, () -> loop.execute(() -> { }));
            release.complete(null);
            Await.done(loop.terminationFuture(), "forced termination");
            assertEquals(0, ran.get(), "queued tasks were dropped");
            assertEquals(3, loop.stats().droppedTasks(), loop.stats().toString());
            assertEquals(1, hook.get());
            assertEquals(1, lateHook.get(), "the owner of a dropped registration is told too");
            late.close();
        }
    }

    @Test
    void graceful_pastItsTimeout_forcesAndDrops() {
        EventLoop loop = EventLoop.start(LoopConfig.of("graceful-timeout"));
        CompletableFuture<Void> release = Await.blockLoop(loop);
        AtomicInteger ran = new AtomicInteger();
        loop.execute(ran::incrementAndGet);
        loop.shutdownGracefully(Duration.ZERO);
        release.complete(null);
        Await.done(loop.terminationFuture(), "termination after the graceful timeout");
        assertEquals(0, ran.get());
        assertEquals(1, loop.stats().droppedTasks());
    }

    @Test
    void close_twice_andAfterShutdown_isHarmless() {
        EventLoop loop = EventLoop.start(LoopConfig.of("close-twice"));
        loop.close();
        assertTrue(loop.terminationFuture().isDone());
        loop.close();
        loop.shutdownNow();
        loop.shutdownGracefully(Duration.ofSeconds(1));
        assertTrue(loop.terminationFuture().isDone());
        assertFalse(loop.terminationFuture().isCompletedExceptionally());
    }

    @Test
    void close_fromWithinTheLoop_doesNotDeadlock() throws Exception {
        RecordingFactory factory = new RecordingFactory();
        EventLoop loop = EventLoop.start(new LoopConfig("close-inside", WaitStrategy.BLOCKING, 8, factory));
        AtomicBoolean returned = new AtomicBoolean();
        AtomicBoolean wasInLoop = new AtomicBoolean();
        loop.execute(() -> {
            wasInLoop.set(loop.inLoop());
            loop.close();
            returned.set(true);
        });
        Await.done(loop.terminationFuture(), "termination after close() from the loop thread");
        assertTrue(wasInLoop.get());
        assertTrue(returned.get());
        assertFalse(loop.inLoop());
        factory.assertAllEnded();
    }

    @Test
    void hookThatClosesTheRegistrationOrRegistersAgain_duringShutdown_isHarmless() {
        EventLoop loop = EventLoop.start(LoopConfig.of("hook-reentry"));
        try (EventfdTestSource s = new EventfdTestSource()) {
            AtomicInteger hook = new AtomicInteger();
            AtomicBoolean reRegisterRejected = new AtomicBoolean();
            Registration[] r = new Registration[1];
            r[0] = loop.register(s, () -> { }, () -> {
                hook.incrementAndGet();
                r[0].close();
                try {
                    loop.register(s, () -> { });
                } catch (ResourceClosedException e) {
                    reRegisterRejected.set(true);
                }
            });
            Await.roundTrip(loop);
            loop.close();
            assertEquals(1, hook.get());
            assertTrue(reRegisterRejected.get());
        }
    }

    @Test
    void registrationClose_fromAnotherThread_returnsOnceTheLoopLetGo_andSkipsTheHook() {
        EventLoop loop = EventLoop.start(LoopConfig.of("reg-close"));
        try (EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("reg-close")) {
            AtomicInteger hook = new AtomicInteger();
            AtomicInteger delivered = new AtomicInteger();
            Registration r = loop.register(q, c -> delivered.incrementAndGet(), hook::incrementAndGet);
            q.add(1);
            Await.until(() -> delivered.get() == 1, "first completion");
            r.close();
            r.close();
            long polls = q.polls.get();
            q.add(2); // no longer watched
            Await.roundTrip(loop);
            Await.roundTrip(loop);
            assertEquals(polls, q.polls.get(), "the loop does not touch an unregistered queue");
            assertEquals(1, delivered.get());
            loop.close();
            assertEquals(0, hook.get(), "no shutdown hook for a source its owner removed");
        } finally {
            loop.close();
        }
    }

    @Test
    void closedLoops_leaveNoFileDescriptorsBehind() throws Exception {
        // warm-up: class initialisation may open files (the JDK's own jars, logging) once
        EventLoop.start(LoopConfig.of("fd-warmup")).close();
        long before = openFds();
        for (int i = 0; i < 50; i++) {
            EventLoop loop = EventLoop.start(new LoopConfig("fd-" + i, i % 2 == 0 ? WaitStrategy.BLOCKING
                    : WaitStrategy.adaptive(10), 16, null));
            try (EventfdTestSource s = new EventfdTestSource()) {
                loop.register(s, () -> { });
                Await.roundTrip(loop);
                loop.close();
            }
        }
        long after = openFds();
        // each loop owns an epoll fd and an eventfd, the test source one more: a leak shows as +150
        assertTrue(after <= before + 5, "open fds grew from " + before + " to " + after + " over 50 loops");
    }

    private static long openFds() throws java.io.IOException {
        try (var files = java.nio.file.Files.list(java.nio.file.Path.of("/proc/self/fd"))) {
            return files.count();
        }
    }

    @Test
    void defaultThread_isANamedDaemon() {
        try (EventLoop loop = EventLoop.start(LoopConfig.of("named-loop"))) {
            CompletableFuture<Thread> t = new CompletableFuture<>();
            loop.execute(() -> t.complete(Thread.currentThread()));
            Thread thread = Await.done(t, "the loop thread");
            assertEquals("named-loop", thread.getName());
            assertTrue(thread.isDaemon());
            assertEquals("named-loop", loop.name());
        }
    }

    @Test
    void threadFactoryReturningNull_failsStart() {
        LoopConfig c = new LoopConfig("null-factory", WaitStrategy.BLOCKING, 8, r -> null);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> EventLoop.start(c));
        assertTrue(e.getMessage().contains("null-factory"), e.getMessage());
    }
}
