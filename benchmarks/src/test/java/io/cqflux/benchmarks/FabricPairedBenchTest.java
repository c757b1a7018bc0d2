package io.cqflux.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.benchmarks.FabricPairedBench.Run;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The paired report: ratios within pairs, their median and range, the goal per figure. */
class FabricPairedBenchTest {

    @Test
    void summary_takesEachRatioWithinItsPair_notBetweenTheSidesMedians() {
        // C drifts from 10 to 20 µs over the pairs, cqflux stays 5 % above it in each: the medians
        // of the sides (15 and 15.75) would say 1.05 too, but the range must be 1.05-1.05 and the
        // unpaired third C run must not count.
        List<Run> runs = List.of(
                new Run(1, "c", "write.8.busy.lat", 10, 11), new Run(1, "cqflux", "write.8.busy.lat", 10.5, 11.55),
                new Run(2, "cqflux", "write.8.busy.lat", 15.75, 16.8), new Run(2, "c", "write.8.busy.lat", 15, 16),
                new Run(3, "c", "write.8.busy.lat", 20, 21), new Run(3, "cqflux", "write.8.busy.lat", 21, 22.05),
                new Run(4, "c", "write.8.busy.lat", 100, 100));

        String text = FabricPairedBench.summary(runs);

        assertTrue(text.contains("| write.8.busy.lat | 3 | 15.00 µs | 15.75 µs | 1.050 [1.050–1.050] "
                + "| 1.050 [1.050–1.050] | ≤ 1.10 | 3 of 3 | yes |"), text);
    }

    @Test
    void summary_saysNoWhenTheMedianPairMissesTheGoal_andCountsThePairsWithinIt() {
        // 4 KiB: goal 1.05. Ratios 1.04, 1.06, 1.08: median 1.06, one pair within.
        List<Run> runs = List.of(
                new Run(1, "c", "read.4096.busy.lat", 10, 10), new Run(1, "cqflux", "read.4096.busy.lat", 10.4, 10.4),
                new Run(2, "c", "read.4096.busy.lat", 10, 10), new Run(2, "cqflux", "read.4096.busy.lat", 10.6, 10.6),
                new Run(3, "c", "read.4096.busy.lat", 10, 10), new Run(3, "cqflux", "read.4096.busy.lat", 10.8, 10.8));

        String text = FabricPairedBench.summary(runs);

        assertTrue(text.contains("| 1.060 [1.040–1.080] | 1.060 [1.040–1.080] | ≤ 1.05 | 1 of 3 | no |"), text);
    }

    @Test
    void summary_readsThroughputAsALowerBound() {
        // cqflux at 0.96 and 0.94 of C: median 0.95, which meets "at least 0.95 × C".
        List<Run> runs = List.of(
                new Run(1, "c", "write.8.epoll.tput.w64", 200000, 200000),
                new Run(1, "cqflux", "write.8.epoll.tput.w64", 192000, 192000),
                new Run(2, "c", "write.8.epoll.tput.w64", 100000, 100000),
                new Run(2, "cqflux", "write.8.epoll.tput.w64", 94000, 94000));

        String text = FabricPairedBench.summary(runs);

        assertTrue(text.contains("| 0.950 [0.940–0.960] | — | ≥ 0.95 | 1 of 2 | yes |"), text);
    }

    @Test
    void summary_refusesTwoRunsOfOneSideInOnePair() {
        List<Run> runs = List.of(new Run(1, "c", "write.8.busy.lat", 10, 10), new Run(1, "c", "write.8.busy.lat", 11, 11));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> FabricPairedBench.summary(runs));
        assertTrue(e.getMessage().contains("pair 1 has two c runs of write.8.busy.lat"), e.getMessage());
    }

    @Test
    void pool_numbersEachFilesPairsAfterThePreviousFiles(@TempDir Path dir) throws IOException {
        // Two runs of the same figure, each with pairs 1 and 2: pooled, four pairs, not a clash.
        Path a = dir.resolve("a.txt");
        Path b = dir.resolve("b.txt");
        Files.writeString(a, "# header\n# pair 1 at now\n" + new Run(1, "c", "write.8.busy.lat", 10, 10).line() + "\n"
                + new Run(1, "cqflux", "write.8.busy.lat", 11, 11).line() + "\n"
                + new Run(2, "cqflux", "write.8.busy.lat", 10.2, 10.2).line() + "\n"
                + new Run(2, "c", "write.8.busy.lat", 10, 10).line() + "\n");
        Files.writeString(b, new Run(1, "c", "write.8.busy.lat", 10, 10).line() + "\n"
                + new Run(1, "cqflux", "write.8.busy.lat", 10.4, 10.4).line() + "\n"
                + new Run(2, "c", "write.8.busy.lat", 10, 10).line() + "\n"
                + new Run(2, "cqflux", "write.8.busy.lat", 10.6, 10.6).line() + "\n");

        List<Run> runs = FabricPairedBench.pool(List.of(a, b));

        assertEquals(List.of(1, 1, 2, 2, 3, 3, 4, 4), runs.stream().map(Run::pair).toList());
        // Ratios 1.10, 1.02, 1.04, 1.06: median 1.05.
        String text = FabricPairedBench.summary(runs);
        assertTrue(text.contains("| write.8.busy.lat | 4 | 10.00 µs | 10.50 µs | 1.050 [1.020–1.100] "), text);
    }

    @Test
    void pool_refusesFilesOfTwoConfigurations(@TempDir Path dir) throws IOException {
        Path a = dir.resolve("a.txt");
        Path b = dir.resolve("b.txt");
        Path c = dir.resolve("c.txt");
        String run = new Run(1, "c", "write.8.busy.lat", 10, 10).line() + "\n";
        Files.writeString(a, "# 2026-11-26T12:00:00Z pairs=8 config=ConnectionConfig[x=1] batch=default\n" + run);
        Files.writeString(b, "# 2026-11-26T13:00:00Z pairs=8 config=ConnectionConfig[x=1] batch=default\n" + run);
        Files.writeString(c, "# 2026-11-26T14:00:00Z pairs=8 config=ConnectionConfig[x=1] batch=64\n" + run);

        assertEquals(2, FabricPairedBench.pool(List.of(a, b)).size());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FabricPairedBench.pool(List.of(a, b, c)));
        assertTrue(e.getMessage().contains("batch=64") && e.getMessage().contains("batch=default"), e.getMessage());
        Path bare = dir.resolve("bare.txt");
        Files.writeString(bare, run);
        IllegalArgumentException mixed = assertThrows(IllegalArgumentException.class,
                () -> FabricPairedBench.pool(List.of(a, bare)));
        assertTrue(mixed.getMessage().contains("no config= header"), mixed.getMessage());
    }

    @Test
    void runLines_roundTrip_andEveryFigureHasACTwinName() {
        Run r = new Run(7, "cqflux", "read.4096.adaptive.lat", 11.125, 11.5);
        assertEquals(r, Run.parse(r.line()));
        assertThrows(IllegalArgumentException.class, () -> Run.parse("pair 7 cqflux read.4096.adaptive.lat 11.1"));
        for (String f : FabricPairedBench.FIGURES) {
            String c = FabricPairedBench.cFigure(f);
            assertFalse(c.contains("adaptive"), c);
            assertTrue(c.matches("(read|write)\\.(8|4096)\\.(busy|epoll)\\.(lat|tput\\.w64)"), c);
        }
        assertEquals(15, FabricPairedBench.FIGURES.size());
    }
}
