package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.FlushType;
import io.cqflux.core.OperationFailedException;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.ConnectOptions;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.SharedSecretAuthenticator;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * A hostile client, through the public API only, on fabric/tcp over 127.0.0.1: a server exposes a
 * region on one {@code bind()} for a trusted peer and read-only regions on a second {@code bind()}
 * for everyone; the attacker, a client of the second, forges peer regions from raw descriptors
 * ({@link RdmaConnection#remoteRegion(byte[], RegionAccess...)}: key, base, length) and writes to
 * each. Whatever the key, nothing outside what its connection was granted may change, the
 * forging connection must end with a clear error, and the trusted peer's connection must keep
 * working (its control words, credits and goodbye, are remotely written regions too: a hit there
 * would stall or end it).
 *
 * <p>Bounded: one attacker connection per forged key (a bad key ends a tcp connection), 40 in
 * all, 64 bytes each, loopback only.
 */
@Tag("hostile-peer")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HostilePeerTest {

    private static final Duration T = Duration.ofSeconds(10);
    private static final int SIZE = 4096;
    private static final InetSocketAddress ANY = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    private final Arena arena = Arena.ofShared();
    private final List<RdmaConnection> accepted = new CopyOnWriteArrayList<>();
    private final List<Disposable> subscriptions = new ArrayList<>();
    private Cqflux server;
    private Cqflux trustedSide;
    private Cqflux attacker;
    private Region trusted;
    private Region readOnly;
    private Region readOnlyFlushable;
    private RdmaServer trustedServer;
    private RdmaServer publicServer;
    private RdmaConnection neighbour;
    private long neighbourWrites;

    @BeforeAll
    void start() {
        server = fabric("server");
        trustedSide = fabric("trusted");
        attacker = fabric("attacker");
        trusted = server.register(filled(0x11), RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
        readOnly = server.register(filled(0x22), RegionAccess.READ_SRC);
        readOnlyFlushable = server.register(filled(0x33), RegionAccess.READ_SRC, RegionAccess.FLUSH_TYPE_VISIBILITY);
        trustedServer = server.bind(ANY, trusted).block(T);
        publicServer = server.bind(ANY, readOnly, readOnlyFlushable).block(T);
        subscriptions.add(trustedServer.connections().subscribe(accepted::add));
        subscriptions.add(publicServer.connections().subscribe(accepted::add));
        neighbour = trustedSide.connect(trustedServer.address()).block(T);
        neighbourStillWorks();
    }

    @AfterAll
    void stop() {
        subscriptions.forEach(Disposable::dispose);
        for (Cqflux c : new Cqflux[] {attacker, trustedSide, server}) {
            if (c != null) {
                c.disposeNow(T);
            }
        }
        arena.close();
    }

    @Test
    void forgedSequentialSmallKeys_changeNothing_endTheForger_andSpareTheNeighbour() {
        // The keys a sequential allocator would have handed out first: every region and control
        // word of the domain sat among them.
        for (long key = 0; key < 16; key++) {
            forge(key);
        }
    }

    @Test
    void forgedKeysNearTheIssuedOnes_changeNothing() {
        // The attacker knows the keys of what it was exposed to (its hello carries them).
        RdmaConnection mine = attacker.connect(publicServer.address()).block(T);
        try {
            long known = exposedKey(mine, 0);
            long flushable = exposedKey(mine, 1);
            long[] near = {known + 1, known - 1, known + 2, known - 2, known ^ 1L, known ^ (1L << 63),
                    flushable + 1, flushable - 1};
            for (long key : near) {
                forge(key);
            }
        } finally {
            mine.dispose();
        }
    }

    @Test
    void forgedRandomKeys_changeNothing() {
        SecureRandom r = new SecureRandom();
        for (int i = 0; i < 8; i++) {
            forge(r.nextLong());
        }
    }

    @Test
    void readOnlyExposures_writtenToWithTheirRealKeys_areRefusedAndUnchanged() {
        // The real keys, write access claimed by the attacker itself: the registration has no
        // remote write right, so the provider refuses it (a flushable region included: its flush
        // is a read-back and needs no write right). The same forged descriptor first reads the
        // region's bytes, so the write is refused for its missing right, not a wrong address. The
        // connection they were issued to stays open, so the keys are live.
        RdmaConnection mine = attacker.connect(publicServer.address()).block(T);
        try {
            writeWithTheRealKey(exposedKey(mine, 0), 0x22);
            writeWithTheRealKey(exposedKey(mine, 1), 0x33);
        } finally {
            mine.dispose();
        }
    }

    /**
     * Another attacker connection forges a descriptor from a real key: a read through it
     * returns {@code expected} (key and address are right), then a write through it fails the way
     * a refused remote access ends a connection (fabric/tcp: the target drops it, so the write
     * is flushed, {@code WR_FLUSH_ERR}, or meets the end, {@code LOST}; a provider that reports
     * the access itself: {@code REM_ACCESS_ERR}), the connection ends LOST, and no byte changes.
     */
    private void writeWithTheRealKey(long key, int expected) {
        byte[] before = snapshot();
        RdmaConnection c = attacker.connect(publicServer.address()).block(T);
        try {
            PeerRegion readable = c.remoteRegion(raw(key), RegionAccess.READ_SRC);
            StepVerifier.create(c.read(readable, 0, 64))
                    .assertNext(b -> {
                        for (byte x : b) {
                            assertEquals(expected, x & 0xff, "the forged descriptor does not address the region");
                        }
                    })
                    .expectComplete()
                    .verify(T);
            PeerRegion writable = c.remoteRegion(raw(key), RegionAccess.WRITE_DST);
            byte[] payload = new byte[64];
            java.util.Arrays.fill(payload, (byte) 0x66);
            StepVerifier.create(c.write(writable, 0, payload))
                    .expectErrorSatisfies(e -> {
                        System.out.println("FACT a write with the real key of a read-only region fails with " + e);
                        boolean refusedAccess = e instanceof OperationFailedException o
                                && (o.status() == io.cqflux.core.CompletionStatus.WR_FLUSH_ERR
                                    || o.status() == io.cqflux.core.CompletionStatus.REM_ACCESS_ERR);
                        boolean lost = e instanceof ConnectionException ce && ce.event() == ConnectionEvent.LOST;
                        assertTrue(refusedAccess || lost, "real key 0x" + Long.toHexString(key)
                                + ": not a refused access nor the connection's loss: " + e);
                    })
                    .verify(T);
            StepVerifier.create(c.onDispose()).expectComplete().verify(T);
            List<ConnectionEvent> events = c.events().collectList().block(T);
            assertTrue(events.contains(ConnectionEvent.LOST), "the refused write's connection ended " + events);
        } finally {
            c.dispose();
        }
        assertArrayEquals(before, snapshot(), "a write with the real key 0x" + Long.toHexString(key)
                + " changed server memory");
        neighbourStillWorks();
    }

    @Test
    void readOnlyFlushableExposure_canStillBeFlushedAndRead() {
        RdmaConnection c = attacker.connect(publicServer.address()).block(T);
        try {
            PeerRegion flushable = c.remoteRegions().get(1);
            assertEquals(java.util.Set.of(FlushType.VISIBILITY), flushable.flushTypes());
            StepVerifier.create(c.flush(flushable, 0, 64, FlushType.VISIBILITY)).expectComplete().verify(T);
            StepVerifier.create(c.read(flushable, 0, 8))
                    .assertNext(b -> assertEquals(0x33, b[0] & 0xff))
                    .expectComplete()
                    .verify(T);
        } finally {
            c.disposeNow(T);
        }
        neighbourStillWorks();
    }

    @Test
    void malformedHellos_areRejected_andTheServerKeepsServing() {
        byte[][] hellos = {
            new byte[16],                                                   // no hello: all zero
            {'X', 'Q', 3, 0, 0, 0},                                         // wrong magic
            {'C', 'Q', 9, 0, 0, 0},                                         // unknown version
            {'C', 'Q', 3},                                                  // truncated header
            {'C', 'Q', 3, 1, 0},                                            // truncated region length
            {'C', 'Q', 3, 1, (byte) 0xff, (byte) 0xff, 1, 2, 3},            // region beyond the bytes sent
            {'C', 'Q', 3, (byte) 0xff, 0, 24},                              // 255 regions, 2 bytes
            {'C', 'Q', 3, 0, (byte) 0xff, 1, 2},                            // handshake beyond the bytes
            {'C', 'Q', 3, 0, 0, (byte) 0xff, 1, 2},                         // control words beyond the bytes
            {'C', 'Q', 3, 0, 0},                                            // truncated before the control length
        };
        for (byte[] hello : hellos) {
            StepVerifier.create(attacker.connect(publicServer.address(), ConnectOptions.rawPrivateData(hello)))
                    .expectErrorSatisfies(e -> {
                        ConnectionException c = org.junit.jupiter.api.Assertions.assertInstanceOf(
                                ConnectionException.class, e, () -> "hello " + java.util.HexFormat.of().formatHex(hello));
                        assertEquals(ConnectionEvent.REJECTED, c.event(), c::toString);
                    })
                    .verify(T);
        }
        aProperClientIsStillServed();
        neighbourStillWorks();
    }

    @Test
    void socketsThatNeverSendAConnectRequest_doNotHoldUpOthers() throws Exception {
        // A raw TCP client of the listener: it connects and then sends nothing, or garbage where
        // libfabric's tcp connect request belongs, and never finishes the handshake.
        List<Socket> silent = new ArrayList<>();
        try {
            for (int i = 0; i < 8; i++) {
                silent.add(new Socket(publicServer.address().getAddress(), publicServer.address().getPort()));
            }
            byte[] garbage = new byte[64];
            new java.util.Random(7).nextBytes(garbage);
            for (int i = 0; i < 4; i++) {
                Socket g = new Socket(publicServer.address().getAddress(), publicServer.address().getPort());
                silent.add(g);
                g.getOutputStream().write(garbage);
                g.getOutputStream().flush();
            }
            aProperClientIsStillServed();
            neighbourStillWorks();
        } finally {
            for (Socket s : silent) {
                s.close();
            }
        }
        aProperClientIsStillServed();
    }

    @Test
    void aConnectFlood_isServed_andSparesTheNeighbour() {
        int n = 32;
        List<RdmaConnection> flood = reactor.core.publisher.Flux.range(0, n)
                .flatMap(i -> attacker.connect(publicServer.address()))
                .collectList()
                .block(Duration.ofSeconds(30));
        try {
            assertEquals(n, flood.size());
            neighbourStillWorks();
        } finally {
            flood.forEach(c -> c.disposeNow(T));
        }
        aProperClientIsStillServed();
    }

    @Test
    void eachConnection_isGivenKeysOfItsOwn_andThoseDieWithIt() {
        RdmaConnection a = trustedSide.connect(trustedServer.address()).block(T);
        long keyA = exposedKey(a, 0);
        long keyNeighbour = exposedKey(neighbour, 0);
        assertNotEquals(keyA, keyNeighbour, "two connections were handed the same key");
        assertNotEquals(keyOf(trusted.rawDescriptor()), keyA, "the region's own key went to a peer");
        awaitTrue(() -> trustedServer.stats().exposures() == 2, () -> "one registration per live connection: "
                + trustedServer.stats());
        // A's key works through A.
        byte[] mine = ByteBuffer.allocate(8).putLong(0x0A0A_0A0A_0A0A_0A0AL).array();
        StepVerifier.create(a.write(a.remoteRegion(0), 64, mine)).expectComplete().verify(T);
        a.disposeNow(T);
        awaitTrue(() -> trustedServer.stats().exposures() == 1, () -> "A's exposure was not revoked: "
                + trustedServer.stats());
        // Once A is gone its key reaches nothing, from either endpoint, and the neighbour is untouched.
        forge(keyA, trustedServer.address(), RegionAccess.WRITE_DST);
        forge(keyA, publicServer.address(), RegionAccess.WRITE_DST);
        readWith(keyA, publicServer.address(), false);
        neighbourStillWorks();
        assertEquals(keyNeighbour, exposedKey(neighbour, 0));
    }

    @Test
    void aLeakedKey_worksOnlyWhileItsConnectionLives() {
        // libfabric 1.17 cannot bind a key to an endpoint (fi_mr_bind is -FI_ENOSYS on tcp): a key
        // handed to connection A is valid on every connection of the server's domain while A
        // lives. What per-connection exposure adds is that it dies with A, and that it reaches
        // only what A was granted (read-only here).
        RdmaConnection a = attacker.connect(publicServer.address()).block(T);
        long leaked = exposedKey(a, 0);
        readWith(leaked, publicServer.address(), true);     // B, another client, while A lives
        forge(leaked, publicServer.address(), RegionAccess.WRITE_DST); // still no write right
        a.disposeNow(T);
        awaitTrue(() -> publicServer.stats().exposures() == 0, () -> "A's exposures were not revoked: "
                + publicServer.stats());
        readWith(leaked, publicServer.address(), false);    // B once A is gone
        aProperClientIsStillServed();
        neighbourStillWorks();
    }

    @Test
    void closingAnExposedRegion_revokesTheKeysItsPeersHold() {
        Region shortLived = server.register(filled(0x44), RegionAccess.READ_SRC);
        RdmaServer s = server.bind(ANY, shortLived).block(T);
        List<RdmaConnection> served = new CopyOnWriteArrayList<>();
        Disposable sub = s.connections().subscribe(served::add);
        RdmaConnection c = attacker.connect(s.address()).block(T);
        try {
            StepVerifier.create(c.read(c.remoteRegion(0), 0, 8)).assertNext(b -> assertEquals(0x44, b[0] & 0xff))
                    .expectComplete().verify(T);
            shortLived.close();
            assertEquals(0, s.stats().exposures(), "the region's close left a registration a peer holds");
            StepVerifier.create(c.read(c.remoteRegion(0), 0, 8)).expectError().verify(T);
        } finally {
            c.dispose();
            sub.dispose();
            served.forEach(RdmaConnection::dispose);
            s.disposeNow(T);
        }
        neighbourStillWorks();
    }

    @Test
    void wrongOrMissingCredentials_areRefusedWithTheServersReason_andNothingIsRegisteredForThem() {
        byte[] secret = "hostile-peer-test shared secret!".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        Region guarded = server.register(filled(0x55), RegionAccess.READ_SRC, RegionAccess.WRITE_DST);
        RdmaServer s = server.bind(ANY, AcceptOptions.exposing(guarded)
                .authenticatedBy(SharedSecretAuthenticator.of(secret))).block(T);
        List<RdmaConnection> served = new CopyOnWriteArrayList<>();
        Disposable sub = s.connections().subscribe(served::add);
        try {
            refused(attacker.connect(s.address()), "no credentials");
            refused(attacker.connect(s.address(), ConnectOptions.defaults()
                    .credentials(SharedSecretAuthenticator.credentials("not the secret, but 32 bytes long".getBytes()))),
                    "bad credentials");
            refused(attacker.connect(s.address(), ConnectOptions.defaults().credentials(new byte[] {1, 2, 3})),
                    "malformed credentials");
            assertEquals(0, s.stats().exposures(), "something was registered for a refused client");
            assertEquals(3, s.stats().refusedByAuthenticator());
            // A captured credential replayed.
            byte[] captured = SharedSecretAuthenticator.credentials(secret).get();
            RdmaConnection ok = attacker.connect(s.address(), ConnectOptions.defaults().credentials(captured)).block(T);
            refused(attacker.connect(s.address(), ConnectOptions.defaults().credentials(captured)),
                    "replayed credentials");
            StepVerifier.create(ok.read(ok.remoteRegion(0), 0, 8)).assertNext(b -> assertEquals(0x55, b[0] & 0xff))
                    .expectComplete().verify(T);
            assertEquals(1, s.stats().exposures());
            // Fresh credentials per connect, as a PeerPool's reconnects need.
            RdmaConnection ok2 = attacker.connect(s.address(), ConnectOptions.defaults()
                    .credentials(SharedSecretAuthenticator.credentials(secret))).block(T);
            assertEquals(2, s.stats().exposures());
            ok.disposeNow(T);
            ok2.disposeNow(T);
            awaitTrue(() -> s.stats().exposures() == 0 && s.stats().pendingHandshakes() == 0, () -> "" + s.stats());
        } finally {
            sub.dispose();
            served.forEach(RdmaConnection::dispose);
            s.disposeNow(T);
            guarded.close();
        }
        neighbourStillWorks();
    }

    @Test
    void anAuthenticatorThatNeverDecides_isBoundedByTheHandshakeTimeout() {
        RdmaServer s = server.bind(ANY, AcceptOptions.exposing(readOnly).authenticatedBy(r -> Mono.never())
                .withHandshakeTimeout(Duration.ofMillis(300))).block(T);
        try {
            long t0 = System.nanoTime();
            refused(attacker.connect(s.address(), ConnectOptions.defaults().credentials(new byte[] {1})),
                    "authentication timed out after 300 ms");
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms >= 250 && ms < 4_000, "refused after " + ms + " ms");
            assertEquals(1, s.stats().handshakeTimeouts());
            awaitTrue(() -> s.stats().pendingHandshakes() == 0, () -> "" + s.stats());
            assertEquals(0, s.stats().exposures());
        } finally {
            s.disposeNow(T);
        }
        neighbourStillWorks();
    }

    @Test
    void aConnectFloodPastTheLimits_isRefused_countedAndSparesTheConnectionsWithin() {
        RdmaServer s = server.bind(ANY, AcceptOptions.exposing(readOnly).withMaxConnections(4)).block(T);
        List<RdmaConnection> served = new CopyOnWriteArrayList<>();
        Disposable sub = s.connections().subscribe(served::add);
        List<RdmaConnection> held = new CopyOnWriteArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                held.add(attacker.connect(s.address()).block(T));
            }
            List<Throwable> errors = reactor.core.publisher.Flux.range(0, 16)
                    .flatMap(i -> attacker.connect(s.address()).map(c -> {
                        held.add(c);
                        return (Throwable) new AssertionError("connection " + i + " past the limit was served");
                    }).onErrorResume(e -> Mono.just(e)))
                    .collectList().block(Duration.ofSeconds(30));
            for (Throwable e : errors) {
                ConnectionException c = org.junit.jupiter.api.Assertions.assertInstanceOf(ConnectionException.class, e);
                assertEquals(ConnectionEvent.REJECTED, c.event(), c::toString);
            }
            assertEquals(16, s.stats().refusedOverMaxConnections(), () -> "" + s.stats());
            assertEquals(4, s.stats().connections());
            for (RdmaConnection c : held) {
                StepVerifier.create(c.read(c.remoteRegion(0), 0, 8)).assertNext(b -> assertEquals(0x22, b[0] & 0xff))
                        .expectComplete().verify(T);
            }
            // Room again once one leaves.
            held.remove(0).disposeNow(T);
            awaitTrue(() -> s.stats().connections() == 3, () -> "" + s.stats());
            held.add(attacker.connect(s.address()).block(T));
        } finally {
            held.forEach(RdmaConnection::dispose);
            sub.dispose();
            served.forEach(RdmaConnection::dispose);
            s.disposeNow(T);
        }
        neighbourStillWorks();
    }

    @Test
    void handshakesPastTheirLimit_areRefusedAtOnce() {
        RdmaServer s = server.bind(ANY, AcceptOptions.exposing(readOnly).authenticatedBy(r -> Mono.never())
                .withMaxPendingHandshakes(2).withHandshakeTimeout(Duration.ofSeconds(3))).block(T);
        try {
            List<Disposable> waiting = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                waiting.add(attacker.connect(s.address(), ConnectOptions.defaults().credentials(new byte[] {1}))
                        .subscribe(c -> c.dispose(), e -> { }));
            }
            awaitTrue(() -> s.stats().pendingHandshakes() == 2, () -> "" + s.stats());
            long t0 = System.nanoTime();
            StepVerifier.create(attacker.connect(s.address(), ConnectOptions.defaults().credentials(new byte[] {1})))
                    .expectErrorSatisfies(e -> assertEquals(ConnectionEvent.REJECTED, ((ConnectionException) e).event()))
                    .verify(T);
            assertTrue((System.nanoTime() - t0) / 1_000_000 < 2_000, "the third was not refused at once");
            assertEquals(1, s.stats().refusedOverMaxPending());
            waiting.forEach(Disposable::dispose);
        } finally {
            s.disposeNow(T);
        }
        aProperClientIsStillServed();
        neighbourStillWorks();
    }

    /** The connect fails with REJECTED and a message that carries the server's reason. */
    private static void refused(Mono<RdmaConnection> connect, String reason) {
        StepVerifier.create(connect)
                .expectErrorSatisfies(e -> {
                    ConnectionException c = org.junit.jupiter.api.Assertions.assertInstanceOf(ConnectionException.class,
                            e, () -> "expected a refusal for " + reason);
                    assertEquals(ConnectionEvent.REJECTED, c.event(), c::toString);
                    assertTrue(c.getMessage().contains(reason), () -> "message " + c.getMessage() + " lacks " + reason);
                })
                .verify(T);
    }

    /** A client of {@code address} reads 8 bytes through a peer region forged with {@code key}. */
    private void readWith(long key, InetSocketAddress address, boolean expectSuccess) {
        RdmaConnection c = attacker.connect(address).block(T);
        try {
            PeerRegion forged = c.remoteRegion(raw(key), RegionAccess.READ_SRC);
            if (expectSuccess) {
                StepVerifier.create(c.read(forged, 0, 8)).expectNextCount(1).expectComplete().verify(T);
            } else {
                StepVerifier.create(c.read(forged, 0, 8))
                        .expectErrorSatisfies(e -> assertTrue(e instanceof OperationFailedException
                                || e instanceof ConnectionException, "key 0x" + Long.toHexString(key) + ": " + e))
                        .verify(T);
            }
        } finally {
            c.dispose();
        }
    }

    /**
     * The key of region {@code i} in the hello the server sent this connection: on tcp each
     * descriptor is 32 bytes behind a 2-byte length, the key at its offset 8, after the hello's
     * 4-byte header.
     */
    private static long exposedKey(RdmaConnection c, int i) {
        byte[] hello = c.peerPrivateData();
        return ByteBuffer.wrap(hello).getLong(4 + i * 34 + 2 + 8);
    }

    private static void awaitTrue(java.util.function.BooleanSupplier cond, java.util.function.Supplier<String> what) {
        long end = System.nanoTime() + T.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) {
                org.junit.jupiter.api.Assertions.fail(what.get());
            }
            java.util.concurrent.locks.LockSupport.parkNanos(10_000_000L);
        }
    }

    /** A fresh client of the public endpoint connects and reads what it was granted. */
    private void aProperClientIsStillServed() {
        RdmaConnection c = attacker.connect(publicServer.address()).block(T);
        try {
            StepVerifier.create(c.read(c.remoteRegion(0), 0, 8))
                    .assertNext(b -> assertEquals(0x22, b[0] & 0xff))
                    .expectComplete()
                    .verify(T);
        } finally {
            c.disposeNow(T);
        }
    }

    /** One attacker connection writes 64 bytes through a forged descriptor with {@code key}. */
    private void forge(long key) {
        forge(key, publicServer.address(), RegionAccess.WRITE_DST);
    }

    /** One client of {@code address} writes 64 bytes through a forged descriptor with {@code key}. */
    private void forge(long key, InetSocketAddress address, RegionAccess claimed) {
        byte[] before = snapshot();
        RdmaConnection c = attacker.connect(address).block(T);
        try {
            PeerRegion forged = c.remoteRegion(raw(key), claimed);
            byte[] payload = new byte[64];
            java.util.Arrays.fill(payload, (byte) 0x66);
            StepVerifier.create(c.write(forged, 0, payload))
                    .expectErrorSatisfies(e -> {
                        assertTrue(e instanceof OperationFailedException || e instanceof ConnectionException,
                                "forged key 0x" + Long.toHexString(key) + ": unexpected " + e);
                        assertFalse(e.getMessage() == null || e.getMessage().isBlank(), "an error without text");
                    })
                    .verify(T);
            StepVerifier.create(c.onDispose()).expectComplete().verify(T);
            assertTrue(c.isDisposed());
            List<ConnectionEvent> events = c.events().collectList().block(T);
            assertTrue(events.contains(ConnectionEvent.LOST) || events.contains(ConnectionEvent.CLOSED),
                    "forging connection's events " + events);
        } finally {
            c.dispose();
        }
        assertArrayEquals(before, snapshot(), "forged key 0x" + Long.toHexString(key)
                + " changed server memory outside its connection's grant");
        neighbourStillWorks();
    }

    /**
     * The trusted peer writes a fresh value and reads it back, and the server sees it: its
     * connection, credits and control words included, is intact.
     */
    private void neighbourStillWorks() {
        long v = 0x7000_0000_0000_0000L + ++neighbourWrites;
        PeerRegion p = neighbour.remoteRegion(0);
        byte[] b = ByteBuffer.allocate(8).putLong(v).array();
        StepVerifier.create(neighbour.write(p, 8, b)).expectComplete().verify(T);
        StepVerifier.create(neighbour.read(p, 8, 8)).assertNext(r -> assertArrayEquals(b, r)).expectComplete()
                .verify(T);
        assertEquals(v, trusted.segment().get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN),
                8));
    }

    /** Every byte the server exposes, in one array. */
    private byte[] snapshot() {
        ByteBuffer all = ByteBuffer.allocate(3 * SIZE);
        for (Region r : new Region[] {trusted, readOnly, readOnlyFlushable}) {
            all.put(r.segment().toArray(ValueLayout.JAVA_BYTE));
        }
        return all.array();
    }

    private java.lang.foreign.MemorySegment filled(int b) {
        java.lang.foreign.MemorySegment m = arena.allocate(SIZE, 4096);
        m.fill((byte) b);
        return m;
    }

    /** The fabric raw form: key, base (0: tcp addresses by offset), length, big-endian. */
    private static byte[] raw(long key) {
        return ByteBuffer.allocate(24).putLong(key).putLong(0).putLong(SIZE).array();
    }

    private static long keyOf(byte[] raw) {
        assertEquals(24, raw.length, "tcp's raw descriptor carries an 8-byte key");
        return ByteBuffer.wrap(raw).getLong();
    }

    private static Cqflux fabric(String role) {
        return Cqflux.builder().transport("fabric").fabricProvider("tcp").localAddress(InetAddress.getLoopbackAddress())
                .threadNamePrefix("cqflux-hostile-" + role).build();
    }
}
