package io.cqflux.benchmarks;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.TransportOptions;
import io.cqflux.epoll.WaitStrategy;
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
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * How one busy connection's latency scales with the idle connections that share its loops
 * ({@code ./cqflux bench scale}). Public API only: one server and one client {@link Cqflux}, one
 * loop each, fabric/tcp on 127.0.0.1. One connection runs chained operations (each subscribed
 * from the previous one's completion, {@link ChainedLatency#chain}); N others are connected and
 * left idle on the same two loops. For each wait strategy and each N it prints the busy
 * connection's p50 and p99 per operation, the process's open fds and its resident memory, and
 * what one idle connection adds: fds per side and resident KiB per pair (both ends live in this
 * process), against the figures with the busy connection alone.
 *
 * <p>The idle work per loop turn is what this shows: a loop whose turn visits every registered
 * source makes each operation pay for every idle neighbour; one whose turn visits only what is
 * ready keeps the busy connection's latency flat in N.
 *
 * <p>Each measurement runs a pilot of {@link #PILOT} operations to estimate the time per
 * operation, then as many as fit {@code -t} seconds, within [{@link #MIN_OPS}, {@code -i}], so
 * that a slow configuration does not take minutes.
 *
 * <p>With {@code -C program} (the compiled {@code benchmarks/c/fabric_scale_bench.c}; the
 * {@code ./cqflux bench scale} script passes it) each strategy's rows are followed by the same
 * figures from C: libfabric alone, one EQ and one CQ per side shared by the busy endpoint and the
 * N idle ones, at the same N and operations, and a table of cqflux ÷ C per row. BUSY_POLL is set
 * beside C's busy-polling, BLOCKING and ADAPTIVE beside C sleeping in {@code epoll_wait} after
 * {@code fi_trywait}. C runs after the strategy's cqflux instances are closed, so that no loop of
 * this process spins while C is measured: the two alternate per strategy, in one run.
 * {@code -I} sets C's iterations per figure ({@code -I / 10} of warm-up).
 *
 * <p>With {@code -R N} it runs the connect-rate mode instead ({@link ConnectRateBench}): rounds of
 * N connects ({@code -p} in flight) and their closes, with the first {@code -s} strategy, the
 * first round the JVM's warm-up.
 *
 * <p>With {@code -c N} it runs the storm mode instead ({@link StormBench}): the busy connection's
 * latency while N connects arrive at its server ({@code -p} in flight), while they close, and
 * while N refused clients flood it; with the first {@code -s} strategy and the first {@code -o}
 * operation, {@code -t} seconds for the busy connection alone and {@code -q} sequential connects
 * for the set-up time.
 *
 * <p>With {@code -P k} the idle connections come from child processes ({@link IdleClients}, at
 * most {@code k} connections each, one {@code BLOCKING} loop each), so that only the server's
 * side of them counts against this process's open-file limit (with both ends in one process, each
 * connection counts twice). The busy pair stays in this process. Each row then gives what one idle
 * connection costs the server: its fds (without the two pipes this process holds per child),
 * resident KiB, heap KiB (heap in use after a full collection, against the busy pair alone) and
 * native KiB (bytes from {@code malloc}: {@link MallocStats}).
 *
 * <p>Completion queues ({@code fabric.completionQueueGroup}, TransportOptions): by default, the
 * transport's, each loop's first 16 connections (the busy one among them) have their own and the
 * rest share in groups of 32; with {@code -G k} every connection of a loop, the busy one too, shares
 * its queue, and each read of it, with up to {@code k - 1} others; {@code -G 1} gives each
 * connection a queue of its own. Both instances and the {@code -P} children take the setting.
 *
 * <p>With {@code -K ms} every side (the {@code -P} children too) keeps connections alive every
 * {@code ms} milliseconds with the default misses, or not at all with {@code -K 0}
 * ({@code Cqflux.Builder#keepAlive}); without it, the default interval.
 *
 * <p>With {@code -B true} every instance of this process (the storm mode's too) runs its set-up
 * and close threads at background priority ({@code Cqflux.Builder#backgroundPriority}).
 *
 * <p>With {@code -N true} the storm mode's connecting client (every thread of its instance, and
 * the thread that subscribes its connects) runs at the lowest CPU priority, nice +19: on this one
 * host it stands for clients on other hosts, which take none of the server's cores, as far as a
 * shared host can show that (what it leaves the server is what two cores leave).
 *
 * <p>Usage: {@code ScaleBench [-n 0,10,100,1000] [-s BLOCKING,ADAPTIVE,BUSY_POLL]
 * [-o write.8,read.8,write.4096,read.4096] [-i max-ops] [-w warm-up] [-t seconds] [-G group]
 * [-K keep-alive-ms] [-B true|false] [-N true|false] [-k true|false]
 * [-P per-child] [-C fabric_scale_bench|none [-I c-iterations]] [-c connects [-p in-flight] [-q sequential]]}.
 */
public final class ScaleBench {

    private static final Duration TIMEOUT = Duration.ofSeconds(300);
    private static final long REGION = 1 << 16;
    private static final int PILOT = 200;
    private static final int MIN_OPS = 500;
    /** {@code -G}: connections per completion queue, or null for the transport's default (16 own per loop, then 32). */
    private static String group;
    /** {@code -K}: the keep-alive interval in ms on every side (0: off), or null for the default. */
    static String keepAliveMillis;
    /** {@code -B}: every instance's set-up and close threads at background priority. */
    static boolean backgroundPriority;
    /** {@code -N}: the storm's connecting client at the lowest CPU priority (StormBench). */
    static boolean nicedStormClient;
    /**
     * {@code -k}: every bench server's keys scoped to their connection
     * ({@code AcceptOptions.withKeysScopedToConnection}), or null for the default (scoped on
     * fabric/tcp of libfabric 1.17).
     */
    static Boolean scopedKeys;

    private ScaleBench() {
    }

    /**
     * @param args see the class comment
     * @throws Exception when a run fails
     */
    public static void main(String[] args) throws Exception {
        int[] counts = {0, 10, 100, 1000};
        List<String> strategies = List.of("BLOCKING", "ADAPTIVE", "BUSY_POLL");
        List<String> ops = List.of("write.8", "read.8", "write.4096", "read.4096");
        int maxOps = 20_000;
        int warmup = 2_000;
        double seconds = 2;
        int storm = 0;
        int rate = 0;
        int parallel = 64;
        int sequential = 200;
        Path cProgram = null;
        int cIterations = 5_000;
        int perChild = 0;
        group = null; // set by -G for this run only
        keepAliveMillis = null; // set by -K for this run only
        backgroundPriority = false; // set by -B for this run only
        nicedStormClient = false; // set by -N for this run only
        scopedKeys = null; // set by -k for this run only
        for (int i = 0; i < args.length; i++) {
            if (i + 1 == args.length) {
                throw new IllegalArgumentException(args[i] + " wants a value (-n, -s, -o, -i, -w, -t, -G, -K, -B, -N, -k, -P, -C, -I,"
                        + " -c, -R, -p, -q)");
            }
            switch (args[i]) {
                case "-n" -> counts = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).sorted().toArray();
                case "-s" -> strategies = List.of(args[++i].split(","));
                case "-o" -> ops = List.of(args[++i].split(","));
                case "-i" -> maxOps = Integer.parseInt(args[++i]);
                case "-w" -> warmup = Integer.parseInt(args[++i]);
                case "-t" -> seconds = Double.parseDouble(args[++i]);
                case "-c" -> storm = Integer.parseInt(args[++i]);
                case "-R" -> rate = Integer.parseInt(args[++i]);
                case "-p" -> parallel = Integer.parseInt(args[++i]);
                case "-q" -> sequential = Integer.parseInt(args[++i]);
                case "-C" -> cProgram = args[++i].equals("none") ? null : Path.of(args[i]);
                case "-I" -> cIterations = Integer.parseInt(args[++i]);
                case "-P" -> perChild = Integer.parseInt(args[++i]);
                case "-G" -> group = args[++i];
                case "-K" -> keepAliveMillis = args[++i];
                case "-B" -> backgroundPriority = parseFlag("-B", args[++i]);
                case "-N" -> nicedStormClient = parseFlag("-N", args[++i]);
                case "-k" -> scopedKeys = parseFlag("-k", args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + " (-n, -s, -o, -i, -w, -t, -G, -K, -B, -N, -P, -C, -I, -c, -R, -p, -q)");
            }
        }
        if (counts.length == 0 || counts[0] < 0) {
            throw new IllegalArgumentException("-n wants idle-connection counts >= 0, got " + Arrays.toString(counts));
        }
        if (maxOps < MIN_OPS) {
            throw new IllegalArgumentException("-i " + maxOps + " is below " + MIN_OPS);
        }
        for (String op : ops) {
            parseOp(op); // a bad -o fails before any output
        }
        for (String s : strategies) {
            if (backgroundPriority && Strategies.of(s) instanceof io.cqflux.epoll.WaitStrategy.BusyPoll) {
                throw new IllegalArgumentException("-B true beside -s " + s + ": the builder refuses background"
                        + " priority beside loops that never sleep; leave " + s + " out of -s");
            }
        }
        if (rate > 0 && storm > 0) {
            throw new IllegalArgumentException("-R " + rate + " and -c " + storm + " are two modes: one at a time");
        }
        if (storm < 0 || rate < 0 || parallel < 1 || sequential < 1) {
            throw new IllegalArgumentException("-c " + storm + " and -R " + rate + " must be >= 0, -p " + parallel
                    + " and -q " + sequential + " >= 1");
        }
        if (cProgram != null && !Files.isExecutable(cProgram)) {
            throw new IllegalArgumentException("-C " + cProgram + ": want the compiled fabric_scale_bench (or none)");
        }
        if (group != null && !group.matches("[1-9][0-9]{0,4}")) {
            // The transport checks the bound (fabric.completionQueueGroup); this only keeps a bad
            // -G from failing after the header is out.
            throw new IllegalArgumentException("-G " + group + " wants connections per completion queue, 1 or more");
        }
        if (keepAliveMillis != null && !keepAliveMillis.equals("default") && !keepAliveMillis.matches("[0-9]{1,11}")) {
            // The builder checks the bound; this keeps a bad -K from failing after the header is out.
            throw new IllegalArgumentException("-K " + keepAliveMillis + " wants milliseconds >= 0 (0: off) or default");
        }
        if (perChild < 0) {
            throw new IllegalArgumentException("-P " + perChild + " must be >= 0 (0: the idle clients in this process)");
        }
        if (cIterations < C_MIN_ITERATIONS) {
            throw new IllegalArgumentException("-I " + cIterations + " is below " + C_MIN_ITERATIONS);
        }
        if (rate > 0) {
            System.out.printf(Locale.ROOT, "# %s java=%s cpus=%d load=%s fd-limit=%s connect rate: -R %d -p %d -s %s"
                    + " cq-group=%s keep-alive=%s background-priority=%b keys-scoped=%s%n", Instant.now(),
                    Runtime.version(), Runtime.getRuntime().availableProcessors(), LoadAverage.read(3, " "), fdLimit(),
                    rate, parallel, strategies.getFirst(), group == null ? "default" : group,
                    keepAliveMillis == null ? "default" : keepAliveMillis + " ms", backgroundPriority,
                    scopedKeys == null ? "default" : scopedKeys);
            ConnectRateBench.run(Strategies.of(strategies.getFirst()), rate, parallel);
            return;
        }
        if (storm > 0) {
            Object[] o = parseOp(ops.getFirst());
            System.out.printf(Locale.ROOT, "# %s java=%s cpus=%d load=%s fd-limit=%s storm: -c %d -p %d -s %s -o %s -t %s"
                    + " keep-alive=%s background-priority=%b niced-storm-client=%b keys-scoped=%s%n", Instant.now(),
                    Runtime.version(), Runtime.getRuntime().availableProcessors(), LoadAverage.read(3, " "), fdLimit(),
                    storm, parallel, strategies.getFirst(), ops.getFirst(), seconds,
                    keepAliveMillis == null ? "default" : keepAliveMillis + " ms", backgroundPriority, nicedStormClient,
                    scopedKeys == null ? "default" : scopedKeys);
            StormBench.run(Strategies.of(strategies.getFirst()), strategies.getFirst(), (String) o[0], (Integer) o[1],
                    storm, parallel, seconds, sequential);
            return;
        }
        System.out.printf(Locale.ROOT, "# %s java=%s cpus=%d load=%s fd-limit=%s cq-group=%s keep-alive=%s"
                + " background-priority=%b keys-scoped=%s%n", Instant.now(), Runtime.version(),
                Runtime.getRuntime().availableProcessors(), LoadAverage.read(3, " "), fdLimit(),
                group == null ? "default" : group, keepAliveMillis == null ? "default" : keepAliveMillis + " ms",
                backgroundPriority, scopedKeys == null ? "default" : scopedKeys);
        if (perChild > 0) {
            System.out.printf(Locale.ROOT, "# idle clients in child processes, at most %d connections each%n", perChild);
            System.out.printf(Locale.ROOT, "%-10s %-10s %6s %10s %10s %9s %7s %9s %9s %12s %12s %12s%n",
                    "strategy", "op", "idle", "p50_us", "p99_us", "ops", "fds", "rss_mib", "srv_fds/c", "srv_rss_kib/c",
                    "srv_heap_kib/c", "srv_malloc_kib/c");
        } else {
            System.out.printf(Locale.ROOT, "%-10s %-10s %6s %10s %10s %9s %7s %9s %9s %12s%n",
                    "strategy", "op", "idle", "p50_us", "p99_us", "ops", "fds", "rss_mib", "fds/side", "rss_kib/pair");
        }
        for (String s : strategies) {
            List<Row> rows = perChild > 0
                    ? runSplit(s, Strategies.of(s), counts, ops, maxOps, warmup, seconds, perChild)
                    : run(s, Strategies.of(s), counts, ops, maxOps, warmup, seconds);
            if (cProgram != null) {
                besideC(cProgram, s, rows, counts, ops, cIterations);
            }
        }
    }

    private static final int C_MIN_ITERATIONS = 100;

    /** One printed cqflux row: the busy connection's figures at {@code idle} idle connections. */
    private record Row(String op, int idle, double p50, double p99) {
    }

    /** {@return C's wait mode set beside a strategy: busy-polling beside BUSY_POLL, epoll otherwise} */
    static String cMode(String strategy) {
        return strategy.equalsIgnoreCase("BUSY_POLL") ? "busy" : "epoll";
    }

    /**
     * Runs fabric_scale_bench at the strategy's counts and operations and prints, per cqflux row,
     * C's p50 and p99 and cqflux ÷ C, then C's fds and resident memory per idle count.
     */
    private static void besideC(Path program, String strategy, List<Row> rows, int[] counts, List<String> ops,
                                int iterations) throws IOException, InterruptedException {
        String mode = cMode(strategy);
        List<String> command = List.of(program.toString(), "-n",
                String.join(",", Arrays.stream(counts).mapToObj(Integer::toString).toList()),
                "-o", String.join(",", ops), "-m", mode, "-i", Integer.toString(iterations),
                "-w", Integer.toString(iterations / 10));
        Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        List<String> lines;
        try (var out = p.inputReader()) {
            lines = out.lines().toList();
        }
        int status = p.waitFor();
        if (status != 0) {
            throw new IOException(String.join(" ", command) + " exited with " + status);
        }
        Map<String, CBaselines.Figure> c = CBaselines.parse(lines);
        System.out.printf(Locale.ROOT, "# beside C (%s, one EQ and CQ per side, %d iterations), load=%s%n",
                mode, iterations, LoadAverage.read(3, " "));
        System.out.printf(Locale.ROOT, "%-10s %-10s %6s %10s %10s %8s %10s %10s %8s%n", "strategy", "op", "idle",
                "p50_us", "c_p50_us", "x_p50", "p99_us", "c_p99_us", "x_p99");
        for (Row r : rows) {
            String key = "fabric.scale." + r.idle() + "." + r.op() + "." + mode;
            double c50 = figure(c, key + ".p50");
            double c99 = figure(c, key + ".p99");
            System.out.printf(Locale.ROOT, "%-10s %-10s %6d %10.1f %10.1f %8.2f %10.1f %10.1f %8.2f%n", strategy,
                    r.op(), r.idle(), r.p50(), c50, r.p50() / c50, r.p99(), c99, r.p99() / c99);
        }
        for (int n : counts) {
            System.out.printf(Locale.ROOT, "# C at %d idle: %.0f fds, %.1f MiB resident%n", n,
                    figure(c, "fabric.scale." + n + ".fds"), figure(c, "fabric.scale." + n + ".rss") / 1024);
        }
    }

    private static double figure(Map<String, CBaselines.Figure> c, String name) {
        CBaselines.Figure f = c.get(name);
        if (f == null) {
            throw new IllegalStateException("fabric_scale_bench printed no " + name);
        }
        return f.value();
    }

    private static List<Row> run(String name, WaitStrategy strategy, int[] counts, List<String> ops, int maxOps,
                            int warmup, double seconds) throws IOException {
        List<Row> rows = new ArrayList<>();
        try (Arena arena = Arena.ofShared();
             Cqflux server = builder(strategy).build();
             Cqflux client = builder(strategy).build()) {
            BusyPair pair = BusyPair.open(arena, server, client);
            RdmaServer listening = pair.listening();
            Region local = pair.local();
            RdmaConnection busy = pair.busy();
            PeerRegion remote = pair.remote();
            List<RdmaConnection> idle = new ArrayList<>();
            boolean warm = false;
            // What one idle connection costs: its fds on each side (both ends are in this process),
            // and the resident memory of the pair, against the figures with the busy one alone.
            long baseFds = openFds();
            double baseRss = rssMib();
            for (int n : counts) {
                while (idle.size() < n) {
                    idle.add(client.connect(listening.address()).block(TIMEOUT));
                }
                for (String op : ops) {
                    Measured m = measure(busy, remote, local, op, warm ? 0 : warmup, maxOps, seconds);
                    long fds = openFds();
                    double rss = rssMib();
                    System.out.printf(Locale.ROOT, "%-10s %-10s %6d %10.1f %10.1f %9d %7d %9.1f %9s %12s%n",
                            name, op, n, m.stats().p50(), m.stats().p99(), m.count(), fds, rss,
                            n == 0 ? "-" : String.format(Locale.ROOT, "%.2f", (fds - baseFds) / 2.0 / n),
                            n == 0 ? "-" : String.format(Locale.ROOT, "%.1f", (rss - baseRss) * 1024 / n));
                    rows.add(new Row(op, n, m.stats().p50(), m.stats().p99()));
                }
                warm = true;
            }
            for (RdmaConnection c : idle) {
                c.close();
            }
            busy.close();
        }
        return rows;
    }

    /**
     * The measured pair: a server listening on 127.0.0.1 with one exposed region, the client's
     * local region, its busy connection and that connection's view of the exposed region.
     */
    private record BusyPair(RdmaServer listening, Region local, RdmaConnection busy, PeerRegion remote) {
        static BusyPair open(Arena arena, Cqflux server, Cqflux client) {
            Region exposed = server.register(arena.allocate(REGION, 4096),
                    RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
            RdmaServer listening = server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                    exposing(exposed), c -> c.onDispose()).block(TIMEOUT);
            Region local = client.register(arena.allocate(REGION, 4096), RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
            RdmaConnection busy = client.connect(listening.address()).block(TIMEOUT);
            return new BusyPair(listening, local, busy, busy.remoteRegion(0));
        }
    }

    /** The busy connection's figures for one operation, and how many operations they cover. */
    private record Measured(ChainedLatency.Stats stats, int count) {
    }

    /**
     * Warms up ({@code warmup} operations, 0 for none), runs a pilot to estimate the time per
     * operation, then as many chained operations as fit {@code seconds}, within [{@link #MIN_OPS},
     * {@code maxOps}].
     */
    private static Measured measure(RdmaConnection busy, PeerRegion remote, Region local, String op, int warmup,
                                    int maxOps, double seconds) {
        Object[] o = parseOp(op);
        String kind = (String) o[0];
        int size = (Integer) o[1];
        if (warmup > 0) {
            ChainedLatency.chain(busy, kind, remote, local, size, warmup, TIMEOUT);
        }
        long t0 = System.nanoTime();
        ChainedLatency.chain(busy, kind, remote, local, size, PILOT, TIMEOUT);
        double perOp = (System.nanoTime() - t0) / 1e9 / PILOT;
        int count = (int) Math.max(MIN_OPS, Math.min(maxOps, seconds / perOp));
        return new Measured(ChainedLatency.stats(ChainedLatency.chain(busy, kind, remote, local, size, count, TIMEOUT)),
                count);
    }

    /**
     * {@code -P}: the server and the busy pair in this process, the idle connections from child
     * processes ({@link IdleClients}) of at most {@code perChild} connections each, started as N
     * grows and ended (standard input closed, exit awaited) when the strategy's rows are done.
     */
    private static List<Row> runSplit(String name, WaitStrategy strategy, int[] counts, List<String> ops, int maxOps,
                                      int warmup, double seconds, int perChild)
            throws IOException, InterruptedException {
        List<Row> rows = new ArrayList<>();
        List<Process> children = new ArrayList<>();
        try (Arena arena = Arena.ofShared();
             Cqflux server = builder(strategy).build();
             Cqflux client = builder(strategy).build()) {
            BusyPair pair = BusyPair.open(arena, server, client);
            RdmaServer listening = pair.listening();
            Region local = pair.local();
            RdmaConnection busy = pair.busy();
            PeerRegion remote = pair.remote();
            boolean warm = false;
            long baseFds = openFds();
            double baseRss = rssMib();
            long baseHeap = heapAfterGc();
            long baseMalloc = MallocStats.allocatedBytes();
            int connected = 0;
            for (int n : counts) {
                while (connected < n) {
                    int k = Math.min(perChild, n - connected);
                    children.add(idleClients(listening.address(), k));
                    connected += k;
                }
                long heap = heapAfterGc();
                long malloc = MallocStats.allocatedBytes();
                for (String op : ops) {
                    Measured m = measure(busy, remote, local, op, warm ? 0 : warmup, maxOps, seconds);
                    long fds = openFds() - PIPES_PER_CHILD * children.size();
                    double rss = rssMib();
                    System.out.printf(Locale.ROOT, "%-10s %-10s %6d %10.1f %10.1f %9d %7d %9.1f %9s %12s %12s %12s%n",
                            name, op, n, m.stats().p50(), m.stats().p99(), m.count(), fds, rss,
                            n == 0 ? "-" : String.format(Locale.ROOT, "%.2f", (fds - baseFds) / (double) n),
                            n == 0 ? "-" : String.format(Locale.ROOT, "%.1f", (rss - baseRss) * 1024 / n),
                            n == 0 ? "-" : String.format(Locale.ROOT, "%.1f", (heap - baseHeap) / 1024.0 / n),
                            n == 0 ? "-" : String.format(Locale.ROOT, "%.1f", (malloc - baseMalloc) / 1024.0 / n));
                    rows.add(new Row(op, n, m.stats().p50(), m.stats().p99()));
                }
                warm = true;
            }
            // The idle clients go first, while the server still serves them: they close in order.
            endChildren(children);
            busy.close();
        } finally {
            endChildren(children);
        }
        return rows;
    }

    /** Standard input and output of each child: fds of this process that no connection owns. */
    private static final int PIPES_PER_CHILD = 2;

    /** Starts an {@link IdleClients} child and waits until its {@code count} connections are up. */
    private static Process idleClients(InetSocketAddress server, int count) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command = List.of(java, "--enable-native-access=ALL-UNNAMED", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), IdleClients.class.getName(),
                server.getAddress().getHostAddress(), Integer.toString(server.getPort()), Integer.toString(count),
                group == null ? "default" : group, keepAliveMillis == null ? "default" : keepAliveMillis);
        Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String line;
        // The JVM prints its own warnings on standard output: pass them on, wait for the answer.
        while ((line = p.inputReader().readLine()) != null && !line.startsWith("connected ")
                && !line.startsWith("failed ")) {
            System.err.println("idle-client process: " + line);
        }
        if (line == null || !line.startsWith("connected " + count + " ")) {
            p.destroyForcibly();
            p.waitFor();
            throw new IOException("idle-client process for " + count + " connections said " + line);
        }
        String[] w = line.split(" ");
        if (w.length == 6 && w[4].equals("ms")) {
            double ms = Double.parseDouble(w[5]);
            System.out.printf(Locale.ROOT, "# idle-client process: %d connects in %.0f ms, %.0f/s (%d in flight)%n",
                    count, ms, count * 1000 / ms, IdleClients.IN_FLIGHT);
        }
        return p;
    }

    /**
     * Closes each child's standard input (it closes its connections and exits), waits for it and
     * forgets it; a second call finds none.
     */
    private static void endChildren(List<Process> children) throws IOException, InterruptedException {
        for (Process p : children) {
            p.getOutputStream().close();
        }
        for (Process p : children) {
            if (!p.waitFor(TIMEOUT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor();
            }
            p.getInputStream().close();
        }
        children.clear();
    }

    /** {@return the heap in use after two full collections, in bytes} */
    private static long heapAfterGc() {
        System.gc();
        System.gc();
        return java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    static Cqflux.Builder builder(WaitStrategy strategy) {
        Cqflux.Builder b = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(InetAddress.getLoopbackAddress())
                .waitStrategy(strategy).loops(1);
        keepAlive(b, keepAliveMillis);
        b.backgroundPriority(backgroundPriority);
        return group == null ? b : b.transportProperty(TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP, group);
    }

    /** {@return {@code true} or {@code false}, else an error naming the option} */
    /** {@return the options a bench's server binds with: exposing {@code exposed}, with {@code -k} applied} */
    static io.cqflux.reactor.AcceptOptions exposing(Region exposed) {
        io.cqflux.reactor.AcceptOptions o = io.cqflux.reactor.AcceptOptions.exposing(exposed);
        return scopedKeys == null ? o : o.withKeysScopedToConnection(scopedKeys);
    }

    private static boolean parseFlag(String option, String value) {
        return switch (value) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(option + " wants true or false, got " + value);
        };
    }

    /**
     * Sets {@code -K}'s keep-alive on a builder.
     *
     * @param millis the interval in ms, "0" for none, null or "default" for the default
     */
    static void keepAlive(Cqflux.Builder b, String millis) {
        if (millis == null || millis.equals("default")) {
            return;
        }
        long ms = Long.parseLong(millis);
        if (ms == 0) {
            b.noKeepAlive();
        } else {
            b.keepAlive(Duration.ofMillis(ms), Cqflux.Builder.DEFAULT_KEEP_ALIVE_MISSES);
        }
    }

    /** {@return {kind, size} of an operation named {@code write.8}, {@code read.4096}, ...} */
    private static Object[] parseOp(String op) {
        String[] w = op.split("\\.");
        if (w.length != 2 || !(w[0].equals("write") || w[0].equals("read"))) {
            throw new IllegalArgumentException("operation " + op + " is not <write|read>.<bytes>");
        }
        int size = Integer.parseInt(w[1]);
        if (size < 1 || size > REGION) {
            throw new IllegalArgumentException("operation " + op + ": size " + size + " is outside [1, " + REGION + "]");
        }
        return new Object[] {w[0], size};
    }

    private static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    private static double rssMib() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
            }
        }
        return -1;
    }

    private static String fdLimit() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
            if (line.startsWith("Max open files")) {
                return line.replaceAll("\\s+", " ").replace("Max open files ", "").trim();
            }
        }
        return "unknown";
    }
}
