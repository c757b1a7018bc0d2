package io.cqflux.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/** The host's load average, which every harness here prints beside its figures. */
final class LoadAverage {

    private LoadAverage() {
    }

    /**
     * @param fields how many of the 1-, 5- and 15-minute figures, from the first, 1 to 3
     * @param separator what goes between them
     * @return those fields of {@code /proc/loadavg}, or null when it cannot be read
     */
    static String read(int fields, String separator) {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            if (f.length < fields) {
                return null;
            }
            return String.join(separator, Arrays.copyOf(f, fields));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
