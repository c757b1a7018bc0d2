package io.cqflux.benchmarks;

import io.cqflux.core.RegionAccess;
import io.cqflux.epoll.LoopStats;
import io.cqflux.epoll.WaitStrategy;
import io.cqflux.epoll.loop.BackgroundPriority;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.Authenticator;
import io.cqflux.reactor.ConnectOptions;
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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * ScaleBench's storm mode ({@code ./cqflux bench scale -c 1000}): what a storm of connection
 * set-ups costs a busy neighbour. Public API only, fabric/tcp on 127.0.0.1, three {@link Cqflux}
 * instances of one loop each: the server, the busy client (one connection running chained
 * operations, {@link ChainedLatency#chain}) and the storm client. The busy connection and every
 * storm connection share the server's one loop, so the server's set-up work left on that loop
 * (the native part runs on the instance's set-up thread where the transport allows it) is what
 * the busy connection waits behind; the storm client's own set-up runs on its own instance.
 *
 * <p>Four scenes, each on fresh instances after one warm-up of the JVM (linking the native
 * bindings and the JIT are one-off costs that would otherwise land in the first scene):
 * <ul>
 *   <li>{@code alone}: the busy connection by itself;</li>
 *   <li>{@code storm}: {@code -c} connects from the storm client, {@code -p} in flight, each
 *       accepted with one exposed region (a per-connection registration on the server) and kept
 *       open; then {@code close}: the same connections closed, {@code -p} at a time;</li>
 *   <li>{@code deny}: {@code -c} connects refused by the server's authenticator (on fabric/tcp
 *       each is rejected with the refusal as the reject's private data: no endpoint is opened);</li>
 *   <li>{@code full}: {@code -c} connects refused at admission because the server holds its
 *       {@code maxConnections} (the busy connection alone fills it).</li>
 * </ul>
 * For each scene: the busy connection's p50, p99 and max per operation while the scene ran;
 * connects (or refusals, or closes) per second; the longest unit each loop ran so far
 * ({@link LoopStats#longestUnitNanos()}: measured by the loop's blocked-loop detection from the
 * clock reading it makes anyway, so the measurement does not slow the loop; monotonic, so a scene
 * shows a new maximum only where it beat the earlier ones); and for {@code storm} the set-up
 * cost: the process's fds and resident memory per connection (both ends are in this process),
 * the server's exposures per connection ({@link RdmaServer.Stats#exposures()}), and a sequential
 * connect's time (one in flight, the client's and the server's work together).
 *
 * <p>Columns: {@code srv>1ms}, {@code srv>10} the server loop's units over 1 and 10 ms during the
 * scene ({@link LoopStats#unitsOver1ms()}); {@code busy>10} the same of the busy client's loop,
 * which runs nothing but the busy connection: the host's own stalls, the control;
 * {@code srv_max}, {@code busy_max}, {@code strm_max} each loop's longest unit so far, in ms;
 * {@code srv_cpu}, {@code cli_cpu} the CPU time of the server's and the storm client's loop thread
 * per connect (close, refusal) in µs, the server's less the busy operations' share (see
 * {@link #serverCpuPerOp}): wall-clock units stretch when a loaded host preempts the loop, CPU
 * time does not; {@code srv_set}, {@code cli_set} the CPU time of the server's and the storm
 * client's set-up thread per connect (close, refusal) in µs, where the native part of a connect
 * and an accept runs when the transport allows it (0 where it stays on the loop).
 */
final class StormBench {

    private static final Duration TIMEOUT = Duration.ofSeconds(300);
    private static final long REGION = 1 << 16;
    private static final byte[] GOOD = "busy".getBytes(StandardCharsets.US_ASCII);
    /** Chained operations per slice while a scene runs: a slice ends within a few ms. */
    private static final int SLICE = 200;

    private StormBench() {
    }

    /**
     * @param strategy the loops' wait strategy
     * @param strategyName its name, for the output
     * @param kind {@code write} or {@code read}
     * @param size bytes per operation
     * @param connects connects per scene
     * @param parallel connects in flight
     * @param seconds how long the {@code alone} scene runs
     * @param sequential connects timed one at a time for the set-up cost line
     */
    static void run(WaitStrategy strategy, String strategyName, String kind, int size, int connects, int parallel,
                    double seconds, int sequential) throws IOException {
        warmUp(strategy);
        System.out.println(HEADER);
        if (SCENES.contains("storm")) {
            storm(strategy, kind, size, connects, parallel, seconds, sequential);
        }
        if (SCENES.contains("deny")) {
            flood("deny", strategy, kind, size, connects, parallel);
        }
        if (SCENES.contains("full")) {
            flood("full", strategy, kind, size, connects, parallel);
        }
    }

    /** The {@code alone}, {@code storm} and {@code close} scenes, and the sequential connect's cost. */
    private static void storm(WaitStrategy strategy, String kind, int size, int connects, int parallel,
                              double seconds, int sequential) throws IOException {
        InetAddress lo = InetAddress.getLoopbackAddress();
        String op = kind + "." + size;
        try (Arena arena = Arena.ofShared();
             Cqflux server = builder(strategy).build();
             Cqflux busyClient = builder(strategy).build();
             Cqflux stormClient = clientBuilt(builder(strategy))) {
            Region exposed = server.register(arena.allocate(REGION, 4096), RegionAccess.WRITE_DST,
                    RegionAccess.READ_SRC);
            RdmaServer listening = server.bind(new InetSocketAddress(lo, 0), ScaleBench.exposing(exposed),
                    c -> c.onDispose()).block(TIMEOUT);
            Region local = busyClient.register(arena.allocate(REGION, 4096), RegionAccess.WRITE_SRC,
                    RegionAccess.READ_DST);
            RdmaConnection busy = busyClient.connect(listening.address()).block(TIMEOUT);
            PeerRegion remote = busy.remoteRegion(0);
            ChainedLatency.chain(busy, kind, remote, local, size, 2_000, TIMEOUT);
            Loops loops = new Loops(server, busyClient, stormClient);

            long t0 = System.nanoTime();
            List<long[]> alone = new ArrayList<>();
            while (System.nanoTime() - t0 < seconds * 1e9) {
                alone.add(ChainedLatency.chain(busy, kind, remote, local, size, SLICE, TIMEOUT));
            }
            loops = print("alone", op, alone, 0, System.nanoTime() - t0, loops);

            long fds0 = openFds();
            double rss0 = rssMib();
            int exposures0 = listening.stats().exposures();
            List<RdmaConnection> storm = Collections.synchronizedList(new ArrayList<>());
            AtomicInteger failed = new AtomicInteger();
            Scene s = scene(busy, kind, remote, local, size, () -> Flux.range(0, connects)
                    .flatMap(i -> stormClient.connect(listening.address())
                            .doOnNext(storm::add)
                            .onErrorResume(e -> {
                                failed.incrementAndGet();
                                return Mono.empty();
                            }), parallel)
                    .then().block(TIMEOUT));
            loops = print("storm", op, s.stamps, storm.size(), s.nanos, loops);
            Await.until(() -> listening.stats().connections() >= storm.size() + 1, TIMEOUT);
            long fds1 = openFds();
            double rss1 = rssMib();
            int exposures1 = listening.stats().exposures();
            int n = storm.size();
            System.out.printf(Locale.ROOT, "#   storm: %d of %d connected (%d failed), %d in flight; per connection: %.2f fds"
                            + " per side, %.1f KiB resident per pair, %.2f server exposures%n", n, connects, failed.get(),
                    parallel, (fds1 - fds0) / 2.0 / Math.max(1, n), (rss1 - rss0) * 1024 / Math.max(1, n),
                    (exposures1 - exposures0) / (double) Math.max(1, n));

            loops = loops.next();
            Scene c = scene(busy, kind, remote, local, size, () -> Flux.fromIterable(new ArrayList<>(storm))
                    .flatMap(StormBench::closeAndWait, parallel).then().block(TIMEOUT));
            print("close", op, c.stamps, n, c.nanos, loops);

            // Sequential set-up: one connect in flight, each closed before the next.
            double[] us = new double[sequential];
            for (int i = 0; i < sequential; i++) {
                long a = System.nanoTime();
                RdmaConnection one = stormClient.connect(listening.address()).block(TIMEOUT);
                us[i] = (System.nanoTime() - a) / 1e3;
                closeAndWait(one).block(TIMEOUT);
            }
            Arrays.sort(us);
            System.out.printf(Locale.ROOT, "#   sequential connect (client and server set-up, one exposed region, one in"
                    + " flight, %d times): p50 %.0f us, p99 %.0f us%n", sequential, us[sequential / 2],
                    us[(int) (sequential * 0.99)]);
            busy.close();
        }
    }

    /**
     * A refused flood on fresh instances: the busy connection passes, every flood connect is
     * refused, by the authenticator ({@code deny}) or at admission ({@code full}).
     */
    private static void flood(String scene, WaitStrategy strategy, String kind, int size, int connects,
                              int parallel) throws IOException {
        InetAddress lo = InetAddress.getLoopbackAddress();
        try (Arena arena = Arena.ofShared();
             Cqflux server = builder(strategy).build();
             Cqflux busyClient = builder(strategy).build();
             Cqflux floodClient = clientBuilt(builder(strategy))) {
            Region exposed = server.register(arena.allocate(REGION, 4096), RegionAccess.WRITE_DST,
                    RegionAccess.READ_SRC);
            AcceptOptions options = ScaleBench.exposing(exposed);
            options = scene.equals("deny")
                    ? options.authenticatedBy(r -> Mono.just(Arrays.equals(r.credentials(), GOOD)
                            ? Authenticator.Decision.allow() : Authenticator.Decision.deny("not on the list")))
                    : options.withMaxConnections(1);
            RdmaServer listening = server.bind(new InetSocketAddress(lo, 0), options, c -> c.onDispose())
                    .block(TIMEOUT);
            Region local = busyClient.register(arena.allocate(REGION, 4096), RegionAccess.WRITE_SRC,
                    RegionAccess.READ_DST);
            RdmaConnection busy = busyClient.connect(listening.address(), ConnectOptions.defaults().credentials(GOOD))
                    .block(TIMEOUT);
            PeerRegion remote = busy.remoteRegion(0);
            ChainedLatency.chain(busy, kind, remote, local, size, 2_000, TIMEOUT);
            Loops loops = new Loops(server, busyClient, floodClient);
            long fds0 = openFds();
            int exposures0 = listening.stats().exposures();
            AtomicInteger refused = new AtomicInteger();
            AtomicInteger served = new AtomicInteger();
            java.util.concurrent.atomic.AtomicReference<String> firstError = new java.util.concurrent.atomic.AtomicReference<>();
            Scene s = scene(busy, kind, remote, local, size, () -> Flux.range(0, connects)
                    .flatMap(i -> floodClient.connect(listening.address(), ConnectOptions.defaults()
                                    .credentials("intruder".getBytes(StandardCharsets.US_ASCII)))
                            .doOnNext(c -> {
                                served.incrementAndGet();
                                c.close();
                            })
                            .onErrorResume(e -> {
                                refused.incrementAndGet();
                                firstError.compareAndSet(null, String.valueOf(e.getMessage()));
                                return Mono.empty();
                            }), parallel)
                    .then().block(TIMEOUT));
            print(scene, kind + "." + size, s.stamps, refused.get(), s.nanos, loops);
            RdmaServer.Stats st = listening.stats();
            Await.until(() -> listening.stats().connections() == 1 && listening.stats().pendingHandshakes() == 0,
                    TIMEOUT);
            System.out.printf(Locale.ROOT, "#   %s: %d refused, %d served of %d; server exposures during the flood: %d"
                            + " (before: %d); refused by authenticator %d, over maxConnections %d, over pending %d;"
                            + " fds right after: %+d, %s%n", scene, refused.get(), served.get(), connects, st.exposures(),
                    exposures0, st.refusedByAuthenticator(), st.refusedOverMaxConnections(), st.refusedOverMaxPending(),
                    openFds() - fds0, settle(fds0));
            System.out.printf(Locale.ROOT, "#   %s: the first refused client's error: %s%n", scene, firstError.get());
            busy.close();
        }
    }

    /** {@return how long the process took to get back to {@code fds0} open fds, or what is left after 30 s} */
    private static String settle(long fds0) throws IOException {
        long t0 = System.nanoTime();
        long fds = openFds();
        while (fds > fds0 && System.nanoTime() - t0 < 30e9) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            fds = openFds();
        }
        return fds > fds0 ? (fds - fds0) + " fds still open after 30 s"
                : String.format(Locale.ROOT, "back to the fds before within %.0f ms", (System.nanoTime() - t0) / 1e6);
    }

    private record Scene(List<long[]> stamps, long nanos) {
    }

    /**
     * Runs {@code work} on another thread while the busy connection runs slices of chained
     * operations on this one, until the work is done.
     */
    private static Scene scene(RdmaConnection busy, String kind, PeerRegion remote, Region local, int size,
                               Runnable work) {
        long t0 = System.nanoTime();
        CompletableFuture<Long> done = CompletableFuture.supplyAsync(() -> {
            if (ScaleBench.nicedStormClient) {
                BackgroundPriority.lowerCallingThread(); // it subscribes the client's connects
            }
            work.run();
            return System.nanoTime();
        }, r -> Thread.ofPlatform().name("storm").start(r));
        List<long[]> stamps = new ArrayList<>();
        while (!done.isDone()) {
            stamps.add(ChainedLatency.chain(busy, kind, remote, local, size, SLICE, TIMEOUT));
        }
        return new Scene(stamps, done.join() - t0);
    }

    /**
     * Each instance's loop counters at the start of a scene: the scene's row shows how many units
     * of the server's and the busy client's loop took over 1 ms and over 10 ms meanwhile, and the
     * longest unit of each loop so far. The busy client's loop runs nothing but the busy
     * connection: its long units are the host's (a preempted loop thread), the control.
     */
    private record Loops(Cqflux server, Cqflux busy, Cqflux storm, LoopStats s0, LoopStats b0, long sCpu0,
                         long cCpu0, long sSetup0, long cSetup0) {
        Loops(Cqflux server, Cqflux busy, Cqflux storm) {
            this(server, busy, storm, stats(server), stats(busy), cpuNanos(server), cpuNanos(storm),
                    setupCpuNanos(server), setupCpuNanos(storm));
        }

        Loops next() {
            return new Loops(server, busy, storm);
        }

        static LoopStats stats(Cqflux c) {
            return c.loopStats().getFirst(); // one loop each (builder)
        }

        static double ms(Cqflux c) {
            return stats(c).longestUnitNanos() / 1e6;
        }

        /**
         * The CPU time the instance's loop thread used so far ({@code /proc/self/task/TID/stat},
         * utime + stime, in clock ticks of 10 ms): unlike a unit's wall time it does not grow
         * while a loaded host leaves the thread waiting, so per connection it is the set-up's
         * own cost. -1 when the thread is not found.
         */
        static long cpuNanos(Cqflux c) {
            return threadCpuNanos(c.loopNames().getFirst());
        }

        /**
         * The CPU time of the instance's set-up thread ({@code <prefix>-setup}, where the native
         * part of its connects and accepts runs), as {@link #cpuNanos}; 0 before it started (it
         * starts with the first set-up) or where the library has none.
         */
        static long setupCpuNanos(Cqflux c) {
            String loop = c.loopNames().getFirst();
            int at = loop.lastIndexOf("-loop-");
            long n = at < 0 ? -1 : threadCpuNanos(loop.substring(0, at) + "-setup");
            return Math.max(0, n);
        }

        private static long threadCpuNanos(String name) {
            String comm = name.length() > 15 ? name.substring(0, 15) : name; // the kernel keeps 15 chars
            try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
                for (Path t : (Iterable<Path>) tasks::iterator) {
                    if (Files.readString(t.resolve("comm")).strip().equals(comm)) {
                        String stat = Files.readString(t.resolve("stat"));
                        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        // fields after the name: state is field 3 (index 0 here); utime 14, stime 15
                        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L;
                    }
                }
            } catch (IOException | RuntimeException e) {
                return -1;
            }
            return -1;
        }
    }

    static final String HEADER = String.format(Locale.ROOT,
            "%-8s %-9s %7s %9s %9s %9s %6s %7s %7s %7s %7s %8s %8s %8s %8s %8s",
            "scene", "op", "ops", "p50_us", "p99_us", "max_us", "events", "per_s", "srv>1ms", "srv>10", "busy>10",
            "srv_max", "busy_max", "strm_max", "srv_cpu", "cli_cpu") + String.format(Locale.ROOT, " %8s %8s",
            "srv_set", "cli_set");

    /**
     * The server loop's CPU time per busy operation, from the {@code alone} scene: the other
     * scenes' {@code srv_cpu} is their server loop's CPU time less their busy operations' share,
     * per connect (close, refusal); the {@code alone} row's is per operation.
     */
    private static double serverCpuPerOp;

    private static Loops print(String scene, String op, List<long[]> slices, int events, long nanos, Loops loops) {
        List<Double> us = new ArrayList<>();
        for (long[] st : slices) {
            for (int i = 1; i < st.length; i++) {
                us.add((st[i] - st[i - 1]) / 1e3);
            }
        }
        Collections.sort(us);
        int n = us.size();
        double p50 = n == 0 ? Double.NaN : us.get(n / 2);
        double p99 = n == 0 ? Double.NaN : us.get((int) (n * 0.99));
        double max = n == 0 ? Double.NaN : us.get(n - 1);
        LoopStats s = Loops.stats(loops.server);
        LoopStats b = Loops.stats(loops.busy);
        long sCpu = Loops.cpuNanos(loops.server) - loops.sCpu0;
        long cCpu = Loops.cpuNanos(loops.storm) - loops.cCpu0;
        long sSet = Loops.setupCpuNanos(loops.server) - loops.sSetup0;
        long cSet = Loops.setupCpuNanos(loops.storm) - loops.cSetup0;
        System.out.printf(Locale.ROOT,
                "%-8s %-9s %7d %9.1f %9.1f %9.1f %6d %7.0f %7d %7d %7d %8.1f %8.1f %8.1f %8.0f %8.0f %8.0f %8.0f%n", scene,
                op, n, p50, p99, max, events, events / (nanos / 1e9), s.unitsOver1ms() - loops.s0.unitsOver1ms(),
                s.unitsOver10ms() - loops.s0.unitsOver10ms(), b.unitsOver10ms() - loops.b0.unitsOver10ms(),
                Loops.ms(loops.server), Loops.ms(loops.busy), Loops.ms(loops.storm),
                events == 0 ? sCpu / 1e3 / Math.max(1, n) : (sCpu - n * serverCpuPerOp) / 1e3 / events,
                events == 0 ? Double.NaN : cCpu / 1e3 / events, events == 0 ? Double.NaN : sSet / 1e3 / events,
                events == 0 ? Double.NaN : cSet / 1e3 / events);
        if (events == 0) {
            serverCpuPerOp = sCpu / (double) Math.max(1, n);
        }
        return loops.next();
    }

    /** One storm and its closes on throwaway instances: bindings linked, code compiled. */
    private static void warmUp(WaitStrategy strategy) {
        InetAddress lo = InetAddress.getLoopbackAddress();
        try (Arena arena = Arena.ofShared();
             Cqflux server = builder(strategy).build();
             Cqflux client = builder(strategy).build()) {
            Region exposed = server.register(arena.allocate(REGION, 4096), RegionAccess.WRITE_DST,
                    RegionAccess.READ_SRC);
            RdmaServer listening = server.bind(new InetSocketAddress(lo, 0), ScaleBench.exposing(exposed),
                    c -> c.onDispose()).block(TIMEOUT);
            Region local = client.register(arena.allocate(REGION, 4096), RegionAccess.WRITE_SRC,
                    RegionAccess.READ_DST);
            List<RdmaConnection> cs = Flux.range(0, 200).flatMap(i -> client.connect(listening.address())
                    .onErrorResume(e -> Mono.empty()), 16).collectList().block(TIMEOUT); // a timeout here is the host's
            RdmaConnection c0 = cs.getFirst();
            ChainedLatency.chain(c0, "write", c0.remoteRegion(0), local, 8, 5_000, TIMEOUT);
            ChainedLatency.chain(c0, "read", c0.remoteRegion(0), local, 8, 5_000, TIMEOUT);
            Flux.fromIterable(cs).flatMap(StormBench::closeAndWait, 16).then().block(TIMEOUT);
        }
    }

    /** {@return a Mono that disposes the connection and completes once it is released} */
    private static Mono<Void> closeAndWait(RdmaConnection c) {
        return Mono.defer(() -> {
            c.dispose();
            return c.onDispose();
        });
    }

    /**
     * The loops' blocked threshold: the default, or {@code -Dstorm.blockedMs=N} to have each unit
     * over N ms logged with what ran (set-up parts at DEBUG: JUL level FINE for
     * {@code io.cqflux.epoll.loop.EventLoop}); the counters do not depend on it.
     */
    private static final long BLOCKED_MS = Long.getLong("storm.blockedMs", 0);

    /**
     * The scenes to run, {@code -Dstorm.scenes=deny,full} for the refused floods alone
     * ({@code storm} stands for alone, storm and close); all by default. An unknown name is
     * refused, naming the known ones.
     */
    private static final List<String> SCENES = scenes(System.getProperty("storm.scenes", "storm,deny,full"));

    private static List<String> scenes(String names) {
        List<String> known = List.of("storm", "deny", "full");
        List<String> s = java.util.Arrays.stream(names.split(",")).map(String::trim).toList();
        for (String n : s) {
            if (!known.contains(n)) {
                throw new IllegalArgumentException("storm.scenes names " + n + ", not one of " + known);
            }
        }
        return s;
    }

    /**
     * Builds the connecting client's instance; with {@code -N true} on a thread of its own whose
     * CPU priority is lowered first (nice +19), so that every thread the instance starts (its
     * loop, its set-up and close threads) inherits it (sched(7)): clients that take only what the
     * server and the busy pair leave of the host, as clients on other hosts would take nothing.
     */
    private static Cqflux clientBuilt(Cqflux.Builder b) {
        if (!ScaleBench.nicedStormClient) {
            return b.build();
        }
        CompletableFuture<Cqflux> built = new CompletableFuture<>();
        Thread.ofPlatform().name("storm-client-builder").start(() -> {
            try {
                BackgroundPriority.lowerCallingThread();
                built.complete(b.build());
            } catch (RuntimeException | Error e) {
                built.completeExceptionally(e);
            }
        });
        return built.join();
    }

    static Cqflux.Builder builder(WaitStrategy strategy) {
        Cqflux.Builder b = Cqflux.builder().transport(TransportChoice.FABRIC)
                .localAddress(InetAddress.getLoopbackAddress()).waitStrategy(strategy).loops(1)
                .backgroundPriority(ScaleBench.backgroundPriority);
        ScaleBench.keepAlive(b, ScaleBench.keepAliveMillis);
        return BLOCKED_MS > 0 ? b.blockedLoopThreshold(Duration.ofMillis(BLOCKED_MS)) : b;
    }

    static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    static double rssMib() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
            }
        }
        return -1;
    }

    /** Polls a condition (server-side counts settle on the server's loop, after the client's view). */
    private static final class Await {
        static void until(java.util.function.BooleanSupplier ok, Duration timeout) {
            long end = System.nanoTime() + timeout.toNanos();
            while (!ok.getAsBoolean()) {
                if (System.nanoTime() > end) {
                    throw new IllegalStateException("a server count did not settle within " + timeout);
                }
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
        }
    }
}
