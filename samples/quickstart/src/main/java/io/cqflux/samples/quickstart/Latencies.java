package io.cqflux.samples.quickstart;

import java.util.Arrays;

/** Latency samples in nanoseconds: one slot per operation, sorted once for the percentiles. */
final class Latencies {
    private final long[] samples;

    Latencies(int n) {
        samples = new long[n];
    }

    void record(int i, long nanos) {
        samples[i] = nanos;
    }

    /** {@return a line of percentiles in microseconds} */
    String summary() {
        long[] s = samples.clone();
        Arrays.sort(s);
        return String.format("p50 %s  p90 %s  p99 %s  p99.9 %s  max %s (us)",
                us(pct(s, 50)), us(pct(s, 90)), us(pct(s, 99)), us(pct(s, 99.9)), us(s.length == 0 ? 0 : s[s.length - 1]));
    }

    static long pct(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        int idx = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, idx))];
    }

    private static String us(long nanos) {
        return String.format("%.1f", nanos / 1000.0);
    }
}
