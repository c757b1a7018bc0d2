package io.cqflux.core.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionStatus;
import io.cqflux.core.NativeCallException;
import org.junit.jupiter.api.Test;

class NativeErrorsTest {

    @Test
    void rpmaProviderError_carriesCallNameTextAndErrno() {
        NativeCallException e = NativeErrors.rpma("rpma_utils_get_ibv_context", NativeErrors.RPMA_E_PROVIDER,
                "Provider error occurred", 19, "address 127.0.0.1");
        assertEquals("rpma_utils_get_ibv_context", e.call());
        assertEquals(-100002, e.code());
        assertEquals("RPMA_E_PROVIDER", e.codeName());
        assertTrue(e.getMessage().contains("ENODEV") && e.getMessage().contains("127.0.0.1")
                && e.getMessage().contains("Provider error occurred"), e.getMessage());
    }

    @Test
    void unknownCodes_getAReadableFallbackName() {
        assertEquals("RPMA(-5)", NativeErrors.rpmaName(-5));
        assertEquals("FI(-9999)", NativeErrors.fabricName(-9999));
        assertEquals("errno(999)", NativeErrors.errnoName(999));
    }

    @Test
    void fabricAndErrnoCodes_areNamed() {
        assertEquals("FI_ECONNREFUSED", NativeErrors.fabricName(-111));
        assertEquals("FI_EAVAIL", NativeErrors.fabricName(-259));
        assertEquals("EBADF", NativeErrors.errnoName(9));
        assertEquals("ENOSYS", NativeErrors.errnoName(38));
        assertEquals("ECANCELED", NativeErrors.errnoName(125));
        NativeCallException e = NativeErrors.fabric("fi_connect", -111, "Connection refused", "");
        assertEquals("fi_connect failed: FI_ECONNREFUSED (-111): Connection refused", e.getMessage());
        assertEquals("EINTR", NativeErrors.errno("epoll_wait", 4, "").codeName());
    }

    @Test
    void ordinaryOutcomes_areRecognisedNotThrown() {
        assertTrue(NativeErrors.isRpmaNoCompletion(NativeErrors.RPMA_E_NO_COMPLETION));
        assertTrue(NativeErrors.isRpmaNoEvent(NativeErrors.RPMA_E_NO_EVENT));
        assertTrue(NativeErrors.isFabricAgain(-11));
        assertFalse(NativeErrors.isFabricAgain(11));
        assertFalse(NativeErrors.isRpmaNoCompletion(NativeErrors.RPMA_E_PROVIDER));
    }

    @Test
    void fabricCompletionErrors_mapOntoVerbsStatusNames() {
        assertEquals(CompletionStatus.WR_FLUSH_ERR, NativeErrors.statusOfFabricError(125));
        assertEquals(CompletionStatus.RETRY_EXC_ERR, NativeErrors.statusOfFabricError(107));
        assertEquals(CompletionStatus.REM_ACCESS_ERR, NativeErrors.statusOfFabricError(13));
        assertEquals(CompletionStatus.LOC_LEN_ERR, NativeErrors.statusOfFabricError(265));
        assertEquals(CompletionStatus.GENERAL_ERR, NativeErrors.statusOfFabricError(256));
        assertEquals(CompletionStatus.GENERAL_ERR, NativeErrors.statusOfFabricError(4242));
    }
}
