package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.epoll.WaitStrategy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The loop's timer heap: order, cancel, many timers, far deadlines, timers scheduled by running
 * ones, and the loop that sleeps until the earliest deadline.
 */
class LoopTimerTest {

    private static final Consumer<Runnable> RUN = Runnable::run;
    private static final long MS = 1_000_000;

    @Test
    void timers_runInDeadlineOrder_andTiesInSchedulingOrder() {
        LoopTimer t = new LoopTimer();
        List<String> ran = new ArrayList<>();
        long now = 1_000;
        t.schedule(now, 30, () -> ran.add("c"));
        t.schedule(now, 10, () -> ran.add("a1"));
        t.schedule(now, 20, () -> ran.add("b"));
        t.schedule(now, 10, () -> ran.add("a2"));
        t.schedule(now, 0, () -> ran.add("zero"));
        assertEquals(0, t.runExpired(now - 1, RUN), "nothing is due before now");
        assertEquals(3, t.runExpired(now + 10, RUN));
        assertEquals(List.of("zero", "a1", "a2"), ran);
        assertEquals(2, t.runExpired(now + 100, RUN));
        assertEquals(List.of("zero", "a1", "a2", "b", "c"), ran);
        assertTrue(t.isEmpty());
    }

    @Test
    void cancel_keepsTheTaskFromRunning_onceOnly_andNotAfterItRan() {
        LoopTimer t = new LoopTimer();
        List<Integer> ran = new ArrayList<>();
        List<LoopTimer.Timeout> handles = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            int v = i;
            handles.add(t.schedule(0, 10 + i, () -> ran.add(v)));
        }
        assertTrue(handles.get(4).cancel(), "the middle of the heap");
        assertTrue(handles.get(0).cancel(), "the head");
        assertTrue(handles.get(8).cancel(), "the last");
        assertFalse(handles.get(4).cancel(), "a second cancel");
        assertFalse(handles.get(4).isPending());
        assertEquals(6, t.size());
        t.runExpired(100, RUN);
        assertEquals(List.of(1, 2, 3, 5, 6, 7), ran);
        assertFalse(handles.get(1).cancel(), "a timer that ran is not pending");
    }

    @Test
    void aTimerCancelledByAnEarlierTimerOfTheSameTurn_doesNotRun() {
        LoopTimer t = new LoopTimer();
        List<String> ran = new ArrayList<>();
        LoopTimer.Timeout[] later = new LoopTimer.Timeout[1];
        t.schedule(0, 1, () -> {
            ran.add("first");
            later[0].cancel();
        });
        later[0] = t.schedule(0, 2, () -> ran.add("second"));
        assertEquals(1, t.runExpired(10, RUN));
        assertEquals(List.of("first"), ran);
    }

    @Test
    void manyTimers_withRandomCancels_runSortedAndExactlyOnce() {
        LoopTimer t = new LoopTimer();
        Random r = new Random(42);
        List<Long> ran = new ArrayList<>();
        List<LoopTimer.Timeout> handles = new ArrayList<>();
        int n = 100_000;
        for (int i = 0; i < n; i++) {
            long delay = r.nextInt(1_000_000);
            handles.add(t.schedule(0, delay, () -> ran.add(delay)));
        }
        int cancelled = 0;
        for (int i = 0; i < n; i += 3) {
            if (handles.get(i).cancel()) {
                cancelled++;
            }
        }
        // In steps, as a loop's turns would.
        int total = 0;
        for (long now = 0; now <= 1_000_000; now += 1_000) {
            total += t.runExpired(now, RUN);
        }
        assertEquals(n - cancelled, total);
        assertEquals(n - cancelled, ran.size());
        for (int i = 1; i < ran.size(); i++) {
            assertTrue(ran.get(i - 1) <= ran.get(i), "out of order at " + i + ": " + ran.get(i - 1) + " > " + ran.get(i));
        }
        assertTrue(t.isEmpty());
    }

    @Test
    void farDeadlines_wait_andTheNextDeadlineSaysHowLong() {
        LoopTimer t = new LoopTimer();
        long now = System.nanoTime();
        AtomicLong ran = new AtomicLong();
        t.schedule(now, TimeUnit.DAYS.toNanos(100), ran::incrementAndGet);
        t.schedule(now, LoopTimer.MAX_DELAY_NANOS, ran::incrementAndGet);
        assertEquals(TimeUnit.DAYS.toNanos(100), t.nanosUntilNext(now));
        assertEquals(0, t.runExpired(now + TimeUnit.DAYS.toNanos(99), RUN));
        assertEquals(1, t.runExpired(now + TimeUnit.DAYS.toNanos(100), RUN));
        assertEquals(1, t.size());
        assertEquals(-1, new LoopTimer().nanosUntilNext(now), "no timer: no deadline");
    }

    @Test
    void deadlinesAcrossTheClocksWrap_keepTheirOrder() {
        LoopTimer t = new LoopTimer();
        List<String> ran = new ArrayList<>();
        long now = Long.MAX_VALUE - 5;
        t.schedule(now, 10, () -> ran.add("after the wrap"));
        t.schedule(now, 1, () -> ran.add("before the wrap"));
        assertEquals(2, t.runExpired(now + 20, RUN)); // overflows to a negative nanoTime, as the clock would
        assertEquals(List.of("before the wrap", "after the wrap"), ran);
    }

    @Test
    void aTimerScheduledByARunningTimer_waitsForTheNextTurn_evenWithNoDelay() {
        LoopTimer t = new LoopTimer();
        AtomicLong runs = new AtomicLong();
        Runnable[] again = new Runnable[1];
        again[0] = () -> {
            runs.incrementAndGet();
            t.schedule(5, 0, again[0]);
        };
        t.schedule(5, 0, again[0]);
        assertEquals(1, t.runExpired(5, RUN));
        assertEquals(1, t.runExpired(5, RUN));
        assertEquals(2, runs.get());
    }

    @Test
    void badDelays_areRefused_namingTheValueAndTheBound() {
        LoopTimer t = new LoopTimer();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> t.schedule(0, -1, () -> { }));
        assertTrue(e.getMessage().contains("-1") && e.getMessage().contains(Long.toString(LoopTimer.MAX_DELAY_NANOS)),
                e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> t.schedule(0, LoopTimer.MAX_DELAY_NANOS + 1, () -> { }));
        assertThrows(NullPointerException.class, () -> t.schedule(0, 1, null));
    }

    @Test
    void aBlockingLoop_wakesForItsTimer_andACancelledOneNeverRuns() {
        try (EventLoop loop = EventLoop.start(new LoopConfig("timer-loop", WaitStrategy.BLOCKING, 32, null))) {
            CompletableFuture<Long> fired = new CompletableFuture<>();
            AtomicLong cancelledRan = new AtomicLong();
            long[] start = new long[1];
            CompletableFuture<Void> scheduled = new CompletableFuture<>();
            loop.execute(() -> {
                start[0] = System.nanoTime();
                LoopTimer.Timeout c = loop.schedule(Duration.ofMillis(10), cancelledRan::incrementAndGet);
                loop.schedule(Duration.ofMillis(30), () -> fired.complete(System.nanoTime()));
                assertTrue(c.cancel());
                scheduled.complete(null);
            });
            Await.done(scheduled, "the timers scheduled");
            long at = Await.done(fired, "the timer of a sleeping loop");
            assertTrue(at - start[0] >= 30 * MS, "ran " + (at - start[0]) / MS + " ms after scheduling, before its 30 ms");
            assertEquals(0, cancelledRan.get());
            IllegalStateException off = assertThrows(IllegalStateException.class,
                    () -> loop.schedule(Duration.ofMillis(1), () -> { }));
            assertTrue(off.getMessage().contains("loop thread"), off.getMessage());
        }
    }

    @Test
    void cancel_offItsLoopsThread_failsTheLoopThreadAssertion_andTheTimerStaysPending() {
        try (EventLoop loop = EventLoop.start(new LoopConfig("timer-cancel-loop", WaitStrategy.BLOCKING, 32, null))) {
            CompletableFuture<LoopTimer.Timeout> handle = new CompletableFuture<>();
            AtomicLong ran = new AtomicLong();
            loop.execute(() -> handle.complete(loop.schedule(Duration.ofHours(1), ran::incrementAndGet)));
            LoopTimer.Timeout t = Await.done(handle, "the timer scheduled");
            AssertionError off = assertThrows(AssertionError.class, t::cancel);
            assertTrue(off.getMessage().contains("off its loop's thread"), off.getMessage());
            CompletableFuture<Boolean> onLoop = new CompletableFuture<>();
            loop.execute(() -> onLoop.complete(t.cancel()));
            assertTrue(Await.done(onLoop, "the cancel on the loop"), "the timer was not pending after the refused cancel");
            assertEquals(0, ran.get());
        }
    }
}
