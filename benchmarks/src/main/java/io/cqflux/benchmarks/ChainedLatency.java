package io.cqflux.benchmarks;

import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.WriteRequest;
import java.time.Duration;
import java.util.Arrays;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The harness {@link RpmaLatBench} and {@link FabricPairedBench} share, so that cqflux's figures
 * on both transports are taken the same way: one operation in flight, each subscribed from the
 * previous one's completion on the loop thread ({@code concatMap(..., 1)}), stamped at each
 * completion; and {@code writeAll} of small writes over a window of slots.
 */
final class ChainedLatency {

    private ChainedLatency() {
    }

    /**
     * Latency of a chain, in µs: the intervals between consecutive stamps.
     *
     * @param mean the mean interval
     * @param p50 the median interval (the upper one of an even count)
     * @param p99 the 99th percentile interval
     */
    record Stats(double mean, double p50, double p99) {
    }

    /**
     * Runs {@code n} operations one after the other.
     *
     * @param op {@code read}, {@code write} or {@code dwrite} (durable write)
     * @return n + 1 time stamps: the start, then each completion
     */
    static long[] chain(RdmaConnection c, String op, PeerRegion remote, Region local, int size, int n,
                        Duration timeout) {
        long[] stamps = new long[n + 1];
        stamps[0] = System.nanoTime();
        Flux.range(1, n)
                .concatMap(i -> one(c, op, remote, local, size).doOnSuccess(v -> stamps[i] = System.nanoTime()), 1)
                .then().block(timeout);
        return stamps;
    }

    private static Mono<Void> one(RdmaConnection c, String op, PeerRegion remote, Region local, int size) {
        return switch (op) {
            case "read" -> c.read(local, 0, remote, 0, size);
            case "write" -> c.write(remote, 0, local, 0, size);
            case "dwrite" -> c.durableWrite(remote, 0, local, 0, size);
            default -> throw new IllegalArgumentException("operation " + op + " is not one of read, write, dwrite");
        };
    }

    /**
     * @param stamps n + 1 stamps in nanoseconds, n ≥ 1, as {@link #chain} returns them
     * @return the intervals' mean, p50 and p99 in µs
     */
    static Stats stats(long[] stamps) {
        int n = stamps.length - 1;
        if (n < 1) {
            throw new IllegalArgumentException(stamps.length + " stamps make no interval");
        }
        double[] us = new double[n];
        double sum = 0;
        for (int i = 0; i < n; i++) {
            us[i] = (stamps[i + 1] - stamps[i]) / 1e3;
            sum += us[i];
        }
        Arrays.sort(us);
        return new Stats(sum / n, us[n / 2], us[(int) (n * 0.99)]);
    }

    /**
     * {@code writeAll}'s throughput with {@code window} writes in flight: {@code warm} writes
     * unmeasured, then {@code n} measured.
     *
     * @return writes per second
     * @throws IllegalStateException when the connection's credits would keep another number in
     *     flight ({@code writeAll} keeps half of them)
     */
    static double writeAllThroughput(RdmaConnection c, PeerRegion remote, Region local, int window, int size,
                                     int warm, int n, Duration timeout) {
        int inFlight = Math.max(1, c.sendCredits() / 2);
        if (inFlight != window) {
            throw new IllegalStateException("writeAll would keep " + inFlight + " writes in flight, not "
                    + window + " (send credits " + c.sendCredits() + ")");
        }
        writeAll(c, remote, local, window, size, warm, timeout);
        long t0 = System.nanoTime();
        writeAll(c, remote, local, window, size, n, timeout);
        return n / ((System.nanoTime() - t0) / 1e9);
    }

    /** {@code writeAll} of {@code n} writes of {@code size} bytes, request i at offset (i mod window) × size on both sides. */
    static void writeAll(RdmaConnection c, PeerRegion remote, Region local, int window, int size, int n,
                         Duration timeout) {
        c.writeAll(Flux.range(0, n).map(i -> {
            long off = (long) (i % window) * size;
            return new WriteRequest(remote, off, local, off, size, false);
        })).then().block(timeout);
    }
}
