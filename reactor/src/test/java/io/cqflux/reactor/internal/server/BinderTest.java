package io.cqflux.reactor.internal.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

    @Test
    void keysAreScopedByDefaultWhereTheTransportCan_requiredOrTurnedOffByTheOption_andNeverWithRawPrivateData() {
        io.cqflux.core.spi.Transport rpma = transport("rpma", "cannot");
        io.cqflux.core.spi.Transport tcp = transport("fabric/tcp", null);
        assertEquals(AcceptOptions.KeyScoping.WHERE_SUPPORTED, AcceptOptions.exposing().keyScoping());
        assertTrue(Binder.scopesKeys(AcceptOptions.exposing(), false, tcp), "the default, where the transport can");
        assertFalse(Binder.scopesKeys(AcceptOptions.exposing(), false, rpma), "the default, where it cannot");
        assertTrue(Binder.scopesKeys(AcceptOptions.exposing().withKeysScopedToConnection(true), false, tcp));
        assertFalse(Binder.scopesKeys(AcceptOptions.exposing().withKeysScopedToConnection(false), false, tcp), "turned off");
        assertFalse(Binder.scopesKeys(AcceptOptions.rawPrivateData(d -> null), true, tcp), "raw: nothing registered");
        assertEquals(AcceptOptions.KeyScoping.OFF,
                AcceptOptions.exposing().withKeysScopedToConnection(false).keyScoping());
        assertTrue(AcceptOptions.exposing().withKeysScopedToConnection(true).keysScopedToConnection());
        assertFalse(AcceptOptions.exposing().keysScopedToConnection(), "required only when asked for");
        assertEquals(AcceptOptions.KeyScoping.WHERE_SUPPORTED, AcceptOptions.exposing().withKeysScopedToConnection(false)
                .withKeyScoping(AcceptOptions.KeyScoping.WHERE_SUPPORTED).keyScoping(), "the default back");
        // A transport that can, but not by default (another libfabric, a bounded RLIMIT_MEMLOCK on verbs).
        io.cqflux.core.spi.Transport canButNotByDefault = (io.cqflux.core.spi.Transport) java.lang.reflect.Proxy
                .newProxyInstance(BinderTest.class.getClassLoader(), new Class<?>[] {io.cqflux.core.spi.Transport.class},
                        (proxy, m, args) -> switch (m.getName()) {
                            case "name" -> "fabric/verbs";
                            case "connectionScopedKeysRefusal" -> null;
                            case "connectionScopedKeysDefaultRefusal" -> "RLIMIT_MEMLOCK";
                            default -> throw new UnsupportedOperationException(m.getName());
                        });
        assertFalse(Binder.scopesKeys(AcceptOptions.exposing(), false, canButNotByDefault));
        assertTrue(Binder.scopesKeys(AcceptOptions.exposing().withKeysScopedToConnection(true), false, canButNotByDefault));
        Binder.checkScopedKeys(AcceptOptions.exposing().withKeysScopedToConnection(true), canButNotByDefault);
    }

    /** A transport that answers its name and its refusal of scoped keys, and nothing else. */
    private static io.cqflux.core.spi.Transport transport(String name, String refusal) {
        return (io.cqflux.core.spi.Transport) java.lang.reflect.Proxy.newProxyInstance(
                BinderTest.class.getClassLoader(), new Class<?>[] {io.cqflux.core.spi.Transport.class},
                (proxy, m, args) -> switch (m.getName()) {
                    case "name" -> name;
                    case "connectionScopedKeysRefusal", "connectionScopedKeysDefaultRefusal" -> refusal;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }
}
