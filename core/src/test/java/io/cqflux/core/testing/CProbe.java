package io.cqflux.core.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Test support: compiles a small C program with gcc at test time, runs it, and parses its output
 * lines of the form {@code name value} (decimal, possibly negative). Binding tests use it to check
 * {@code sizeof}, {@code offsetof} and constants against the installed C headers.
 *
 * <p>It never skips: a missing gcc or header fails the test with the install line to run.
 */
public final class CProbe {

    private CProbe() {
    }

    /**
     * Compiles and runs {@code source}.
     *
     * @param name a short name for the files and messages
     * @param source the C program; it prints {@code name value} lines
     * @param gccArgs extra arguments after the source (libraries: {@code -lrpma})
     * @return the values by name, in output order
     */
    public static Map<String, Long> run(String name, String source, String... gccArgs) {
        Path dir = null;
        try {
            dir = Files.createTempDirectory("cqflux-probe-" + name);
            Path c = dir.resolve(name + ".c");
            Path exe = dir.resolve(name);
            Files.writeString(c, source, StandardCharsets.UTF_8);
            List<String> cmd = new ArrayList<>(List.of("gcc", "-std=gnu11", "-O0", "-o", exe.toString(), c.toString()));
            cmd.addAll(List.of(gccArgs));
            String out = exec(cmd, "compiling the " + name + " probe (needs gcc and the -dev packages:"
                    + " apt-get install gcc libc6-dev libfabric-dev librpma-dev libibverbs-dev librdmacm-dev)");
            if (!out.isBlank()) {
                System.err.println(out);
            }
            String res = exec(List.of(exe.toString()), "running the " + name + " probe");
            Map<String, Long> values = new LinkedHashMap<>();
            for (String line : res.split("\n")) {
                String[] parts = line.trim().split("\\s+");
                if (parts.length == 2) {
                    values.put(parts[0], Long.parseLong(parts[1]));
                }
            }
            return values;
        } catch (IOException e) {
            throw new AssertionError("probe " + name + " failed: " + e, e);
        } finally {
            deleteQuietly(dir);
        }
    }

    /** Removes the probe's directory (its source and executable): every test run compiles a dozen. */
    private static void deleteQuietly(Path dir) {
        if (dir == null) {
            return;
        }
        try (var files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            System.err.println("CProbe: could not remove " + dir + ": " + e);
        }
    }

    private static String exec(List<String> cmd, String what) throws IOException {
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new AssertionError(what + ": cannot start " + cmd.get(0) + ": " + e.getMessage(), e);
        }
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(what + ": timed out");
            }
            if (p.exitValue() != 0) {
                throw new AssertionError(what + " failed (exit " + p.exitValue() + "):\n" + out);
            }
            return out;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(what + ": interrupted", e);
        }
    }
}
