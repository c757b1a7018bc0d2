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
 * <p>Usage: {@code BenchMain --out DIR [--quick] [--c FILE]... [--latest FILE] [jmh options]}
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
        List<String> jmhArgs = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--out" -> out = Path.of(value(args, ++i, "--out"));
                case "--latest" -> latest = Path.of(value(args, ++i, "--latest"));
                case "--c" -> cFiles.add(Path.of(value(args, ++i, "--c")));
                case "--quick" -> quick = true;
                default -> jmhArgs.add(args[i]);
            }
        }
        if (out == null) {
            throw new IllegalArgumentException("--out DIR is required");
        }
        Files.createDirectories(out);
        Collection<RunResult> results = runJmh(jmhArgs, out.resolve("jmh.json"), quick);
        Report report = Report.of(results, CBaselines.read(cFiles), quick);
        String md = report.markdown(out);
        System.out.println();
        System.out.println(report.table());
        Files.writeString(out.resolve("summary.md"), md);
        if (latest != null) {
            Files.writeString(latest, md);
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
