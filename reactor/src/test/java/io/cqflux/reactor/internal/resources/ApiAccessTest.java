package io.cqflux.reactor.internal.resources;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import org.junit.jupiter.api.Test;

/** {@link ApiAccess} guards itself where its package is reachable (the class path). */
class ApiAccessTest {

    /**
     * Another implementation offered from outside the public package is refused, whether or not
     * the library's one was used before, and the library's one stays installed.
     */
    @Test
    void install_ofASecondImplementation_isRefused_andTheLibrarysStays() {
        ApiAccess other = (ApiAccess) Proxy.newProxyInstance(ApiAccess.class.getClassLoader(),
                new Class<?>[] {ApiAccess.class}, (p, m, a) -> null);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> ApiAccess.install(other));
        assertTrue(e.getMessage().contains("installed already"), e.getMessage());
        ApiAccess installed = ApiAccess.get();
        assertEquals("io.cqflux.reactor.InternalAccess", installed.getClass().getName());
        assertThrows(IllegalStateException.class, () -> ApiAccess.install(other));
        assertSame(installed, ApiAccess.get());
    }
}
