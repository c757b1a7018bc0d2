package io.cqflux.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cqflux.core.NativeCallException;
import org.junit.jupiter.api.Test;

class NativeErrorsTest {

    @Test
    void errnoCodes_areNamed_andUnknownOnesGetAReadableFallback() {
        assertEquals("EBADF", NativeErrors.errnoName(9));
        assertEquals("ENOSYS", NativeErrors.errnoName(38));
        assertEquals("ECANCELED", NativeErrors.errnoName(125));
        assertEquals("errno(999)", NativeErrors.errnoName(999));
        assertEquals("errno(0)", NativeErrors.errnoName(0));
    }

    @Test
    void errnoFailure_carriesCallNameAndDetail() {
        NativeCallException e = NativeErrors.errno("epoll_wait", 4, "epfd 7");
        assertEquals("epoll_wait", e.call());
        assertEquals("EINTR", e.codeName());
        assertEquals(4, e.code());
    }

    @Test
    void failure_keepsTheLibrarysNameAndText() {
        NativeCallException e = NativeErrors.failure("fi_connect", -111, "FI_ECONNREFUSED", "Connection refused", "");
        assertEquals("fi_connect failed: FI_ECONNREFUSED (-111): Connection refused", e.getMessage());
    }
}
