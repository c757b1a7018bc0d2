package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A measurement, not a guarantee: ScaleBench's question on librpma over Soft-RoCE. One server and
 * one client {@link Cqflux}, one loop each, on the guest's rxe address; one connection runs
 * chained 8-byte writes and reads (each subscribed from the previous one's completion) while 0,
 * 10, 100, ... idle connections share its two loops. Prints, per idle count, the busy
 * connection's p50 and p99, their ratio to the figures at no idle connection, measured first and again at
 * the end with the idle ones closed (the guest runs under TCG: only ratios within this run mean
 * anything), the process's fds and resident memory.
 *
 * <p>The idle connections are added one at a time up to each count; the first connect that fails
 * ends the growth, and the failure is printed as the limit ("what stops it"), then the busy
 * connection is measured once more at the count reached. Counts come from
 * {@code CQFLUX_SCALE_COUNTS} (default {@code 0,10,100,1000}). Asserts only that every idle
 * connection still stands at the end and that each one holds at least one fd, so that the figures
 * are for the counts they name.
 *
 * <p>Tagged {@code rpma-scale-bench}, which the lane does not select by default (minutes under
 * TCG): {@code scripts/softroce/run-tests.sh -- --select-class=io.cqflux.reactor.RpmaScaleBenchTest
 * --include-tag rpma-scale-bench}. The summary goes to {@code rpma-scale-summary.txt} in
 * {@code CQFLUX_VM_OUT}.
 */
@Tag("rpma-scale-bench")
class RpmaScaleBenchTest {
    static final Duration T = Duration.ofSeconds(120);
    static final int SIZE = 8;
    static final int WARMUP = 3000;
    static final int SAMPLES = 2000;
    /** Bounds one figure's time under TCG: fewer samples when an operation is slow. */
    static final Duration BUDGET = Duration.ofSeconds(20);
    static final Duration SETTLE = Duration.ofSeconds(5);

    @Test
    void busyConnection_besideIdleOnes_latencyFdsAndMemoryPerCount() throws IOException {
        int[] counts = counts(System.getenv("CQFLUX_SCALE_COUNTS"));
        List<String> summary = new ArrayList<>();
        try (Arena arena = Arena.ofShared();
             Cqflux server = RpmaSoakTest.rpma().loops(1).build();
             Cqflux client = RpmaSoakTest.rpma().loops(1).build()) {
            Region exposed = server.register(arena.allocate(1 << 16, 4096), RegionAccess.WRITE_DST,
                    RegionAccess.READ_SRC);
            RdmaServer bound = server.bind(new InetSocketAddress(RpmaReactiveContractTest.address(),
                    ReactiveContract.freePort()), c -> c.onDispose(), exposed).block(T);
            Region local = client.register(arena.allocate(1 << 16, 4096), RegionAccess.WRITE_SRC,
                    RegionAccess.READ_DST);
            RdmaConnection busy = client.connect(bound.address()).block(T);
            PeerRegion remote = busy.remoteRegion(0);
            chain(busy, "write", remote, local, WARMUP);
            chain(busy, "read", remote, local, WARMUP);
            List<RdmaConnection> idle = new ArrayList<>();
            long baseFds = openFds();
            long baseRss = rssKib();
            double[] base = null;
            String stop = null;
            List<double[]> rows = new ArrayList<>();
            line(summary, String.format(Locale.ROOT, "FACT rpma scale: wait strategy %s, one loop per side,"
                    + " %d B chained, up to %d samples or %s per figure, cpus %d, fd limit %s", "BLOCKING (the default)",
                    SIZE, SAMPLES, BUDGET, Runtime.getRuntime().availableProcessors(), fdLimit()));
            for (int n : counts) {
                long t0 = System.nanoTime();
                while (idle.size() < n && stop == null) {
                    try {
                        idle.add(client.connect(bound.address()).block(T));
                    } catch (RuntimeException e) {
                        stop = "connect " + (idle.size() + 1) + " failed: " + e;
                    }
                }
                double connectSec = (System.nanoTime() - t0) / 1e9;
                if (n > 0) {
                    sleep(SETTLE); // the last connects' work on both loops (and in rxe) is over first
                }
                double[] w = measure(busy, "write", remote, local);
                double[] r = measure(busy, "read", remote, local);
                if (base == null) {
                    base = new double[] {w[0], w[1], r[0], r[1]};
                }
                long fds = openFds();
                long rss = rssKib();
                int k = idle.size();
                rows.add(new double[] {k, w[0], w[1], r[0], r[1]});
                line(summary, String.format(Locale.ROOT, "FACT rpma scale idle %5d: write p50 %8.1f us (x%.2f)"
                        + " p99 %8.1f us (x%.2f) n %d | read p50 %8.1f us (x%.2f) p99 %8.1f us (x%.2f) n %d | fds %d"
                        + " (%s/idle pair) rss %.1f MiB (%s KiB/idle pair) | connect %.1f s",
                        k, w[0], w[0] / base[0], w[1], w[1] / base[1], (int) w[2], r[0], r[0] / base[2], r[1],
                        r[1] / base[3], (int) r[2], fds, k == 0 ? "-" : String.format(Locale.ROOT, "%.2f",
                        (fds - baseFds) / (double) k), rss / 1024.0, k == 0 ? "-" : String.format(Locale.ROOT,
                        "%.1f", (rss - baseRss) / (double) k), connectSec));
                if (k > 0 && fds >= 0) {
                    assertTrue(fds - baseFds >= k, "fds grew by " + (fds - baseFds) + " for " + k
                            + " idle connections: the idle connections are not what they seem");
                }
                if (stop != null) {
                    line(summary, "FACT rpma scale limit at " + k + " idle connections: " + stop);
                    break;
                }
            }
            long standing = idle.stream().filter(c -> !c.isDisposed()).count();
            assertEquals(idle.size(), standing, "idle connections that ended while the busy one ran");
            assertFalse(busy.isDisposed(), "the busy connection ended");
            for (RdmaConnection c : idle) {
                c.close();
            }
            // The first figures at 0 still carry the JIT's work under TCG (C1 compiles for
            // minutes there): the busy connection alone once more, at the end, is the fairer base,
            // once the closes are over (every idle connection disposed, the server's side and
            // rxe's teardown given a few seconds) and after a short warm-up.
            Flux.fromIterable(idle).flatMap(RdmaConnection::onDispose).then().block(T);
            sleep(SETTLE);
            chain(busy, "write", remote, local, WARMUP / 3);
            chain(busy, "read", remote, local, WARMUP / 3);
            double[] w = measure(busy, "write", remote, local);
            double[] r = measure(busy, "read", remote, local);
            line(summary, String.format(Locale.ROOT, "FACT rpma scale idle 0 again (the idle ones closed): write p50"
                    + " %8.1f us p99 %8.1f us | read p50 %8.1f us p99 %8.1f us", w[0], w[1], r[0], r[1]));
            for (double[] row : rows) {
                line(summary, String.format(Locale.ROOT, "FACT rpma scale idle %5d against idle 0 again: write p50"
                        + " x%.2f p99 x%.2f | read p50 x%.2f p99 x%.2f", (int) row[0], row[1] / w[0], row[2] / w[1],
                        row[3] / r[0], row[4] / r[1]));
            }
            busy.close();
        } finally {
            String out = System.getenv("CQFLUX_VM_OUT");
            if (out != null) {
                Files.write(Path.of(out, "rpma-scale-summary.txt"), summary);
            }
        }
    }

    private static void line(List<String> summary, String s) {
        System.out.println(s);
        summary.add(s);
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the closes settled", e);
        }
    }

    static int[] counts(String env) {
        if (env == null || env.isBlank()) {
            return new int[] {0, 10, 100, 1000};
        }
        int[] c = Arrays.stream(env.split(",")).map(String::trim).mapToInt(Integer::parseInt).sorted().toArray();
        if (c[0] < 0) {
            throw new IllegalArgumentException("CQFLUX_SCALE_COUNTS " + env + ": counts must be >= 0");
        }
        return c;
    }

    /** {@return {p50 us, p99 us, samples} of chained operations within {@link #BUDGET}} */
    private static double[] measure(RdmaConnection c, String op, PeerRegion remote, Region local) {
        long pilot = System.nanoTime();
        chain(c, op, remote, local, 100);
        double perOp = (System.nanoTime() - pilot) / 1e9 / 100;
        int n = (int) Math.max(200, Math.min(SAMPLES, BUDGET.toSeconds() / perOp));
        long[] stamps = chain(c, op, remote, local, n);
        double[] us = new double[n];
        for (int i = 0; i < n; i++) {
            us[i] = (stamps[i + 1] - stamps[i]) / 1e3;
        }
        Arrays.sort(us);
        return new double[] {us[n / 2], us[(int) (n * 0.99)], n};
    }

    private static long[] chain(RdmaConnection c, String op, PeerRegion remote, Region local, int n) {
        long[] stamps = new long[n + 1];
        stamps[0] = System.nanoTime();
        Flux.range(1, n)
                .concatMap(i -> one(c, op, remote, local).doOnSuccess(v -> stamps[i] = System.nanoTime()), 1)
                .then().block(T);
        return stamps;
    }

    private static Mono<Void> one(RdmaConnection c, String op, PeerRegion remote, Region local) {
        return op.equals("read") ? c.read(local, 0, remote, 0, SIZE) : c.write(remote, 0, local, 0, SIZE);
    }

    /** {@return the open fds, or -1 when even listing them needs one more than the process may open} */
    private static long openFds() {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        } catch (IOException e) {
            return -1;
        }
    }

    private static String fdLimit() throws IOException {
        for (String l : Files.readAllLines(Path.of("/proc/self/limits"))) {
            if (l.startsWith("Max open files")) {
                return l.replaceAll("\\s+", " ").replace("Max open files ", "").trim();
            }
        }
        return "unknown";
    }

    /** {@return the resident KiB, or -1 when the file cannot be opened (no fd left)} */
    private static long rssKib() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (l.startsWith("VmRSS:")) {
                    return Long.parseLong(l.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return -1;
    }
}
