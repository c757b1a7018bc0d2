package io.cqflux.transport.rpma;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cqflux.transport.rpma.ffm.librpma_h;
import io.cqflux.transport.rpma.ffm.rpma_log_function;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.System.Logger.Level;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RpmaLogTest {

    @Test
    void levels_mapAsDocumented() {
        assertEquals(Level.ERROR, RpmaLog.levelOf(librpma_h.RPMA_LOG_LEVEL_FATAL()));
        assertEquals(Level.ERROR, RpmaLog.levelOf(librpma_h.RPMA_LOG_LEVEL_ERROR()));
        assertEquals(Level.WARNING, RpmaLog.levelOf(librpma_h.RPMA_LOG_LEVEL_WARNING()));
        assertEquals(Level.INFO, RpmaLog.levelOf(librpma_h.RPMA_LOG_LEVEL_NOTICE()));
        assertEquals(Level.DEBUG, RpmaLog.levelOf(librpma_h.RPMA_LOG_LEVEL_INFO()));
        assertEquals(Level.TRACE, RpmaLog.levelOf(librpma_h.RPMA_LOG_LEVEL_DEBUG()));
    }

    @Test
    void threshold_followsWhatTheLoggerLetsThrough() {
        assertEquals(librpma_h.RPMA_LOG_DISABLED(), RpmaLog.thresholdFor(l -> false));
        assertEquals(librpma_h.RPMA_LOG_LEVEL_ERROR(), RpmaLog.thresholdFor(l -> l == Level.ERROR));
        assertEquals(librpma_h.RPMA_LOG_LEVEL_WARNING(),
                RpmaLog.thresholdFor(l -> l.getSeverity() >= Level.WARNING.getSeverity()));
        assertEquals(librpma_h.RPMA_LOG_LEVEL_NOTICE(),
                RpmaLog.thresholdFor(l -> l.getSeverity() >= Level.INFO.getSeverity()));
        assertEquals(librpma_h.RPMA_LOG_LEVEL_INFO(),
                RpmaLog.thresholdFor(l -> l.getSeverity() >= Level.DEBUG.getSeverity()));
        assertEquals(librpma_h.RPMA_LOG_LEVEL_DEBUG(), RpmaLog.thresholdFor(l -> true));
        // every librpma level at or below the threshold maps to a level the logger publishes
        Set<Level> upToInfo = Set.of(Level.ERROR, Level.WARNING, Level.INFO);
        int t = RpmaLog.thresholdFor(upToInfo::contains);
        for (int rpma = librpma_h.RPMA_LOG_LEVEL_FATAL(); rpma <= librpma_h.RPMA_LOG_LEVEL_DEBUG(); rpma++) {
            assertEquals(rpma <= t, upToInfo.contains(RpmaLog.levelOf(rpma)), "librpma level " + rpma);
        }
    }

    @Test
    void message_carriesFormatFunctionAndSourceLine() {
        assertEquals("librpma: rdma_getaddrinfo(%s:%s): %s [rpma_info_new at info.c:42;"
                        + " format arguments not available: variadic upcall]",
                RpmaLog.message("rdma_getaddrinfo(%s:%s): %s\n", "rpma_info_new", "info.c", 42));
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

    @Test
    void install_replacesTheDefaultLogFunction_unlessTheNativeOneIsAskedFor() {
        RpmaLog.install();
        // RpmaTransport#connectsOffLoop rests on this: rpma_log_default_function is what makes
        // rpma_conn_req_new and rpma_mr_reg not thread-safe (librpma's THREAD_SAFETY.md).
        boolean nativeAskedFor = "native".equals(System.getProperty("cqflux.rpma.log"));
        assertEquals(!nativeAskedFor, RpmaLog.replacesDefault(),
                "cqflux.rpma.log=" + System.getProperty("cqflux.rpma.log"));
    }
}
