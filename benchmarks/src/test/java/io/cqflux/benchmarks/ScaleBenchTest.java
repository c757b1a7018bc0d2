package io.cqflux.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** ScaleBench's pairing with fabric_scale_bench and its argument checks (no timing here). */
class ScaleBenchTest {

    @Test
    void cMode_busyPollBesideBusy_blockingAndAdaptiveBesideEpoll() {
        assertEquals("busy", ScaleBench.cMode("BUSY_POLL"));
        assertEquals("epoll", ScaleBench.cMode("BLOCKING"));
        assertEquals("epoll", ScaleBench.cMode("ADAPTIVE"));
    }

    @Test
    void scaleFigures_parseAsCBaselines_withTheNamesScaleBenchLooksUp() {
        Map<String, CBaselines.Figure> m = CBaselines.parse(List.of(
                "fabric.scale.info provider=tcp fds-before-fabric=5",
                "fabric.scale.1000.fds 2021 fds",
                "fabric.scale.1000.rss 42860 KiB",
                "fabric.scale.1000.write.8.epoll.p50 224.40 us"));
        assertEquals(224.40, m.get("fabric.scale.1000.write.8.epoll.p50").value(), 1e-9);
        assertEquals(2021, m.get("fabric.scale.1000.fds").value(), 1e-9);
        assertEquals(3, m.size(), "the info line is not a figure");
    }

    @Test
    void main_withAMissingCProgram_failsNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ScaleBench.main(new String[] {"-C", "/nonexistent/fabric_scale_bench"}));
        assertTrue(e.getMessage().contains("/nonexistent/fabric_scale_bench"), e.getMessage());
    }

    @Test
    void main_withTooFewCIterations_failsNamingTheBound() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ScaleBench.main(new String[] {"-C", "none", "-I", "10"}));
        assertTrue(e.getMessage().contains("-I 10") && e.getMessage().contains("100"), e.getMessage());
    }
}
