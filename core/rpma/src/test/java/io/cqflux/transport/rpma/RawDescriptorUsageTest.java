package io.cqflux.transport.rpma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * librpma's raw descriptor ends with the owner's usage byte (rpma_mr_get_descriptor writes it
 * last): a stated access is checked against it before any byte reaches librpma. These cases fail
 * before the native parse, so they run on a host without an RDMA device.
 */
class RawDescriptorUsageTest {
    static final int SIZE = 21; // rpma_mr_get_descriptor_size in librpma 1.2 (native-facts)

    static byte[] descriptor(int usage) {
        byte[] d = new byte[SIZE];
        d[SIZE - 1] = (byte) usage;
        return d;
    }

    @Test
    void usageOf_readsTheRpmaMrUsageBits() {
        assertEquals(EnumSet.of(RegionAccess.READ_SRC, RegionAccess.WRITE_DST, RegionAccess.FLUSH_TYPE_VISIBILITY),
                RpmaRemoteRegion.usageOf(1 | 8 | 16));
        assertEquals(Set.of(RegionAccess.RECV), RpmaRemoteRegion.usageOf(128));
    }

    @Test
    void fromRaw_claimBeyondTheUsageByte_isRefused_namingBothAndWhatIsMissing() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RpmaRemoteRegion.fromRaw(
                descriptor(1 | 16), EnumSet.of(RegionAccess.READ_SRC, RegionAccess.WRITE_DST), SIZE));
        String m = e.getMessage();
        assertTrue(m.contains("[READ_SRC, WRITE_DST]") && m.contains("0x11")
                && m.contains("[READ_SRC, FLUSH_TYPE_VISIBILITY]") && m.contains("without [WRITE_DST]"), m);
    }

    @Test
    void fromRaw_descriptorGrantingNothing_isRefusedNamingTheByte() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RpmaRemoteRegion.fromRaw(descriptor(0), Set.of(), SIZE));
        assertTrue(e.getMessage().contains("grants no access") && e.getMessage().contains("0x0"), e.getMessage());
    }

    @Test
    void fromRaw_wrongSize_isRefusedBeforeTheUsageIsRead() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RpmaRemoteRegion.fromRaw(new byte[20], Set.of(RegionAccess.READ_SRC), SIZE));
        assertTrue(e.getMessage().contains("20 bytes") && e.getMessage().contains("exactly 21"), e.getMessage());
    }
}
