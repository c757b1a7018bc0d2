package io.cqflux.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The C baselines' output: lines of {@code name value unit}; other lines (headers, info) are
 * kept out. A figure may come from several repeats of the same programs (benchmarks/run.sh runs
 * them three times, {@code c-fabric.1.txt}, {@code c-fabric.2.txt}, ...): every repeat's value is
 * kept, and {@link Figure#value()} is their median, the one figure a ratio divides by.
 *
 * @param values figures by name, in file order
 * @param repeats what is known about each repeat (its start and load average), by repeat number;
 *     empty where nobody recorded it
 */
record CBaselines(Map<String, Figure> values, List<Repeat> repeats) {

    /**
     * Figures without repeat information (one file per round, as {@link RpmaReport} reads them).
     *
     * @param values figures by name
     */
    CBaselines(Map<String, Figure> values) {
        this(values, List.of());
    }

    /**
     * One C figure over the repeats that printed it.
     *
     * @param unit its unit ({@code us}, {@code ops/s})
     * @param byRepeat the value each repeat printed, by repeat number; never empty
     */
    record Figure(String unit, SortedMap<Integer, Double> byRepeat) {

        /**
         * A figure from a single repeat.
         *
         * @param value the number
         * @param unit its unit
         */
        Figure(double value, String unit) {
            this(unit, new TreeMap<>(Map.of(1, value)));
        }

        /** {@return the median over the repeats (the mean of the middle two for an even count)} */
        double value() {
            return median(values());
        }

        /** {@return every repeat's value, in repeat order} */
        double[] values() {
            return byRepeat.values().stream().mapToDouble(Double::doubleValue).toArray();
        }

        /** {@return how many repeats printed this figure} */
        int count() {
            return byRepeat.size();
        }

        /** {@return the smallest repeat's value} */
        double min() {
            return Arrays.stream(values()).min().orElseThrow();
        }

        /** {@return the largest repeat's value} */
        double max() {
            return Arrays.stream(values()).max().orElseThrow();
        }
    }

    /**
     * One run of the C programs, as benchmarks/c-repeat.sh records it in {@code loadavg.txt}.
     *
     * @param number the repeat number (1, 2, ...)
     * @param phase when it ran: {@code before-jmh} or {@code after-jmh}
     * @param start its start, UTC
     * @param loadAverage {@code uptime}'s load average at its start (1, 5, 15 min)
     */
    record Repeat(int number, String phase, String start, String loadAverage) {
    }

    /**
     * @param files the C programs' stdout captures, all of one repeat; a missing file is an error
     * @return every parsable figure, as repeat 1 (a name printed twice: the later value)
     */
    static CBaselines read(List<Path> files) {
        Map<String, Figure> m = new LinkedHashMap<>();
        for (Path f : files) {
            parse(lines(f)).forEach((name, fig) -> m.put(name, fig));
        }
        return new CBaselines(m);
    }

    /** A repeat's output file: {@code c-<program>.<repeat>.txt} or {@code jucx.<repeat>.txt}. */
    private static final Pattern REPEAT_FILE = Pattern.compile("(c-[A-Za-z0-9_-]+|jucx)\\.([0-9]+)\\.txt");

    /**
     * Reads every repeat's output in a run directory: the files {@code c-<program>.<R>.txt} and
     * {@code jucx.<R>.txt} (R = 1, 2, ...), and {@code loadavg.txt}. A repeat whose program
     * printed nothing (it failed) just leaves its figures out, so their count shows it.
     *
     * @param dir the run directory
     * @return every figure with the value of each repeat that printed it, and the repeats' loads
     */
    static CBaselines readRepeats(Path dir) {
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(p -> REPEAT_FILE.matcher(p.getFileName().toString()).matches()).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list C baseline outputs in " + dir, e);
        }
        Map<Integer, List<Path>> byRepeat = new TreeMap<>();
        for (Path f : files) {
            Matcher m = REPEAT_FILE.matcher(f.getFileName().toString());
            if (m.matches()) {
                byRepeat.computeIfAbsent(Integer.parseInt(m.group(2)), k -> new ArrayList<>()).add(f);
            }
        }
        Map<Integer, Map<String, Figure>> parsed = new TreeMap<>();
        // Files sorted by name (c-eventfd, c-fabric, jucx): the figures keep that order.
        byRepeat.forEach((r, fs) -> {
            Map<String, Figure> one = new LinkedHashMap<>();
            for (Path f : fs) {
                one.putAll(parse(lines(f)));
            }
            parsed.put(r, one);
        });
        Path loads = dir.resolve("loadavg.txt");
        return new CBaselines(merge(parsed), Files.exists(loads) ? parseRepeats(lines(loads)) : List.of());
    }

    /**
     * @param byRepeat each repeat's figures, by repeat number
     * @return one figure per name with every repeat's value; names in the order they first appear
     * @throws IllegalArgumentException when repeats print the same name in different units
     */
    static Map<String, Figure> merge(Map<Integer, Map<String, Figure>> byRepeat) {
        Map<String, String> units = new LinkedHashMap<>();
        Map<String, SortedMap<Integer, Double>> values = new LinkedHashMap<>();
        new TreeMap<>(byRepeat).forEach((r, figures) -> figures.forEach((name, f) -> {
            String unit = units.putIfAbsent(name, f.unit());
            if (unit != null && !unit.equals(f.unit())) {
                throw new IllegalArgumentException("C figure " + name + " is in " + unit
                        + " in one repeat and in " + f.unit() + " in repeat " + r);
            }
            values.computeIfAbsent(name, k -> new TreeMap<>()).put(r, f.value());
        }));
        Map<String, Figure> m = new LinkedHashMap<>();
        values.forEach((name, v) -> m.put(name, new Figure(units.get(name), Collections.unmodifiableSortedMap(v))));
        return m;
    }

    /**
     * @param lines one C program's output
     * @return its figures ({@code name value unit} lines), each as repeat 1
     */
    static Map<String, Figure> parse(List<String> lines) {
        Map<String, Figure> m = new LinkedHashMap<>();
        for (String line : lines) {
            String[] p = line.trim().split("\\s+");
            if (p.length != 3) {
                continue;
            }
            try {
                m.put(p[0], new Figure(Double.parseDouble(p[1]), p[2]));
            } catch (NumberFormatException e) {
                // an info line such as "fabric.info provider=tcp ...": not a figure
            }
        }
        return m;
    }

    /** A line of {@code loadavg.txt}: {@code <repeat> <phase> <UTC start> <uptime's load average>}. */
    private static final Pattern REPEAT_LINE = Pattern.compile("\\s*([0-9]+)\\s+(\\S+)\\s+(\\S+)\\s+(.*\\S)\\s*");

    /**
     * @param lines {@code loadavg.txt}
     * @return its repeats, by repeat number; lines of another shape are left out
     */
    static List<Repeat> parseRepeats(List<String> lines) {
        Map<Integer, Repeat> m = new TreeMap<>();
        for (String line : lines) {
            Matcher x = REPEAT_LINE.matcher(line);
            if (x.matches()) {
                int r = Integer.parseInt(x.group(1));
                m.put(r, new Repeat(r, x.group(2), x.group(3), x.group(4)));
            }
        }
        return List.copyOf(m.values());
    }

    /**
     * @param v values, at least one
     * @return their median: the middle value, or the mean of the middle two for an even count
     * @throws IllegalArgumentException when {@code v} is empty
     */
    static double median(double[] v) {
        if (v.length == 0) {
            throw new IllegalArgumentException("median of no values");
        }
        double[] s = v.clone();
        Arrays.sort(s);
        int h = s.length / 2;
        return s.length % 2 == 1 ? s[h] : (s[h - 1] + s[h]) / 2;
    }

    private static List<String> lines(Path f) {
        try {
            return Files.readAllLines(f);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read C baseline output " + f, e);
        }
    }

    /**
     * @param name the figure's name
     * @return it, or {@code null}
     */
    Figure get(String name) {
        return values.get(name);
    }

    /** {@return how many repeats gave at least one figure} */
    int repeatCount() {
        return (int) values.values().stream().flatMap(f -> f.byRepeat().keySet().stream()).distinct().count();
    }
}
