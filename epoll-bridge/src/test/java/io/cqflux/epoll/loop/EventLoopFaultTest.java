package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionStatus;
import io.cqflux.core.NativeCallException;
import io.cqflux.core.ResourceClosedException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Handlers that throw, sources that fail, unregistration from inside handlers, fatal errors. */
class EventLoopFaultTest {

    @Test
    void throwingSink_loopSurvives_andTheRestOfTheBatchIsDelivered() {
        try (EventLoop loop = EventLoop.start(LoopConfig.of("throwing-sink"));
                EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("throwing-sink")) {
            ConcurrentLinkedQueue<Long> seen = new ConcurrentLinkedQueue<>();
            loop.register(q, c -> {
                seen.add(c.context());
                if (c.context() == 3 || c.context() == 7) {
                    throw new IllegalStateException("test: sink fails on context " + c.context());
                }
            });
            CompletableFuture<Void> release = Await.blockLoop(loop);
            q.addRange(0, 10); // one batch of 10
            release.complete(null);
            Await.until(() -> seen.size() == 10, "all 10 entries of the batch");
            assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L), new ArrayList<>(seen));
            Await.roundTrip(loop); // the counters are updated after the batch's last sink call
            assertEquals(10, loop.stats().completions());
            assertEquals(1, loop.stats().batches());
            q.add(10);
            Await.until(() -> seen.size() == 11, "a completion after the failures");
            Await.roundTrip(loop);
        }
    }

    @Test
    void throwingReadableHandler_loopSurvives() {
        try (EventLoop loop = EventLoop.start(LoopConfig.of("throwing-handler"));
                EventfdTestSource s = new EventfdTestSource()) {
            AtomicInteger calls = new AtomicInteger();
            loop.register(s, () -> {
                s.consume();
                calls.incrementAndGet();
                throw new IllegalStateException("test: handler fails");
            });
            s.signal();
            Await.until(() -> calls.get() == 1, "first handler call");
            s.signal();
            Await.until(() -> calls.get() == 2, "second handler call");
            Await.roundTrip(loop);
        }
    }

    @Test
    void throwingTask_loopSurvives_andRunsTheNextTask() {
        try (EventLoop loop = EventLoop.start(LoopConfig.of("throwing-task"))) {
            CompletableFuture<Void> release = Await.blockLoop(loop);
            AtomicInteger ran = new AtomicInteger();
            loop.execute(() -> {
                throw new IllegalArgumentException("test: task fails");
            });
            loop.execute(() -> {
                throw new AssertionError("test: an AssertionError is not fatal to the loop");
            });
            loop.execute(ran::incrementAndGet);
            release.complete(null);
            Await.until(() -> ran.get() == 1, "the task after the failing ones");
            Await.until(() -> loop.stats().tasks() >= 4, "the task counter to include the failed tasks");
        }
    }

    @Test
    void failingQueue_isUnregistered_andItsOwnerTold() {
        try (EventLoop loop = EventLoop.start(LoopConfig.of("failing-queue"));
                EventfdTestCompletionQueue good = new EventfdTestCompletionQueue("good");
                EventfdTestCompletionQueue bad = new EventfdTestCompletionQueue("bad")) {
            bad.failPolls(new NativeCallException("rpma_cq_get_wc", -100002, "RPMA_E_PROVIDER", "test: CQ overrun", ""));
            AtomicInteger hook = new AtomicInteger();
            AtomicInteger goodSeen = new AtomicInteger();
            loop.register(bad, c -> { }, hook::incrementAndGet);
            loop.register(good, c -> goodSeen.incrementAndGet());
            bad.add(1);
            Await.until(() -> hook.get() == 1, "the failing queue's shutdown hook");
            bad.add(2); // no longer watched: nothing happens
            good.add(1);
            Await.until(() -> goodSeen.get() == 1, "the other queue still served");
            Await.roundTrip(loop);
            assertEquals(1, hook.get());
        }
    }

    @Test
    void handlerClosingItselfAndAnotherReadySource_skipsTheOthersPendingEvent() {
        try (EventLoop loop = EventLoop.start(LoopConfig.of("unregister-in-handler"));
                EventfdTestSource a = new EventfdTestSource();
                EventfdTestSource b = new EventfdTestSource()) {
            AtomicInteger calls = new AtomicInteger();
            List<Registration> regs = Collections.synchronizedList(new ArrayList<>());
            Runnable handler = () -> {
                calls.incrementAndGet();
                List<Registration> copy;
                synchronized (regs) {
                    copy = new ArrayList<>(regs);
                }
                copy.forEach(Registration::close); // on the loop thread: immediate
            };
            regs.add(loop.register(a, handler));
            regs.add(loop.register(b, handler));
            CompletableFuture<Void> release = Await.blockLoop(loop);
            a.signal();
            b.signal(); // both ready in the same epoll_wait
            release.complete(null);
            Await.until(() -> calls.get() >= 1, "a handler");
            Await.roundTrip(loop);
            Await.roundTrip(loop);
            assertEquals(1, calls.get(), "the second source's event was skipped after its unregistration");
        }
    }

    @Test
    void sinkClosingItsOwnRegistration_stopsTheDrain() {
        try (EventLoop loop = EventLoop.start(LoopConfig.of("close-own"));
                EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("close-own")) {
            AtomicInteger seen = new AtomicInteger();
            Registration[] self = new Registration[1];
            CompletableFuture<Void> release = Await.blockLoop(loop);
            self[0] = loop.register(q, c -> {
                if (seen.incrementAndGet() == 40) {
                    self[0].close(); // mid-batch: this batch ends, no further poll
                }
            });
            q.addRange(0, 100); // batch size 32: closes during the second batch
            release.complete(null);
            Await.until(() -> seen.get() >= 40, "40 completions");
            Await.roundTrip(loop);
            assertEquals(64, seen.get(), "the batch in progress finishes, no further poll follows");
        }
    }

    @Test
    void registeringABadFd_onTheLoopThread_throws_andFromAnotherThread_callsTheHook() {
        try (EventLoop loop = EventLoop.start(LoopConfig.of("bad-fd"))) {
            EventfdTestSource closed = new EventfdTestSource();
            closed.close();
            CompletableFuture<Throwable> inLoop = new CompletableFuture<>();
            loop.execute(() -> {
                try {
                    loop.register(closed, () -> { });
                    inLoop.complete(null);
                } catch (Throwable t) {
                    inLoop.complete(t);
                }
            });
            Throwable t = Await.done(inLoop, "registration on the loop thread");
            NativeCallException e = assertInstanceOf(NativeCallException.class, t);
            assertEquals("EBADF", e.codeName());
            AtomicInteger hook = new AtomicInteger();
            loop.register(closed, () -> { }, hook::incrementAndGet);
            Await.until(() -> hook.get() == 1, "the hook of a refused hand-over");
        }
    }

    @Test
    void fatalError_endsTheLoop_failsEverythingItOwns() {
        EventLoop loop = EventLoop.start(LoopConfig.of("fatal"));
        try (EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("fatal");
                EventfdTestSource s = new EventfdTestSource()) {
            AtomicInteger hooks = new AtomicInteger();
            loop.register(q, c -> { }, hooks::incrementAndGet);
            loop.register(s, () -> { }, hooks::incrementAndGet);
            CompletableFuture<Void> release = Await.blockLoop(loop);
            loop.execute(() -> {
                throw new OutOfMemoryError("test: simulated fatal error");
            });
            AtomicInteger neverRun = new AtomicInteger();
            loop.execute(neverRun::incrementAndGet);
            release.complete(null);
            CompletionException ce = assertThrows(CompletionException.class,
                    () -> loop.terminationFuture().orTimeout(Await.TIMEOUT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS).join());
            assertInstanceOf(OutOfMemoryError.class, ce.getCause());
            assertEquals(2, hooks.get(), "every registered source's owner is told");
            assertEquals(0, neverRun.get());
            assertEquals(1, loop.stats().droppedTasks());
            assertThrows(ResourceClosedException.class, () -> loop.execute(() -> { }));
            loop.close(); // harmless after a fatal end
        }
    }

    @Test
    void errorCompletion_isDeliveredLikeAnyOther() {
        try (EventLoop loop = EventLoop.start(LoopConfig.of("error-entry"));
                EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("error-entry")) {
            ConcurrentLinkedQueue<CompletionStatus> got = new ConcurrentLinkedQueue<>();
            loop.register(q, c -> got.add(c.status()));
            q.add(1, CompletionStatus.REM_ACCESS_ERR);
            Await.until(() -> got.size() == 1, "an error completion");
            assertEquals(CompletionStatus.REM_ACCESS_ERR, got.peek());
        }
    }
}
