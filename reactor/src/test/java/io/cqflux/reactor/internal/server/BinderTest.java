package io.cqflux.reactor.internal.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.reactor.AcceptOptions;
import org.junit.jupiter.api.Test;

/** What the bind refuses before anything listens. */
class BinderTest {

    @Test
    void keysScopedToTheirConnection_askedOfATransportThatCannot_failTheBindNamingItAndWhy() {
        io.cqflux.core.spi.Transport rpma = transport("rpma", "librpma creates each request's queue pair in the"
                + " listening peer's protection domain");
        io.cqflux.core.UnsupportedCapabilityException e = assertThrows(io.cqflux.core.UnsupportedCapabilityException.class,
                () -> Binder.checkScopedKeys(AcceptOptions.exposing().withKeysScopedToConnection(true), rpma));
        assertEquals(io.cqflux.core.Capability.CONNECTION_SCOPED_KEYS, e.capability());
        assertTrue(e.getMessage().startsWith("rpma does not support CONNECTION_SCOPED_KEYS")
                && e.getMessage().contains("listening peer's protection domain"), e.getMessage());
        // The default and asking for none bind there; a transport that can takes the request.
        Binder.checkScopedKeys(AcceptOptions.exposing(), rpma);
        Binder.checkScopedKeys(AcceptOptions.exposing().withKeysScopedToConnection(false), rpma);
        Binder.checkScopedKeys(AcceptOptions.exposing().withKeysScopedToConnection(true), transport("fabric/tcp", null));
    }

    /** A transport that answers its name and its refusal of scoped keys, and nothing else. */
    private static io.cqflux.core.spi.Transport transport(String name, String refusal) {
        return (io.cqflux.core.spi.Transport) java.lang.reflect.Proxy.newProxyInstance(
                BinderTest.class.getClassLoader(), new Class<?>[] {io.cqflux.core.spi.Transport.class},
                (proxy, m, args) -> switch (m.getName()) {
                    case "name" -> name;
                    case "connectionScopedKeysRefusal" -> refusal;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }
}
