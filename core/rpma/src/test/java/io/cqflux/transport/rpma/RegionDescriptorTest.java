package io.cqflux.transport.rpma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RegionDescriptorTest {

    private static final int NATIVE = 21; // librpma 1.2: raddr 8 + size 8 + rkey 4 + usage 1

    private static byte[] nativeBytes() {
        byte[] b = new byte[NATIVE];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (i + 1);
        }
        return b;
    }

    @Test
    void encodeThenParse_roundTripsAccessAndNativeBytes() {
        Set<RegionAccess> access = EnumSet.of(RegionAccess.READ_SRC, RegionAccess.WRITE_DST, RegionAccess.FLUSH_TYPE_VISIBILITY);
        RegionDescriptor d = RegionDescriptor.parse(RegionDescriptor.encode(access, nativeBytes()), NATIVE);
        assertEquals(access, d.access());
        assertArrayEquals(nativeBytes(), d.nativeDescriptor());
    }

    @Test
    void parse_null_isRejected() {
        assertThrows(IllegalArgumentException.class, () -> RegionDescriptor.parse(null, NATIVE));
    }

    @Test
    void parse_truncated_isRejectedNamingLengthAndBound() {
        byte[] good = RegionDescriptor.encode(Set.of(RegionAccess.READ_SRC), nativeBytes());
        for (int len : new int[] {0, 1, 2, 3, good.length - 1}) {
            byte[] b = java.util.Arrays.copyOf(good, len);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RegionDescriptor.parse(b, NATIVE));
            assertTrue(e.getMessage().contains(len + " bytes") && e.getMessage().contains("expected exactly 24"), e.getMessage());
        }
    }

    @Test
    void parse_tooLong_isRejected() {
        byte[] b = java.util.Arrays.copyOf(RegionDescriptor.encode(Set.of(RegionAccess.READ_SRC), nativeBytes()), 200);
        assertThrows(IllegalArgumentException.class, () -> RegionDescriptor.parse(b, NATIVE));
    }

    @Test
    void parse_wrongMagic_isRejected() {
        byte[] b = RegionDescriptor.encode(Set.of(RegionAccess.READ_SRC), nativeBytes());
        b[0] = 0x42;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RegionDescriptor.parse(b, NATIVE));
        assertTrue(e.getMessage().contains("0x42"), e.getMessage());
    }

    @Test
    void parse_declaredNativeLengthMismatch_isRejected() {
        byte[] b = RegionDescriptor.encode(Set.of(RegionAccess.READ_SRC), nativeBytes());
        b[2] = (byte) 200;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RegionDescriptor.parse(b, NATIVE));
        assertTrue(e.getMessage().contains("200") && e.getMessage().contains("expected " + NATIVE), e.getMessage());
    }

    @Test
    void parse_noAccessBits_isRejected() {
        byte[] b = RegionDescriptor.encode(Set.of(RegionAccess.READ_SRC), nativeBytes());
        b[1] = 0;
        assertThrows(IllegalArgumentException.class, () -> RegionDescriptor.parse(b, NATIVE));
    }

    @Test
    void parse_randomGarbage_neverThrowsAnythingButIllegalArgument() {
        java.util.Random r = new java.util.Random(42);
        for (int i = 0; i < 2000; i++) {
            byte[] b = new byte[r.nextInt(40)];
            r.nextBytes(b);
            try {
                RegionDescriptor.parse(b, NATIVE);
            } catch (IllegalArgumentException expected) {
                // fine: malformed bytes are an error, never a crash
            }
        }
    }
}
