package io.cqflux.reactor.internal.pool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.reactor.PeerPoolOptions;
import java.time.Duration;
import java.util.function.DoubleSupplier;
import org.junit.jupiter.api.Test;

/**
 * {@link AttemptSchedule} alone: the backoff's doubling up to its maximum, the jitter's bounds, an
 * attempt's window between minAttemptTime and the connect timeout, the wait after a failure cut
 * to the longest gap, and when the attempt count starts again. No pool, no clock: the readings
 * are given.
 */
class AttemptScheduleTest {
    static final long MS = 1_000_000L;
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);

    static PeerPoolOptions.Builder backoff100To1000() {
        return PeerPoolOptions.builder().reconnectBackoff(Duration.ofMillis(100), Duration.ofMillis(1000))
                .minAttemptTime(Duration.ofMillis(300)).jitter(0);
    }

    static AttemptSchedule schedule(PeerPoolOptions options, DoubleSupplier random) {
        return new AttemptSchedule(options, CONNECT_TIMEOUT, random);
    }

    @Test
    void delay_withoutJitter_doublesFromTheMinimumUpToTheMaximum() {
        AttemptSchedule s = schedule(backoff100To1000().build(), () -> {
            throw new AssertionError("no jitter: nothing is drawn");
        });
        long[] expected = {100, 200, 400, 800, 1000, 1000};
        for (int attempt = 1; attempt <= expected.length; attempt++) {
            assertEquals(Duration.ofMillis(expected[attempt - 1]), s.delay(attempt), "attempt " + attempt);
        }
        assertEquals(Duration.ofMillis(1000), s.delay(Integer.MAX_VALUE), "a huge attempt number");
    }

    @Test
    void delay_withJitter_isTheNominalTimesOnePlusOrMinusJitter_keptWithinTheBackoffBounds() {
        PeerPoolOptions o = backoff100To1000().jitter(0.5).build();
        assertEquals(Duration.ofMillis(100), schedule(o, () -> 0.0).delay(2), "the lowest draw: nominal 200 ms x 0.5");
        assertEquals(Duration.ofMillis(200), schedule(o, () -> 0.5).delay(2), "the middle draw: the nominal");
        long high = schedule(o, () -> Math.nextDown(1.0)).delay(2).toNanos();
        assertTrue(high > 299 * MS && high <= 300 * MS, "the highest draw: at most nominal 200 ms x 1.5, was " + high);
        assertEquals(Duration.ofMillis(100), schedule(o, () -> 0.0).delay(1), "below the minimum: the minimum");
        assertEquals(Duration.ofMillis(1000), schedule(o, () -> Math.nextDown(1.0)).delay(5), "above the maximum: the maximum");
    }

    @Test
    void window_isTheDelayBefore_atLeastMinAttemptTime_andNoneOfItsOwnAtTheConnectTimeout() {
        AttemptSchedule s = schedule(backoff100To1000().build(), () -> 0.5);
        assertEquals(300 * MS, s.window(Duration.ofMillis(100)), "a short delay: the floor");
        assertEquals(500 * MS, s.window(Duration.ofMillis(500)), "a longer delay: the delay");
        assertEquals(0, s.window(CONNECT_TIMEOUT), "at the connect timeout: that timeout ends the attempt");
        assertEquals(0, s.window(Duration.ofSeconds(3)), "beyond it: likewise");
        AttemptSchedule slowFloor = schedule(backoff100To1000().minAttemptTime(Duration.ofSeconds(5)).build(), () -> 0.5);
        assertEquals(0, slowFloor.window(Duration.ofMillis(100)), "a floor beyond the connect timeout: no window");
    }

    @Test
    void afterFailure_waitsTheNextDelay_cutSoTheNextStartsWithinTheGapOfTheFailedOnesStart() {
        AttemptSchedule s = schedule(backoff100To1000().build(), () -> 0.5);
        assertEquals(1000 * MS, s.gapNanos(), "the gap: the longest backoff here");
        assertEquals(new AttemptSchedule.Next(4, Duration.ofMillis(800), Duration.ofMillis(800), 800 * MS),
                s.afterFailure(3, 0), "after a loss: the whole delay");
        assertEquals(new AttemptSchedule.Next(4, Duration.ofMillis(800), Duration.ofMillis(300), 800 * MS),
                s.afterFailure(3, 700 * MS), "a late failure: the rest of the gap");
        assertEquals(Duration.ZERO, s.afterFailure(3, 5000 * MS).pause(), "a failure beyond the gap: at once");
        assertEquals(new AttemptSchedule.Next(1, Duration.ofMillis(100), Duration.ofMillis(100), 300 * MS),
                s.afterFailure(0, 5 * MS), "the first failure of the pool: the minimum, the floor's window");
    }

    @Test
    void afterAbandon_startsTheNextAttemptAtOnce_withTheWindowOfItsDelay() {
        AttemptSchedule s = schedule(backoff100To1000().build(), () -> 0.5);
        assertEquals(new AttemptSchedule.Next(2, Duration.ofMillis(200), Duration.ZERO, 300 * MS), s.afterAbandon(1));
        assertEquals(new AttemptSchedule.Next(5, Duration.ofMillis(1000), Duration.ZERO, 1000 * MS), s.afterAbandon(4));
    }

    @Test
    void provedStable_onlyOnceAConnectionStayedUpBackoffResetAfter() {
        AttemptSchedule s = schedule(backoff100To1000().backoffResetAfter(Duration.ofSeconds(5)).build(), () -> 0.5);
        assertFalse(s.provedStable(Duration.ofSeconds(5).toNanos() - 1), "just short of it");
        assertTrue(s.provedStable(Duration.ofSeconds(5).toNanos()), "exactly it");
        assertFalse(s.provedStable(0), "dropped at once");
    }

    @Test
    void waitAfter_isNeverNegativeNorLongerThanTheDelay() {
        assertEquals(0, AttemptSchedule.waitAfter(200 * MS, 2000 * MS, 1000 * MS), "past the gap");
        assertEquals(200 * MS, AttemptSchedule.waitAfter(200 * MS, 0, 1000 * MS), "well within the gap");
        assertEquals(100 * MS, AttemptSchedule.waitAfter(200 * MS, 900 * MS, 1000 * MS), "the rest of the gap");
    }
}
