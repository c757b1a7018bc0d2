package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class RpmaCommonDataTest {

    @Test
    void encode_isTheCStructLayout_littleEndianOffset_thenBothDescriptors() {
        byte[] mr = new byte[21];
        Arrays.fill(mr, (byte) 7);
        byte[] enc = RpmaCommonData.encode(mr, new byte[] {9}, 0x1234);
        assertEquals(4 + 21 + 1, enc.length);
        assertEquals(0x34, enc[0]);
        assertEquals(0x12, enc[1]);
        assertEquals(21, enc[2]);
        assertEquals(1, enc[3]);
        assertEquals(7, enc[4]);
        assertEquals(9, enc[25]);
    }

    @Test
    void decode_ofPaddedData_roundTrips_andIgnoresThePadding() {
        byte[] mr = new byte[21];
        new java.util.Random(1).nextBytes(mr);
        RpmaCommonData d = RpmaCommonData.decode(Arrays.copyOf(RpmaCommonData.encode(mr, new byte[] {1}, 4096), 196));
        assertEquals(4096, d.dataOffset());
        assertArrayEquals(mr, d.mrDescriptor());
        assertArrayEquals(new byte[] {1}, d.peerConfigDescriptor());
    }

    @Test
    void decode_truncatedOrShort_failsNamingOffsetAndBound() {
        byte[] enc = RpmaCommonData.encode(new byte[21], new byte[] {1}, 0);
        IllegalArgumentException cut = assertThrows(IllegalArgumentException.class,
                () -> RpmaCommonData.decode(Arrays.copyOf(enc, 20)));
        assertTrue(cut.getMessage().contains("offset 26") && cut.getMessage().contains("20 bytes"), cut.getMessage());
        IllegalArgumentException shortHeader = assertThrows(IllegalArgumentException.class,
                () -> RpmaCommonData.decode(new byte[3]));
        assertTrue(shortHeader.getMessage().contains("3 bytes"), shortHeader.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RpmaCommonData.decode(new byte[56]));
    }

    @Test
    void encode_outOfBounds_failsNamingTheBound() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RpmaCommonData.encode(new byte[21], new byte[0],
                65536)).getMessage().contains("65536"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RpmaCommonData.encode(new byte[256], new byte[0],
                0)).getMessage().contains("256"));
        assertThrows(IllegalArgumentException.class, () -> RpmaCommonData.encode(new byte[0], new byte[0], 0));
    }

    @Test
    void decode_randomBytes_neverThrowsAnythingButIllegalArgument() {
        java.util.Random r = new java.util.Random(5);
        for (int i = 0; i < 10_000; i++) {
            byte[] d = new byte[r.nextInt(64)];
            r.nextBytes(d);
            try {
                RpmaCommonData.decode(d);
            } catch (IllegalArgumentException expected) {
                // fine
            }
        }
    }
}
