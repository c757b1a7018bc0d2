package io.cqflux.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The shared chain statistics: intervals between stamps, not the stamps themselves. */
class ChainedLatencyTest {

    @Test
    void stats_areOfTheIntervalsInMicroseconds() {
        // Intervals 3, 1, 2 µs (out of order): mean 2, p50 the middle one (2), p99 the largest (3).
        ChainedLatency.Stats st = ChainedLatency.stats(new long[] {5_000, 8_000, 9_000, 11_000});
        assertEquals(2.0, st.mean(), 1e-9);
        assertEquals(2.0, st.p50(), 1e-9);
        assertEquals(3.0, st.p99(), 1e-9);
    }

    @Test
    void stats_p50OfAnEvenCount_isTheUpperMiddle() {
        // Intervals 1, 2, 3, 4 µs: p50 is the upper of the two middle ones.
        ChainedLatency.Stats st = ChainedLatency.stats(new long[] {0, 1_000, 3_000, 6_000, 10_000});
        assertEquals(3.0, st.p50(), 1e-9);
        assertEquals(2.5, st.mean(), 1e-9);
    }

    @Test
    void stats_ofOneStamp_isRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ChainedLatency.stats(new long[] {1}));
        assertEquals("1 stamps make no interval", e.getMessage());
    }
}
