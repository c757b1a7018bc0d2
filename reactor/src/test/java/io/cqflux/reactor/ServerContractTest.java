package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.NativeCallException;
import io.cqflux.core.RegionAccess;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * A server and a client's connect, as a hostile user meets them: an address taken or not this
 * host's, refusals and the reason the client reads, and the counters each refusal moves; over
 * libfabric's tcp provider on loopback.
 */
class ServerContractTest {
    static final Duration T = FaultRig.T;

    FaultRig rig;

    @BeforeEach
    void setUp() {
        rig = new FaultRig();
    }

    @AfterEach
    void tearDown() {
        rig.close();
    }

    static InetSocketAddress anyPort() {
        return new InetSocketAddress(FaultRig.LO, 0);
    }

    /** {@return the error {@code m} fails with} */
    static Throwable failure(Mono<?> m) {
        return assertThrows(RuntimeException.class, () -> m.block(T));
    }

    @Test
    void bind_onAPortAnotherListenerHolds_failsWithTheNativeErrorNamingTheAddress() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, FaultRig.LO)) {
            NativeCallException e = assertInstanceOf(NativeCallException.class,
                    failure(rig.server.bind(new InetSocketAddress(FaultRig.LO, taken.getLocalPort()))));
            assertTrue(e.codeName().contains("EADDRINUSE") && e.getMessage().contains(":" + taken.getLocalPort()),
                    e.getMessage());
        }
        // The instance's own server's port too, from another instance.
        NativeCallException again = assertInstanceOf(NativeCallException.class, failure(rig.client.bind(rig.srv.address())));
        assertTrue(again.codeName().contains("EADDRINUSE"), again.getMessage());
    }

    @Test
    void bind_onAnAddressThisHostDoesNotHave_failsWithTheNativeErrorNamingIt() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.readString(
                        java.nio.file.Path.of("/proc/sys/net/ipv4/ip_nonlocal_bind")).trim().equals("0"),
                "this host lets a process listen on addresses it does not have (ip_nonlocal_bind=1)");
        NativeCallException e = assertInstanceOf(NativeCallException.class,
                failure(rig.server.bind(new InetSocketAddress(java.net.InetAddress.getByName("192.0.2.1"), 0))));
        assertTrue(e.codeName().contains("EADDRNOTAVAIL") && e.getMessage().contains("192.0.2.1"), e.getMessage());
    }

    /**
     * connections() is for one subscriber: a second one, while the first is subscribed, fails
     * with an IllegalStateException naming the server, and the first keeps receiving.
     */
    @Test
    void connections_aSecondSubscriber_failsNamingTheServer_andTheFirstKeepsItsConnections() {
        RdmaServer s = rig.server.bind(anyPort()).block(T);
        java.util.List<RdmaConnection> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        s.connections().subscribe(got::add);
        IllegalStateException e = assertInstanceOf(IllegalStateException.class, failure(s.connections().next()));
        assertTrue(e.getMessage().contains(s.toString()) && e.getMessage().contains("one subscriber"), e.getMessage());
        rig.client.connect(s.address()).block(T);
        assertTrue(FaultRig.await(() -> got.size() == 1, T), "the first subscriber got " + got);
    }

    /**
     * The getting-started guide's bound: on fabric/tcp a hello carries six exposed regions each
     * way; a seventh fails the bind (and the connect) with an IllegalArgumentException naming the
     * size and the limit, before anything listens or is sent.
     */
    @Test
    void sixExposedRegions_fitTheHelloEachWay_aSeventhFailsBindAndConnectNamingTheLimit() {
        Region[] server = new Region[7];
        Region[] client = new Region[7];
        for (int i = 0; i < 7; i++) {
            server[i] = rig.server.register(rig.arena.allocate(4096, 64), RegionAccess.WRITE_DST);
            client[i] = rig.client.register(rig.arena.allocate(4096, 64), RegionAccess.WRITE_DST);
        }
        Region[] six = java.util.Arrays.copyOf(server, 6);
        RdmaServer s = rig.server.bind(anyPort(), six).block(T);
        s.connections().subscribe();
        RdmaConnection c = rig.client.connect(s.address(), java.util.Arrays.copyOf(client, 6)).block(T);
        assertEquals(6, c.remoteRegions().size());
        int max = rig.server.maxAcceptPrivateData();
        for (Mono<?> m : java.util.List.of(rig.server.bind(anyPort(), server), rig.client.connect(s.address(), client))) {
            IllegalArgumentException e = assertInstanceOf(IllegalArgumentException.class, failure(m));
            assertTrue(e.getMessage().contains("7 exposed regions") && e.getMessage().contains("maximum " + max),
                    e.getMessage());
        }
    }

    @Test
    void connect_whereNothingListens_failsRejectedAtOnce() {
        RdmaServer gone = rig.server.bind(anyPort()).block(T);
        InetSocketAddress dead = gone.address();
        gone.disposeNow(T);
        long t0 = System.nanoTime();
        ConnectionException e = assertInstanceOf(ConnectionException.class, failure(rig.client.connect(dead)));
        assertEquals(ConnectionEvent.REJECTED, e.event());
        assertTrue(e.getMessage().contains(String.valueOf(dead.getPort())), e.getMessage());
        assertTrue(System.nanoTime() - t0 < T.toNanos() / 2, "a refused connect waited for its timeout");
    }

    /**
     * A listener that takes the TCP connection but never answers the handshake (a plain socket):
     * the connect fails UNREACHABLE once its connect timeout passed, naming it, and holds nothing
     * afterwards.
     */
    @Test
    void connect_toAListenerThatNeverAnswers_failsUnreachableAfterTheConnectTimeout_andHoldsNothing() throws Exception {
        try (Cqflux quick = FaultRig.fabric().connectionConfig(io.cqflux.core.ConnectionConfig.DEFAULT
                     .withTimeout(Duration.ofMillis(300))).build();
             ServerSocket mute = new ServerSocket(0, 4, FaultRig.LO)) {
            long t0 = System.nanoTime();
            ConnectionException e = assertInstanceOf(ConnectionException.class,
                    failure(quick.connect(new InetSocketAddress(FaultRig.LO, mute.getLocalPort()))));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(ConnectionEvent.UNREACHABLE, e.event(), e.getMessage());
            assertTrue(e.getMessage().contains("timed out after 300 ms"), e.getMessage());
            assertTrue(ms >= 250 && ms < 5_000, ms + " ms");
            assertTrue(FaultRig.await(() -> quick.openConnections() == 0, T), "the timed-out connect holds a connection");
        }
    }

    /**
     * A server whose exposed region was closed refuses every later client (it never hands out a
     * dead region), and on a transport whose reject carries data the client reads why, rather than
     * "nothing listens at that address".
     */
    @Test
    void connect_afterTheServersExposedRegionClosed_isRefusedWithTheServersReason() {
        Region r = rig.server.register(rig.arena.allocate(4096, 64), RegionAccess.WRITE_DST);
        RdmaServer s = rig.server.bind(anyPort(), r).block(T);
        s.connections().subscribe();
        r.close();
        ConnectionException e = assertInstanceOf(ConnectionException.class, failure(rig.client.connect(s.address())));
        assertEquals(ConnectionEvent.REJECTED, e.event());
        assertTrue(e.getMessage().contains("refused by the server: ") && e.getMessage().contains("closed"),
                e.getMessage());
        assertEquals(0, s.stats().exposures());
    }

    /**
     * The authenticator is asked with the client's credentials, byte for byte, and on fabric/tcp
     * the client's address (Authenticator.Request: null only where the transport cannot tell it).
     */
    @Test
    void authenticator_isAskedWithTheClientsCredentialsAndAddress() {
        java.util.concurrent.atomic.AtomicReference<Authenticator.Request> seen = new java.util.concurrent.atomic.AtomicReference<>();
        RdmaServer s = rig.server.bind(anyPort(), AcceptOptions.exposing(rig.serverRegion).authenticatedBy(req -> {
            seen.set(req);
            return Mono.just(Authenticator.Decision.allow());
        })).block(T);
        s.connections().subscribe();
        byte[] token = {7, 1, 2, 3, 5, 8, 13, 21};
        rig.client.connect(s.address(), ConnectOptions.defaults().credentials(token)).block(T);
        Authenticator.Request req = seen.get();
        org.junit.jupiter.api.Assertions.assertArrayEquals(token, req.credentials());
        // The client's own end: loopback, an ephemeral port of its own.
        assertTrue(req.peerAddress() != null && req.peerAddress().getAddress().isLoopbackAddress()
                && req.peerAddress().getPort() > 0 && req.peerAddress().getPort() != s.address().getPort(),
                String.valueOf(req.peerAddress()));
    }

    /**
     * An authenticator that never answers is bounded by the handshake timeout; the refusal is
     * counted as a handshake timeout, and a second request while the first is pending is past
     * maxPendingHandshakes(1): each client reads its reason.
     */
    @Test
    void authenticatorThatNeverDecides_refusalIsCountedAsAHandshakeTimeout_notAsTheAuthenticators() {
        RdmaServer s = rig.server.bind(anyPort(), AcceptOptions.exposing(rig.serverRegion)
                .authenticatedBy(req -> Mono.never()).withHandshakeTimeout(Duration.ofMillis(300))
                .withMaxPendingHandshakes(1)).block(T);
        Mono<RdmaConnection> first = rig.client.connect(s.address()).cache();
        first.subscribe(c -> { }, e -> { });
        assertTrue(FaultRig.await(() -> s.stats().pendingHandshakes() == 1, T), () -> "" + s.stats());
        ConnectionException second = assertInstanceOf(ConnectionException.class, failure(rig.client.connect(s.address())));
        assertTrue(second.getMessage().contains("too many handshakes in progress"), second.getMessage());
        ConnectionException timedOut = assertInstanceOf(ConnectionException.class, failure(first));
        assertEquals(ConnectionEvent.REJECTED, timedOut.event());
        assertTrue(timedOut.getMessage().contains("authentication timed out after 300 ms"), timedOut.getMessage());
        RdmaServer.Stats st = s.stats();
        assertEquals(1, st.handshakeTimeouts(), st.toString());
        assertEquals(0, st.refusedByAuthenticator(), st.toString());
        assertEquals(1, st.refusedOverMaxPending(), st.toString());
    }
}
