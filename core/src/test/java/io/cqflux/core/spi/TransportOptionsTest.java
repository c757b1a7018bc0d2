package io.cqflux.core.spi;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TransportOptionsTest {

    private static TransportOptions with(Map<String, String> properties) {
        return new TransportOptions(InetAddress.getLoopbackAddress(), false, properties);
    }

    @Test
    void aMisspeltNameInTheTransportsOwnNamespace_isRefusedNamingItAndWhatTheTransportKnows() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> with(Map.of("fabric.provder", "verbs")).checkNames("fabric", Set.of(TransportOptions.FABRIC_PROVIDER)));
        assertTrue(e.getMessage().contains("'fabric.provder'") && e.getMessage().contains("[fabric.provider]"),
                e.getMessage());
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                () -> with(Map.of("rpma.anything", "1")).checkNames("rpma", Set.of()));
        assertTrue(none.getMessage().contains("'rpma.anything'") && none.getMessage().contains("has none"),
                none.getMessage());
    }

    @Test
    void knownNames_andOtherTransportsNames_pass() {
        TransportOptions o = with(Map.of("fabric.provider", "tcp", "rpma.future", "x", "faulty.id", "1",
                "fabricated", "y"));
        assertDoesNotThrow(() -> o.checkNames("fabric", Set.of(TransportOptions.FABRIC_PROVIDER)));
        assertThrows(IllegalArgumentException.class, () -> o.checkNames("rpma", Set.of()));
    }

    @Test
    void names_matchIgnoringCase_asSpringBindsEnvironmentVariables() {
        TransportOptions o = with(Map.of("fabric.completionqueuegroup", "32"));
        assertDoesNotThrow(() -> o.checkNames("fabric", Set.of(TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP)));
        assertTrue("32".equals(o.property(TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP, null)));
        assertTrue("x".equals(o.property("fabric.other", "x")));
    }
}
