package io.cqflux.benchmarks;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The C baselines' parsing over repeats, their median and the ratio's range (no timing here). */
class CBaselinesTest {

    @TempDir
    Path dir;

    @Test
    void parse_keepsNameValueUnitLines_andSkipsInfoAndHeaderLines() {
        Map<String, CBaselines.Figure> m = CBaselines.parse(List.of(
                "fabric.info provider=tcp mr_mode=0x0",
                "# a header",
                "fabric.read.8.busy.lat.mean 9.34 us",
                "fabric.write.8.busy.tput.w32 34230 ops/s",
                "bogus value us"));
        assertEquals(List.of("fabric.read.8.busy.lat.mean", "fabric.write.8.busy.tput.w32"), List.copyOf(m.keySet()));
        assertEquals(9.34, m.get("fabric.read.8.busy.lat.mean").value());
        assertEquals("ops/s", m.get("fabric.write.8.busy.tput.w32").unit());
    }

    @Test
    void median_oddCount_isTheMiddleValue_evenCount_isTheMeanOfTheMiddleTwo() {
        assertEquals(7.0, CBaselines.median(new double[] {9.34, 6.85, 7.0}));
        assertEquals(8.095, CBaselines.median(new double[] {9.34, 6.85}), 1e-12);
        assertEquals(5.0, CBaselines.median(new double[] {5.0}));
        assertThrows(IllegalArgumentException.class, () -> CBaselines.median(new double[0]));
    }

    @Test
    void readRepeats_keepsEveryRepeatsValue_andDividesByTheirMedian() throws IOException {
        write("c-fabric.1.txt", "fabric.info provider=tcp", "fabric.read.8.busy.lat.mean 9.34 us",
                "fabric.read.8.busy.lat.p50 6.50 us");
        write("c-fabric.2.txt", "fabric.read.8.busy.lat.mean 6.85 us", "fabric.read.8.busy.lat.p50 6.40 us");
        write("c-fabric.3.txt", "fabric.read.8.busy.lat.mean 7.10 us", "fabric.read.8.busy.lat.p50 6.60 us");
        write("c-eventfd.1.txt", "eventfd.spin.rtt.mean 3.0 us");
        write("c-eventfd.2.txt", "eventfd.spin.rtt.mean 4.0 us");
        write("c-eventfd.3.txt", "eventfd.spin.rtt.mean 5.0 us");
        write("jmh-output.txt", "not.a.repeat 1.0 us");
        write("loadavg.txt", "1 before-jmh 2026-11-23T19:06:22Z 0.61, 0.91, 1.32",
                "2 before-jmh 2026-11-23T19:07:01Z 1.30, 1.00, 1.35",
                "3 after-jmh 2026-11-23T19:20:40Z 2.05, 1.80, 1.50");

        CBaselines c = CBaselines.readRepeats(dir);

        CBaselines.Figure mean = c.get("fabric.read.8.busy.lat.mean");
        assertArrayEquals(new double[] {9.34, 6.85, 7.10}, mean.values());
        assertEquals(7.10, mean.value());
        assertEquals(6.85, mean.min());
        assertEquals(9.34, mean.max());
        assertEquals(3, mean.count());
        assertEquals(6.50, c.get("fabric.read.8.busy.lat.p50").value());
        assertEquals(4.0, c.get("eventfd.spin.rtt.mean").value());
        assertNull(c.get("not.a.repeat"));
        assertNull(c.get("fabric.info"));
        assertEquals(3, c.repeatCount());
        assertEquals(List.of(
                new CBaselines.Repeat(1, "before-jmh", "2026-11-23T19:06:22Z", "0.61, 0.91, 1.32"),
                new CBaselines.Repeat(2, "before-jmh", "2026-11-23T19:07:01Z", "1.30, 1.00, 1.35"),
                new CBaselines.Repeat(3, "after-jmh", "2026-11-23T19:20:40Z", "2.05, 1.80, 1.50")), c.repeats());
    }

    @Test
    void readRepeats_repeatThatPrintedNothing_leavesOnlyTheOthersInTheFigure() throws IOException {
        write("jucx.1.txt", "jucx.get.8.lat.mean 10.0 us");
        write("jucx.2.txt");
        write("jucx.3.txt", "jucx.get.8.lat.mean 12.0 us");

        CBaselines.Figure f = CBaselines.readRepeats(dir).get("jucx.get.8.lat.mean");

        assertEquals(List.of(1, 3), List.copyOf(f.byRepeat().keySet()));
        assertEquals(11.0, f.value());
        assertEquals(2, f.count());
    }

    @Test
    void readRepeats_sameNameInAnotherUnit_isRejectedNamingBoth() throws IOException {
        write("c-fabric.1.txt", "fabric.x 1.0 us");
        write("c-fabric.2.txt", "fabric.x 1.0 ops/s");

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CBaselines.readRepeats(dir));
        assertEquals("C figure fabric.x is in us in one repeat and in ops/s in repeat 2", e.getMessage());
    }

    @Test
    void read_singleFiles_areOneRepeat_withoutLoadAverages() throws IOException {
        write("c-fabric.txt", "fabric.read.8.busy.lat.mean 9.34 us");

        CBaselines c = CBaselines.read(List.of(dir.resolve("c-fabric.txt")));

        assertEquals(9.34, c.get("fabric.read.8.busy.lat.mean").value());
        assertEquals(1, c.repeatCount());
        assertEquals(List.of(), c.repeats());
    }

    @Test
    void ratioRange_isTheRatioAgainstEachRepeatAlone_smallestAndLargest() {
        // Java 10 us against C 9.34, 6.85, 7.10 us: 1.07, 1.46, 1.41
        double[] r = Report.ratioRange(10.0, new double[] {9.34, 6.85, 7.10});

        assertEquals(10.0 / 9.34, r[0], 1e-12);
        assertEquals(10.0 / 6.85, r[1], 1e-12);
    }

    private void write(String name, String... lines) throws IOException {
        Files.write(dir.resolve(name), List.of(lines));
    }
}
