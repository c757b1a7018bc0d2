package io.cqflux.benchmarks;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.RegionAccess;
import io.cqflux.epoll.WaitStrategy;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;

/**
 * The fabric goals measured in pairs ({@code ./cqflux bench paired}): each figure runs as C
 * ({@code benchmarks/c/fabric_rma_bench.c -f <figure>}) and as cqflux's reactive API, one right
 * after the other, several times; the ratio is taken within each pair and reported as the median
 * of the pairs with their range.
 *
 * <p>Why pairs: on a 2-vCPU host the speed of both sides drifts by up to 40 % over minutes (two
 * full {@code ./cqflux bench} runs 20 minutes apart moved every row, untouched ones included), and
 * the JMH run divides by C figures taken minutes before and after it. Here the two sides of a ratio
 * are taken seconds apart, in alternating order (C first in odd pairs, cqflux first in even ones),
 * so drift that is slow against a pair cancels out of it, and the spread over the pairs shows what
 * is left.
 *
 * <p>The figures, each with its C twin:
 * <ul>
 *   <li>{@code <op>.<size>.<mode>.lat}: {@code read()} or {@code write()} of 8 B or 4 KiB, one in
 *       flight, each subscribed from the previous one's completion on the loop thread
 *       ({@code concatMap(..., 1)}, as {@link RpmaLatBench}); a sample is the time between two
 *       consecutive completions. C's sample is post to completion. Modes: {@code busy} (both
 *       instances' loops {@link WaitStrategy#BUSY_POLL}, C's client and server threads busy-poll),
 *       {@code epoll} (both {@link WaitStrategy#BLOCKING}; C's threads sleep in {@code epoll_wait}),
 *       {@code adaptive} ({@link Strategies#of ADAPTIVE}, as the JMH benchmarks', against C's busy
 *       figure). Reported: p50 over p50 (the goal's measure) and mean over mean.</li>
 *   <li>{@code write.8.<mode>.tput.w64}: {@link RdmaConnection#writeAll} of 8-byte writes with 64
 *       in flight (128 send credits; checked), against C's window of 64 signaled writes; reported as
 *       cqflux's ops/s over C's.</li>
 * </ul>
 *
 * <p>Each cqflux run builds its own two instances, connects over {@code 127.0.0.1}, warms up and
 * measures, and closes both before the C program starts, so no loop of ours spins while C runs
 * (the machine may have two cores). The JIT's code outlives the instances: a warm-up pass over every
 * figure ("pair 0", not reported) runs first.
 *
 * <p>{@code FabricPairedBench --summarize FILE...} prints the summary of earlier runs' {@code paired.txt}
 * files, pooled.
 *
 * <p>Usage: {@code FabricPairedBench -c <fabric_rma_bench> [-P pairs] [-n iterations] [-w warm-up]
 * [-f figure-regex] [-r receive-CQ size] [-b loop batch] [--out DIR]}; {@code -r} sets the receive CQ
 * of cqflux's connections (default: {@link ConnectionConfig#DEFAULT}'s), {@code -b} the loops'
 * completion batch ({@code Cqflux.Builder.batchSize}); writes {@code DIR/paired.txt} (one line
 * per run) and {@code DIR/summary.md}.
 */
public final class FabricPairedBench {

    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private static final long REGION = 1 << 20;
    /** Writes in flight in the throughput figure: the performance goal, C's {@code WIDE_WINDOW}. */
    static final int TPUT_WINDOW = 64;
    /** How long one C run may take (a latency figure takes a second or two, a throughput one less). */
    private static final Duration C_RUN_LIMIT = Duration.ofSeconds(120);
    /** Operations per figure, at least, of the unreported warm-up pass. */
    private static final int WARM_PASS = 20_000;
    /** The figures, in run order. */
    static final List<String> FIGURES = figures();

    /** The connection configuration of cqflux's runs ({@code -r} sets its receive CQ). */
    private static ConnectionConfig base = ConnectionConfig.DEFAULT;
    /** The loops' completion batch ({@code -b}; null: {@code Cqflux.Builder}'s default). */
    private static Integer loopBatch;
    private static final String OPTIONS = "-c fabric_rma_bench, -P pairs, -n iterations, -w warm-up,"
            + " -f figure-regex, -r receive-CQ size, -b loop batch, --out dir";

    private FabricPairedBench() {
    }

    private static List<String> figures() {
        List<String> f = new ArrayList<>();
        for (String mode : List.of("busy", "epoll", "adaptive")) {
            for (String op : List.of("write", "read")) {
                for (int size : new int[] {8, 4096}) {
                    f.add(op + "." + size + "." + mode + ".lat");
                }
            }
            f.add("write.8." + mode + ".tput.w" + TPUT_WINDOW);
        }
        return List.copyOf(f);
    }

    /**
     * One run of one side of a pair.
     *
     * @param pair the pair, from 1
     * @param side {@code c} or {@code cqflux}
     * @param figure the figure's name, e.g. {@code write.8.busy.lat}
     * @param p50 the median latency in µs, or the ops/s of a throughput figure
     * @param mean the mean latency in µs, or the ops/s of a throughput figure
     */
    record Run(int pair, String side, String figure, double p50, double mean) {
        /** {@return the line {@code paired.txt} holds for this run} */
        String line() {
            return String.format(Locale.ROOT, "pair %d %s %s p50 %.3f mean %.3f", pair, side, figure, p50, mean);
        }

        /**
         * @param line a line of {@code paired.txt}
         * @return the run it records
         */
        static Run parse(String line) {
            String[] w = line.trim().split("\\s+");
            if (w.length != 8 || !w[0].equals("pair") || !w[4].equals("p50") || !w[6].equals("mean")) {
                throw new IllegalArgumentException("not a paired run line: " + line);
            }
            return new Run(Integer.parseInt(w[1]), w[2], w[3], Double.parseDouble(w[5]), Double.parseDouble(w[7]));
        }
    }

    /**
     * @param args see the class comment
     * @throws Exception when a run fails
     */
    public static void main(String[] args) throws Exception {
        Path cProgram = null;
        Path out = null;
        int pairs = 8;
        int iters = 20_000;
        int warmup = 5_000;
        Pattern select = Pattern.compile(".*");
        Integer rcq = null;
        Integer batch = null;
        if (args.length > 0 && args[0].equals("--summarize")) {
            summarizeFiles(List.of(args).subList(1, args.length));
            return;
        }
        for (int i = 0; i < args.length; i++) {
            if (i + 1 == args.length) {
                throw new IllegalArgumentException(args[i] + " wants a value (" + OPTIONS + ")");
            }
            switch (args[i]) {
                case "-c" -> cProgram = Path.of(args[++i]);
                case "-P" -> pairs = Integer.parseInt(args[++i]);
                case "-n" -> iters = Integer.parseInt(args[++i]);
                case "-w" -> warmup = Integer.parseInt(args[++i]);
                case "-f" -> select = Pattern.compile(args[++i]);
                case "--out" -> out = Path.of(args[++i]);
                case "-r" -> rcq = Integer.parseInt(args[++i]);
                case "-b" -> batch = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i] + " (" + OPTIONS + ")");
            }
        }
        if (cProgram == null || !Files.isExecutable(cProgram)) {
            throw new IllegalArgumentException("-c " + cProgram + ": want the compiled fabric_rma_bench");
        }
        if (pairs < 4 || pairs % 2 != 0) {
            throw new IllegalArgumentException("-P " + pairs + ": want an even count of 4 or more (a spread, and C"
                    + " first in as many pairs as cqflux)");
        }
        if (iters < 1_000) {
            throw new IllegalArgumentException("-n " + iters + " is below 1000");
        }
        if (warmup < 0) {
            throw new IllegalArgumentException("-w " + warmup + " is negative");
        }
        // A bad -r fails here, with ConnectionConfig's message naming the value and the bound.
        base = rcq == null ? ConnectionConfig.DEFAULT : ConnectionConfig.DEFAULT.withReceiveCompletionQueueSize(rcq);
        loopBatch = batch;
        if (batch != null) {
            Cqflux.builder().batchSize(batch); // a bad -b fails here, with the builder's message, before any output
        }
        Pattern figureRegex = select;
        List<String> chosen = FIGURES.stream().filter(f -> figureRegex.matcher(f).matches()).toList();
        if (chosen.isEmpty()) {
            throw new IllegalArgumentException("-f " + select + " matches none of " + FIGURES);
        }
        if (out != null) {
            Files.createDirectories(out);
        }
        PrintStream raw = out == null ? null : new PrintStream(Files.newOutputStream(out.resolve("paired.txt")),
                true, StandardCharsets.UTF_8);
        say(raw, String.format(Locale.ROOT, "# %s pairs=%d iterations=%d warmup=%d java=%s cpus=%d config=%s",
                Instant.now(), pairs, iters, warmup, Runtime.version(), Runtime.getRuntime().availableProcessors(),
                base) + " batch=" + (loopBatch == null ? "default" : loopBatch));
        // Pair 0: the JIT's warm-up, cqflux only, not reported; at least WARM_PASS operations per
        // figure, so that a short -n does not leave the first pairs to the JIT (-n 3000: one pair's
        // mean 6.8 x C's).
        for (String f : chosen) {
            cqflux(f, Math.max(iters, WARM_PASS), warmup);
        }
        List<Run> runs = new ArrayList<>();
        for (int p = 1; p <= pairs; p++) {
            say(raw, "# pair " + p + " at " + Instant.now() + ", load average " + loadAverage());
            for (String f : chosen) {
                boolean cFirst = p % 2 == 1;
                for (int k = 0; k < 2; k++) {
                    boolean c = (k == 0) == cFirst;
                    double[] r = c ? c(cProgram, f, iters) : cqflux(f, iters, warmup);
                    Run run = new Run(p, c ? "c" : "cqflux", f, r[0], r[1]);
                    runs.add(run);
                    say(raw, run.line());
                }
            }
        }
        String summary = summary(runs);
        System.out.println();
        System.out.print(summary);
        if (out != null) {
            Files.writeString(out.resolve("summary.md"), summary, StandardCharsets.UTF_8);
            raw.close();
        }
    }

    private static void say(PrintStream raw, String line) {
        System.out.println(line);
        System.out.flush();
        if (raw != null) {
            raw.println(line);
        }
    }

    private static String loadAverage() {
        String l = LoadAverage.read(3, " ");
        return l == null ? "unknown" : l;
    }

    // ---- C -------------------------------------------------------------------------------------

    /** {@return the C twin's name of a figure: {@code adaptive} has none of its own, it is set against busy} */
    static String cFigure(String figure) {
        return figure.replace(".adaptive.", ".busy.");
    }

    /** Runs the C program for one figure; {@return {p50, mean} in µs, or {ops/s, ops/s}} */
    private static double[] c(Path program, String figure, int iters) throws IOException, InterruptedException {
        String name = cFigure(figure);
        ProcessBuilder pb = new ProcessBuilder(program.toString(), "-f", name, "-n", Integer.toString(iters))
                .redirectError(ProcessBuilder.Redirect.INHERIT);
        // See run.sh: libinfinipath's constructor would take over the C program's signal handlers.
        pb.environment().put("IPATH_NO_BACKTRACE", "1");
        Process proc = pb.start();
        // A C run that stalls never closes its output: past the limit the watchdog kills it, which
        // ends the read below.
        AtomicBoolean killed = new AtomicBoolean();
        CompletableFuture.delayedExecutor(C_RUN_LIMIT.toSeconds(), TimeUnit.SECONDS).execute(() -> {
            if (proc.isAlive()) {
                killed.set(true);
                proc.destroyForcibly();
            }
        });
        Map<String, CBaselines.Figure> values;
        try {
            // stdout is read to its end before the wait (stderr goes to ours): no pipe fills up.
            try (BufferedReader r = new BufferedReader(new InputStreamReader(proc.getInputStream(),
                    StandardCharsets.UTF_8))) {
                values = CBaselines.parse(r.lines().toList());
            }
            if (!proc.waitFor(C_RUN_LIMIT.toSeconds(), TimeUnit.SECONDS) || killed.get()) {
                throw new IllegalStateException(program + " -f " + name + " ran past " + C_RUN_LIMIT.toSeconds()
                        + " s and was killed");
            }
        } finally {
            // A failure above (a line that does not parse, an interrupt) leaves no C program behind.
            proc.destroyForcibly();
        }
        int rc = proc.exitValue();
        if (rc != 0) {
            throw new IllegalStateException(program + " -f " + name + " exited with " + rc);
        }
        if (name.contains(".tput.")) {
            double ops = figure(values, program, name, "fabric." + name);
            return new double[] {ops, ops};
        }
        return new double[] {figure(values, program, name, "fabric." + name + ".p50"),
                figure(values, program, name, "fabric." + name + ".mean")};
    }

    /** {@return the value of one figure the C run printed; a missing one fails naming what it printed} */
    private static double figure(Map<String, CBaselines.Figure> values, Path program, String name, String figure) {
        CBaselines.Figure f = values.get(figure);
        if (f == null) {
            throw new IllegalStateException(program + " -f " + name + " printed no " + figure + ": " + values.keySet());
        }
        return f.value();
    }

    // ---- cqflux --------------------------------------------------------------------------------

    private static Cqflux.Builder builder(WaitStrategy strategy, ConnectionConfig config) {
        Cqflux.Builder b = Cqflux.builder().transport(TransportChoice.FABRIC)
                .localAddress(InetAddress.getLoopbackAddress()).waitStrategy(strategy).connectionConfig(config);
        return loopBatch == null ? b : b.batchSize(loopBatch);
    }

    /** Runs cqflux's side of one figure; {@return {p50, mean} in µs, or {ops/s, ops/s}} */
    private static double[] cqflux(String figure, int iters, int warmup) {
        String[] w = figure.split("\\.");
        String op = w[0];
        int size = Integer.parseInt(w[1]);
        WaitStrategy strategy = Strategies.of(switch (w[2]) {
            case "busy" -> "BUSY_POLL";
            case "epoll" -> "BLOCKING";
            case "adaptive" -> "ADAPTIVE";
            default -> throw new IllegalArgumentException(figure);
        });
        boolean tput = w[3].equals("tput");
        InetAddress lo = InetAddress.getLoopbackAddress();
        // 128 send credits for the throughput figure: writeAll keeps half of them in flight.
        ConnectionConfig config = tput ? base.withSendQueueSize(2 * TPUT_WINDOW) : base;
        try (Arena arena = Arena.ofShared();
             Cqflux server = builder(strategy, config).build();
             Cqflux client = builder(strategy, config).build()) {
            Region exposed = server.register(arena.allocate(REGION, 4096),
                    RegionAccess.WRITE_DST, RegionAccess.READ_SRC, RegionAccess.FLUSH_TYPE_VISIBILITY);
            RdmaServer listening = server.bind(new InetSocketAddress(lo, 0), c -> c.onDispose(), exposed)
                    .block(TIMEOUT);
            RdmaConnection connection = client.connect(listening.address()).block(TIMEOUT);
            PeerRegion remote = connection.remoteRegion(0);
            Region local = client.register(arena.allocate(REGION, 4096),
                    RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
            double[] result;
            if (tput) {
                // C's count and warm-up: 5 × iterations measured after a tenth of that unmeasured.
                int total = 5 * iters;
                double ops = ChainedLatency.writeAllThroughput(connection, remote, local, TPUT_WINDOW, size,
                        total / 10, total, TIMEOUT);
                result = new double[] {ops, ops};
            } else {
                ChainedLatency.chain(connection, op, remote, local, size, warmup, TIMEOUT);
                ChainedLatency.Stats st = ChainedLatency.stats(
                        ChainedLatency.chain(connection, op, remote, local, size, iters, TIMEOUT));
                result = new double[] {st.p50(), st.mean()};
            }
            connection.close();
            return result;
        }
    }

    // ---- the report ----------------------------------------------------------------------------

    /**
     * {@code --summarize FILE...}: prints the summary of the runs in one or more {@code paired.txt}
     * files, pooled (each file's pairs renumbered after the previous file's), e.g. several runs of
     * one configuration taken in turn with another.
     */
    private static void summarizeFiles(List<String> files) throws IOException {
        if (files.isEmpty()) {
            throw new IllegalArgumentException("--summarize wants one or more paired.txt files");
        }
        System.out.print(summary(pool(files.stream().map(Path::of).toList())));
    }

    /**
     * @param files {@code paired.txt} files
     * @return their runs, each file's pairs numbered after the previous file's highest
     * @throws IOException when a file cannot be read
     * @throws IllegalArgumentException when two files' headers name different configurations
     *     ({@code config=... batch=...}), a header named none counting as one of its own: their
     *     pairs measured different things
     */
    static List<Run> pool(List<Path> files) throws IOException {
        List<Run> all = new ArrayList<>();
        int offset = 0;
        String config = null;
        Path configFile = null;
        for (Path f : files) {
            int highest = 0;
            String own = "no config= header";
            for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                int at = line.startsWith("# ") ? line.indexOf(" config=") : -1;
                if (at >= 0) {
                    own = line.substring(at + 1);
                }
                if (line.startsWith("pair ")) {
                    Run r = Run.parse(line);
                    all.add(new Run(r.pair() + offset, r.side(), r.figure(), r.p50(), r.mean()));
                    highest = Math.max(highest, r.pair());
                }
            }
            if (config == null) {
                config = own;
                configFile = f;
            } else if (!config.equals(own)) {
                throw new IllegalArgumentException(f + " was run with " + own + ", " + configFile + " with "
                        + config + ": pool runs of one configuration");
            }
            offset += highest;
        }
        return all;
    }

    /**
     * {@return the bound for a figure: at most this cqflux ÷ C for latency, at least this
     * cqflux ÷ C for throughput}
     */
    static double goal(String figure) {
        if (figure.contains(".tput.")) {
            return 0.95;
        }
        return figure.startsWith("read.8.") || figure.startsWith("write.8.") ? 1.10 : 1.05;
    }

    /**
     * The summary: per figure, the medians of each side and the median of the per-pair ratios with
     * their range, and how many pairs met the goal.
     *
     * @param runs every run, both sides; a figure needs both sides of a pair for that pair to count
     * @return a markdown table with its legend
     */
    static String summary(List<Run> runs) {
        Map<String, Map<Integer, double[]>> c = new LinkedHashMap<>();
        Map<String, Map<Integer, double[]>> j = new LinkedHashMap<>();
        for (Run r : runs) {
            Map<String, Map<Integer, double[]>> side = switch (r.side()) {
                case "c" -> c;
                case "cqflux" -> j;
                default -> throw new IllegalArgumentException("side " + r.side() + " is not c or cqflux");
            };
            if (side.computeIfAbsent(r.figure(), k -> new LinkedHashMap<>())
                    .put(r.pair(), new double[] {r.p50(), r.mean()}) != null) {
                throw new IllegalArgumentException("pair " + r.pair() + " has two " + r.side() + " runs of "
                        + r.figure());
            }
        }
        StringBuilder sb = new StringBuilder();
        sb.append("| figure | pairs | C (median) | cqflux (median) | cqflux ÷ C, median of pairs [range] ")
                .append("| of means [range] | goal | pairs within the goal | goal met |\n")
                .append("|---|---|---|---|---|---|---|---|---|\n");
        List<String> names = new ArrayList<>(j.keySet());
        names.removeIf(f -> !c.containsKey(f));
        for (String f : names) {
            Map<Integer, double[]> cf = c.get(f);
            Map<Integer, double[]> jf = j.get(f);
            List<Integer> both = jf.keySet().stream().filter(cf::containsKey).sorted().toList();
            if (both.isEmpty()) {
                continue;
            }
            boolean tput = f.contains(".tput.");
            int n = both.size();
            double[] cv = new double[n];
            double[] jv = new double[n];
            double[] ratioP50 = new double[n];
            double[] ratioMean = new double[n];
            for (int i = 0; i < n; i++) {
                double[] a = cf.get(both.get(i));
                double[] b = jf.get(both.get(i));
                cv[i] = a[0];
                jv[i] = b[0];
                ratioP50[i] = b[0] / a[0];
                ratioMean[i] = b[1] / a[1];
            }
            double g = goal(f);
            long within = Arrays.stream(ratioP50).filter(r -> tput ? r >= g : r <= g).count();
            double med = CBaselines.median(ratioP50);
            boolean met = tput ? med >= g : med <= g;
            String unit = tput ? " ops/s" : " µs";
            String fmt = tput ? "%.0f" : "%.2f";
            sb.append(String.format(Locale.ROOT, "| %s | %d | " + fmt + "%s | " + fmt + "%s | %.3f [%.3f–%.3f] | %s | %s %.2f | %d of %d | %s |%n",
                    f, n, CBaselines.median(cv), unit, CBaselines.median(jv), unit, med, min(ratioP50),
                    max(ratioP50), tput ? "—" : String.format(Locale.ROOT, "%.3f [%.3f–%.3f]",
                            CBaselines.median(ratioMean), min(ratioMean),
                            max(ratioMean)),
                    tput ? "≥" : "≤", g, within, n, met ? "yes" : "no"));
        }
        sb.append("\nLatency figures: p50 and mean in µs; cqflux ÷ C above 1 means cqflux is slower, and the goal")
                .append(" is an upper bound (the goal: 1.10 at 8 B, 1.05 at 4 KiB). Throughput figures: ops/s,")
                .append(" cqflux ÷ C below 1 means cqflux is slower; the goal (0.95) is a lower bound. Each ratio")
                .append(" is taken within one pair (the two sides run back to back, in alternating order); the")
                .append(" table gives the median of the pairs' ratios, their range, and how many pairs alone were")
                .append(" within the goal. `adaptive` is cqflux's ADAPTIVE loop against C's busy-polling figure.\n");
        return sb.toString();
    }

    private static double min(double[] v) {
        return Arrays.stream(v).min().orElseThrow();
    }

    private static double max(double[] v) {
        return Arrays.stream(v).max().orElseThrow();
    }
}
