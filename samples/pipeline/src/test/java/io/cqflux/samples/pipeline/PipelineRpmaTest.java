package io.cqflux.samples.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.testing.FreePorts;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pipeline over librpma: runs only in the Soft-RoCE lane (tag {@code rpma}), where
 * {@code CQFLUX_RPMA_ADDRESS} names the guest's rxe address. The lane's default scan includes this
 * module; alone: {@code scripts/softroce/run-tests.sh --build -- --select-package=io.cqflux.samples.pipeline}.
 */
@Tag("rpma")
class PipelineRpmaTest {
    @TempDir
    Path dir;

    @Test
    void records_overRpma_allVerifiedInOrder_sourceHeldBackToTheRing() {
        String address = System.getenv("CQFLUX_RPMA_ADDRESS");
        if (address == null || address.isBlank()) {
            throw new IllegalStateException("CQFLUX_RPMA_ADDRESS is not set: the rpma tier runs in the Soft-RoCE lane"
                    + " (scripts/softroce), with the guest's rxe address");
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        // The lane's VM emulates its CPU (TCG): fewer records than on the host, the same shape.
        Pipeline.Result r = Pipeline.run(Options.parse(new String[] {"--transport", "rpma", "--address", address,
                        "--port", Integer.toString(FreePorts.next()), "--records", "20000", "--ring-slots", "512", "--batch", "32", "--interval-ms", "250",
                        "--out", dir.toString()}),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String log = out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8);
        System.out.print(log);
        assertEquals(Pipeline.OK, r.status(), log);
        assertEquals(20_000, r.verified(), log);
        assertTrue(r.maxAhead() <= 512 + 3 * 32, log);
    }
}
