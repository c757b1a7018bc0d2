package io.cqflux.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

class DeferredArenaTest {

    @Test
    void close_returnsAtOnce_andTheCloserThreadFreesTheMemoryAfterIt() {
        DeferredArena a = DeferredArena.ofShared();
        MemorySegment m = a.allocate(64, 8);
        m.set(ValueLayout.JAVA_LONG, 0, 42);
        assertTrue(m.scope().isAlive());
        long before = DeferredArena.closedTotal();
        a.close();
        a.close(); // idempotent: handed over once
        long end = System.nanoTime() + 10_000_000_000L;
        // The closer counts an arena after its close returned: wait for both.
        while ((m.scope().isAlive() || DeferredArena.closedTotal() == before) && System.nanoTime() < end) {
            LockSupport.parkNanos(1_000_000L);
        }
        assertFalse(m.scope().isAlive(), "the closer thread did not close the arena within 10 s");
        assertTrue(DeferredArena.closedTotal() > before, "closedTotal " + DeferredArena.closedTotal());
        assertThrows(IllegalStateException.class, () -> m.get(ValueLayout.JAVA_LONG, 0));
    }

    @Test
    void allocate_afterClose_isRefused() {
        DeferredArena a = DeferredArena.ofShared();
        a.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> a.allocate(8, 8));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
    }

    @Test
    void manyCloses_areAllDone_andNoneFailsTheCloser() {
        long before = DeferredArena.closedTotal();
        for (int i = 0; i < 1000; i++) {
            DeferredArena a = DeferredArena.ofShared();
            a.allocate(40, 8);
            a.close();
        }
        long end = System.nanoTime() + 20_000_000_000L;
        while (DeferredArena.closedTotal() - before < 1000 && System.nanoTime() < end) {
            LockSupport.parkNanos(1_000_000L);
        }
        assertTrue(DeferredArena.closedTotal() - before >= 1000, "closed " + (DeferredArena.closedTotal() - before));
        assertEquals(0, Math.min(0, DeferredArena.pending()), "pending is never negative");
    }
}
