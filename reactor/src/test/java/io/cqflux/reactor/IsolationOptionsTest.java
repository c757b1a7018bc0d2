package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** The options of the authenticated accept and the limits refuse bad values naming the value and the bound. */
class IsolationOptionsTest {

    @Test
    void limitsOutOfRange_areRefusedNamingTheValueAndTheBound() {
        AcceptOptions o = AcceptOptions.exposing();
        assertEquals("max connections 0 is below 1",
                assertThrows(IllegalArgumentException.class, () -> o.withMaxConnections(0)).getMessage());
        assertEquals("max pending handshakes -1 is below 1",
                assertThrows(IllegalArgumentException.class, () -> o.withMaxPendingHandshakes(-1)).getMessage());
        assertEquals("max connections per address 0 is below 1",
                assertThrows(IllegalArgumentException.class, () -> o.withMaxConnectionsPerAddress(0)).getMessage());
        assertEquals("handshake timeout PT0S is outside (0, PT24H]",
                assertThrows(IllegalArgumentException.class, () -> o.withHandshakeTimeout(Duration.ZERO)).getMessage());
        assertEquals("handshake timeout PT48H is outside (0, PT24H]",
                assertThrows(IllegalArgumentException.class, () -> o.withHandshakeTimeout(Duration.ofDays(2)))
                        .getMessage());
        assertEquals(Duration.ofDays(1), o.withHandshakeTimeout(Duration.ofDays(1)).handshakeTimeout());
        AcceptOptions set = o.withMaxConnections(3).withMaxPendingHandshakes(2).withHandshakeTimeout(Duration.ofSeconds(1))
                .withMaxConnectionsPerAddress(2).withReceivePrefetch(4).withKeysScopedToConnection(false);
        assertEquals(3, set.maxConnections());
        assertEquals(2, set.maxConnectionsPerAddress(), "kept through the options set after it");
        assertTrue(set.toString().contains("max connections per address 2"), set::toString);
        assertEquals(Integer.MAX_VALUE, o.maxConnectionsPerAddress());
        assertEquals(2, set.maxPendingHandshakes());
        assertEquals(Duration.ofSeconds(1), set.handshakeTimeout());
        assertEquals(Integer.MAX_VALUE, o.maxConnections());
        assertEquals(AcceptOptions.DEFAULT_MAX_PENDING_HANDSHAKES, o.maxPendingHandshakes());
    }

    @Test
    void theBoundPerNetwork_checksItsPrefixLengths_andKeepsThemThroughTheOptionsSetAfterIt() {
        AcceptOptions o = AcceptOptions.exposing();
        assertEquals("ipv4PrefixLength 0 is outside [1, 32]",
                assertThrows(IllegalArgumentException.class, () -> o.withMaxConnectionsPerAddress(2, 0, 64)).getMessage());
        assertEquals("ipv6PrefixLength 129 is outside [1, 128]",
                assertThrows(IllegalArgumentException.class, () -> o.withMaxConnectionsPerAddress(2, 32, 129))
                        .getMessage());
        assertEquals("max connections per address 0 is below 1",
                assertThrows(IllegalArgumentException.class, () -> o.withMaxConnectionsPerAddress(0, 24, 64))
                        .getMessage());
        AcceptOptions set = o.withMaxConnectionsPerAddress(4, 24, 64).withMaxConnections(9).withReceivePrefetch(2);
        assertEquals(4, set.maxConnectionsPerAddress());
        assertEquals(24, set.ipv4PrefixLength());
        assertEquals(64, set.ipv6PrefixLength());
        assertTrue(set.toString().contains("max connections per address 4 (IPv4 /24, IPv6 /64)"), set::toString);
        assertEquals(32, o.ipv4PrefixLength(), "each address alone by default");
        assertEquals(128, o.ipv6PrefixLength());
        assertEquals(32, o.withMaxConnectionsPerAddress(3).ipv4PrefixLength());
    }

    @Test
    void anAuthenticator_needsAHello_andCredentialsNeedOneToo() {
        Authenticator yes = r -> Mono.just(Authenticator.Decision.allow());
        assertThrows(IllegalStateException.class,
                () -> AcceptOptions.rawPrivateData(d -> AcceptDecision.reject()).authenticatedBy(yes));
        assertThrows(IllegalStateException.class, () -> ConnectOptions.rawPrivateData(new byte[1]).credentials(new byte[1]));
        assertEquals(yes, AcceptOptions.exposing().authenticatedBy(yes).authenticator());
    }

    @Test
    void credentialsOutsideOneTo255Bytes_areRefused() {
        assertEquals("credentials of 0 bytes are outside 1 to 255", assertThrows(IllegalArgumentException.class,
                () -> ConnectOptions.defaults().credentials(new byte[0])).getMessage());
        assertThrows(IllegalArgumentException.class, () -> ConnectOptions.defaults().credentials(new byte[256]));
        ConnectOptions bad = ConnectOptions.defaults().credentials(() -> new byte[300]);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> bad.credentialsSupplier().get()).getMessage()
                .contains("300 bytes"));
        byte[] token = {1, 2, 3};
        ConnectOptions ok = ConnectOptions.defaults().credentials(token);
        token[0] = 9; // copied
        assertEquals(1, ok.credentialsSupplier().get()[0]);
        assertTrue(ok.hasCredentials());
    }

    @Test
    void keysScopedToTheirConnection_areOffByDefault_andAskedForOrNot() {
        AcceptOptions o = AcceptOptions.exposing();
        assertFalse(o.keysScopedToConnection(), "the default: not scoped");
        assertTrue(o.withKeysScopedToConnection(true).keysScopedToConnection());
        assertFalse(o.withKeysScopedToConnection(true).withKeysScopedToConnection(false).keysScopedToConnection());
        assertTrue(o.withKeysScopedToConnection(true).toString().contains("keys scoped to their connection"));
        assertFalse(o.toString().contains("scoped"), o::toString);
        // Raw private data registers nothing for a connection: nothing to scope.
        AcceptOptions raw = AcceptOptions.rawPrivateData(d -> AcceptDecision.reject());
        assertThrows(IllegalStateException.class, () -> raw.withKeysScopedToConnection(true));
        assertFalse(raw.withKeysScopedToConnection(false).keysScopedToConnection());
    }

    @Test
    void keysScopedToTheirConnection_onFabricsSocketsProvider_failTheBindNamingIt_andTheDefaultSaysItIsUnscoped() {
        // A real transport that cannot: libfabric's sockets provider (on the host; tcp and verbs
        // are the measured ones). A bind that requires them fails; the default binds unscoped and
        // says so at WARNING, naming why; a bind that turned them off says nothing.
        java.net.InetAddress lo = java.net.InetAddress.getLoopbackAddress();
        // The server's warning, read through Reactor's logger factory for the length of the test:
        // every other message of a logger made meanwhile is dropped until the factory is reset,
        // then goes to the logger Reactor would have made.
        java.util.List<String> warnedList = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean capturing = new java.util.concurrent.atomic.AtomicBoolean(true);
        reactor.util.Loggers.useCustomLoggers(name -> (reactor.util.Logger) java.lang.reflect.Proxy.newProxyInstance(
                IsolationOptionsTest.class.getClassLoader(), new Class<?>[] {reactor.util.Logger.class},
                new java.lang.reflect.InvocationHandler() {
                    private reactor.util.Logger real;

                    @Override
                    public Object invoke(Object proxy, java.lang.reflect.Method m, Object[] args) throws Throwable {
                        if (m.getName().equals("warn") && args != null && args.length > 0 && args[0] instanceof String s
                                && s.contains("keys are not scoped to their connection")) {
                            warnedList.add(s);
                            return null;
                        }
                        if (m.getName().equals("getName")) {
                            return name;
                        }
                        if (capturing.get()) {
                            return m.getReturnType() == boolean.class ? Boolean.TRUE : null;
                        }
                        synchronized (this) {
                            if (real == null) {
                                real = reactor.util.Loggers.getLogger(name);
                            }
                        }
                        return m.invoke(real, args);
                    }
                }));
        java.util.function.Supplier<java.util.List<String>> warned = () -> warnedList;
        try (Cqflux sockets = Cqflux.builder().transport(TransportChoice.FABRIC).fabricProvider("sockets")
                .localAddress(lo).build()) {
            java.net.InetSocketAddress any = new java.net.InetSocketAddress(lo, 0);
            io.cqflux.core.UnsupportedCapabilityException e = assertThrows(
                    io.cqflux.core.UnsupportedCapabilityException.class,
                    () -> sockets.bind(any, AcceptOptions.exposing().withKeysScopedToConnection(true))
                            .block(Duration.ofSeconds(15)));
            assertEquals(io.cqflux.core.Capability.CONNECTION_SCOPED_KEYS, e.capability());
            assertTrue(e.getMessage().startsWith("fabric/sockets does not support CONNECTION_SCOPED_KEYS")
                    && e.getMessage().contains("provider sockets was not measured"), e.getMessage());
            RdmaServer plain = sockets.bind(any, AcceptOptions.exposing()).block(Duration.ofSeconds(15));
            assertFalse(plain.keysScopedToConnection());
            assertEquals(1, warned.get().size(), () -> warned.get().toString());
            String w = warned.get().getFirst();
            assertTrue(w.contains("provider sockets was not measured") && w.contains("withKeysScopedToConnection(false)"), w);
            plain.close();
            RdmaServer off = sockets.bind(any, AcceptOptions.exposing().withKeysScopedToConnection(false))
                    .block(Duration.ofSeconds(15));
            assertFalse(off.keysScopedToConnection());
            assertEquals(1, warned.get().size(), () -> "turned off: no warning " + warned.get());
            off.close();
        } finally {
            capturing.set(false);
            reactor.util.Loggers.resetLoggerFactory();
        }
    }
}
