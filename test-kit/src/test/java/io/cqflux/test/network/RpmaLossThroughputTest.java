package io.cqflux.test.network;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A measurement, not a guarantee: what packet loss costs durable writes on librpma over
 * Soft-RoCE, beside fabric/tcp's {@code ./cqflux bench loss} ({@link LossBench}). For 0, 1, 5
 * and 20 % loss each way on an {@link RxeLinkRig}: durable writes of 512 bytes one at a time
 * (p50, p99, operations per second) and durable writes of 4 KiB with 16 in flight (p50, p99 of
 * each write, operations completed per second of the series; the writes still in flight at its end
 * are waited for and count in the percentiles only), each for {@link #SERIES}, with the library's default
 * operation timeout (30 s). Prints FACT lines and writes them to {@code rpma-loss-summary.txt} in
 * {@code CQFLUX_VM_OUT} (the lane copies it out). Asserts what shows the condition was applied
 * and the transparency the partition suite asserts at 5 %: netem dropped packets, and no write
 * failed at 5 % or less. Under QEMU/TCG: the figures are emulated time, only their ratios mean
 * something.
 *
 * <p>Tagged {@code rpma-netem-bench}, which the lane does not select by default (about two
 * minutes): {@code scripts/softroce/run-tests.sh --build -- --select-class=io.cqflux.test.network.RpmaLossThroughputTest
 * --include-tag rpma-netem-bench}.
 */
@Tag("rpma-netem-bench")
class RpmaLossThroughputTest {
    static final Duration SERIES = Duration.ofSeconds(10);
    static final int WINDOW = 16;
    static final int SLOTS = 2048;

    /**
     * @param n writes completed
     * @param inSeries writes completed within the series' time (the throughput's numerator)
     */
    record Result(int n, int inSeries, int failed, long[] sortedNanos, double seconds) {
        double opsPerSecond() {
            return inSeries / seconds;
        }

        String describe() {
            return String.format(Locale.ROOT, "n %6d failed %d p50 %9.2f ms p99 %9.2f ms max %9.2f ms %8.1f ops/s", n,
                    failed, pct(sortedNanos, 50) / 1e6, pct(sortedNanos, 99) / 1e6,
                    sortedNanos.length == 0 ? 0 : sortedNanos[sortedNanos.length - 1] / 1e6, opsPerSecond());
        }
    }

    @Test
    void durableWrites_underOneFiveAndTwentyPercentLoss_latencyAndThroughput() throws IOException {
        List<String> summary = new ArrayList<>();
        RxeLinkRig rig = RxeLinkRig.create();
        try (RxePair pair = new RxePair(rig, (long) SLOTS * 4096, b -> b, b -> b)) {
            Region local = pair.client.register(pair.arena.allocate((long) SLOTS * 4096, 64), RegionAccess.WRITE_SRC);
            RdmaConnection[] conn = {pair.connectPatiently()};
            for (int i = 0; i < 2000; i++) { // warm, no fault: the first writes load and compile the path (TCG)
                conn[0].durableWrite(conn[0].remoteRegion(0), (long) (i % SLOTS) * 512, local, 0, 512).block(RxePair.T);
            }
            for (int rate : new int[] {0, 1, 5, 20}) {
                rig.loss(rate);
                Result chained = chained(pair, conn, local);
                Result windowed = windowed(pair, conn, local);
                long drops = rig.drops();
                rig.heal();
                for (String[] line : new String[][] {{"512 B, one at a time", chained.describe()},
                        {"4 KiB, 16 in flight ", windowed.describe()}}) {
                    String s = String.format(Locale.ROOT, "FACT rpma loss %2d %% each way, durable write %s: %s",
                            rate, line[0], line[1]);
                    System.out.println(s);
                    summary.add(s);
                }
                String d = String.format(Locale.ROOT, "FACT rpma loss %2d %%: netem dropped %d packets", rate, drops);
                System.out.println(d);
                summary.add(d);
                if (rate > 0) {
                    assertTrue(drops > 0, rate + " %: netem dropped nothing, so it tested nothing");
                }
                if (rate <= 5) {
                    assertEquals(0, chained.failed() + windowed.failed(), "a durable write failed at " + rate
                            + " % loss with the default operation timeout");
                }
                assertTrue(chained.n() > 0 && windowed.n() > 0, rate + " %: no write completed");
            }
        } finally {
            String out = System.getenv("CQFLUX_VM_OUT");
            if (out != null) {
                Files.write(Path.of(out, "rpma-loss-summary.txt"), summary);
            }
        }
    }

    /** Replaces a connection that a fault ended, so the series goes on (its failures are counted). */
    private static RdmaConnection live(RxePair pair, RdmaConnection[] conn) {
        if (conn[0].isDisposed()) {
            System.out.println("FACT rpma loss: the connection ended; reconnecting");
            conn[0] = pair.connectPatiently();
        }
        return conn[0];
    }

    private static Result chained(RxePair pair, RdmaConnection[] conn, Region local) {
        long[] took = new long[1 << 16];
        int n = 0;
        int failed = 0;
        long start = System.nanoTime();
        long end = start + SERIES.toNanos();
        while (System.nanoTime() < end && n < took.length) {
            RdmaConnection c = live(pair, conn);
            PeerRegion remote = c.remoteRegion(0);
            long off = (long) (n % SLOTS) * 512;
            long t0 = System.nanoTime();
            try {
                c.durableWrite(remote, off, local, off, 512).block(Duration.ofSeconds(60));
                took[n++] = System.nanoTime() - t0;
            } catch (RuntimeException e) {
                failed++;
                System.out.println("FACT rpma loss: a write failed: " + e);
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        long[] s = Arrays.copyOf(took, n);
        Arrays.sort(s);
        return new Result(n, n, failed, s, seconds);
    }

    private static Result windowed(RxePair pair, RdmaConnection[] conn, Region local) {
        ConcurrentLinkedQueue<Long> took = new ConcurrentLinkedQueue<>();
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger inSeries = new AtomicInteger();
        Semaphore window = new Semaphore(WINDOW);
        int i = 0;
        long start = System.nanoTime();
        long end = start + SERIES.toNanos();
        try {
            while (System.nanoTime() < end) {
                if (!window.tryAcquire(10, TimeUnit.MILLISECONDS)) {
                    continue;
                }
                RdmaConnection c = live(pair, conn);
                long off = (long) (i++ % SLOTS) * 4096;
                long t0 = System.nanoTime();
                c.durableWrite(c.remoteRegion(0), off, local, off, 4096).doFinally(sig -> window.release())
                        .subscribe(null, e -> failed.incrementAndGet(), () -> {
                            long now = System.nanoTime();
                            took.add(now - t0);
                            if (now <= end) {
                                inSeries.incrementAndGet();
                            }
                        });
            }
            // The writes in flight at the end count, and the next series starts with none.
            if (!window.tryAcquire(WINDOW, 60, TimeUnit.SECONDS)) {
                throw new AssertionError("writes still in flight 60 s after the series");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        long[] s = took.stream().mapToLong(Long::longValue).sorted().toArray();
        return new Result(s.length, inSeries.get(), failed.get(), s, SERIES.toNanos() / 1e9);
    }

    private static double pct(long[] sorted, int p) {
        if (sorted.length == 0) {
            return 0;
        }
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }
}
