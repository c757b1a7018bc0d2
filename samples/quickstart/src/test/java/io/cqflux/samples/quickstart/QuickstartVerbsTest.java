package io.cqflux.samples.quickstart;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.testing.FreePorts;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The quickstart on libfabric's verbs provider over the Soft-RoCE device: runs only in the lane
 * (tag {@code fabric-verbs}), where {@code CQFLUX_RPMA_ADDRESS} names the guest's rxe address.
 */
@Tag("fabric-verbs")
class QuickstartVerbsTest {
    @Test
    void smallRun_overFabricVerbs_verifiesEveryByte_andExitsZero() {
        String address = System.getenv("CQFLUX_RPMA_ADDRESS");
        if (address == null || address.isBlank()) {
            throw new IllegalStateException("CQFLUX_RPMA_ADDRESS is not set: the fabric-verbs tier runs in the"
                    + " Soft-RoCE lane (scripts/softroce), with the guest's rxe address");
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Quickstart.run(new String[] {"--transport", "fabric", "--provider", "verbs", "--address", address,
                        "--port", Integer.toString(FreePorts.next()), "--count", "200", "--size", "1000", "--concurrency", "8", "--quiet"},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String log = out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, log);
        assertTrue(log.contains("fabric/verbs"), log);
        assertTrue(log.contains("verified 200/200 records via RDMA read, 200/200 in the server's mapped file: OK"), log);
    }
}
