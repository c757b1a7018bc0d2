package io.cqflux.transport.rpma;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cqflux.transport.rpma.ffm.librpma_h;
import io.cqflux.transport.rpma.ffm.rpma_log_function;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

class RpmaLogTest {

    @Test
    void levels_mapAsDocumented() {
        assertEquals(Level.SEVERE, RpmaLog.levelOf(librpma_h.RPMA_LOG_LEVEL_FATAL()));
        assertEquals(Level.SEVERE, RpmaLog.levelOf(librpma_h.RPMA_LOG_LEVEL_ERROR()));
        assertEquals(Level.WARNING, RpmaLog.levelOf(librpma_h.RPMA_LOG_LEVEL_WARNING()));
        assertEquals(Level.INFO, RpmaLog.levelOf(librpma_h.RPMA_LOG_LEVEL_NOTICE()));
        assertEquals(Level.FINE, RpmaLog.levelOf(librpma_h.RPMA_LOG_LEVEL_INFO()));
        assertEquals(Level.FINER, RpmaLog.levelOf(librpma_h.RPMA_LOG_LEVEL_DEBUG()));
        assertEquals(librpma_h.RPMA_LOG_DISABLED(), RpmaLog.thresholdFor(Level.OFF));
        assertEquals(librpma_h.RPMA_LOG_LEVEL_NOTICE(), RpmaLog.thresholdFor(Level.INFO));
        assertEquals(librpma_h.RPMA_LOG_LEVEL_DEBUG(), RpmaLog.thresholdFor(Level.ALL));
        assertEquals(librpma_h.RPMA_LOG_LEVEL_ERROR(), RpmaLog.thresholdFor(Level.SEVERE));
    }

    @Test
    void upcall_calledFromNativeWithNullAndBadArguments_neverThrowsIntoC() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment stub = rpma_log_function.allocate(RpmaLog::onLog, a);
            // NULL strings, an unknown level: the upcall must swallow whatever happens inside it
            rpma_log_function.invoke(stub, 99, MemorySegment.NULL, -1, MemorySegment.NULL, MemorySegment.NULL);
            rpma_log_function.invoke(stub, librpma_h.RPMA_LOG_LEVEL_ERROR(), a.allocateFrom("x.c"), 1,
                    a.allocateFrom("fn"), a.allocateFrom("value %d"));
        }
    }
}
