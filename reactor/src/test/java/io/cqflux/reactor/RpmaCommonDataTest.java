package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import static org.junit.jupiter.api.Assertions.assertFalse;

import io.cqflux.core.testing.CProbe;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RpmaCommonDataTest {

    /**
     * The struct as librpma's examples declare it ({@code examples/common/common-conn.h}:
     * {@code DESCRIPTORS_MAX_SIZE} 24), compiled with gcc: its size and offsets are what
     * {@link RpmaCommonData} encodes, and librpma 1.2's descriptors fit its array.
     */
    @Test
    void size_andOffsets_matchTheExamplesCStruct_compiledAtTestTime() {
        Map<String, Long> c = CProbe.run("common_data", """
                #include <stdio.h>
                #include <stddef.h>
                #include <stdint.h>
                #include <librpma.h>
                #define DESCRIPTORS_MAX_SIZE 24
                struct common_data {
                    uint16_t data_offset;
                    uint8_t mr_desc_size;
                    uint8_t pcfg_desc_size;
                    char descriptors[DESCRIPTORS_MAX_SIZE];
                };
                #define P(n, v) printf("%s %lld\\n", n, (long long)(v))
                int main(void) {
                  P("sizeof", sizeof(struct common_data));
                  P("data_offset", offsetof(struct common_data, data_offset));
                  P("mr_desc_size", offsetof(struct common_data, mr_desc_size));
                  P("pcfg_desc_size", offsetof(struct common_data, pcfg_desc_size));
                  P("descriptors", offsetof(struct common_data, descriptors));
                  P("max", DESCRIPTORS_MAX_SIZE);
                  return 0;
                }
                """);
        assertEquals(c.get("sizeof"), (long) RpmaCommonData.SIZE);
        assertEquals(28L, c.get("sizeof"), "librpma's 05 client checks for at least 28 bytes");
        assertEquals(0L, c.get("data_offset"));
        assertEquals(2L, c.get("mr_desc_size"));
        assertEquals(3L, c.get("pcfg_desc_size"));
        assertEquals(c.get("descriptors"), (long) RpmaCommonData.HEADER_SIZE);
        assertEquals(c.get("max"), (long) RpmaCommonData.DESCRIPTORS_MAX_SIZE);
        assertEquals(28, RpmaCommonData.encode(new byte[21], new byte[1], 0).length);
    }

    @Test
    void encode_descriptorsBeyondTheStructsArray_failsNamingBothSizesAndTheBound() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RpmaCommonData.encode(new byte[21], new byte[4], 0));
        assertTrue(e.getMessage().contains("21 bytes") && e.getMessage().contains("4 bytes")
                && e.getMessage().contains("24-byte"), e.getMessage());
    }

    @Test
    void tryDecode_ofTheZerosAnExampleClientSends_isEmpty_withoutThrowing() {
        assertFalse(RpmaCommonData.tryDecode(new byte[56]).isPresent(), "56 zero bytes: no mr_desc_size");
        assertFalse(RpmaCommonData.tryDecode(new byte[0]).isPresent());
        assertFalse(RpmaCommonData.tryDecode(null).isPresent());
        assertFalse(RpmaCommonData.tryDecode(new byte[] {0, 0, 21, 1, 0}).isPresent(), "sizes run past the data");
        byte[] mr = new byte[21];
        mr[20] = 12;
        RpmaCommonData d = RpmaCommonData.tryDecode(Arrays.copyOf(RpmaCommonData.encode(mr, new byte[] {1}, 7), 56))
                .orElseThrow();
        assertEquals(7, d.dataOffset());
        assertArrayEquals(mr, d.mrDescriptor());
    }

    /**
     * Declared sizes that fit in what arrived (padded private data is long) but not in the C
     * struct's 24-byte {@code descriptors[]}: decode refuses naming both sizes and the bound,
     * tryDecode is empty.
     */
    @Test
    void decode_descriptorSizesBeyondTheStructsArray_isRefused_andTryDecodeIsEmpty() {
        byte[] data = new byte[56];
        data[2] = 21;
        data[3] = 4; // 25 > 24, though 4 + 25 <= 56 bytes arrived
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RpmaCommonData.decode(data));
        assertTrue(e.getMessage().contains("21") && e.getMessage().contains("4")
                && e.getMessage().contains("24"), e.getMessage());
        assertFalse(RpmaCommonData.tryDecode(data).isPresent());
        data[3] = 3; // 24: exactly the array
        assertEquals(3, RpmaCommonData.decode(data).peerConfigDescriptor().length);
        assertTrue(RpmaCommonData.tryDecode(data).isPresent());
        data[2] = (byte) 200;
        data[3] = 0;
        assertFalse(RpmaCommonData.tryDecode(data).isPresent(), "an mr_desc_size of 200");
    }

    @Test
    void encode_isTheCStructLayout_littleEndianOffset_thenBothDescriptors() {
        byte[] mr = new byte[21];
        Arrays.fill(mr, (byte) 7);
        byte[] enc = RpmaCommonData.encode(mr, new byte[] {9}, 0x1234);
        assertEquals(28, enc.length, "the whole struct, descriptors[24] included");
        assertEquals(0x34, enc[0]);
        assertEquals(0x12, enc[1]);
        assertEquals(21, enc[2]);
        assertEquals(1, enc[3]);
        assertEquals(7, enc[4]);
        assertEquals(9, enc[25]);
        assertEquals(0, enc[26]);
        assertEquals(0, enc[27]);
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
        assertFalse(RpmaCommonData.tryDecode(Arrays.copyOf(enc, 20)).isPresent());
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
                assertTrue(RpmaCommonData.tryDecode(d).isPresent(), "decode took what tryDecode refused");
            } catch (IllegalArgumentException expected) {
                assertFalse(RpmaCommonData.tryDecode(d).isPresent(), "tryDecode took what decode refused");
            }
        }
    }
}
