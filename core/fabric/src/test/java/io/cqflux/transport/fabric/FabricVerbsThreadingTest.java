package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.FI_THREAD_SAFE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The verbs provider grants the threading level the set-up thread relies on (see
 * FabricTransport#connectsOffLoop and FabricThreadingTest for tcp). Soft-RoCE lane only.
 */
@Tag("fabric-verbs")
class FabricVerbsThreadingTest {

    @Test
    void verbsDomain_isGrantedThreadSafe_soConnectsAndAcceptsMayLeaveTheLoop() {
        try (FabricTransport t = (FabricTransport) Fabric.open("verbs", FabricVerbsContractTest.laneAddress())) {
            assertEquals(FI_THREAD_SAFE(), t.threading(), "fi_domain(3) threading level the verbs provider granted");
            assertTrue(t.connectsOffLoop());
            assertTrue(t.acceptsOffLoop());
        }
    }
}
