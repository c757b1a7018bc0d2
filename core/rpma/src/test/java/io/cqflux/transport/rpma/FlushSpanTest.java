package io.cqflux.transport.rpma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Where librpma's 8-byte flush read goes: inside the region, over a superset of the range asked for. */
class FlushSpanTest {

    @Test
    void everyRangeOfARegion_isFlushedBySpanCoveringIt_whoseReadLiesInsideTheRegion() {
        for (long size : new long[] {8, 9, 64, 4096}) {
            for (long offset = 0; offset <= size; offset++) {
                for (long length = 0; offset + length <= size; length++) {
                    FlushSpan s = FlushSpan.of(size, offset, length);
                    String at = "size " + size + ", [" + offset + ", +" + length + ")";
                    assertTrue(s.offset() >= 0 && s.offset() + FlushSpan.READ_BYTES <= size, "the read leaves the region: " + at + " -> " + s);
                    assertTrue(s.offset() <= offset && s.offset() + s.length() == offset + length, "not a superset ending where asked: " + at + " -> " + s);
                    assertTrue(s.length() >= 0, at + " -> " + s);
                }
                if (size > 64) {
                    break; // the large region's tail is what matters; its head is the identity
                }
            }
        }
    }

    @Test
    void aRangeStartingBeforeTheRegionsLastEightBytes_isHandedOnUnchanged() {
        assertEquals(new FlushSpan(0, 0), FlushSpan.of(64, 0, 0));
        assertEquals(new FlushSpan(56, 8), FlushSpan.of(64, 56, 8));
        assertEquals(new FlushSpan(0, 64), FlushSpan.of(64, 0, 64));
        assertEquals(new FlushSpan(0, 8), FlushSpan.of(8, 0, 8));
    }

    @Test
    void aRangeStartingInTheRegionsLastEightBytes_startsEightBeforeTheEnd() {
        assertEquals(new FlushSpan(56, 8), FlushSpan.of(64, 60, 4));
        assertEquals(new FlushSpan(56, 1), FlushSpan.of(64, 57, 0));
        assertEquals(new FlushSpan(56, 8), FlushSpan.of(64, 64, 0));
        assertEquals(new FlushSpan(56, 4), FlushSpan.of(64, 58, 2));
        assertEquals(new FlushSpan(0, 8), FlushSpan.of(8, 8, 0));
        assertEquals(new FlushSpan(0, 8), FlushSpan.of(8, 1, 7));
    }
}
