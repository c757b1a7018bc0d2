package io.cqflux.transport.rpma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.NativeCallException;
import io.cqflux.core.testing.CProbe;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** librpma's return codes and the transport's chokepoint ({@link RpmaNative}), against the installed header. */
class RpmaNativeErrorsTest {

    private static final String[] NAMES = {
        "RPMA_E_UNKNOWN", "RPMA_E_NOSUPP", "RPMA_E_PROVIDER", "RPMA_E_NOMEM", "RPMA_E_INVAL",
        "RPMA_E_NO_COMPLETION", "RPMA_E_NO_EVENT", "RPMA_E_AGAIN", "RPMA_E_SHARED_CHANNEL",
        "RPMA_E_NOT_SHARED_CHNL"};

    @Test
    void everyErrorCodeOfLibrpmaH_isNamed() {
        StringBuilder src = new StringBuilder("#include <stdio.h>\n#include <librpma.h>\nint main(void){\n");
        for (String n : NAMES) {
            src.append("printf(\"").append(n).append(" %d\\n\", ").append(n).append(");\n");
        }
        src.append("return 0;}\n");
        Map<String, Long> v = CProbe.run("rpma_errors", src.toString());
        for (String n : NAMES) {
            assertEquals(n, RpmaNative.errorName(v.get(n).intValue()));
        }
        assertEquals("RPMA(-5)", RpmaNative.errorName(-5));
    }

    @Test
    void result_noCompletionNoEventAndAgainAreNoResult_otherCodesThrow() {
        assertTrue(RpmaNative.result("rpma_cq_get_wc", 0, ""));
        assertFalse(RpmaNative.result("rpma_cq_get_wc", -100005, ""));
        assertFalse(RpmaNative.result("rpma_conn_next_event", -100006, ""));
        assertFalse(RpmaNative.result("rpma_cq_wait", -100007, ""));
        NativeCallException e = assertThrows(NativeCallException.class,
                () -> RpmaNative.result("rpma_cq_get_wc", -100004, "conn 1"));
        assertEquals("RPMA_E_INVAL", e.codeName());
        assertEquals("rpma_cq_get_wc", e.call());
    }

    @Test
    void providerFailure_carriesTheCapturedErrnoByName() {
        NativeCallException e = RpmaNative.failure("rpma_utils_get_ibv_context", -100002, 19, "address 127.0.0.1");
        assertEquals("RPMA_E_PROVIDER", e.codeName());
        assertTrue(e.getMessage().contains("ENODEV") && e.getMessage().contains("127.0.0.1"), e.getMessage());
    }
}
