package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * LockedMemory's reading of /proc (the soft RLIMIT_MEMLOCK, CAP_IPC_LOCK), and the default of
 * keys scoped to their connection that the fabric transport answers from it and from the
 * libfabric it runs on.
 */
class LockedMemoryTest {

    private static final String LIMITS = """
            Limit                     Soft Limit           Hard Limit           Units
            Max open files            1024                 1048576              files
            Max locked memory         8388608              8388608              bytes
            Max address space         unlimited            unlimited            bytes
            """;

    @Test
    void theSoftLockedMemoryLimit_isReadInBytes_unlimitedAsTheLargestValue() {
        assertEquals(8_388_608L, LockedMemory.softLimit(LIMITS));
        assertEquals(Long.MAX_VALUE, LockedMemory.softLimit(LIMITS.replace("8388608              8388608",
                "unlimited            unlimited")));
        assertThrows(IllegalArgumentException.class, () -> LockedMemory.softLimit("Max open files 1 1 files"));
    }

    @Test
    void capIpcLock_isBit14OfTheEffectiveSet() {
        assertTrue(LockedMemory.hasCapability("Name:\tjava\nCapEff:\t000001ffffffffff\n", LockedMemory.CAP_IPC_LOCK));
        assertFalse(LockedMemory.hasCapability("CapEff:\t0000000000000000\n", LockedMemory.CAP_IPC_LOCK));
        assertTrue(LockedMemory.hasCapability("CapEff:\t0000000000004000\n", LockedMemory.CAP_IPC_LOCK));
        assertFalse(LockedMemory.hasCapability("CapEff:\t0000000000002000\n", LockedMemory.CAP_IPC_LOCK));
        assertFalse(LockedMemory.hasCapability("Name:\tjava\n", LockedMemory.CAP_IPC_LOCK), "no CapEff line");
    }

    @Test
    void thisProcess_answersFromItsOwnProcFiles() throws Exception {
        boolean cap = LockedMemory.hasCapability(Files.readString(Path.of("/proc/self/status")), LockedMemory.CAP_IPC_LOCK);
        long soft = LockedMemory.softLimit(Files.readString(Path.of("/proc/self/limits")));
        Long bound = LockedMemory.boundOrNull();
        if (cap || soft == Long.MAX_VALUE) {
            assertNull(bound);
        } else {
            assertEquals(soft, bound);
        }
    }

    @Test
    void tcpOfTheLibfabricMeasured_scopesKeysByDefault() {
        try (FabricTransport t = FabricTransport.open("tcp", InetAddress.getLoopbackAddress(), 0)) {
            assertNull(t.connectionScopedKeysRefusal());
            assertEquals(ProviderProfile.sharesQueuesAcrossDomains("tcp", FabricLibrary.libraryVersion()),
                    t.connectionScopedKeysDefaultRefusal() == null, () -> "" + t.connectionScopedKeysDefaultRefusal());
        }
    }
}
