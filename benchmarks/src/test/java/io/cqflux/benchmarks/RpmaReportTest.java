package io.cqflux.benchmarks;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The rpma report's Java-path table: the gap per round, the guest's synthetic figures beside it. */
class RpmaReportTest {

    @TempDir
    Path dir;

    private static CBaselines figures(String... lines) {
        return new CBaselines(CBaselines.parse(List.of(lines)));
    }

    @Test
    void javaPathTable_setsTheMedianGapBesideTheGuestsSyntheticFigure() throws IOException {
        List<CBaselines> c = List.of(figures("rpma.write.8.busy.lat.p50 60.0 us"),
                figures("rpma.write.8.busy.lat.p50 62.0 us"), figures("rpma.write.8.busy.lat.p50 58.0 us"));
        // Differences 20, 16, 24: median 20.
        List<CBaselines> j = List.of(figures("cqflux.write.8.busy.lat.p50 80.0 us"),
                figures("cqflux.write.8.busy.lat.p50 78.0 us"), figures("cqflux.write.8.busy.lat.p50 82.0 us"));
        // Rounds' Java path 14, 15, 30: median 15.
        Files.writeString(dir.resolve("javapath-1.txt"),
                "javapath.info address=127.0.0.1\njavapath.write.8.busy.lat.p50 14.0 us\n"
                        + "javapath.write.8.busy.tput.w64 41000 ops/s\n");
        Files.writeString(dir.resolve("javapath-2.txt"), "javapath.write.8.busy.lat.p50 15.0 us\n");
        Files.writeString(dir.resolve("javapath-3.txt"), "javapath.write.8.busy.lat.p50 30.0 us\n");
        Files.writeString(dir.resolve("javapath-host.txt"), "javapath.write.8.busy.lat.p50 0.5 us\n");

        String text = RpmaReport.render(dir, c, j, List.of(figures(), figures(), figures()));

        assertTrue(text.contains("| write | 8 B | 20.0 | 15.0 | 0.75 | 0.5 | 30.00 |"), text);
        assertTrue(text.contains("41000 ops/s in the guest"), text);
        // An operation without figures gets dashes, not a made-up zero.
        assertTrue(text.contains("| read | 8 B | — | — | — | — | — |"), text);
    }

    @Test
    void javaPathTable_isLeftOutWithoutGuestFigures_andAFailedRunIsSaid() throws IOException {
        List<CBaselines> c = List.of(figures("rpma.write.8.busy.lat.p50 60.0 us"));
        List<CBaselines> j = List.of(figures("cqflux.write.8.busy.lat.p50 80.0 us"));
        String none = RpmaReport.render(dir, c, j, List.of(figures()));
        assertFalse(none.contains("Java path"), none);

        Files.writeString(dir.resolve("javapath-1.txt"), "");
        String failed = RpmaReport.render(dir, c, j, List.of(figures()));
        assertTrue(failed.contains("The synthetic Java-path run gave no figures in round(s) [1]"), failed);
    }
}
