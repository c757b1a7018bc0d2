package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.epoll.WaitStrategy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Blocked-loop detection: a unit of work that holds the loop thread longer than the threshold is
 * counted in LoopStats.blocked and logged at WARN (thread, duration, the operation named by
 * noteOperation); a fast one is not; a threshold of zero turns it off. And the loop-lag sample.
 */
class EventLoopBlockedTest {

    private final List<LogRecord> warnings = new CopyOnWriteArrayList<>();
    private final Logger jul = Logger.getLogger(EventLoop.class.getName());
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                warnings.add(r);
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void capture() {
        jul.addHandler(handler);
    }

    @AfterEach
    void release() {
        jul.removeHandler(handler);
    }

    private static LoopConfig config(String name, Duration threshold) {
        return new LoopConfig(name, WaitStrategy.BLOCKING, 32, null, threshold);
    }

    @Test
    void taskBlockingPastTheThreshold_isCountedAndLoggedWithThreadAndOperation() {
        try (EventLoop loop = EventLoop.start(config("blocked-task", Duration.ofMillis(100)))) {
            CompletableFuture<Void> done = new CompletableFuture<>();
            loop.execute(() -> {
                loop.noteOperation("cqflux.test");
                sleep(300);
                done.complete(null);
            });
            Await.done(done, "the blocking task");
            Await.until(() -> loop.stats().blocked() == 1, "the blocked unit counted");
            Await.roundTrip(loop);
            assertEquals(1, loop.stats().blocked());
            List<String> messages = warnings.stream().map(LogRecord::getMessage)
                    .filter(m -> m.contains("was blocked for")).toList();
            assertEquals(1, messages.size(), messages.toString());
            String m = messages.getFirst();
            assertTrue(m.contains("blocked-task"), m);
            assertTrue(m.contains("operation: cqflux.test"), m);
            assertTrue(m.contains("threshold 100 ms"), m);
        }
    }

    @Test
    void setupWorkPastTheThreshold_isNeitherCountedNorWarned() {
        try (EventLoop loop = EventLoop.start(config("setup-work", Duration.ofMillis(20)))) {
            CompletableFuture<Void> done = new CompletableFuture<>();
            loop.execute(() -> {
                loop.noteSetup("cqflux.connect");
                sleep(60);
                done.complete(null);
            });
            Await.done(done, "the set-up task");
            Await.roundTrip(loop);
            assertEquals(0, loop.stats().blocked());
            assertTrue(warnings.stream().noneMatch(r -> r.getMessage().contains("was blocked for")), warnings::toString);
        }
    }

    @Test
    void longestUnit_countsSetupAndSubscriberPartsOfOneUnitTogether() {
        try (EventLoop loop = EventLoop.start(config("longest-unit", Duration.ofMillis(500)))) {
            assertEquals(0, loop.stats().longestUnitNanos(), "no unit ran yet");
            CompletableFuture<Void> done = new CompletableFuture<>();
            loop.execute(() -> {
                loop.noteSetup("cqflux.accept");
                sleep(40); // set-up: judged as a part of its own, under the threshold
                loop.noteOperation("cqflux.established");
                sleep(40); // subscriber code: another part
                done.complete(null);
            });
            Await.done(done, "the task");
            Await.roundTrip(loop);
            long longest = loop.stats().longestUnitNanos();
            // The neighbours waited for both parts: at least 80 ms, though neither part alone was.
            assertTrue(longest >= Duration.ofMillis(80).toNanos(), "longest unit " + longest + " ns");
            assertTrue(longest < Duration.ofSeconds(5).toNanos(), "longest unit " + longest + " ns");
            assertEquals(0, loop.stats().blocked(), "under the threshold, nothing is blocked");
            // At least the one long unit, counted whole (a loaded host may stretch another unit
            // of the loop's start past 10 ms too: exact counts are not this test's to assert).
            long over10 = loop.stats().unitsOver10ms();
            assertTrue(over10 >= 1, "units over 10 ms: " + over10);
            long over1 = loop.stats().unitsOver1ms();
            assertTrue(over1 >= over10, "units over 1 ms: " + over1 + ", over 10 ms: " + over10);
            loop.execute(() -> sleep(5));
            Await.roundTrip(loop);
            assertEquals(longest, loop.stats().longestUnitNanos(), "a shorter unit leaves the maximum");
            assertTrue(loop.stats().unitsOver1ms() > over1, "the 5 ms unit counted over 1 ms");
        }
    }

    @Test
    void longestUnit_isZeroWhenTheDetectionIsOff() {
        try (EventLoop loop = EventLoop.start(config("longest-unit-off", Duration.ZERO))) {
            CompletableFuture<Void> done = new CompletableFuture<>();
            loop.execute(() -> {
                sleep(30);
                done.complete(null);
            });
            Await.done(done, "the task");
            Await.roundTrip(loop);
            assertEquals(0, loop.stats().longestUnitNanos());
        }
    }

    @Test
    void slowSetupThenFastSubscriberCode_isNotReportedAsTheSubscriberBlocking() {
        try (EventLoop loop = EventLoop.start(config("setup-then-subscriber", Duration.ofMillis(100)))) {
            CompletableFuture<Void> done = new CompletableFuture<>();
            loop.execute(() -> {
                loop.noteSetup("cqflux.accept");
                sleep(300); // the library's own work (a slow accept under load)
                loop.noteOperation("cqflux.established"); // fast subscriber code follows
                done.complete(null);
            });
            Await.done(done, "the task");
            Await.roundTrip(loop);
            assertEquals(0, loop.stats().blocked());
            assertTrue(warnings.stream().noneMatch(r -> r.getMessage().contains("was blocked for")), warnings::toString);
        }
    }

    @Test
    void setupThenBlockingSubscriberCode_isReportedWithTheOperation() {
        try (EventLoop loop = EventLoop.start(config("setup-then-blocking", Duration.ofMillis(100)))) {
            CompletableFuture<Void> done = new CompletableFuture<>();
            loop.execute(() -> {
                loop.noteSetup("cqflux.bind");
                loop.noteOperation("cqflux.bind");
                sleep(300); // the subscriber's onNext blocks
                done.complete(null);
            });
            Await.done(done, "the task");
            Await.until(() -> loop.stats().blocked() == 1, "the blocked subscriber counted");
            Await.roundTrip(loop); // the count comes before the WARN: let the loop finish the report
            String m = warnings.stream().map(LogRecord::getMessage).filter(x -> x.contains("was blocked for"))
                    .findFirst().orElseThrow();
            assertTrue(m.contains("operation: cqflux.bind"), m);
        }
    }

    @Test
    void blockingSubscriberCodeThenSetup_isReportedWithTheOperation() {
        try (EventLoop loop = EventLoop.start(config("blocking-then-setup", Duration.ofMillis(100)))) {
            CompletableFuture<Void> done = new CompletableFuture<>();
            loop.execute(() -> {
                loop.noteOperation("cqflux.connectionEnd");
                sleep(300); // a failed subscriber blocks
                loop.noteSetup("cqflux.connectionClose"); // then the library's teardown
                done.complete(null);
            });
            Await.done(done, "the task");
            Await.until(() -> loop.stats().blocked() == 1, "the blocked subscriber counted");
            Await.roundTrip(loop);
            assertEquals(1, loop.stats().blocked());
            String m = warnings.stream().map(LogRecord::getMessage).filter(x -> x.contains("was blocked for"))
                    .findFirst().orElseThrow();
            assertTrue(m.contains("operation: cqflux.connectionEnd"), m);
            assertTrue(m.contains("subscriber code"), m);
        }
    }

    @Test
    void fastTasks_areNotReported() {
        try (EventLoop loop = EventLoop.start(config("fast-tasks", Duration.ofMillis(100)))) {
            for (int i = 0; i < 1000; i++) {
                loop.execute(() -> loop.noteOperation("cqflux.fast"));
            }
            Await.roundTrip(loop);
            assertEquals(0, loop.stats().blocked());
            assertTrue(warnings.stream().noneMatch(r -> r.getMessage().contains("was blocked for")), warnings::toString);
        }
    }

    @Test
    void thresholdZero_turnsTheDetectionOff() {
        try (EventLoop loop = EventLoop.start(config("detection-off", Duration.ZERO))) {
            CompletableFuture<Void> done = new CompletableFuture<>();
            loop.execute(() -> {
                sleep(150);
                done.complete(null);
            });
            Await.done(done, "the blocking task");
            Await.roundTrip(loop);
            assertEquals(0, loop.stats().blocked());
            assertTrue(warnings.stream().noneMatch(r -> r.getMessage().contains("was blocked for")), warnings::toString);
        }
    }

    @Test
    void secondBlockWithinTheInterval_isCountedButNotLoggedAgain() {
        try (EventLoop loop = EventLoop.start(config("blocked-twice", Duration.ofMillis(20)))) {
            for (int i = 0; i < 2; i++) {
                loop.execute(() -> sleep(60));
            }
            Await.until(() -> loop.stats().blocked() == 2, "both blocked units counted");
            assertEquals(1, warnings.stream().filter(r -> r.getMessage().contains("was blocked for")).count(),
                    warnings::toString);
        }
    }

    @Test
    void tasksQueuedBehindABlockedTask_giveALagSample() throws InterruptedException {
        try (EventLoop loop = EventLoop.start(config("lag", Duration.ZERO))) {
            assertEquals(0, loop.stats().lagNanos());
            CountDownLatch running = new CountDownLatch(1);
            loop.execute(() -> {
                running.countDown();
                sleep(50);
            });
            running.await();
            // Every 8th offer is stamped: 16 tasks queued behind the sleeping task carry a stamp.
            for (int i = 0; i < 2 * TaskQueue.LAG_SAMPLE_EVERY; i++) {
                loop.execute(() -> { });
            }
            Await.roundTrip(loop);
            assertTrue(loop.stats().lagNanos() > 0, "lag " + loop.stats().lagNanos());
        }
    }

    @Test
    void negativeThreshold_isRefusedWithTheBound() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> config("bad", Duration.ofMillis(-1)));
        assertTrue(e.getMessage().contains("PT-0.001S") && e.getMessage().contains("PT1H"), e.getMessage());
    }

    /**
     * The unit clock (what ConnectionCore stamps an operation's posting time with): within a unit
     * it is the unit's start, so behind the clock by the unit's time so far and never ahead; the
     * next unit starts from a fresh reading taken after the last one ended.
     */
    @Test
    void unitClock_isTheUnitsStart_behindByTheUnitsTimeSoFar_neverAhead_andFreshForTheNextUnit() {
        try (EventLoop loop = EventLoop.start(config("unit-clock", Duration.ofSeconds(10)))) {
            CompletableFuture<long[]> r = new CompletableFuture<>();
            loop.execute(() -> {
                long first = loop.unitClock();
                sleep(30);
                long afterSleep = System.nanoTime();
                long again = loop.unitClock();
                loop.execute(() -> {
                    long next = loop.unitClock();
                    r.complete(new long[] {first, afterSleep, again, next, System.nanoTime()});
                });
            });
            long[] v = Await.done(r, "the two tasks");
            assertEquals(v[0], v[2], "no new clock reading within one unit");
            assertTrue(v[1] - v[2] >= Duration.ofMillis(30).toNanos(), "behind by the unit's 30 ms so far");
            assertTrue(v[3] >= v[1], "the next unit's reading was taken after the last unit ended");
            assertTrue(v[3] <= v[4], "never ahead of the clock");
        }
    }

    @Test
    void unitClock_withTheDetectionOff_readsTheClock() {
        try (EventLoop loop = EventLoop.start(config("unit-clock-off", Duration.ZERO))) {
            CompletableFuture<long[]> r = new CompletableFuture<>();
            loop.execute(() -> {
                sleep(30);
                long before = System.nanoTime();
                r.complete(new long[] {before, loop.unitClock()});
            });
            long[] v = Await.done(r, "the task");
            assertTrue(v[1] >= v[0], "a fresh reading, not the unit's start");
        }
    }

    @Test
    void unitClock_offTheLoopThread_isRefused() {
        try (EventLoop loop = EventLoop.start(config("unit-clock-thread", Duration.ofMillis(100)))) {
            assertThrows(AssertionError.class, loop::unitClock);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
