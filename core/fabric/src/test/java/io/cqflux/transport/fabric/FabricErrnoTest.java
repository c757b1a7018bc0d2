package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionStatus;
import io.cqflux.core.NativeCallException;
import io.cqflux.core.testing.CProbe;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** libfabric's error numbers and the transport's chokepoint, checked against the installed headers. */
class FabricErrnoTest {

    @Test
    void fabricErrno_valuesMatchFiErrnoH() {
        StringBuilder src = new StringBuilder("#include <stdio.h>\n#include <rdma/fi_errno.h>\nint main(void){\n");
        for (FabricErrno e : FabricErrno.values()) {
            src.append("printf(\"").append(e.name()).append(" %d\\n\", (int)FI_").append(e.name()).append(");\n");
        }
        src.append("return 0;}\n");
        Map<String, Long> v = CProbe.run("fi_errno", src.toString());
        for (FabricErrno e : FabricErrno.values()) {
            assertEquals(v.get(e.name()).intValue(), e.code(), e.name());
        }
        assertEquals(FabricErrno.EAGAIN, FabricErrno.of(-11));
        assertEquals(FabricErrno.EAVAIL, FabricErrno.of(259));
    }

    @Test
    void names_areFiPrefixed_andUnknownOnesGetAReadableFallback() {
        assertEquals("FI_ECONNREFUSED", FabricErrno.nameOf(-111));
        assertEquals("FI_EAVAIL", FabricErrno.nameOf(-259));
        assertEquals("FI(-9999)", FabricErrno.nameOf(-9999));
    }

    @Test
    void result_turnsAgainIntoAResult_andEverythingElseNegativeIntoTheException() {
        assertEquals(FabricLibrary.AGAIN, FabricLibrary.result("fi_cq_read", -11, ""));
        assertEquals(3, FabricLibrary.result("fi_cq_read", 3, ""));
        NativeCallException e = assertThrows(NativeCallException.class,
                () -> FabricLibrary.result("fi_connect", -111, "10.0.0.1:7"));
        assertEquals("FI_ECONNREFUSED", e.codeName());
        assertTrue(e.getMessage().contains("10.0.0.1:7"), e.getMessage());
    }

    @Test
    void completionErrors_mapOntoVerbsStatusNames() {
        assertEquals(CompletionStatus.WR_FLUSH_ERR, FabricErrno.statusOf(125));
        // cut off because the connection ended: flushed, as verbs says it
        assertEquals(CompletionStatus.WR_FLUSH_ERR, FabricErrno.statusOf(107));
        assertEquals(CompletionStatus.WR_FLUSH_ERR, FabricErrno.statusOf(FabricErrno.EPIPE));
        assertEquals(CompletionStatus.WR_FLUSH_ERR, FabricErrno.statusOf(104));
        // the peer could not be reached in time
        assertEquals(CompletionStatus.RETRY_EXC_ERR, FabricErrno.statusOf(110));
        assertEquals(CompletionStatus.REM_ACCESS_ERR, FabricErrno.statusOf(13));
        assertEquals(CompletionStatus.LOC_LEN_ERR, FabricErrno.statusOf(265));
        assertEquals(CompletionStatus.GENERAL_ERR, FabricErrno.statusOf(256));
        assertEquals(CompletionStatus.GENERAL_ERR, FabricErrno.statusOf(4242));
    }
}
