package io.cqflux.reactor.internal.connection;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class InFlightTableTest {

    @Test
    void acquire_returnsContextThatFindsOwner_withAndWithoutPartBit() {
        InFlightTable t = new InFlightTable(4, 0);
        Object a = new Object();
        long ctx = t.acquire(a);
        assertTrue(ctx > 0);
        assertFalse(InFlightTable.isPart(ctx));
        long part = InFlightTable.part(ctx);
        assertTrue(InFlightTable.isPart(part));
        assertSame(a, t.lookup(ctx));
        assertSame(a, t.lookup(part));
        assertEquals(1, t.used());
    }

    @Test
    void freshContext_isWhatANewTableHandsOutFirst_inOrder_forReceivesPostedBeforeTheAccept() {
        InFlightTable t = new InFlightTable(4, 3);
        for (int i = 0; i < 3; i++) {
            assertEquals(InFlightTable.freshContext(i), t.acquire(new Object()), "acquire " + i);
        }
        assertNotEquals(InFlightTable.freshContext(3), InFlightTable.freshContext(2));
    }

    @Test
    void contexts_areNeverZero_soANullOpContextNeverFindsAnOwner() {
        InFlightTable t = new InFlightTable(1, 1);
        for (int i = 0; i < 10_000; i++) {
            long c = t.acquire(i);
            assertNotEquals(0, c);
            t.release(c);
        }
        t.acquire("x");
        assertNull(t.lookup(0), "libfabric tcp reports a peer's write-with-immediate with op_context 0");
    }

    @Test
    void staleContext_afterSlotReuse_missesTheNewOwner() {
        InFlightTable t = new InFlightTable(1, 0);
        long first = t.acquire("first");
        assertTrue(t.release(first));
        long second = t.acquire("second");
        assertEquals(first & (InFlightTable.MAX_CAPACITY - 1), second & (InFlightTable.MAX_CAPACITY - 1),
                "same slot reused");
        assertNull(t.lookup(first), "late completion of the first owner must not reach the second");
        assertFalse(t.release(first), "stale release must not free the reused slot");
        assertEquals("second", t.lookup(second));
    }

    @Test
    void full_refusesAcquire_andEveryReleaseFreesExactlyOneSlot() {
        InFlightTable t = new InFlightTable(2, 1);
        Set<Long> ctx = new HashSet<>();
        for (int i = 0; i < 3; i++) {
            ctx.add(t.acquire(i));
        }
        assertThrows(IllegalStateException.class, () -> t.acquire("x"));
        for (long c : ctx) {
            assertTrue(t.release(c));
        }
        assertEquals(0, t.used());
    }

    @Test
    void storage_startsSmall_growsWithUse_andEveryContextHandedOutStaysValid() {
        InFlightTable t = new InFlightTable(128, 128);
        assertEquals(256, t.capacity());
        assertEquals(InFlightTable.INITIAL_SLOTS, t.allocated(), "an idle connection holds the initial slots only");
        long[] ctx = new long[256];
        for (int i = 0; i < 256; i++) {
            ctx[i] = t.acquire("op" + i);
            assertEquals(InFlightTable.freshContext(i), ctx[i], "a fresh table hands out slot " + i + " in order");
        }
        assertEquals(256, t.allocated());
        assertThrows(IllegalStateException.class, () -> t.acquire("one more"), "grown to the capacity, no further");
        for (int i = 0; i < 256; i++) {
            assertEquals("op" + i, t.lookup(ctx[i]), "context " + i + " after the growth");
        }
        assertTrue(t.release(ctx[3]));
        long reused = t.acquire("again");
        assertEquals(ctx[3] & (InFlightTable.MAX_CAPACITY - 1), reused & (InFlightTable.MAX_CAPACITY - 1));
        assertNull(t.lookup(ctx[3]), "the old owner's context misses after the slot's reuse");
        assertEquals(256, t.allocated(), "no growth while a slot is free");
    }

    @Test
    void aContextBeyondTheSlotsHeldSoFar_isNotFound_andDoesNotGrowTheTable() {
        InFlightTable t = new InFlightTable(128, 0);
        t.acquire("a");
        long beyond = InFlightTable.freshContext(100);
        assertNull(t.lookup(beyond));
        assertFalse(t.release(beyond));
        assertEquals(InFlightTable.INITIAL_SLOTS, t.allocated());
    }

    @Test
    void credits_areTakenAndReturned_andNeverOvercommitted() {
        InFlightTable t = new InFlightTable(3, 8);
        assertEquals(3, t.creditLimit());
        assertTrue(t.tryTakeCredits(2)); // a durable write holds two
        assertFalse(t.tryTakeCredits(2), "one credit left");
        assertTrue(t.tryTakeCredits(1));
        assertEquals(3, t.creditsInUse());
        t.returnCredits(2);
        assertEquals(2, t.credits());
        t.returnCredits(1);
        assertEquals(0, t.creditsInUse());
    }

    @Test
    void malformedContexts_negativeOrOutOfRangeIndex_areNotFound() {
        InFlightTable t = new InFlightTable(2, 0);
        t.acquire("a");
        assertNull(t.lookup(Long.MIN_VALUE));
        assertNull(t.lookup(5));
        assertNull(t.lookup(-1));
    }

    @Test
    void generations_neverRepeatWithinManyReuses() {
        InFlightTable t = new InFlightTable(1, 0);
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < 100_000; i++) {
            long c = t.acquire(i);
            assertTrue(seen.add(c), "context repeated after " + i + " reuses");
            t.release(c);
        }
    }

    @Test
    void contexts_leaveTheTransportBitsClear_andAContextWithThemSetMisses() {
        InFlightTable t = new InFlightTable(4, 4);
        Object owner = new Object();
        long c = t.acquire(owner);
        long part = InFlightTable.part(c);
        assertEquals(0, c & io.cqflux.core.spi.Connection.TRANSPORT_CONTEXT_MASK);
        assertEquals(0, part & io.cqflux.core.spi.Connection.TRANSPORT_CONTEXT_MASK);
        // A transport that left its routing bits on the context: no owner, not a wrong one.
        long routed = c | (5L << io.cqflux.core.spi.Connection.TRANSPORT_CONTEXT_SHIFT);
        assertNull(t.lookup(routed));
        assertSame(owner, t.lookup(c));
        // The generation wraps below the transport bits: every reuse of one slot until it wraps
        // (2^26 acquires: generations 1 to 2^26 - 1, then 1 again) leaves them clear.
        InFlightTable one = new InFlightTable(1, 0);
        long first = one.acquire(one);
        one.release(first);
        long seen = first;
        long last = first;
        for (int i = 1; i < 1 << 26; i++) {
            last = one.acquire(one);
            seen |= last;
            one.release(last);
        }
        assertEquals(1L << (InFlightTable.INDEX_BITS + 1), first, "the first generation is 1, at slot 0");
        assertEquals(0, seen & io.cqflux.core.spi.Connection.TRANSPORT_CONTEXT_MASK,
                "a bit of the transport's in some context: 0x" + Long.toHexString(seen));
        assertEquals(first, last, "the 2^26-th acquire wraps the generation to 1");
    }

    @Test
    void capacity_outsideBounds_isRejectedNamingTheBound() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new InFlightTable(0, 0));
        assertTrue(e.getMessage().contains(String.valueOf(InFlightTable.MAX_CAPACITY)), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new InFlightTable(InFlightTable.MAX_CAPACITY, 1));
    }
}
