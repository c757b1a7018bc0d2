package io.cqflux.test.network;

import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import io.cqflux.reactor.WriteRequest;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What random packet loss costs on fabric/tcp ({@code ./cqflux bench loss}; root, since it builds a
 * {@link NetworkRig}): for each loss rate, applied in both directions at once, chained
 * {@code durableWrite}, {@code write} and {@code read} of 8 bytes and 4 KiB (one in flight, each
 * subscribed from the previous one's completion on the loop thread) for a fixed time each, their
 * p50 and p99; then durable 4 KiB writes with 16 in flight and {@code writeAll} of 4 KiB writes
 * (its window: half the send credits), each for the same time, in operations and MB per second.
 * It prints a markdown report on standard output.
 *
 * <p>What it checks, and exits non-zero for: no operation failed at a rate of 5 % or less (at a
 * higher rate failures are reported with their cause, and a failed connection is replaced by a
 * fresh one); and every completed durable write is in the peer's memory. Durable writes run in
 * rounds of at most {@link #SLOTS} writes, each to its own slot with contents unique to the round
 * (pseudo-random, from the run's nonce, the round and the slot); after each round the peer's CRC32C
 * of every slot whose write completed is compared with the one of what was sent. Only the time
 * spent running operations counts, not the fills and checks between rounds.
 *
 * <p>Usage: {@code LossBench [-r 0,1,5,20] [-t seconds per measurement] [-w warm-up seconds]
 * [-o operationTimeout ms] [-f highest rate (percent) that must see no failure]}. Without
 * {@code -o} the client runs the library's default operation timeout.
 */
final class LossBench {
    /** Writes per durable round: slots of the peer's region, one per write. */
    static final int SLOTS = 16_384;
    static final int BIG = 4096;
    static final int IN_FLIGHT = 16;
    static final Duration BLOCK = Duration.ofMinutes(10);
    static final List<String> OPS = List.of("dwrite", "write", "read");
    static final int[] SIZES = {8, BIG};

    private final NetworkRig rig;
    private final NetPeer.Handle peer;
    private final Cqflux client;
    private final Region local;
    private final Region readDst;
    private final long nonce = System.nanoTime();
    private final StringBuilder notes = new StringBuilder();
    private RdmaConnection conn;
    private int round;
    private long connects;

    private LossBench(NetworkRig rig, NetPeer.Handle peer, Cqflux client, Arena arena) {
        this.rig = rig;
        this.peer = peer;
        this.client = client;
        this.local = client.register(arena.allocate((long) SLOTS * BIG, 64), RegionAccess.WRITE_SRC);
        this.readDst = client.register(arena.allocate(BIG, 64), RegionAccess.READ_DST);
    }

    /** One measurement's outcome: per-operation latencies (chained) or a count over a time. */
    static final class Result {
        final String what;
        final List<Double> micros = new ArrayList<>();
        final Map<String, Integer> failures = new TreeMap<>();
        long ops;
        long nanos;
        long landedChecked;
        long landedMissing;

        Result(String what) {
            this.what = what;
        }

        void fail(Throwable e) {
            // One line per cause: the times in a deadline's message would make each failure its own.
            String cause = Records.outcome(e) + ": " + String.valueOf(e.getMessage()).lines().findFirst().orElse("")
                    .replaceAll("posted \\d+ ms ago", "posted N ms ago");
            failures.merge(cause.length() > 160 ? cause.substring(0, 160) + "..." : cause, 1, Integer::sum);
        }

        int failed() {
            return failures.values().stream().mapToInt(Integer::intValue).sum();
        }

        double percentile(double p) {
            if (micros.isEmpty()) {
                return Double.NaN;
            }
            double[] s = micros.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            return s[Math.min(s.length - 1, (int) (s.length * p))];
        }

        /** {@return how many chained operations took at least {@code ms} milliseconds} */
        long atLeast(double ms) {
            return micros.stream().filter(u -> u >= ms * 1e3).count();
        }

        double max() {
            return micros.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
        }

        double opsPerSecond() {
            return nanos == 0 ? 0 : ops / (nanos / 1e9);
        }
    }

    /** A connection that is usable: the current one, or a fresh one when it ended. */
    private RdmaConnection connection() {
        if (conn == null || conn.isDisposed()) {
            conn = PartitionTest.connectPatiently(client, peer);
            connects++;
        }
        return conn;
    }

    /** Fills slots [0, n) of the local region with this round's contents; returns their CRC32Cs. */
    private long[] fill(int size, int n) {
        round++;
        SplittableRandom r = new SplittableRandom(nonce * 1_000_003 + round);
        MemorySegment seg = local.segment();
        long[] crcs = new long[n];
        for (int i = 0; i < n; i++) {
            long off = (long) i * size;
            for (int k = 0; k < size; k += 8) {
                seg.set(ValueLayout.JAVA_LONG_UNALIGNED, off + k, r.nextLong());
            }
            CRC32C crc = new CRC32C();
            crc.update(seg.asSlice(off, size).asByteBuffer());
            crcs[i] = crc.getValue();
        }
        return crcs;
    }

    /** Compares the peer's slots whose write completed with what was sent. */
    private void checkLanded(Result res, int size, long[] sent, AtomicIntegerArray completed, int n) {
        if (n == 0) {
            return;
        }
        long[] there = peer.crcs(0, size, n);
        for (int i = 0; i < n; i++) {
            if (completed.get(i) == 1) {
                res.landedChecked++;
                if (there[i] != sent[i]) {
                    res.landedMissing++;
                }
            }
        }
    }

    private Mono<Void> op(RdmaConnection c, PeerRegion remote, String op, int size, int slot) {
        long off = (long) slot * size;
        return switch (op) {
            case "dwrite" -> c.durableWrite(remote, off, local, off, size);
            case "write" -> c.write(remote, off, local, off, size);
            case "read" -> c.read(readDst, 0, remote, off, size);
            default -> throw new IllegalArgumentException("operation " + op + " is not one of " + OPS);
        };
    }

    /**
     * Chained operations for {@code time}: one in flight, each subscribed from the previous one's
     * completion; the interval between consecutive completions is an operation's latency. Durable
     * writes go in rounds of fresh slots and are checked after each round.
     */
    Result chained(String op, int size, Duration time) {
        Result res = new Result(op + " " + size + " B chained");
        long deadline = System.nanoTime() + time.toNanos();
        while (System.nanoTime() < deadline) {
            RdmaConnection c = connection();
            PeerRegion remote = c.remoteRegion(0);
            boolean durable = op.equals("dwrite");
            long[] sent = durable ? fill(size, SLOTS) : null;
            AtomicIntegerArray completed = new AtomicIntegerArray(SLOTS);
            long[] last = {System.nanoTime()};
            long t0 = last[0];
            int[] done = {0};
            Throwable error = null;
            try {
                Flux.range(0, SLOTS)
                        .takeWhile(i -> System.nanoTime() < deadline)
                        .concatMap(i -> op(c, remote, op, size, durable ? i : 0).doOnSuccess(v -> {
                            long now = System.nanoTime();
                            res.micros.add((now - last[0]) / 1e3);
                            last[0] = now;
                            completed.set(i, 1);
                            done[0] = i + 1;
                        }), 1)
                        .then().block(BLOCK);
            } catch (RuntimeException e) {
                error = e;
            }
            res.nanos += last[0] - t0;
            res.ops += done[0];
            if (durable) {
                checkLanded(res, size, sent, completed, done[0]);
            }
            if (error != null) {
                res.fail(unwrap(error));
                awaitEnd(c);
            }
        }
        return res;
    }

    /**
     * Durable writes of {@code size} bytes with {@code IN_FLIGHT} in flight for {@code time}, each
     * to its own slot of the round, checked after each round.
     */
    Result durableInFlight(int size, Duration time) {
        Result res = new Result("durableWrite " + size + " B, " + IN_FLIGHT + " in flight");
        long deadline = System.nanoTime() + time.toNanos();
        while (System.nanoTime() < deadline) {
            RdmaConnection c = connection();
            PeerRegion remote = c.remoteRegion(0);
            long[] sent = fill(size, SLOTS);
            AtomicIntegerArray completed = new AtomicIntegerArray(SLOTS);
            AtomicLong ok = new AtomicLong();
            int[] started = {0};
            List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
            long t0 = System.nanoTime();
            Flux.range(0, SLOTS)
                    .takeWhile(i -> System.nanoTime() < deadline && errors.isEmpty())
                    .doOnNext(i -> started[0] = i + 1)
                    .flatMap(i -> c.durableWrite(remote, (long) i * size, local, (long) i * size, size)
                            .doOnSuccess(v -> {
                                completed.set(i, 1);
                                ok.incrementAndGet();
                            })
                            .onErrorResume(e -> {
                                errors.add(e);
                                return Mono.empty();
                            }), IN_FLIGHT)
                    .then().block(BLOCK);
            res.nanos += System.nanoTime() - t0;
            res.ops += ok.get();
            checkLanded(res, size, sent, completed, started[0]);
            for (Throwable e : List.copyOf(errors)) {
                res.fail(e);
            }
            if (!errors.isEmpty()) {
                awaitEnd(c);
            }
        }
        return res;
    }

    /** {@code writeAll} of {@code size}-byte writes (not durable) for {@code time}. */
    Result writeAll(int size, Duration time) {
        long deadline = System.nanoTime() + time.toNanos();
        Result res = null;
        while (System.nanoTime() < deadline) {
            RdmaConnection c = connection();
            int window = Math.max(1, c.sendCredits() / 2);
            if (res == null) {
                res = new Result("writeAll " + size + " B (window " + window + ")");
            }
            PeerRegion remote = c.remoteRegion(0);
            AtomicLong ok = new AtomicLong();
            long t0 = System.nanoTime();
            try {
                c.writeAll(Flux.range(0, Integer.MAX_VALUE).takeWhile(i -> System.nanoTime() < deadline).map(i -> {
                    long off = (long) (i % window) * size;
                    return new WriteRequest(remote, off, local, off, size, false);
                })).doOnNext(r -> ok.incrementAndGet()).then().block(BLOCK);
            } catch (RuntimeException e) {
                res.fail(unwrap(e));
                awaitEnd(c);
            }
            res.nanos += System.nanoTime() - t0;
            res.ops += ok.get();
        }
        return res;
    }

    /** Waits (bounded) until a connection whose operation failed has ended, so that the next one is fresh. */
    private void awaitEnd(RdmaConnection c) {
        if (!PartitionTest.await(c::isDisposed, Duration.ofSeconds(5))) {
            notes.append("- a connection with a failed operation was still open 5 s later; disposed by the bench\n");
            c.dispose();
        }
    }

    private static Throwable unwrap(Throwable e) {
        Throwable t = e;
        while (!(t instanceof ConnectionException) && t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t instanceof ConnectionException ? t : e;
    }

    /** {@return a namespace's TCP RetransSegs ({@code null}: the root namespace's)} */
    private static long retransSegs(String namespace) {
        List<String> cmd = namespace == null ? List.of("cat", "/proc/net/snmp")
                : List.of("ip", "netns", "exec", namespace, "cat", "/proc/net/snmp");
        List<String> lines = NetworkRig.run(cmd, true).lines().toList();
        for (int i = 0; i + 1 < lines.size(); i++) {
            if (lines.get(i).startsWith("Tcp:") && lines.get(i + 1).startsWith("Tcp:")) {
                List<String> names = List.of(lines.get(i).split("\\s+"));
                return Long.parseLong(lines.get(i + 1).split("\\s+")[names.indexOf("RetransSegs")]);
            }
        }
        throw new AssertionError("no Tcp lines in /proc/net/snmp");
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    /** One rate's results, and what the link did meanwhile. */
    record Rate(int percent, List<Result> chained, List<Result> throughput, long dropsToPeer, long dropsToClient,
                long clientRetrans, long peerRetrans, double seconds) {
    }

    private Rate rate(int percent, Duration time) {
        if (percent == 0) {
            rig.noLoss();
        } else {
            rig.loss(percent, percent);
        }
        long c0 = retransSegs(null);
        long p0 = retransSegs(rig.namespace);
        long t0 = System.nanoTime();
        List<Result> chained = new ArrayList<>();
        for (String op : OPS) {
            for (int size : SIZES) {
                Result r = chained(op, size, time);
                chained.add(r);
                System.err.printf(Locale.ROOT, "loss %d %%: %s: %d ops, p50 %.0f µs, p99 %.0f µs, failed %d%n", percent,
                        r.what, r.ops, r.percentile(0.5), r.percentile(0.99), r.failed());
            }
        }
        List<Result> tp = List.of(durableInFlight(BIG, time), writeAll(BIG, time));
        for (Result r : tp) {
            System.err.printf(Locale.ROOT, "loss %d %%: %s: %.0f ops/s, failed %d%n", percent, r.what, r.opsPerSecond(),
                    r.failed());
        }
        long toPeer = rig.lossDropsToPeer();
        long toClient = rig.lossDropsToClient();
        return new Rate(percent, chained, tp, toPeer, toClient, retransSegs(null) - c0, retransSegs(rig.namespace) - p0,
                (System.nanoTime() - t0) / 1e9);
    }

    /**
     * @param args see the class comment
     */
    public static void main(String[] args) throws Exception {
        int[] rates = {0, 1, 5, 20};
        double seconds = 3;
        double warm = 2;
        Duration opTimeout = null;
        int mustNotFail = 5;
        for (int i = 0; i < args.length; i++) {
            if (i + 1 == args.length) {
                throw new IllegalArgumentException(args[i] + " wants a value (-r, -t, -w, -o, -f)");
            }
            switch (args[i]) {
                case "-r" -> rates = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
                case "-t" -> seconds = Double.parseDouble(args[++i]);
                case "-w" -> warm = Double.parseDouble(args[++i]);
                case "-o" -> opTimeout = Duration.ofMillis(Long.parseLong(args[++i]));
                case "-f" -> mustNotFail = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i] + " (-r, -t, -w, -o, -f)");
            }
        }
        for (int r : rates) {
            if (r < 0 || r > 100) {
                throw new IllegalArgumentException("loss rate " + r + " % is outside [0, 100]");
            }
        }
        if (seconds <= 0 || seconds > 600) {
            throw new IllegalArgumentException("-t " + seconds + " s is outside (0, 600]");
        }
        Duration time = Duration.ofNanos((long) (seconds * 1e9));
        String loadBefore = loadAverage();
        Instant started = Instant.now();
        List<Rate> results = new ArrayList<>();
        String rigName;
        Map<String, String> setup = new LinkedHashMap<>();
        try (NetworkRig rig = NetworkRig.create(); Arena arena = Arena.ofShared()) {
            Runtime.getRuntime().addShutdownHook(new Thread(rig::close)); // an interrupted run leaves nothing
            rigName = rig.toString();
            NetPeer.Handle peer = rig.startPeer((long) SLOTS * BIG);
            Cqflux.Builder b = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(rig.rootAddress);
            if (opTimeout != null) {
                b = b.operationTimeout(opTimeout);
            }
            Cqflux client = b.build();
            try {
                LossBench bench = new LossBench(rig, peer, client, arena);
                // Warm-up without loss: the first operations load and compile the paths.
                for (String op : OPS) {
                    for (int size : SIZES) {
                        bench.chained(op, size, Duration.ofNanos((long) (warm * 1e9 / 6)));
                    }
                }
                bench.durableInFlight(BIG, Duration.ofNanos((long) (warm * 1e9 / 4)));
                bench.writeAll(BIG, Duration.ofNanos((long) (warm * 1e9 / 4)));
                bench.connects = 0;
                setup.put("connection", "send credits " + bench.connection().sendCredits() + ", operationTimeout "
                        + (opTimeout == null ? "the library's default" : opTimeout.toMillis() + " ms"));
                for (int r : rates) {
                    results.add(bench.rate(r, time));
                }
                setup.put("fresh connections after a failure", Long.toString(bench.connects));
                if (!bench.notes.isEmpty()) {
                    setup.put("notes", bench.notes.toString().trim());
                }
            } finally {
                client.dispose();
                client.onDispose().toFuture().completeOnTimeout(null, 20, java.util.concurrent.TimeUnit.SECONDS).join();
            }
        }
        boolean ok = report(results, rates, seconds, started, loadBefore, loadAverage(), rigName, setup, mustNotFail);
        System.exit(ok ? 0 : 1);
    }

    private static String f(double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        return v >= 100 ? String.format(Locale.ROOT, "%,.0f", v) : String.format(Locale.ROOT, "%.1f", v);
    }

    private static boolean report(List<Rate> results, int[] rates, double seconds, Instant started, String loadBefore,
                                  String loadAfter, String rigName, Map<String, String> setup, int mustNotFail) {
        StringBuilder o = new StringBuilder();
        o.append("# Packet loss on fabric/tcp (LossBench)\n\n");
        o.append("- started ").append(started).append(", ").append(Duration.between(started, Instant.now()).toSeconds())
                .append(" s in all; ").append(seconds).append(" s per measurement\n");
        o.append("- rig: ").append(rigName).append("; loss applied in both directions at once\n");
        o.append("- host: ").append(Runtime.getRuntime().availableProcessors()).append(" CPUs, ")
                .append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.version"))
                .append(", JDK ").append(Runtime.version()).append('\n');
        o.append("- load average before: ").append(loadBefore).append("; after: ").append(loadAfter).append('\n');
        setup.forEach((k, v) -> o.append("- ").append(k).append(": ").append(v).append('\n'));
        o.append("\n## Summary: latency p50 / p99 (µs, chained) and throughput, per loss rate (each way)\n\n");
        o.append("| loss | dwrite 8 B | dwrite 4 KiB | write 8 B | write 4 KiB | read 8 B | read 4 KiB |")
                .append(" durable 4 KiB x").append(IN_FLIGHT).append(" | writeAll 4 KiB | failed |\n");
        o.append("|---|---|---|---|---|---|---|---|---|---|\n");
        for (Rate r : results) {
            o.append("| ").append(r.percent()).append(" %");
            for (Result c : r.chained()) {
                o.append(" | ").append(f(c.percentile(0.5))).append(" / ").append(f(c.percentile(0.99)));
            }
            for (Result t : r.throughput()) {
                o.append(" | ").append(f(t.opsPerSecond())).append(" ops/s, ")
                        .append(f(t.opsPerSecond() * BIG / 1e6)).append(" MB/s");
            }
            int failed = r.chained().stream().mapToInt(Result::failed).sum()
                    + r.throughput().stream().mapToInt(Result::failed).sum();
            o.append(" | ").append(failed).append(" |\n");
        }
        o.append("\n## Per measurement\n\n");
        o.append("| loss | measurement | ops | p50 µs | p99 µs | max ms | ≥ 200 ms | ops/s | MB/s | failed | durable checked / missing |\n");
        o.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        boolean ok = true;
        List<String> problems = new ArrayList<>();
        for (Rate r : results) {
            List<Result> all = new ArrayList<>(r.chained());
            all.addAll(r.throughput());
            for (Result m : all) {
                int size = m.what.contains(" 8 B") ? 8 : BIG;
                boolean chainedOne = !m.micros.isEmpty();
                o.append("| ").append(r.percent()).append(" % | ").append(m.what).append(" | ").append(m.ops)
                        .append(" | ").append(chainedOne ? f(m.percentile(0.5)) : "–")
                        .append(" | ").append(chainedOne ? f(m.percentile(0.99)) : "–")
                        .append(" | ").append(chainedOne ? f(m.max() / 1e3) : "–")
                        .append(" | ").append(chainedOne ? Long.toString(m.atLeast(200)) : "–")
                        .append(" | ").append(f(m.opsPerSecond()))
                        .append(" | ").append(f(m.opsPerSecond() * size / 1e6))
                        .append(" | ").append(m.failed())
                        .append(" | ").append(m.landedChecked == 0 && !m.what.startsWith("d") ? "–"
                                : m.landedChecked + " / " + m.landedMissing).append(" |\n");
                if (m.landedMissing > 0) {
                    ok = false;
                    problems.add(r.percent() + " %: " + m.what + ": " + m.landedMissing + " completed durable writes"
                            + " not in the peer's memory");
                }
                if (m.failed() > 0 && r.percent() <= mustNotFail) {
                    ok = false;
                    problems.add(r.percent() + " %: " + m.what + ": " + m.failed() + " operations failed: " + m.failures);
                }
                if (m.ops == 0) {
                    ok = false;
                    problems.add(r.percent() + " %: " + m.what + ": no operation completed");
                }
            }
        }
        o.append("\n## The link per rate\n\n");
        o.append("| loss | packets dropped to the peer | to the client | TCP segments retransmitted by the client |")
                .append(" by the peer | seconds |\n|---|---|---|---|---|---|\n");
        for (Rate r : results) {
            o.append("| ").append(r.percent()).append(" % | ").append(r.dropsToPeer()).append(" | ")
                    .append(r.dropsToClient()).append(" | ").append(r.clientRetrans()).append(" | ")
                    .append(r.peerRetrans()).append(" | ").append(f(r.seconds())).append(" |\n");
        }
        o.append("\n## Failures, by cause\n\n");
        boolean any = false;
        for (Rate r : results) {
            for (Result m : concat(r.chained(), r.throughput())) {
                for (Map.Entry<String, Integer> e : m.failures.entrySet()) {
                    o.append("- ").append(r.percent()).append(" %, ").append(m.what).append(": ").append(e.getValue())
                            .append(" x ").append(e.getKey()).append('\n');
                    any = true;
                }
            }
        }
        if (!any) {
            o.append("none\n");
        }
        o.append("\n## Verdict\n\n");
        if (ok) {
            o.append("PASS: no operation failed at ").append(mustNotFail)
                    .append(" % or less, and every completed durable write checked was in the peer's memory\n");
        } else {
            o.append("FAIL:\n");
            problems.forEach(p -> o.append("- ").append(p).append('\n'));
        }
        System.out.print(o);
        System.out.flush();
        return ok;
    }

    private static List<Result> concat(List<Result> a, List<Result> b) {
        List<Result> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
