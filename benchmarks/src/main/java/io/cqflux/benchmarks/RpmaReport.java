package io.cqflux.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.DoubleBinaryOperator;

/**
 * The table of {@code ./cqflux bench rpma} (benchmarks/run-rpma.sh): reads one run directory's
 * raw results (rounds {@code 1..N} of {@code perftest-R.txt}, {@code c-rpma-R.txt},
 * {@code cqflux-rpma-R.txt}, all in the C baselines' {@code name value unit} format, plus
 * {@code host-loadavg.txt} and {@code guest-clock.txt}; {@code javapath-R.txt} and
 * {@code javapath-host.txt} when there) and prints, per operation, size and wait
 * mode, the C and cqflux p50 and p99, their ratio cqflux ÷ C, and perftest beside. With several
 * rounds a figure is the median over the rounds and a ratio the median of the per-round ratios,
 * with their range. Writes the same text to {@code summary.md} in the run directory and, when
 * given, to a "latest" file.
 *
 * <p>Usage: {@code RpmaReport RUN_DIR [LATEST_FILE]}.
 */
public final class RpmaReport {

    private static final String[] OPS = {"read", "write", "dwrite"};
    private static final int[] SIZES = {8, 4096};
    private static final String[] MODES = {"busy", "epoll"};

    private RpmaReport() {
    }

    /**
     * @param args the run directory, optionally a second file to write the summary to
     * @throws IOException when a file cannot be read or written
     */
    public static void main(String[] args) throws IOException {
        if (args.length < 1) {
            throw new IllegalArgumentException("usage: RpmaReport RUN_DIR [LATEST_FILE]");
        }
        Path dir = Path.of(args[0]);
        List<CBaselines> c = new ArrayList<>();
        List<CBaselines> j = new ArrayList<>();
        List<CBaselines> p = new ArrayList<>();
        for (int r = 1; Files.exists(dir.resolve("c-rpma-" + r + ".txt")); r++) {
            c.add(read(dir.resolve("c-rpma-" + r + ".txt")));
            j.add(read(dir.resolve("cqflux-rpma-" + r + ".txt")));
            p.add(read(dir.resolve("perftest-" + r + ".txt")));
        }
        String text = render(dir, c, j, p);
        System.out.print(text);
        Files.writeString(dir.resolve("summary.md"), text);
        if (args.length > 1) {
            Files.writeString(Path.of(args[1]), text);
        }
    }

    private static CBaselines read(Path f) {
        return Files.exists(f) ? CBaselines.read(List.of(f)) : new CBaselines(java.util.Map.of());
    }

    static String render(Path dir, List<CBaselines> c, List<CBaselines> j, List<CBaselines> p) throws IOException {
        StringBuilder b = new StringBuilder();
        int rounds = c.size();
        b.append("# rpma over Soft-RoCE: cqflux against librpma C and perftest\n\n");
        b.append("Run ").append(dir.getFileName()).append(": ").append(rounds)
                .append(" round(s) in one boot of the Soft-RoCE lane (QEMU TCG, emulated time).\n");
        for (String[] part : new String[][] {{"perftest", "perftest-"}, {"librpma C", "c-rpma-"}, {"cqflux", "cqflux-rpma-"}}) {
            List<Integer> missing = new ArrayList<>();
            for (int r = 1; r <= rounds; r++) {
                List<CBaselines> l = part[0].equals("perftest") ? p : part[0].equals("cqflux") ? j : c;
                if (l.get(r - 1).values().isEmpty()) {
                    missing.add(r);
                }
            }
            if (!missing.isEmpty()) {
                b.append("- **").append(part[0]).append(" gave no figures in round(s) ").append(missing)
                        .append("** (see ").append(part[1]).append("R.txt and any hs_err_pid*.log): its medians and the")
                        .append(" ratios are over the other rounds.\n");
            }
        }
        line(b, dir.resolve("reruns.txt"), "**Rounds rerun after a JVM crash** (hs_err_pid*.log kept in the run"
                + " directory)");
        line(b, dir.resolve("host-loadavg.txt"), "Host load average (1, 5, 15 min)");
        Path clock = dir.resolve("guest-clock.txt");
        if (Files.exists(clock)) {
            for (String l : Files.readAllLines(clock)) {
                if (l.startsWith("clocksource ")) {
                    b.append("- Guest clocksource: ").append(l.substring(12)).append('\n');
                } else if (l.startsWith("jit ")) {
                    b.append("- Guest JVMs' JIT flags: `").append(l.substring(4)).append("`\n");
                } else if (l.startsWith("cmdline ")) {
                    String args = Arrays.stream(l.substring(8).split(" "))
                            .filter(a -> a.startsWith("tsc")).reduce((x, y) -> x + " " + y).orElse("(none)");
                    b.append("- Guest clock arguments: `").append(args).append("`\n");
                }
            }
        }
        b.append("""

                p50 and p99 per operation in µs (median over the rounds); ÷ = cqflux ÷ C, the median of
                the per-round ratios [min–max over rounds]; above 1 means cqflux is slower. One operation in
                flight; busy = busy-polling the CQ (cqflux BUSY_POLL), epoll = sleeping on the CQ's channel
                fd (cqflux BLOCKING). perftest: `ib_read_lat` beside read, `ib_write_lat` beside write (a
                ping-pong: half a round trip, not a write completion), both busy-polling.

                | op | size | wait | C p50 | cqflux p50 | ÷ p50 | C p99 | cqflux p99 | ÷ p99 | perftest p50 / p99 |
                |---|---|---|---|---|---|---|---|---|---|
                """);
        for (String mode : MODES) {
            for (String op : OPS) {
                for (int size : SIZES) {
                    String key = op + "." + size + "." + mode + ".lat.";
                    String tool = op.equals("read") ? "ib_read_lat" : op.equals("write") ? "ib_write_lat" : null;
                    String perf = "—";
                    if (tool != null && mode.equals("busy")) {
                        double pp50 = median(values(p, "perftest." + tool + "." + size + ".lat.p50"));
                        double pp99 = median(values(p, "perftest." + tool + "." + size + ".lat.p99"));
                        perf = fmt(pp50) + " / " + fmt(pp99);
                    }
                    b.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n",
                            op, size == 4096 ? "4 KiB" : size + " B", mode,
                            fmt(median(values(c, "rpma." + key + "p50"))),
                            fmt(median(values(j, "cqflux." + key + "p50"))),
                            ratio(c, j, "rpma." + key + "p50", "cqflux." + key + "p50"),
                            fmt(median(values(c, "rpma." + key + "p99"))),
                            fmt(median(values(j, "cqflux." + key + "p99"))),
                            ratio(c, j, "rpma." + key + "p99", "cqflux." + key + "p99"),
                            perf));
                }
            }
        }
        throughput(b, c, j);
        javaPath(b, dir, c, j);
        b.append('\n');
        line(b, dir.resolve("guest-loadavg.txt"), "Guest load average per round");
        return b.toString();
    }

    /**
     * The throughput anchor: 8-byte writes with 64 in flight, librpma C (each write signaled)
     * against cqflux's {@code writeAll} (64 in flight from 128 send credits), as C ÷ cqflux of ops/s
     * (above 1: cqflux is slower; the goal, cqflux at least 0.95 × C, is a ratio of at most 1.05).
     * Left out when no round has the C figures (a run without {@code -t}).
     */
    private static void throughput(StringBuilder b, List<CBaselines> c, List<CBaselines> j) {
        boolean any = false;
        for (String mode : MODES) {
            any |= values(c, "rpma.write.8." + mode + ".tput.w64").length > 0;
        }
        if (!any) {
            return;
        }
        b.append("\nThroughput, 8-byte writes with 64 in flight, ops/s (median over the rounds): librpma C"
                + " posting each write signaled (`RPMA_F_COMPLETION_ALWAYS`), cqflux's `writeAll` (128 send"
                + " credits, so 64 in flight). ÷ = C ÷ cqflux, the median of the per-round ratios [range];"
                + " above 1 means cqflux is slower (the performance goal: cqflux ≥ 0.95 × C, so ÷ ≤ 1.05).\n\n"
                + " The C program also runs the window with selective signaling (one write in 16, the one that"
                + " fills the window and the last signaled, the others `RPMA_F_COMPLETION_ON_ERROR`): what"
                + " cqflux could gain on rxe by signaling selectively.\n\n"
                + "| wait | C ops/s | C, 1 in 16 signaled | cqflux ops/s | C ÷ cqflux | C 1 in 16 ÷ cqflux |\n"
                + "|---|---|---|---|---|---|\n");
        for (String mode : MODES) {
            String cName = "rpma.write.8." + mode + ".tput.w64";
            String sName = cName + ".sel16";
            String jName = "cqflux.write.8." + mode + ".tput.w64";
            // ratio(x, y, xName, yName) is y ÷ x per round: here C ÷ cqflux.
            b.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s |%n", mode,
                    fmt(median(values(c, cName))), fmt(median(values(c, sName))), fmt(median(values(j, jName))),
                    ratio(j, c, jName, cName), ratio(j, c, jName, sName)));
        }
    }

    /**
     * Where the busy-poll gap goes: per operation and size, cqflux − C at p50 (the median of the
     * rounds' differences, in the guest's emulated µs) beside cqflux's own Java path alone, measured
     * by the same harness with the same counts over the synthetic transport in each round
     * ({@code javapath-R.txt}; the median over the rounds) and on the host
     * ({@code javapath-host.txt}). Left out when no round has those figures (a run from before
     * they existed); a round whose synthetic run gave none is named.
     */
    private static void javaPath(StringBuilder b, Path dir, List<CBaselines> c, List<CBaselines> j) {
        List<CBaselines> guest = new ArrayList<>();
        List<Integer> failed = new ArrayList<>();
        for (int r = 1; r <= c.size(); r++) {
            Path f = dir.resolve("javapath-" + r + ".txt");
            CBaselines g = read(f);
            if (!g.values().isEmpty()) {
                guest.add(g);
            } else if (Files.exists(f)) {
                failed.add(r);
            }
        }
        if (!failed.isEmpty()) {
            b.append("\n**The synthetic Java-path run gave no figures in round(s) ").append(failed)
                    .append("** (see javapath-R.txt, which holds a crashed JVM's banner, and javapath-R.stderr.txt).\n");
        }
        if (guest.isEmpty()) {
            return;
        }
        CBaselines host = read(dir.resolve("javapath-host.txt"));
        b.append("""

                Where the busy-poll gap goes: cqflux − C at p50 in µs (the median over the rounds of each
                round's difference), beside cqflux's own Java path alone: the same harness (RpmaLatBench),
                the same operations and counts, over the `synthetic` transport (every post completes at once;
                no NIC, no native call per operation), busy-polling, at the end of each round (median over
                the rounds), and on the host before the boot. Java path ÷ gap near 1 means the gap is cqflux's own Java code
                running under the emulation; guest ÷ host is the emulation's factor on that code.

                | op | size | gap, cqflux − C p50 | Java path p50, guest | Java path ÷ gap | Java path p50, host | guest ÷ host |
                |---|---|---|---|---|---|---|
                """);
        for (String op : OPS) {
            for (int size : SIZES) {
                String key = op + "." + size + ".busy.lat.p50";
                double gap = median(perRound(c, j, "rpma." + key, "cqflux." + key, (cv, jv) -> jv - cv));
                double gv = median(values(guest, "javapath." + key));
                CBaselines.Figure h = host.get("javapath." + key);
                double hv = h == null ? Double.NaN : h.value();
                b.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s |%n", op,
                        size == 4096 ? "4 KiB" : size + " B", fmt(gap), fmt(gv), quotient(gv, gap), fmt(hv),
                        quotient(gv, hv)));
            }
        }
        double gt = median(values(guest, "javapath.write.8.busy.tput.w64"));
        if (!Double.isNaN(gt)) {
            CBaselines.Figure ht = host.get("javapath.write.8.busy.tput.w64");
            b.append(String.format(Locale.ROOT, "%n`writeAll` of 8-byte writes with 64 in flight over the synthetic"
                    + " transport: %s ops/s in the guest (median over the rounds; cqflux's own ceiling there),"
                    + " %s on the host.%n", fmt(gt), ht == null ? "—" : fmt(ht.value())));
        }
    }

    /**
     * Per round where both figures are there, {@code f(c(cName), j(jName))}, in round order; a NaN
     * result (a figure {@code f} cannot use) is left out.
     */
    private static double[] perRound(List<CBaselines> c, List<CBaselines> j, String cName, String jName,
                                     DoubleBinaryOperator f) {
        List<Double> out = new ArrayList<>();
        for (int r = 0; r < Math.min(c.size(), j.size()); r++) {
            CBaselines.Figure cf = c.get(r).get(cName);
            CBaselines.Figure jf = j.get(r).get(jName);
            if (cf != null && jf != null) {
                double v = f.applyAsDouble(cf.value(), jf.value());
                if (!Double.isNaN(v)) {
                    out.add(v);
                }
            }
        }
        return out.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /** {@code x ÷ of} to two places, or a dash when either is missing or {@code of} is not positive. */
    private static String quotient(double x, double of) {
        return Double.isNaN(x) || Double.isNaN(of) || of <= 0 ? "—" : String.format(Locale.ROOT, "%.2f", x / of);
    }

    private static void line(StringBuilder b, Path f, String title) throws IOException {
        if (Files.exists(f)) {
            b.append("- ").append(title).append(":\n");
            for (String l : Files.readAllLines(f)) {
                b.append("  - ").append(l).append('\n');
            }
        }
    }

    private static double[] values(List<CBaselines> runs, String name) {
        return runs.stream().map(r -> r.get(name)).filter(f -> f != null).mapToDouble(CBaselines.Figure::value)
                .toArray();
    }

    private static String ratio(List<CBaselines> c, List<CBaselines> j, String cName, String jName) {
        double[] a = perRound(c, j, cName, jName, (cv, jv) -> cv > 0 ? jv / cv : Double.NaN);
        if (a.length == 0) {
            return "—";
        }
        Arrays.sort(a);
        String m = String.format(Locale.ROOT, "**%.2f**", median(a));
        return a.length == 1 ? m : m + String.format(Locale.ROOT, " [%.2f–%.2f]", a[0], a[a.length - 1]);
    }

    /** {@link CBaselines#median}, or NaN (printed as a dash) when no round gave the figure. */
    private static double median(double[] a) {
        return a.length == 0 ? Double.NaN : CBaselines.median(a);
    }

    private static String fmt(double v) {
        return Double.isNaN(v) ? "—" : String.format(Locale.ROOT, v >= 100 ? "%.0f" : "%.1f", v);
    }
}
