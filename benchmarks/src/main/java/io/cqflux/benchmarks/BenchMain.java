package io.cqflux.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * What {@code benchmarks/run.sh} starts: runs JMH (any JMH command-line options pass through),
 * writes its JSON, then reads the C baselines' output and writes the ratio table
 * ({@link Report}).
 *
 * <p>Usage: {@code BenchMain --out DIR [--quick] [--c FILE]... [--c-repeats DIR]
 * [--after-jmh COMMAND] [--latest FILE] [jmh options]}
 * <ul>
 *   <li>{@code --c FILE}: one C program's output, all files together one run of the C baselines;
 *   <li>{@code --c-repeats DIR}: instead, every repeat's output in DIR ({@code c-<program>.<R>.txt},
 *       {@code jucx.<R>.txt}, {@code loadavg.txt}; {@link CBaselines#readRepeats}), read after JMH
 *       and after {@code --after-jmh}, so a repeat that runs then is in the report;
 *   <li>{@code --after-jmh COMMAND}: a shell command ({@code bash -c}) run once JMH is done, before
 *       the report: run.sh's last C repeat, so that drift during the JMH run shows in the spread.
 *       A failing command is reported and the report is written without it.
 * </ul>
 */
public final class BenchMain {

    private BenchMain() {
    }

    /**
     * @param args see the class comment
     * @throws Exception when JMH or writing the report fails
     */
    public static void main(String[] args) throws Exception {
        Path out = null;
        Path latest = null;
        boolean quick = false;
        List<Path> cFiles = new ArrayList<>();
        Path cRepeats = null;
        String afterJmh = null;
        List<String> jmhArgs = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--out" -> out = Path.of(value(args, ++i, "--out"));
                case "--latest" -> latest = Path.of(value(args, ++i, "--latest"));
                case "--c" -> cFiles.add(Path.of(value(args, ++i, "--c")));
                case "--c-repeats" -> cRepeats = Path.of(value(args, ++i, "--c-repeats"));
                case "--after-jmh" -> afterJmh = value(args, ++i, "--after-jmh");
                case "--quick" -> quick = true;
                default -> jmhArgs.add(args[i]);
            }
        }
        if (out == null) {
            throw new IllegalArgumentException("--out DIR is required");
        }
        if (cRepeats != null && !cFiles.isEmpty()) {
            throw new IllegalArgumentException("--c and --c-repeats exclude each other");
        }
        Files.createDirectories(out);
        Collection<RunResult> results = runJmh(jmhArgs, out.resolve("jmh.json"), quick);
        if (afterJmh != null) {
            runAfterJmh(afterJmh);
        }
        CBaselines c = cRepeats != null ? CBaselines.readRepeats(cRepeats) : CBaselines.read(cFiles);
        Report report = Report.of(results, c, quick);
        String md = report.markdown(out);
        System.out.println();
        System.out.println(report.table());
        Files.writeString(out.resolve("summary.md"), md);
        if (latest != null) {
            Files.writeString(latest, md);
        }
    }

    /** Runs the command with this process's output, so that run.sh's log has it in order. */
    private static void runAfterJmh(String command) throws IOException, InterruptedException {
        System.out.flush();
        int status = new ProcessBuilder("bash", "-c", command).inheritIO().start().waitFor();
        if (status != 0) {
            System.err.println("BenchMain: --after-jmh command exited with " + status + " (" + command
                    + "); the report has what it left");
        }
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }

    private static Collection<RunResult> runJmh(List<String> jmhArgs, Path json, boolean quick)
            throws CommandLineOptionException, RunnerException, IOException {
        CommandLineOptions cli = new CommandLineOptions(jmhArgs.toArray(String[]::new));
        ChainedOptionsBuilder b = new OptionsBuilder().parent(cli)
                .resultFormat(ResultFormatType.JSON)
                .result(json.toString());
        if (cli.getIncludes().isEmpty()) {
            b.include("io\\.cqflux\\.benchmarks\\..*");
        }
        if (quick) {
            // A smoke run: one short warm-up, two short measurements; numbers are indicative only.
            b.warmupIterations(1).warmupTime(TimeValue.seconds(1))
                    .measurementIterations(2).measurementTime(TimeValue.seconds(1));
            if (!cli.getParameter("size").hasValue()) {
                b.param("size", "8"); // 4 KiB only in full runs: keeps the smoke run near two minutes
            }
        }
        return new Runner(b.build()).run();
    }
}
