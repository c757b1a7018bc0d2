package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PendingTableTest {

    @Test
    void acquire_returnsContextThatFindsOwner_withAndWithoutPartBit() {
        PendingTable t = new PendingTable(4);
        Object a = new Object();
        long ctx = t.acquire(a);
        assertTrue(ctx >= 0);
        assertSame(a, t.lookup(ctx));
        assertSame(a, t.lookup(ctx | PendingTable.PART_BIT));
        assertEquals(1, t.used());
    }

    @Test
    void staleContext_afterSlotReuse_missesTheNewOwner() {
        PendingTable t = new PendingTable(1);
        long first = t.acquire("first");
        assertTrue(t.release(first));
        long second = t.acquire("second");
        assertEquals(first & (PendingTable.MAX_CAPACITY - 1), second & (PendingTable.MAX_CAPACITY - 1),
                "same slot reused");
        assertNull(t.lookup(first), "late completion of the first owner must not reach the second");
        assertFalse(t.release(first), "stale release must not free the reused slot");
        assertEquals("second", t.lookup(second));
    }

    @Test
    void full_refusesAcquire_andEveryReleaseFreesExactlyOneSlot() {
        PendingTable t = new PendingTable(3);
        Set<Long> ctx = new HashSet<>();
        for (int i = 0; i < 3; i++) {
            ctx.add(t.acquire(i));
        }
        assertFalse(t.hasFree());
        assertThrows(IllegalStateException.class, () -> t.acquire("x"));
        for (long c : ctx) {
            assertTrue(t.release(c));
        }
        assertEquals(0, t.used());
    }

    @Test
    void malformedContexts_receiveTagOrOutOfRangeIndex_areNotFound() {
        PendingTable t = new PendingTable(2);
        t.acquire("a");
        assertNull(t.lookup(PendingTable.RECEIVE_TAG));
        assertNull(t.lookup(5));
        assertNull(t.lookup(-1));
    }

    @Test
    void generations_neverRepeatWithinManyReuses() {
        PendingTable t = new PendingTable(1);
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < 100_000; i++) {
            long c = t.acquire(i);
            assertTrue(seen.add(c), "context repeated after " + i + " reuses");
            t.release(c);
        }
    }

    @Test
    void capacity_outsideBounds_isRejectedNamingTheBound() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new PendingTable(0));
        assertTrue(e.getMessage().contains(String.valueOf(PendingTable.MAX_CAPACITY)), e.getMessage());
    }
}
