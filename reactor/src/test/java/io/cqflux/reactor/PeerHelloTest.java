package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RegionListTest {

    @Test
    void encodeDecode_roundTripsDescriptors_andIgnoresTrailingPadding() {
        byte[] a = {1, 2, 3};
        byte[] b = new byte[40];
        new Random(1).nextBytes(b);
        byte[] enc = RegionList.encode(List.of(a, b), 1000);
        byte[] padded = new byte[enc.length + 16];
        System.arraycopy(enc, 0, padded, 0, enc.length);
        List<byte[]> dec = RegionList.decode(padded);
        assertEquals(2, dec.size());
        assertArrayEquals(a, dec.get(0));
        assertArrayEquals(b, dec.get(1));
    }

    @Test
    void encode_aboveTransportLimit_failsNamingSizeAndLimit() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RegionList.encode(List.of(new byte[100]), 56));
        assertTrue(e.getMessage().contains("106") && e.getMessage().contains("56"), e.getMessage());
    }

    @Test
    void decode_emptyOrZeroPadding_meansNoRegions() {
        assertEquals(0, RegionList.decode(new byte[0]).size());
        assertEquals(0, RegionList.decode(new byte[32]).size());
        assertEquals(0, RegionList.encode(List.of(), 0).length);
    }

    @Test
    void decode_truncatedOrForeignBytes_failWithIllegalArgument() {
        byte[] enc = RegionList.encode(List.of(new byte[10]), 100);
        byte[] cut = java.util.Arrays.copyOf(enc, enc.length - 3);
        assertThrows(IllegalArgumentException.class, () -> RegionList.decode(cut));
        assertThrows(IllegalArgumentException.class, () -> RegionList.decode(new byte[] {9, 9, 9, 9}));
        byte[] badVersion = enc.clone();
        badVersion[2] = 7;
        assertThrows(IllegalArgumentException.class, () -> RegionList.decode(badVersion));
    }

    @Test
    void decode_randomBytes_neverThrowsAnythingButIllegalArgument() {
        Random r = new Random(42);
        for (int i = 0; i < 10_000; i++) {
            byte[] d = new byte[r.nextInt(64)];
            r.nextBytes(d);
            if (d.length > 1 && r.nextBoolean()) {
                d[0] = 'C';
                d[1] = 'Q';
                if (d.length > 2) {
                    d[2] = 1;
                }
            }
            try {
                RegionList.decode(d);
            } catch (IllegalArgumentException expected) {
                // fine
            }
        }
    }
}
