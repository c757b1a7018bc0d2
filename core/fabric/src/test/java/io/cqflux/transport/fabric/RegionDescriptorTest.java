package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The descriptor format: round trip, every malformation named, random bytes never crash. */
class RegionDescriptorTest {

    private static byte[] valid() {
        return RegionDescriptor.encode(42, 0x7f00_0000_1000L, 4096,
                EnumSet.of(RegionAccess.WRITE_DST, RegionAccess.READ_SRC), EnumSet.of(FlushType.VISIBILITY));
    }

    @Test
    void encodeThenParse_roundTripsEveryField() {
        RegionDescriptor.Remote r = RegionDescriptor.parse(valid());
        assertEquals(42, r.key());
        assertEquals(0x7f00_0000_1000L, r.base());
        assertEquals(4096, r.size());
        assertEquals(Set.of(RegionAccess.WRITE_DST, RegionAccess.READ_SRC), r.access());
        assertEquals(Set.of(FlushType.VISIBILITY), r.flushTypes());
        assertEquals(RegionDescriptor.LENGTH, valid().length);
    }

    @Test
    void shortKeyProvider_encodesVersion2Of24Bytes_andRawOf20_roundTrippingEveryField() {
        Set<RegionAccess> access = EnumSet.of(RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                RegionAccess.FLUSH_TYPE_VISIBILITY);
        byte[] d = RegionDescriptor.encode(0xfedc_ba98L, 0x7f00_0000_1000L, 1L << 40, access,
                EnumSet.of(FlushType.VISIBILITY), 4);
        assertEquals(RegionDescriptor.LENGTH2, d.length);
        RegionDescriptor.Remote r = RegionDescriptor.parse(d);
        assertEquals(0xfedc_ba98L, r.key());
        assertEquals(0x7f00_0000_1000L, r.base());
        assertEquals(1L << 40, r.size());
        assertEquals(access, r.access());
        assertEquals(Set.of(FlushType.VISIBILITY), r.flushTypes());
        byte[] raw = RegionDescriptor.encodeRaw(0xfedc_ba98L, 0x7f00_0000_1000L, 4096, 4);
        assertEquals(RegionDescriptor.RAW_LENGTH_SHORT_KEY, raw.length);
        RegionDescriptor.Remote rr = RegionDescriptor.parseRaw(raw, Set.of(RegionAccess.READ_SRC));
        assertEquals(0xfedc_ba98L, rr.key());
        assertEquals(0x7f00_0000_1000L, rr.base());
        assertEquals(4096, rr.size());
        // 8-byte keys (tcp) keep version 1 and the 24-byte raw form
        assertEquals(RegionDescriptor.LENGTH, RegionDescriptor.encode(1, 0, 64, access, Set.of(), 8).length);
        assertEquals(RegionDescriptor.RAW_LENGTH, RegionDescriptor.encodeRaw(1, 0, 64, 8).length);
        byte[] bad = java.util.Arrays.copyOf(d, 25);
        assertMessage(bad, "25 bytes");
        bad = d.clone();
        ByteBuffer.wrap(bad).putLong(16, 64); // access bits (top byte of the length) cleared
        assertMessage(bad, "empty");
    }

    @Test
    void malformedDescriptors_areRefusedNamingTheProblem() {
        assertMessage(null, "null");
        assertMessage(new byte[2], "shorter");
        byte[] d = valid();
        d[0] = 1;
        assertMessage(d, "magic");
        d = valid();
        d[4] = 9;
        assertMessage(d, "version 9");
        assertMessage(java.util.Arrays.copyOf(valid(), 31), "31 bytes");
        assertMessage(java.util.Arrays.copyOf(valid(), 40), "40 bytes");
        d = valid();
        d[5] = 0x10;
        assertMessage(d, "flush bits");
        d = valid();
        ByteBuffer.wrap(d).putShort(6, (short) 0x100);
        assertMessage(d, "access bits");
        ByteBuffer.wrap(d).putShort(6, (short) 0);
        assertMessage(d, "empty");
        d = valid();
        ByteBuffer.wrap(d).putLong(24, 0);
        assertMessage(d, "length 0");
        ByteBuffer.wrap(d).putLong(24, -5);
        assertMessage(d, "length -5");
        d = valid();
        ByteBuffer.wrap(d).putLong(16, -16L).putLong(24, 32);
        assertMessage(d, "overflows");
    }

    @Test
    void randomBytes_parseOrFailWithIllegalArgumentOnly() {
        Random rnd = new Random(7);
        int parsed = 0;
        for (int i = 0; i < 20_000; i++) {
            byte[] d;
            if (i % 2 == 0) {
                d = new byte[rnd.nextInt(48)];
                rnd.nextBytes(d);
            } else {
                d = valid(); // mutate a valid one so the deeper checks are reached
                for (int k = 1 + rnd.nextInt(3); k > 0; k--) {
                    d[rnd.nextInt(d.length)] ^= (byte) (1 << rnd.nextInt(8));
                }
            }
            try {
                RegionDescriptor.Remote r = RegionDescriptor.parse(d);
                assertTrue(r.size() > 0 && !r.access().isEmpty());
                parsed++;
            } catch (IllegalArgumentException e) {
                assertTrue(e.getMessage().startsWith("region descriptor"), e.getMessage());
            }
        }
        assertTrue(parsed > 0, "some mutations (key, base) stay valid");
    }

    private static void assertMessage(byte[] d, String part) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RegionDescriptor.parse(d));
        assertTrue(e.getMessage().contains(part), e.getMessage() + " should mention " + part);
    }
}
