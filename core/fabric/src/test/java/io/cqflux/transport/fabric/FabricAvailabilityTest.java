package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.TransportUnavailableException;
import java.net.InetAddress;
import org.junit.jupiter.api.Test;

/** Availability reporting: present here, and what a missing library or provider says. */
class FabricAvailabilityTest {

    @Test
    void libfabric_isAvailableOnThisHost() {
        assertTrue(Fabric.isAvailable(), Fabric.unavailabilityCause());
        assertEquals("", Fabric.unavailabilityCause());
        assertTrue(Integer.compareUnsigned(FabricLibrary.apiVersion(), FabricLibrary.MIN_API) >= 0);
    }

    @Test
    void missingLibrary_causeNamesThePackageToInstall() {
        String cause = FabricLibrary.probe("libfabric-does-not-exist.so.1");
        assertTrue(cause.contains("apt-get install libfabric1"), cause);
        assertTrue(cause.contains("libfabric-does-not-exist.so.1"), cause);
    }

    @Test
    void libraryWithoutFabricSymbols_isNotMistakenForLibfabric() {
        String cause = FabricLibrary.probe("libc.so.6");
        assertTrue(cause.contains("not a libfabric"), cause);
    }

    @Test
    void unknownProvider_listsTheProvidersThatExist() {
        TransportUnavailableException e = assertThrows(TransportUnavailableException.class,
                () -> Fabric.open("no-such-provider", InetAddress.getLoopbackAddress()));
        assertEquals("fabric", e.transport());
        assertTrue(e.getMessage().contains("no-such-provider"), e.getMessage());
        assertTrue(e.getMessage().contains("tcp"), "lists tcp: " + e.getMessage());
    }
}
