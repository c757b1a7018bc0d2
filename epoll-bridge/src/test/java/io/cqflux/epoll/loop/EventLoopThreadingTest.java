package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Which thread may call what: inEventLoop(), the assertions of the loop-only methods, and
 * executeOrAfterTermination (on the loop, or after it ended; exactly once, never beside it).
 */
class EventLoopThreadingTest {

    @Test
    void inEventLoop_isTrueOnlyOnTheLoopThread() {
        try (EventLoop loop = EventLoop.start(LoopConfig.of("in-event-loop"))) {
            CompletableFuture<boolean[]> seen = new CompletableFuture<>();
            loop.execute(() -> seen.complete(new boolean[] {loop.inEventLoop(), loop.inLoop()}));
            boolean[] onLoop = Await.done(seen, "the flags seen on the loop thread");
            assertTrue(onLoop[0]);
            assertTrue(onLoop[1]);
            assertFalse(loop.inEventLoop());
            assertFalse(loop.inLoop());
        }
    }

    @Test
    void loopOnlyMethods_calledFromAnotherThread_failTheirAssertion() {
        assertTrue(EventLoop.class.desiredAssertionStatus(),
                "tests must run with -ea (cqflux.test.argLine): the loop's thread checks are assertions");
        try (EventLoop loop = EventLoop.start(LoopConfig.of("loop-only"));
                EventfdTestSource s = new EventfdTestSource()) {
            Registration r = loop.register(s, s::consume);
            Await.roundTrip(loop);
            assertThrows(AssertionError.class, () -> loop.unregister((LoopSource) r, false));
            r.close(); // the hand-over path is still fine from this thread
        }
    }

    @Test
    void executeOrAfterTermination_onTheLoop_runsInlineBeforeReturning() {
        try (EventLoop loop = EventLoop.start(LoopConfig.of("or-after-inline"))) {
            CompletableFuture<Boolean> ranBeforeReturn = new CompletableFuture<>();
            loop.execute(() -> {
                AtomicBoolean ran = new AtomicBoolean();
                loop.executeOrAfterTermination(() -> ran.set(true));
                ranBeforeReturn.complete(ran.get());
            });
            assertTrue(Await.done(ranBeforeReturn, "the inline run"));
        }
    }

    @Test
    void executeOrAfterTermination_fromAnotherThread_runsOnTheLoop() {
        try (EventLoop loop = EventLoop.start(LoopConfig.of("or-after-running"))) {
            CompletableFuture<Boolean> onLoop = new CompletableFuture<>();
            loop.executeOrAfterTermination(() -> onLoop.complete(loop.inEventLoop()));
            assertTrue(Await.done(onLoop, "the task"));
        }
    }

    @Test
    void executeOrAfterTermination_whileShuttingDown_runsOnlyOnceTheLoopEnded() {
        EventLoop loop = EventLoop.start(LoopConfig.of("or-after-shutting-down"));
        CompletableFuture<Void> release = Await.blockLoop(loop); // the loop is busy in its last tasks
        loop.shutdownGracefully(Duration.ofSeconds(30));
        AtomicInteger runs = new AtomicInteger();
        CompletableFuture<Boolean> terminatedWhenRun = new CompletableFuture<>();
        loop.executeOrAfterTermination(() -> {
            runs.incrementAndGet();
            terminatedWhenRun.complete(loop.terminationFuture().isDone());
        });
        assertEquals(0, runs.get(), "must not run beside the loop's last round");
        release.complete(null);
        assertTrue(Await.done(terminatedWhenRun, "the task after termination"));
        Await.done(loop.terminationFuture(), "termination");
        assertEquals(1, runs.get());
    }

    @Test
    void executeOrAfterTermination_afterTheLoopEnded_runsAtOnceOnTheCaller() {
        EventLoop loop = EventLoop.start(LoopConfig.of("or-after-ended"));
        loop.close();
        AtomicBoolean ran = new AtomicBoolean();
        Thread caller = Thread.currentThread();
        AtomicBoolean onCaller = new AtomicBoolean();
        loop.executeOrAfterTermination(() -> {
            ran.set(true);
            onCaller.set(Thread.currentThread() == caller);
        });
        assertTrue(ran.get());
        assertTrue(onCaller.get());
    }

    @Test
    void executeOrAfterTermination_queuedThenDroppedByAForcedShutdown_stillRunsOnceAfterTermination() {
        EventLoop loop = EventLoop.start(LoopConfig.of("or-after-forced"));
        CompletableFuture<Void> release = Await.blockLoop(loop);
        AtomicInteger runs = new AtomicInteger();
        CompletableFuture<Boolean> terminatedWhenRun = new CompletableFuture<>();
        loop.executeOrAfterTermination(() -> { // queued: the loop is still running
            runs.incrementAndGet();
            terminatedWhenRun.complete(loop.terminationFuture().isDone());
        });
        loop.shutdownNow(); // drops what is queued
        release.complete(null);
        Await.done(loop.terminationFuture(), "forced termination");
        assertTrue(Await.done(terminatedWhenRun, "the dropped task, run after termination"));
        assertEquals(1, runs.get());
        assertEquals(1, loop.stats().droppedTasks(), "it was dropped by the loop, then run after it");
    }

    @Test
    void executeOrAfterTermination_taskThatThrowsAfterTermination_isLogged_andTerminationStaysNormal() {
        EventLoop loop = EventLoop.start(LoopConfig.of("or-after-throws"));
        CompletableFuture<Void> release = Await.blockLoop(loop);
        loop.shutdownGracefully(Duration.ofSeconds(30));
        AtomicInteger runs = new AtomicInteger();
        loop.executeOrAfterTermination(() -> {
            runs.incrementAndGet();
            throw new IllegalStateException("test: a clean-up task that throws after termination");
        });
        release.complete(null);
        Await.done(loop.terminationFuture(), "termination");
        Await.until(() -> runs.get() == 1, "the task after termination");
        assertFalse(loop.terminationFuture().isCompletedExceptionally());
        loop.executeOrAfterTermination(runs::incrementAndGet); // later callers are not affected
        assertEquals(2, runs.get());
    }
}
