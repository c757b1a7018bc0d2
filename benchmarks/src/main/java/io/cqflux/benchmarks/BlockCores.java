package io.cqflux.benchmarks;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import reactor.core.publisher.Flux;

/**
 * Why {@code write().block()} costs more than a chained {@code write()} under
 * {@code BUSY_POLL} on a 2-core machine (goal: block ≤ 1.5 × chained, measured ~1.8).
 *
 * <p>The hypothesis: with both instances busy-polling, the client's loop and the server's loop
 * each keep a core busy, so the caller blocked in {@code block()} -- parked, to be unparked by the
 * client loop when the completion arrives -- has no core of its own: every wake-up waits on a run
 * queue until the scheduler preempts a spinning loop. A chained write never leaves the client
 * loop, so it needs no third core.
 *
 * <p>What this program measures, per configuration (client strategy / server strategy), in one
 * JVM, chained and blocked back to back (8-byte writes over fabric/tcp on loopback, the shapes of
 * {@code ReactorBenchmarks.writeLatency} and {@code writeBlockLatency}):
 * <ul>
 *   <li>µs per operation of each, and their ratio block ÷ chained;</li>
 *   <li>per operation, for the caller thread and both loop threads, from the kernel's per-thread
 *       scheduler statistics ({@code /proc/<pid>/task/<tid>/schedstat}: time on a CPU, time
 *       waiting on a run queue; {@code status}: involuntary context switches): if the hypothesis
 *       holds, under BUSY_POLL / BUSY_POLL the caller's run-queue wait per operation is a large
 *       part of the difference, and it falls away when the server instance is BLOCKING (its
 *       loop sleeps in epoll, which frees a core) although the client loop still spins.</li>
 * </ul>
 * Timings on the shared machine are noisy; the run-queue figures say where the time went. The
 * load average is printed with every configuration. {@code benchmarks/block-cores.sh} runs it.
 *
 * <p>Usage: {@code BlockCores [-n operations] [-w warm-up] [CLIENT/SERVER ...]}, the
 * configurations as wait strategy pairs (default {@code BUSY_POLL/BUSY_POLL BUSY_POLL/BLOCKING
 * BLOCKING/BLOCKING}). Output lines {@code block.<client>.<server>.<what> <value> <unit>}.
 */
public final class BlockCores {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final int SIZE = 8;

    private BlockCores() {
    }

    /**
     * @param args see the class comment
     * @throws IOException when /proc cannot be read
     */
    public static void main(String[] args) throws IOException {
        int n = 20_000;
        int warm = 20_000;
        List<String> configs = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "-n" -> n = Integer.parseInt(args[++i]);
                case "-w" -> warm = Integer.parseInt(args[++i]);
                default -> {
                    if (!args[i].matches("[A-Z_]+/[A-Z_]+")) {
                        throw new IllegalArgumentException("configuration " + args[i]
                                + " is not CLIENT/SERVER (e.g. BUSY_POLL/BLOCKING)");
                    }
                    configs.add(args[i]);
                }
            }
        }
        if (n < 1000) {
            throw new IllegalArgumentException("-n " + n + " is below 1000");
        }
        if (configs.isEmpty()) {
            configs = List.of("BUSY_POLL/BUSY_POLL", "BUSY_POLL/BLOCKING", "BLOCKING/BLOCKING");
        }
        System.out.printf(Locale.ROOT, "block.info cpus=%d operations=%d warmup=%d java=%s%n",
                Runtime.getRuntime().availableProcessors(), n, warm, Runtime.version());
        for (String config : configs) {
            String[] cs = config.split("/");
            run(cs[0], cs[1], n, warm);
        }
    }

    private static void run(String clientStrategy, String serverStrategy, int n, int warm) throws IOException {
        InetAddress lo = InetAddress.getLoopbackAddress();
        ConnectionConfig config = ConnectionConfig.DEFAULT.withSendQueueSize(64);
        String prefix = "block." + clientStrategy + "." + serverStrategy + ".";
        String loadBefore = loadAverage();
        try (Arena arena = Arena.ofShared();
             Cqflux server = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(lo)
                     .threadNamePrefix("bcsrv").waitStrategy(Strategies.of(serverStrategy))
                     .connectionConfig(config).build();
             Cqflux client = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(lo)
                     .threadNamePrefix("bccli").waitStrategy(Strategies.of(clientStrategy))
                     .connectionConfig(config).build()) {
            Region exposed = server.register(arena.allocate(FabricPair.REGION_BYTES, 4096),
                    RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
            RdmaServer listening = server.bind(new InetSocketAddress(lo, 0), c -> c.onDispose(), exposed)
                    .block(TIMEOUT);
            RdmaConnection c = client.connect(listening.address()).block(TIMEOUT);
            PeerRegion remote = c.remoteRegion(0);
            Region local = client.register(arena.allocate(FabricPair.REGION_BYTES, 4096),
                    RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
            long callerTid = selfTid();
            // Warm-up of both shapes before either is measured (the JIT compiles both paths).
            chain(c, remote, local, warm);
            block(c, remote, local, warm);

            Map<String, long[]> s0 = threads(callerTid);
            long t0 = System.nanoTime();
            chain(c, remote, local, n);
            long t1 = System.nanoTime();
            Map<String, long[]> s1 = threads(callerTid);
            block(c, remote, local, n);
            long t2 = System.nanoTime();
            Map<String, long[]> s2 = threads(callerTid);

            double chained = (t1 - t0) / 1e3 / n;
            double blocked = (t2 - t1) / 1e3 / n;
            System.out.printf(Locale.ROOT, "%schain.lat.mean %.2f us%n", prefix, chained);
            System.out.printf(Locale.ROOT, "%sblock.lat.mean %.2f us%n", prefix, blocked);
            System.out.printf(Locale.ROOT, "%sblock_over_chain %.2f x%n", prefix, blocked / chained);
            print(prefix + "chain.", s0, s1, n);
            print(prefix + "block.", s1, s2, n);
            System.out.printf(Locale.ROOT, "%sload before=%s after=%s%n", prefix, loadBefore, loadAverage());
            System.out.flush();
            c.close();
            listening.close();
        }
    }

    private static void chain(RdmaConnection c, PeerRegion remote, Region local, int n) {
        Flux.range(0, n).concatMap(i -> c.write(remote, 0, local, 0, SIZE), 1).then().block(TIMEOUT);
    }

    private static void block(RdmaConnection c, PeerRegion remote, Region local, int n) {
        for (int i = 0; i < n; i++) {
            c.write(remote, 0, local, 0, SIZE).block(TIMEOUT);
        }
    }

    /** Per thread role (caller, client loop, server loop): on-CPU ns, run-queue wait ns, involuntary switches. */
    private static void print(String prefix, Map<String, long[]> a, Map<String, long[]> b, int n) {
        for (Map.Entry<String, long[]> e : b.entrySet()) {
            long[] x = a.get(e.getKey());
            long[] y = e.getValue();
            if (x == null) {
                continue;
            }
            String p = prefix + e.getKey() + ".";
            System.out.printf(Locale.ROOT, "%soncpu %.2f us/op%n", p, (y[0] - x[0]) / 1e3 / n);
            System.out.printf(Locale.ROOT, "%srunqueue %.2f us/op%n", p, (y[1] - x[1]) / 1e3 / n);
            System.out.printf(Locale.ROOT, "%snvcsw %.3f per_op%n", p, (double) (y[2] - x[2]) / n);
        }
    }

    /** The caller (this thread) and the two loops' threads, by their kernel names. */
    private static Map<String, long[]> threads(long callerTid) throws IOException {
        Map<String, long[]> m = new LinkedHashMap<>();
        m.put("caller", stats(callerTid));
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                String comm;
                try {
                    comm = Files.readString(t.resolve("comm")).trim();
                } catch (IOException e) {
                    continue; // the thread ended meanwhile
                }
                if (comm.startsWith("bccli-loop")) {
                    m.put("clientloop", stats(Long.parseLong(t.getFileName().toString())));
                } else if (comm.startsWith("bcsrv-loop")) {
                    m.put("serverloop", stats(Long.parseLong(t.getFileName().toString())));
                }
            }
        }
        return m;
    }

    /** {@return on-CPU ns, run-queue ns (schedstat), nonvoluntary_ctxt_switches of one thread} */
    private static long[] stats(long tid) throws IOException {
        Path t = Path.of("/proc/self/task/" + tid);
        String[] sched = Files.readString(t.resolve("schedstat")).trim().split("\\s+");
        long nv = 0;
        for (String l : Files.readAllLines(t.resolve("status"))) {
            if (l.startsWith("nonvoluntary_ctxt_switches:")) {
                nv = Long.parseLong(l.substring(l.indexOf(':') + 1).trim());
            }
        }
        return new long[] {Long.parseLong(sched[0]), Long.parseLong(sched[1]), nv};
    }

    /** The kernel thread id of the calling thread ({@code /proc/thread-self} names it). */
    private static long selfTid() throws IOException {
        return Long.parseLong(Path.of("/proc/thread-self").toRealPath().getFileName().toString());
    }

    private static String loadAverage() {
        String l = LoadAverage.read(3, "/");
        return l == null ? "?" : l;
    }
}
