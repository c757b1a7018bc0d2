package io.cqflux.benchmarks;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;

/**
 * The ratio table: each Java figure next to the baseline it is shaped after (a C program, or the
 * layer below it), as "time per operation" so that a ratio above 1 always means "slower than the
 * baseline by that factor". Rows whose inputs are missing (a benchmark excluded, a transport not
 * available) are left out, and the raw figures are listed in full below. A C figure is the median
 * over the run's C repeats ({@link CBaselines}), and each C row also shows the ratio's range over
 * the repeats and their count.
 */
final class Report {

    /**
     * A figure from either side, normalised to microseconds per operation.
     *
     * @param microsPerOp for a C figure: from the median over the C repeats
     * @param repeats for a C figure: each repeat's value alone, normalised the same way; for a Java
     *     figure {@code null}
     */
    private record Figure(String shown, double microsPerOp, double[] repeats) {
        Figure(String shown, double microsPerOp) {
            this(shown, microsPerOp, null);
        }
    }

    /**
     * One row of the table.
     *
     * @param median the C median beside a C mean baseline, or {@code null}: on a loaded machine a
     *     few preempted operations dominate a mean, so the ratio to the median is shown too
     */
    private record Row(String section, String what, Figure java, String baselineName, Figure baseline,
                       Figure median) {
        double ratio() {
            return java.microsPerOp() / baseline.microsPerOp();
        }

        String medianRatio() {
            return median == null ? "" : String.format(Locale.ROOT, "%.2f", java.microsPerOp() / median.microsPerOp());
        }

        /**
         * {@return the ratio's min–max against each C repeat alone, or "" for a Java baseline;
         * when the numerator is a C figure too (a floor row), over every pairing of its repeats
         * with the baseline's, so that both sides' spread shows}
         */
        String range() {
            if (baseline.repeats() == null) {
                return "";
            }
            if (java.repeats() == null) {
                return Report.range(java.microsPerOp(), baseline.repeats());
            }
            double lo = Double.MAX_VALUE;
            double hi = 0;
            for (double n : java.repeats()) {
                double[] r = ratioRange(n, baseline.repeats());
                lo = Math.min(lo, r[0]);
                hi = Math.max(hi, r[1]);
            }
            return String.format(Locale.ROOT, "%.2f–%.2f", lo, hi);
        }

        /** {@return the same for the "vs C p50" column} */
        String medianRange() {
            return median == null || median.repeats() == null ? "" : Report.range(java.microsPerOp(), median.repeats());
        }

        /** {@return how many C repeats gave the baseline figure, or "" for a Java baseline} */
        String repeats() {
            return baseline.repeats() == null ? "" : Integer.toString(baseline.repeats().length);
        }
    }

    /**
     * @param javaMicros the Java figure, µs per operation
     * @param baselineMicros each C repeat's figure, µs per operation; at least one
     * @return the smallest and the largest of {@code javaMicros / baselineMicros[i]}
     */
    static double[] ratioRange(double javaMicros, double[] baselineMicros) {
        double[] r = Arrays.stream(baselineMicros).map(b -> javaMicros / b).toArray();
        return new double[] {Arrays.stream(r).min().orElseThrow(), Arrays.stream(r).max().orElseThrow()};
    }

    private static String range(double javaMicros, double[] baselineMicros) {
        double[] r = ratioRange(javaMicros, baselineMicros);
        return String.format(Locale.ROOT, "%.2f–%.2f", r[0], r[1]);
    }

    private final Map<String, RunResult> jmh = new TreeMap<>();
    private final CBaselines c;
    private final boolean quick;
    private final List<Row> rows = new ArrayList<>();
    /** The JMH results some row looked up (the others are named under the table). */
    private final java.util.Set<String> looked = new java.util.HashSet<>();

    private Report(Collection<RunResult> results, CBaselines c, boolean quick) {
        for (RunResult r : results) {
            jmh.put(key(r.getParams()), r);
        }
        this.c = c;
        this.quick = quick;
    }

    /**
     * @param results JMH's results
     * @param c the C figures
     * @param quick whether this was a {@code --quick} run
     * @return the report with its rows computed
     */
    static Report of(Collection<RunResult> results, CBaselines c, boolean quick) {
        Report r = new Report(results, c, quick);
        r.build();
        r.buildIssue13();
        r.buildGoals();
        return r;
    }

    private static String key(BenchmarkParams p) {
        String name = p.getBenchmark();
        StringBuilder b = new StringBuilder(name.substring(name.lastIndexOf('.', name.lastIndexOf('.') - 1) + 1));
        List<String> keys = new ArrayList<>(p.getParamsKeys());
        keys.sort(null);
        String sep = "[";
        for (String k : keys) {
            if (p.getParam(k).equals("default")) {
                continue; // a parameter left at its default (ReactorBenchmarks.Pair.blockSpin): no part of the name
            }
            b.append(sep).append(k).append('=').append(p.getParam(k));
            sep = ",";
        }
        return sep.equals("[") ? b.toString() : b.append(']').toString(); // no parameter shown: no brackets
    }

    private Figure java(String key) {
        looked.add(key);
        RunResult r = jmh.get(key);
        return r == null ? null : figure(r);
    }

    private static Figure figure(RunResult r) {
        Result<?> p = r.getPrimaryResult();
        double score = p.getScore();
        String unit = p.getScoreUnit();
        double us = switch (unit) {
            case "us/op" -> score;
            case "ns/op" -> score / 1e3;
            case "ms/op" -> score * 1e3;
            case "ops/s" -> 1e6 / score;
            case "ops/ms" -> 1e3 / score;
            case "ops/us" -> 1 / score;
            default -> Double.NaN;
        };
        double error = p.getScoreError();
        String shown = Double.isNaN(error) ? fmt(score) + " " + unit : fmt(score) + " ± " + fmt(error) + " " + unit;
        return new Figure(shown, us);
    }

    private Figure c(String name) {
        CBaselines.Figure f = c.get(name);
        if (f == null) {
            return null;
        }
        // The divisor is the median over the C repeats (as printed: µs, or ops/s before inverting).
        double us = micros(f.value(), f.unit());
        double[] each = Arrays.stream(f.values()).map(v -> micros(v, f.unit())).toArray();
        String shown = fmt(f.value()) + " " + f.unit();
        if (f.count() > 1) {
            shown += " (median of " + f.count() + ": " + fmt(f.min()) + "–" + fmt(f.max()) + ")";
        }
        return new Figure(shown, us, each);
    }

    private static double micros(double value, String unit) {
        return switch (unit) {
            case "us" -> value;
            case "ops/s" -> 1e6 / value;
            default -> Double.NaN;
        };
    }

    private void row(String section, String what, Figure java, String baselineName, Figure baseline) {
        if (java != null && baseline != null) {
            Figure median = null;
            if (baselineName.startsWith("C ") && baselineName.endsWith(".mean")) {
                median = c(baselineName.substring(2, baselineName.length() - ".mean".length()) + ".p50");
            }
            rows.add(new Row(section, what, java, baselineName, baseline, median));
        }
    }

    private static final String[] STRATEGIES = {"BLOCKING", "BUSY_POLL", "ADAPTIVE"};

    /** The C mode a wait strategy is shaped like: BLOCKING sleeps in epoll, the others poll. */
    private static String cMode(String strategy) {
        return strategy.equals("BLOCKING") ? "epoll" : "busy";
    }

    private void build() {
        // 1. Event loop wake-up against the bare eventfd + epoll path.
        for (String s : STRATEGIES) {
            row("loop", "execute() round trip, " + s, java("LoopBenchmarks.executeRoundTrip[strategy=" + s + "]"),
                    "C eventfd.spin.rtt.mean", c("eventfd.spin.rtt.mean"));
        }
        // 2. Batch-size effect: each batch against batch 1 (same strategy).
        for (String s : new String[] {"BLOCKING", "BUSY_POLL"}) {
            Figure one = java("LoopBenchmarks.drainBurst[batch=1,strategy=" + s + "]");
            for (String batch : new String[] {"16", "64"}) {
                row("loop", "drain, batch " + batch + ", " + s,
                        java("LoopBenchmarks.drainBurst[batch=" + batch + ",strategy=" + s + "]"),
                        "Java drain, batch 1", one);
            }
        }
        // 2b. A downcall whose pointer argument is in a shared arena, against an unscoped view
        // of the same memory (the per-operation buffers of the transports and the loop).
        row("ffm", "downcall, shared-arena argument", java("DowncallBenchmarks.storeAndCall[scope=SHARED]"),
                "Java downcall, unscoped argument", java("DowncallBenchmarks.storeAndCall[scope=UNSCOPED]"));
        // 3. Fabric transport through the SPI and the loop, against the C program on libfabric.
        for (String op : new String[] {"write", "read"}) {
            for (String size : new String[] {"8", "4096"}) {
                for (String s : STRATEGIES) {
                    String cName = "fabric." + op + "." + size + "." + cMode(s) + ".lat.mean";
                    row("fabric SPI", op + " " + size + " B latency, " + s,
                            java("FabricSpiBenchmarks." + op + "Latency[size=" + size + ",strategy=" + s + "]"),
                            "C " + cName, c(cName));
                }
            }
        }
        for (String size : new String[] {"8", "4096"}) {
            for (String s : STRATEGIES) {
                String cName = "fabric.write." + size + "." + cMode(s) + ".tput.w32";
                row("fabric SPI", "write " + size + " B throughput, 32 in flight, " + s,
                        java("FabricSpiBenchmarks.writeThroughput[size=" + size + ",strategy=" + s + "]"),
                        "C " + cName, c(cName));
            }
        }
        // 4. The reactive API against the raw SPI path of the same shape.
        for (String size : new String[] {"8", "4096"}) {
            for (String s : STRATEGIES) {
                Figure spi = java("FabricSpiBenchmarks.writeLatency[size=" + size + ",strategy=" + s + "]");
                row("reactor", "write() Mono " + size + " B latency, " + s,
                        java("ReactorBenchmarks.writeLatency[size=" + size + ",strategy=" + s + "]"),
                        "SPI write latency", spi);
                row("reactor", "write().block() from a caller thread " + size + " B, " + s,
                        java("ReactorBenchmarks.writeBlockLatency[size=" + size + ",strategy=" + s + "]"),
                        "SPI write latency", spi);
                row("reactor", "durableWrite() " + size + " B latency, " + s,
                        java("ReactorBenchmarks.durableWriteLatency[size=" + size + ",strategy=" + s + "]"),
                        "SPI write latency", spi);
                row("reactor", "writeAll() " + size + " B throughput, " + s,
                        java("ReactorBenchmarks.writeAllThroughput[size=" + size + ",strategy=" + s + "]"),
                        "SPI write throughput",
                        java("FabricSpiBenchmarks.writeThroughput[size=" + size + ",strategy=" + s + "]"));
            }
        }
    }

    /**
     * The performance goals in rows of their own (added after the rows above, which stay as they were):
     * throughput with 64 writes in flight against C's {@code tput.w64}, both all signaled and with
     * one signaled write in 16 ({@code tput.w64.sel16}); and {@code write().block()} against the
     * chained {@code write()} of the same run (goal: at most 1.5).
     */
    private void buildIssue13() {
        for (String size : new String[] {"8", "4096"}) {
            for (String s : STRATEGIES) {
                String all = "fabric.write." + size + "." + cMode(s) + ".tput.w64";
                String sel = all + ".sel16";
                Figure spi = java("FabricSpiBenchmarks.writeThroughput64[size=" + size + ",strategy=" + s + "]");
                Figure reactive = java("ReactorBenchmarks.writeAllThroughput64[size=" + size + ",strategy=" + s + "]");
                row("fabric SPI", "write " + size + " B throughput, 64 in flight, " + s, spi,
                        "C " + all + " (all signaled)", c(all));
                row("fabric SPI", "write " + size + " B throughput, 64 in flight, " + s, spi,
                        "C " + sel + " (1 in 16 signaled)", c(sel));
                row("reactor", "writeAll() " + size + " B throughput, 64 in flight, " + s, reactive,
                        "C " + all + " (all signaled)", c(all));
                row("reactor", "writeAll() " + size + " B throughput, 64 in flight, " + s, reactive,
                        "C " + sel + " (1 in 16 signaled)", c(sel));
            }
        }
        for (String size : new String[] {"8", "4096"}) {
            for (String s : STRATEGIES) {
                row("reactor", "write().block() ÷ chained write() " + size + " B, " + s + " (goal ≤ 1.5)",
                        java("ReactorBenchmarks.writeBlockLatency[size=" + size + ",strategy=" + s + "]"),
                        "chained write() latency",
                        java("ReactorBenchmarks.writeLatency[size=" + size + ",strategy=" + s + "]"));
            }
        }
    }

    /**
     * The latency goals as rows: the reactive {@code write()} and {@code read()} against the
     * C program on libfabric (goal: at most 1.10 at 8 B, 1.05 at 4 KiB), and, where the run has
     * {@code jucx.txt}, against JUCX on UCX's tcp transport (goal: below 1). JUCX busy-polls its
     * workers, so it stands beside BUSY_POLL only. Its throughput figure flushes after every put,
     * so it stands beside {@code writeAll} at 32 in flight (one completion per write).
     */
    private void buildGoals() {
        for (String op : new String[] {"write", "read"}) {
            for (String size : new String[] {"8", "4096"}) {
                for (String s : STRATEGIES) {
                    String cName = "fabric." + op + "." + size + "." + cMode(s) + ".lat.mean";
                    row("goal", op + "() Mono " + size + " B latency, " + s + " (goal ≤ "
                                    + (size.equals("8") ? "1.10" : "1.05") + ")",
                            java("ReactorBenchmarks." + op + "Latency[size=" + size + ",strategy=" + s + "]"),
                            "C " + cName, c(cName));
                }
                String jucx = "jucx." + (op.equals("write") ? "put_flush" : "get") + "." + size + ".lat.mean";
                row("goal", op + "() Mono " + size + " B latency, BUSY_POLL, against JUCX (goal < 1)",
                        java("ReactorBenchmarks." + op + "Latency[size=" + size + ",strategy=BUSY_POLL]"),
                        "JUCX " + jucx, c(jucx));
                // The floor under that goal: libfabric's tcp provider driven from C against JUCX.
                // Above 1, cqflux (a layer over libfabric) can beat JUCX only by beating C.
                row("floor", "C (libfabric tcp) " + op + " " + size + " B latency, busy poll, against JUCX",
                        c("fabric." + op + "." + size + ".busy.lat.mean"), "JUCX " + jucx, c(jucx));
            }
        }
        for (String size : new String[] {"8", "4096"}) {
            String jucx = "jucx.put_flush." + size + ".tput.w32";
            row("goal", "writeAll() " + size + " B throughput, 32 in flight, BUSY_POLL, against JUCX (goal < 1)",
                    java("ReactorBenchmarks.writeAllThroughput[size=" + size + ",strategy=BUSY_POLL]"),
                    "JUCX " + jucx, c(jucx));
        }
    }

    /**
     * {@return a line naming the JMH results no row looked up, or ""} A parameter outside the
     * report's set (say {@code -p blockSpin=0}) renames a result, and every row that would have
     * used it is left out: this says so rather than drop them silently. Call after the rows were
     * built (the constructor builds them).
     */
    private String unusedNote() {
        List<String> unused = jmh.keySet().stream().filter(k -> !looked.contains(k)).toList();
        if (unused.isEmpty()) {
            return "";
        }
        return "\nJMH results in no ratio row: " + String.join(", ", unused)
                + ". JavaPathBenchmarks has no row (no C counterpart); any other result here carries"
                + " a parameter value the rows do not name (such as -p blockSpin=0), and the rows that"
                + " would have used it are missing.\n";
    }

    /** {@return the ratio table as fixed-width text for the terminal} */
    String table() {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%-12s %-56s %-26s %-48s %7s %-8s %-11s %-11s %s%n",
                "layer", "Java", "value", "baseline", "ratio", "vs C p50", "range", "p50 range", "C repeats"));
        for (Row r : rows) {
            b.append(String.format(Locale.ROOT, "%-12s %-56s %-26s %-48s %7.2f %-8s %-11s %-11s %s%n", r.section(),
                    r.what(), r.java().shown(), r.baselineName() + " " + r.baseline().shown(), r.ratio(),
                    r.medianRatio(), r.range(), r.medianRange(), r.repeats()));
        }
        if (rows.isEmpty()) {
            b.append("(no ratio: a side of every comparison is missing; see the raw figures)\n");
        }
        b.append(unusedNote());
        return b.toString();
    }

    /**
     * @param dir where the raw results of this run are
     * @return the summary in markdown
     */
    String markdown(Path dir) {
        StringBuilder b = new StringBuilder();
        b.append("# cqflux benchmark summary\n\n");
        b.append("Run ").append(Instant.now()).append(quick ? " (`--quick`: smoke settings, indicative only)" : "")
                .append("; raw results in `").append(dir.getFileName()).append("/` (JMH JSON, C output).\n");
        b.append("Machine: ").append(Runtime.getRuntime().availableProcessors()).append(" CPUs, JDK ")
                .append(Runtime.version()).append(", ").append(System.getProperty("os.name")).append(' ')
                .append(System.getProperty("os.version")).append(", load average at the end ")
                .append(loadAverage()).append(" (busy-poll figures are meaningless under load).\n");
        b.append(repeatsLine()).append("\n\n");
        b.append("Ratio = Java time per operation / baseline time per operation (for throughput:"
                + " baseline ops/s / Java ops/s), so above 1 means slower than the baseline by that factor."
                + " C latency baselines are means (JMH reports means); \"ratio vs C p50\" divides by the C"
                + " p50 instead, which a few preempted operations cannot inflate. C p99 values are in"
                + " the raw output.\n\n");
        b.append("Every C (and JUCX) figure is the median of that figure over the C repeats (each repeat runs"
                + " every C program once; the mean of the middle two for an even count), for the mean and the"
                + " p50 alike, so \"ratio\" is the Java mean ÷ the median of the C means and \"ratio vs C p50\""
                + " the Java mean ÷ the median of the C p50s. \"range\" and \"p50 range\" are the same ratio"
                + " against each C repeat alone (min–max; for a floor row, C over JUCX, every C repeat against every"
                + " JUCX repeat), \"C repeats\" how many repeats printed the baseline figure."
                + " A wide range means the C figure moved between repeats: do not read the ratio closer than"
                + " that.\n\n");
        b.append("| layer | Java | value | baseline | baseline value | ratio | ratio vs C p50 | range | p50 range"
                + " | C repeats |\n"
                + "|---|---|---|---|---|---|---|---|---|---|\n");
        for (Row r : rows) {
            b.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %.2f | %s | %s | %s | %s |%n",
                    r.section(), r.what(), r.java().shown(), r.baselineName(), r.baseline().shown(), r.ratio(),
                    r.medianRatio(), r.range(), r.medianRange(), r.repeats()));
        }
        b.append(unusedNote());
        b.append("\n## All JMH results\n\n| benchmark | score |\n|---|---|\n");
        for (Map.Entry<String, RunResult> e : jmh.entrySet()) {
            b.append("| ").append(e.getKey()).append(" | ").append(figure(e.getValue()).shown()).append(" |\n");
        }
        TreeSet<Integer> numbers = new TreeSet<>();
        c.values().values().forEach(f -> numbers.addAll(f.byRepeat().keySet()));
        b.append("\n## All C results\n\n| figure | median |");
        numbers.forEach(n -> b.append(" repeat ").append(n).append(" |"));
        b.append("\n|---|---|").append("---|".repeat(numbers.size())).append('\n');
        for (Map.Entry<String, CBaselines.Figure> e : c.values().entrySet()) {
            CBaselines.Figure f = e.getValue();
            b.append("| ").append(e.getKey()).append(" | ").append(fmt(f.value())).append(' ')
                    .append(f.unit()).append(" |");
            // every repeat's own value, blank where that repeat did not print the figure
            numbers.forEach(n -> {
                Double v = f.byRepeat().get(n);
                b.append(v == null ? " " : " " + fmt(v)).append(" |");
            });
            b.append('\n');
        }
        return b.toString();
    }

    /** {@return the header line on the C repeats: how many, when, and the load average at each start} */
    private String repeatsLine() {
        int n = c.repeatCount();
        StringBuilder b = new StringBuilder("C baselines (and JUCX): ").append(n)
                .append(n == 1 ? " repeat" : " repeats");
        List<CBaselines.Repeat> rs = c.repeats();
        if (rs.isEmpty()) {
            return b.append("; no load average recorded for them.").toString();
        }
        long before = rs.stream().filter(r -> r.phase().equals("before-jmh")).count();
        long after = rs.stream().filter(r -> r.phase().equals("after-jmh")).count();
        b.append(" (").append(before).append(" before JMH, ").append(after).append(" after)")
                .append("; load average (1 / 5 / 15 min) at each repeat's start:");
        String sep = " ";
        for (CBaselines.Repeat r : rs) {
            b.append(sep).append('#').append(r.number()).append(' ').append(r.phase()).append(' ')
                    .append(r.start()).append(": ").append(r.loadAverage());
            sep = "; ";
        }
        if (n == 1) {
            b.append(". A single C run: its ranges are one value wide and say nothing about how much it varies");
        }
        return b.append('.').toString();
    }

    private static String loadAverage() {
        String l = LoadAverage.read(3, " / ");
        return l == null ? "unknown" : l + " (1 / 5 / 15 min)";
    }

    private static String fmt(double v) {
        if (Double.isNaN(v)) {
            return "NaN";
        }
        double a = Math.abs(v);
        return a >= 1000 ? String.format(Locale.ROOT, "%.0f", v)
                : a >= 10 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.2f", v);
    }
}
