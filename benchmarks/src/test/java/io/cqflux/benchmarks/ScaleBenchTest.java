package io.cqflux.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
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
    void main_withABadGroupSize_failsNamingIt_beforeAnyOutput() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ScaleBench.main(new String[] {"-C", "none", "-G", "0"}));
        assertTrue(e.getMessage().contains("-G 0"), e.getMessage());
    }

    @Test
    void main_withANegativeConnectRate_failsNamingIt_beforeAnyOutput() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ScaleBench.main(new String[] {"-C", "none", "-R", "-1"}));
        assertTrue(e.getMessage().contains("-R -1"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> ScaleBench.main(new String[] {"-C", "none", "-R", "10", "-c", "10"}));
        assertTrue(e.getMessage().contains("two modes"), e.getMessage());
    }

    @Test
    void main_withANegativePerChildCount_failsNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ScaleBench.main(new String[] {"-C", "none", "-P", "-1"}));
        assertTrue(e.getMessage().contains("-P -1"), e.getMessage());
    }

    /**
     * The split mode for real: two idle-client processes (3 and 2 connections) connect to this
     * process's server, the busy pair runs its operations beside them, and the row names what one
     * idle connection costs the server: with {@code -G 32} 1 fd on fabric/tcp (its socket: it
     * joins the completion queue the busy connection's group opened), asserted loosely (0.6-2) as
     * the JVM may open a file meanwhile. With a queue of its own (as a loop's first 16 have by
     * default) it would be 4 (its epoll fd and socketpair besides).
     */
    @Test
    void splitMode_idleClientsFromChildProcesses_rowGivesTheServersFdsPerConnection() throws Exception {
        PrintStream out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            ScaleBench.main(new String[] {"-P", "3", "-n", "0,5", "-s", "BLOCKING", "-o", "write.8", "-i", "500",
                "-w", "100", "-t", "0.05", "-C", "none", "-G", "32"});
        } finally {
            System.setOut(out);
        }
        String text = captured.toString(StandardCharsets.UTF_8);
        out.print(text);
        String row = text.lines().filter(l -> l.matches("BLOCKING\\s+write\\.8\\s+5\\s.*")).findFirst()
                .orElseThrow(() -> new AssertionError("no row for 5 idle connections in:\n" + text));
        double fdsPerConnection = Double.parseDouble(row.trim().split("\\s+")[8]);
        assertTrue(fdsPerConnection >= 0.6 && fdsPerConnection <= 2, row);
    }

    @Test
    void main_withTooFewCIterations_failsNamingTheBound() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ScaleBench.main(new String[] {"-C", "none", "-I", "10"}));
        assertTrue(e.getMessage().contains("-I 10") && e.getMessage().contains("100"), e.getMessage());
    }
}
