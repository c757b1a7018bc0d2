package io.cqflux.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The C baselines' output: lines of {@code name value unit}; other lines (headers, info) are
 * kept out.
 *
 * @param values figures by name, in file order
 */
record CBaselines(Map<String, Figure> values) {

    /**
     * One C figure.
     *
     * @param value the number
     * @param unit its unit ({@code us}, {@code ops/s})
     */
    record Figure(double value, String unit) {
    }

    /**
     * @param files the C programs' stdout captures; a missing file is an error
     * @return every parsable figure
     */
    static CBaselines read(List<Path> files) {
        Map<String, Figure> m = new LinkedHashMap<>();
        for (Path f : files) {
            List<String> lines;
            try {
                lines = Files.readAllLines(f);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read C baseline output " + f, e);
            }
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
        }
        return new CBaselines(m);
    }

    /**
     * @param name the figure's name
     * @return it, or {@code null}
     */
    Figure get(String name) {
        return values.get(name);
    }
}
