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
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * A hostile client, through the public API only, shared by the transports (the subclasses pick
 * the transport, the address, the descriptor format and the key space): a server exposes a region
 * on one {@code bind()} for a trusted peer and read-only regions on a second {@code bind()} for
 * everyone (each on a {@code bind()} of its own where one accept cannot carry both: {@link
 * #acceptCarriesTwoRegions()}); the attacker, a client of the second, forges peer regions from raw descriptors
 * ({@link RdmaConnection#remoteRegion(byte[], RegionAccess...)}: key, address, length, in the
 * transport's format) and writes to each. Whatever the key, nothing outside what its connection was granted may change, the
 * forging connection must end with a clear error, and the trusted peer's connection must keep
 * working (its control words, credits and goodbye, are remotely written regions too: a hit there
 * would stall or end it).
 *
 * <p>A client's own connection's control words are the one remotely writable region it holds by
 * design: lies written there must end only that connection, counted, and a raw client that sends
 * beyond its credits must neither take a neighbour's receive nor disorder its own messages.
 *
 * <p>Bounded: one attacker connection per forged key (a bad key ends the connection: tcp drops
 * it, a verbs queue pair goes to the error state), 64 bytes each; the subclasses bound how many.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class HostilePeerContract {

    static final Duration T = Duration.ofSeconds(10);
    static final int SIZE = 4096;
    /** A receive buffer size the hello tells as a u32, its largest form (PeerHello). */
    static final int BIG_RECEIVE_BUFFER = 65_536;

    final Arena arena = Arena.ofShared();
    final List<RdmaConnection> accepted = new CopyOnWriteArrayList<>();
    final List<Disposable> subscriptions = new ArrayList<>();
    Cqflux server;
    Cqflux trustedSide;
    Cqflux attacker;
    Region trusted;
    Region readOnly;
    Region readOnlyFlushable;
    RdmaServer trustedServer;
    RdmaServer publicServer;
    /**
     * Where the read-only flushable region is exposed: {@link #publicServer} itself, or a
     * {@code bind()} of its own where one accept cannot carry both regions
     * ({@link #acceptCarriesTwoRegions()}).
     */
    RdmaServer flushableServer;
    RdmaConnection neighbour;
    private long neighbourWrites;
    /** Forged descriptors written through (every one must fail and change nothing). */
    final java.util.concurrent.atomic.AtomicLong forgedTries = new java.util.concurrent.atomic.AtomicLong();
    /** Time spent connecting forgers, failing their writes and waiting for their ends, summed. */
    final java.util.concurrent.atomic.AtomicLong[] forgeNanos = {new java.util.concurrent.atomic.AtomicLong(),
        new java.util.concurrent.atomic.AtomicLong(), new java.util.concurrent.atomic.AtomicLong()};

    /** {@return a builder of an instance of the transport under test, its threads named after {@code role}} */
    abstract Cqflux.Builder builder(String role);

    /** {@return a new instance of the transport under test, its threads named after {@code role}} */
    Cqflux instance(String role) {
        return builder(role).build();
    }

    /** {@return the length of a region's raw descriptor on this transport ({@link Region#rawDescriptor()})} */
    abstract int rawDescriptorLength();

    /** {@return where a server listens; port 0 where the transport reports the bound port} */
    abstract InetSocketAddress listenAddress();

    /** {@return the key in a region descriptor of a hello (the server's per-connection exposure)} */
    abstract long keyOfHelloDescriptor(byte[] descriptor);

    /** {@return the key in a region's own raw descriptor ({@link Region#rawDescriptor()})} */
    abstract long keyOfRaw(byte[] raw);

    /**
     * {@return the raw descriptor of a forged peer region: {@code key}, the address of {@code target}
     * as the transport addresses it, {@link #SIZE} bytes, granting {@code claimed}} The attacker is
     * given the target's address: only the key stands between it and the memory.
     */
    abstract byte[] forged(long key, Region target, RegionAccess claimed);

    /** {@return a key drawn uniformly from the transport's key space} */
    abstract long randomKey(SecureRandom r);

    /**
     * {@return the keys next to the issued ones an attacker that knows them would try first}
     *
     * @param known the key of the attacker's first exposed region
     * @param flushable the key of its second
     */
    abstract long[] nearKeys(long known, long flushable);

    /**
     * {@return the hellos that are malformed on this transport's wire} A transport that pads the
     * private data it delivers (RDMA CM: rdma_get_cm_event(3)) turns some truncated hellos into
     * well-formed ones, so those belong to the transports that deliver exactly what was sent.
     */
    abstract byte[][] malformedHellos();

    /**
     * The malformed hellos of a transport that delivers exactly the bytes sent (fabric/tcp,
     * fabric/verbs, whose header carries their length): the truncated ones stay truncated.
     */
    static byte[][] malformedHellosAsSent() {
        return new byte[][] {
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
    }

    /**
     * rxe keys ({@code index << 8 | byte}) at the {@code span} pool indices on either side of
     * {@code index}, {@code perIndex} random bytes each: where a server registers the next and
     * previous connections' exposures and control words.
     */
    static long[] rxeKeysAround(long index, int span, int perIndex, java.util.Random r) {
        long[] around = new long[2 * span * perIndex];
        int n = 0;
        for (int d = 1; d <= span; d++) {
            for (long i : new long[] {index + d, index - d}) {
                for (int k = 0; k < perIndex; k++) {
                    around[n++] = i << 8 | r.nextInt(256);
                }
            }
        }
        return around;
    }

    /**
     * rxe's keys near two issued ones: the next and previous pool index of each, and the variant
     * bytes next to the issued one.
     */
    static long[] rxeNearKeys(long known, long flushable) {
        return new long[] {known + 0x100, known - 0x100, known ^ 1, known ^ 0x80, flushable + 0x100,
            flushable - 0x100, flushable ^ 1, flushable ^ 0x80};
    }

    /** Prints the FACT line of an rxe key sweep: forgers since {@code tries}, from {@code t0}. */
    void printSweepFact(String transport, long tries, long issued, int group, long t0) {
        long n = forgedTries.get() - tries;
        System.out.println(String.format("FACT %s: %d forged keys around the issued rxe key 0x%x, ends awaited"
                + " in groups of %d, none changed server memory, %d ms; per forger on average: connect %d ms, failed"
                + " write %d ms, wait for its end %d ms", transport, n, issued, group,
                (System.nanoTime() - t0) / 1_000_000, forgeNanos[0].get() / n / 1_000_000,
                forgeNanos[1].get() / n / 1_000_000, forgeNanos[2].get() / n / 1_000_000));
    }

    /**
     * {@return the text a client refused at admission or for a malformed hello reads after
     * "refused by the server: ", where the transport's reject carries the server's reason
     * (fabric, tcp and verbs: fi_reject(3), within its budget); null where it carries none (rpma: rpma_conn_req_delete(3)), so
     * that such a client reads the plain refusal}
     */
    abstract String rejectReasonPrefix(String reason);

    /**
     * {@return the NIC's counters that tell what a send without a posted receive met, for the
     * beyond-credits measurement's report; empty where the transport has none}
     */
    String receiverNotReadyCounters() {
        return "";
    }

    /**
     * {@return whether one accept's private data carries the hello of the public endpoint's two
     * read-only regions} Where it does not, the read-only flushable region is exposed on a
     * {@code bind()} of its own with the same options ({@link #flushableServer}), and the cases that
     * need the keys of both take each from a connection of its endpoint: the keys, rights and
     * addresses are those of the same registrations either way.
     */
    boolean acceptCarriesTwoRegions() {
        return true;
    }

    /** {@return how many concurrent connects the flood makes} */
    int floodSize() {
        return 32;
    }

    @BeforeAll
    void start() {
        server = instance("server");
        trustedSide = instance("trusted");
        attacker = instance("attacker");
        trusted = server.register(filled(0x11), RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
        readOnly = server.register(filled(0x22), RegionAccess.READ_SRC);
        readOnlyFlushable = server.register(filled(0x33), RegionAccess.READ_SRC, RegionAccess.FLUSH_TYPE_VISIBILITY);
        trustedServer = server.bind(listenAddress(), trusted).block(T);
        // The public endpoint keeps its keys in the instance's one domain (scoping turned off,
        // which aLeakedKey_worksOnlyWhileItsConnectionLives measures); the trusted one has the
        // default, scoped where the transport can.
        boolean both = acceptCarriesTwoRegions();
        publicServer = server.bind(listenAddress(), (both ? AcceptOptions.exposing(readOnly, readOnlyFlushable)
                : AcceptOptions.exposing(readOnly)).withKeysScopedToConnection(false)).block(T);
        flushableServer = both ? publicServer : server.bind(listenAddress(), AcceptOptions.exposing(readOnlyFlushable)
                .withKeysScopedToConnection(false)).block(T);
        subscriptions.add(trustedServer.connections().subscribe(accepted::add));
        subscriptions.add(publicServer.connections().subscribe(accepted::add));
        if (!both) {
            subscriptions.add(flushableServer.connections().subscribe(accepted::add));
        }
        neighbour = trustedSide.connect(trustedServer.address()).block(T);
        neighbourStillWorks();
    }

    @AfterAll
    void stop() {
        tearDown(T, subscriptions, arena, attacker, trustedSide, server);
    }

    /**
     * Ends a hostile-peer fixture: its subscriptions, then its instances in the order given (those
     * built, each within {@code timeout}), then its arena.
     */
    static void tearDown(Duration timeout, List<Disposable> subscriptions, Arena arena, Cqflux... instances) {
        subscriptions.forEach(Disposable::dispose);
        for (Cqflux c : instances) {
            if (c != null) {
                c.disposeNow(timeout);
            }
        }
        arena.close();
    }

    @Test
    void forgedKeysNearTheIssuedOnes_changeNothing() {
        // The attacker knows the keys of what it was exposed to (its hello carries them).
        RdmaConnection mine = attacker.connect(publicServer.address()).block(T);
        RdmaConnection mineFlushable = null;
        try {
            mineFlushable = flushableGrant(mine);
            long known = exposedKey(mine, 0);
            long flushable = exposedKey(mineFlushable, flushableIndex());
            forgeMany(nearKeys(known, flushable), readOnly, publicServer.address(), 4);
        } finally {
            mine.dispose();
            if (mineFlushable != null) {
                mineFlushable.dispose();
            }
        }
    }

    @Test
    void forgedRandomKeys_changeNothing() {
        SecureRandom r = new SecureRandom();
        long[] keys = new long[8];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = randomKey(r);
        }
        forgeMany(keys, trusted, publicServer.address(), 4);
    }

    @Test
    void readOnlyExposures_writtenToWithTheirRealKeys_areRefusedAndUnchanged() {
        // The real keys, write access claimed by the attacker itself: the registration has no
        // remote write right, so the provider refuses it (a flushable region included: its flush
        // is a read-back and needs no write right). The same forged descriptor first reads the
        // region's bytes, so the write is refused for its missing right, not a wrong address. The
        // connection they were issued to stays open, so the keys are live.
        RdmaConnection mine = attacker.connect(publicServer.address()).block(T);
        RdmaConnection mineFlushable = null;
        try {
            mineFlushable = flushableGrant(mine);
            writeWithTheRealKey(exposedKey(mine, 0), readOnly, 0x22);
            writeWithTheRealKey(exposedKey(mineFlushable, flushableIndex()), readOnlyFlushable, 0x33);
        } finally {
            mine.dispose();
            if (mineFlushable != null) {
                mineFlushable.dispose();
            }
        }
    }

    /**
     * {@return the attacker's connection that holds the read-only flushable region's descriptor}
     * {@code mine}, a connection of the public endpoint, where that endpoint exposes both regions;
     * else a new connection of {@link #flushableServer}, for the caller to dispose.
     */
    private RdmaConnection flushableGrant(RdmaConnection mine) {
        return flushableServer == publicServer ? mine : attacker.connect(flushableServer.address()).block(T);
    }

    /** {@return the index of the read-only flushable region in its endpoint's hello} */
    private int flushableIndex() {
        return flushableServer == publicServer ? 1 : 0;
    }

    /**
     * Another attacker connection forges a descriptor from a real key: a read through it
     * returns {@code expected} (key and address are right), then a write through it fails the way
     * a refused remote access ends a connection (fabric/tcp: the target drops it, so the write
     * is flushed, {@code WR_FLUSH_ERR}, or meets the end, {@code LOST}; a provider that reports
     * the access itself: {@code REM_ACCESS_ERR}), the connection ends LOST, and no byte changes.
     */
    private void writeWithTheRealKey(long key, Region region, int expected) {
        byte[] before = snapshot();
        RdmaConnection c = attacker.connect(publicServer.address()).block(T);
        try {
            PeerRegion readable = c.remoteRegion(forged(key, region, RegionAccess.READ_SRC),
                    RegionAccess.READ_SRC);
            StepVerifier.create(c.read(readable, 0, 64))
                    .assertNext(b -> {
                        for (byte x : b) {
                            assertEquals(expected, x & 0xff, "the forged descriptor does not address the region");
                        }
                    })
                    .expectComplete()
                    .verify(T);
            PeerRegion writable = c.remoteRegion(forged(key, region, RegionAccess.WRITE_DST),
                    RegionAccess.WRITE_DST);
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
        RdmaConnection c = attacker.connect(flushableServer.address()).block(T);
        try {
            PeerRegion flushable = c.remoteRegions().get(flushableIndex());
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

    /** The refused client's message carries the server's reason where the transport's reject can. */
    private void assertRefusalReads(ConnectionException c, String reason) {
        String prefix = rejectReasonPrefix(reason);
        if (prefix == null) {
            assertFalse(c.getMessage().contains("refused by the server: "), c::getMessage);
        } else {
            assertTrue(c.getMessage().contains("refused by the server: " + prefix), c::getMessage);
        }
    }

    /**
     * On a server of its own: the shared servers' RDMA CM ids come and go with the other cases'
     * connections, whose server sides end after their clients are released.
     */
    @Test
    void malformedHellos_areRejected_leaveNothingBehind_andTheServerKeepsServing() {
        byte[][] hellos = malformedHellos();
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.exposing(readOnly)).block(T);
        try {
            int idsBefore = cmIdsFrom(s.address());
            for (byte[] hello : hellos) {
                StepVerifier.create(attacker.connect(s.address(), ConnectOptions.rawPrivateData(hello)))
                        .expectErrorSatisfies(e -> {
                            ConnectionException c = org.junit.jupiter.api.Assertions.assertInstanceOf(
                                    ConnectionException.class, e, () -> "hello " + java.util.HexFormat.of().formatHex(hello));
                            assertEquals(ConnectionEvent.REJECTED, c.event(), c::toString);
                            assertRefusalReads(c, "malformed hello: ");
                        })
                        .verify(T);
            }
            assertEquals(hellos.length, s.stats().malformedHellos(), () -> "" + s.stats());
            if (idsBefore >= 0) {
                assertEquals(1, idsBefore, "the listener's own id");
                // The client reads its refusal as the server rejects, a moment before the server's
                // transport has destroyed what it rejected.
                awaitTrue(() -> cmIdsFrom(s.address()) == 1, () -> hellos.length + " rejected requests left RDMA CM"
                        + " ids behind: " + cmIdsFrom(s.address()) + " from " + s.address() + ", the listener's included");
            }
            aProperClientIsServedBy(s.address());
        } finally {
            s.disposeNow(T);
        }
        neighbourStillWorks();
    }

    @Test
    void aConnectFlood_isServed_andSparesTheNeighbour() {
        int n = floodSize();
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
        assertNotEquals(keyOfRaw(trusted.rawDescriptor()), keyA, "the region's own key went to a peer");
        awaitTrue(() -> trustedServer.stats().exposures() == 2, () -> "one registration per live connection: "
                + trustedServer.stats());
        // A's key works through A.
        byte[] mine = ByteBuffer.allocate(8).putLong(0x0A0A_0A0A_0A0A_0A0AL).array();
        StepVerifier.create(a.write(a.remoteRegion(0), 64, mine)).expectComplete().verify(T);
        a.disposeNow(T);
        awaitTrue(() -> trustedServer.stats().exposures() == 1, () -> "A's exposure was not revoked: "
                + trustedServer.stats());
        // Once A is gone its key reaches nothing, from either endpoint, and the neighbour is untouched.
        forge(keyA, trusted, trustedServer.address(), RegionAccess.WRITE_DST);
        forge(keyA, trusted, publicServer.address(), RegionAccess.WRITE_DST);
        readWith(keyA, trusted, publicServer.address(), false);
        neighbourStillWorks();
        assertEquals(keyNeighbour, exposedKey(neighbour, 0));
    }

    @Test
    void aLeakedKey_worksOnlyWhileItsConnectionLives() {
        // libfabric 1.17 cannot bind a key to an endpoint (fi_mr_bind is -FI_ENOSYS on tcp): on a
        // server without keys scoped to their connection (turned off here; rpma cannot scope them)
        // a key handed to connection A is valid on every connection of the server's domain while A
        // lives. What per-connection exposure adds is that it dies with A, and that it reaches
        // only what A was granted (read-only here).
        RdmaConnection a = attacker.connect(publicServer.address()).block(T);
        long leaked = exposedKey(a, 0);
        readWith(leaked, readOnly, publicServer.address(), true);     // B, another client, while A lives
        forge(leaked, readOnly, publicServer.address(), RegionAccess.WRITE_DST); // still no write right
        a.disposeNow(T);
        awaitTrue(() -> publicServer.stats().exposures() == 0, () -> "A's exposures were not revoked: "
                + publicServer.stats());
        readWith(leaked, readOnly, publicServer.address(), false);    // B once A is gone
        aProperClientIsStillServed();
        neighbourStillWorks();
    }

    /**
     * {@return whether the transport under test gives an accepted connection keys of its own
     * ({@code AcceptOptions.withKeysScopedToConnection}); where it does not, the bind that asks for
     * them must fail naming the transport and why}
     */
    boolean offersScopedKeys() {
        return false;
    }

    /** {@return what the refusal of scoped keys must name as the reason, beside the transport} */
    String scopedKeysRefusalMentions() {
        return "protection domain";
    }

    @Test
    void keysScopedToTheirConnection_workOnlyThere_onTheSameBindAndAnother_orTheBindIsRefused() {
        // The default: scoped where the transport can (then a region handed out by its raw
        // descriptor is out of reach: aRegionHandedOutByItsRawDescriptor_...), not where it cannot.
        assertEquals(offersScopedKeys(), trustedServer.keysScopedToConnection(), "the default on "
                + server.transportName());
        assertFalse(publicServer.keysScopedToConnection(), "turned off: not scoped");
        Region scopedRegion = server.register(filled(0x55), RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
        AcceptOptions scoped = AcceptOptions.exposing(scopedRegion).withKeysScopedToConnection(true);
        if (!offersScopedKeys()) {
            try {
                StepVerifier.create(server.bind(listenAddress(), scoped))
                        .expectErrorSatisfies(e -> {
                            assertTrue(e instanceof io.cqflux.core.UnsupportedCapabilityException, e::toString);
                            assertTrue(e.getMessage().contains(server.transportName())
                                    && e.getMessage().contains(scopedKeysRefusalMentions()), e::getMessage);
                        })
                        .verify(T);
            } finally {
                scopedRegion.close();
            }
            return;
        }
        RdmaServer s = server.bind(listenAddress(), scoped).block(T);
        RdmaServer other = server.bind(listenAddress(), scoped).block(T);
        List<RdmaConnection> served = new CopyOnWriteArrayList<>();
        Disposable sub = s.connections().subscribe(served::add);
        Disposable subOther = other.connections().subscribe(served::add);
        RdmaConnection a = trustedSide.connect(s.address()).block(T);
        try {
            long keyA = exposedKey(a, 0);
            byte[] before = scopedRegion.segment().toArray(ValueLayout.JAVA_BYTE);
            // A's key, presented by another client of the same bind, of another scoped bind and of
            // an unscoped one, for a write and for a read: nothing, and each such connection ends.
            for (InetSocketAddress where : new InetSocketAddress[] {s.address(), other.address(),
                publicServer.address()}) {
                forge(keyA, scopedRegion, where, RegionAccess.WRITE_DST);
                readWith(keyA, scopedRegion, where, false);
            }
            assertArrayEquals(before, scopedRegion.segment().toArray(ValueLayout.JAVA_BYTE),
                    "A's key changed its region through another connection");
            // A itself goes on, with its key: a write and a read back.
            byte[] mine = ByteBuffer.allocate(8).putLong(0x5C09_ED00_0000_0001L).array();
            StepVerifier.create(a.write(a.remoteRegion(0), 16, mine)).expectComplete().verify(T);
            StepVerifier.create(a.read(a.remoteRegion(0), 16, 8)).assertNext(r -> assertArrayEquals(mine, r))
                    .expectComplete().verify(T);
            neighbourStillWorks();
            a.disposeNow(T);
            awaitTrue(() -> s.stats().exposures() == 0, () -> "A's exposure was not revoked: " + s.stats());
        } finally {
            a.dispose();
            sub.dispose();
            subOther.dispose();
            served.forEach(RdmaConnection::dispose);
            s.disposeNow(T);
            other.disposeNow(T);
            scopedRegion.close();
        }
        aProperClientIsStillServed();
    }

    /**
     * A region the server's application registered and hands to a peer by its raw descriptor (not
     * in the hello) is reachable on a connection of a server without keys scoped to their
     * connection (turned off, or where the transport cannot scope them); where they are scoped,
     * by default or required, it is not, since it lives in the instance's domain: the access fails
     * and ends that connection, as a forged key does (AcceptOptions' class comment says so).
     */
    @Test
    void aRegionHandedOutByItsRawDescriptor_isReachableWhereKeysAreNotScoped_andNotOnAScopedConnection() {
        Region handedOut = server.register(filled(0x66), RegionAccess.READ_SRC);
        try {
            // The public endpoint turned scoping off.
            RdmaConnection c = trustedSide.connect(publicServer.address()).block(T);
            try {
                PeerRegion raw = c.remoteRegion(handedOut.rawDescriptor(), RegionAccess.READ_SRC);
                StepVerifier.create(c.read(raw, 0, 8)).assertNext(b -> assertEquals(0x66, b[0] & 0xff))
                        .expectComplete().verify(T);
            } finally {
                c.disposeNow(T);
            }
            if (offersScopedKeys()) {
                readOnAScopedConnection_failsAndEndsIt(handedOut, AcceptOptions.exposing());
                readOnAScopedConnection_failsAndEndsIt(handedOut,
                        AcceptOptions.exposing().withKeysScopedToConnection(true));
            } else {
                // The default cannot scope them here: reachable there too.
                PeerRegion raw = neighbour.remoteRegion(handedOut.rawDescriptor(), RegionAccess.READ_SRC);
                StepVerifier.create(neighbour.read(raw, 0, 8)).assertNext(b -> assertEquals(0x66, b[0] & 0xff))
                        .expectComplete().verify(T);
            }
        } finally {
            handedOut.close();
        }
        neighbourStillWorks();
    }

    /** The read of {@code handedOut} by its raw descriptor on a connection of a server bound with {@code options}. */
    private void readOnAScopedConnection_failsAndEndsIt(Region handedOut, AcceptOptions options) {
        {
            RdmaServer s = server.bind(listenAddress(), options).block(T);
            assertTrue(s.keysScopedToConnection(), options::toString);
            List<RdmaConnection> served = new CopyOnWriteArrayList<>();
            Disposable sub = s.connections().subscribe(served::add);
            RdmaConnection c = trustedSide.connect(s.address()).block(T);
            try {
                PeerRegion there = c.remoteRegion(handedOut.rawDescriptor(), RegionAccess.READ_SRC);
                StepVerifier.create(c.read(there, 0, 8))
                        .expectErrorSatisfies(e -> assertTrue(e instanceof OperationFailedException
                                || e instanceof ConnectionException, e::toString))
                        .verify(T);
                // As for a forged key: the provider ends the connection the access came on.
                StepVerifier.create(c.onDispose()).expectComplete().verify(T);
            } finally {
                c.dispose();
                sub.dispose();
                served.forEach(RdmaConnection::dispose);
                s.disposeNow(T);
            }
        }
    }

    @Test
    void closingAnExposedRegion_revokesTheKeysItsPeersHold() {
        Region shortLived = server.register(filled(0x44), RegionAccess.READ_SRC);
        RdmaServer s = server.bind(listenAddress(), shortLived).block(T);
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
    void anAuthenticatorThatNeverDecides_isBoundedByTheHandshakeTimeout() {
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.exposing(readOnly).authenticatedBy(r -> Mono.never())
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

    /**
     * {@return the kernel's RDMA CM ids with {@code server} as their source (its listener's, its
     * requests' and its accepted connections'), or -1 on a transport without RDMA CM (tcp)} A
     * request the server rejected must leave none: librpma and libfabric 1.17's verbs provider leave
     * the id of every request they reject unless the transport destroys it (docs/security.md,
     * section 7; core/rpma's reject_cm_id_probe.c).
     */
    abstract int cmIdsFrom(InetSocketAddress server);

    /**
     * {@return whether a client whose loop stands still has sent its connection request, and the
     * server's side then waits for its answer} rpma: librpma resolves the address and the route and
     * sends the request inside the connect calls, on the client's set-up thread
     * (rpma_conn_req_new(3), rpma_conn_req_connect(3)); the client's rdma_get_cm_event(3), on its
     * loop, handles the server's connect response and sends the ready-to-use message that
     * establishes the server's side (rdma_accept(3)). libfabric (tcp, verbs) makes progress on a
     * connect as the client's event queue is read, so such a client has sent the server nothing.
     */
    abstract boolean stalledRequestReachesTheServer();

    /**
     * A peer that stops right after its request, as a process stopped between its request and the
     * server's answer: the only loop of its instance is held in a completion's callback, so nothing of
     * it reads its connection's events while its set-up thread makes the connect calls. Where the
     * request goes out and the server's side then waits for the client's answer
     * ({@link #stalledRequestReachesTheServer()}), the handshake timeout ends what the server
     * accepted, counted, with nothing left registered for it, and the client's connect ends once
     * its loop runs again (it does not hang). Where nothing goes out, the stalled client costs the
     * server no handshake in progress, and once its loop runs it is an ordinary client. Either way
     * the server and its neighbours go on.
     */
    @Test
    void aPeerThatStallsAfterItsRequest_leavesNoHandshakeOpen_andNothingBehind() throws Exception {
        Duration timeout = Duration.ofMillis(500);
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.exposing(readOnly).withHandshakeTimeout(timeout))
                .block(T);
        List<RdmaConnection> served = new CopyOnWriteArrayList<>();
        Disposable sub = s.connections().subscribe(served::add);
        Cqflux staller = builder("staller").loops(1).build();
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CompletableFuture<RdmaConnection> stalled = null;
        try {
            RdmaConnection first = staller.connect(publicServer.address()).block(T);
            java.util.concurrent.CountDownLatch holding = new java.util.concurrent.CountDownLatch(1);
            first.read(first.remoteRegion(0), 0, 8).doOnSuccess(b -> {
                holding.countDown();
                try {
                    release.await(30, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }).subscribe();
            assertTrue(holding.await(T.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS),
                    "the staller's loop was not held");
            stalled = staller.connect(s.address()).toFuture();
            if (stalledRequestReachesTheServer()) {
                awaitTrue(() -> s.stats().handshakeTimeouts() == 1, () -> "no handshake timeout: " + s.stats());
            } else {
                // Time for a request to arrive and be answered, had it been sent.
                Await.pause(timeout.multipliedBy(2));
                assertEquals(0, s.stats().handshakeTimeouts(), () -> "" + s.stats());
            }
            awaitTrue(() -> s.stats().pendingHandshakes() == 0 && s.stats().connections() == 0
                    && s.stats().exposures() == 0, () -> "the stalled peer left something on the server: " + s.stats());
            assertTrue(served.isEmpty(), "the stalled peer's connection was served");
            release.countDown();
            if (stalledRequestReachesTheServer()) {
                // Its answer now finds the server's side gone: an error, or a connection that ends.
                try {
                    stalled.get(T.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS).dispose();
                } catch (java.util.concurrent.ExecutionException e) {
                    assertTrue(e.getCause() instanceof ConnectionException, () -> "the stalled connect failed with " + e);
                }
                assertTrue(served.isEmpty(), "the connection whose handshake timed out was served");
                assertEquals(1, s.stats().handshakeTimeouts(), () -> "" + s.stats());
            } else {
                // Its request goes out now, and it is an ordinary client.
                stalled.get(T.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS).dispose();
                awaitTrue(() -> served.size() == 1, () -> "the late request was not served: " + s.stats());
                served.forEach(RdmaConnection::dispose);
            }
            awaitTrue(() -> s.stats().connections() == 0 && s.stats().exposures() == 0,
                    () -> "after the staller ran again: " + s.stats());
        } finally {
            release.countDown();
            if (stalled != null) {
                stalled.thenAccept(RdmaConnection::dispose);
            }
            staller.disposeNow(T);
            sub.dispose();
            served.forEach(RdmaConnection::dispose);
            s.disposeNow(T);
        }
        neighbourStillWorks();
    }

    @Test
    void aConnectFloodPastTheLimits_isRefused_countedAndSparesTheConnectionsWithin() {
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.exposing(readOnly).withMaxConnections(4)).block(T);
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
                ConnectionException c = org.junit.jupiter.api.Assertions.assertInstanceOf(ConnectionException.class, e,
                        e::toString);
                assertEquals(ConnectionEvent.REJECTED, c.event(), c::toString);
                assertRefusalReads(c, "the server has its maximum of connections; try again later");
            }
            assertEquals(16, s.stats().refusedOverMaxConnections(), () -> "" + s.stats());
            assertEquals(4, s.stats().connections());
            if (cmIdsFrom(s.address()) >= 0) {
                // The listener's id and the 4 served connections' server sides: the 16 refused
                // requests left none (docs/security.md, section 7's last fact).
                awaitTrue(() -> cmIdsFrom(s.address()) == 5, () -> "RDMA CM ids from " + s.address() + " after 16"
                        + " refusals: " + cmIdsFrom(s.address()) + ", 5 expected (the listener and 4 connections)");
            }
            for (RdmaConnection c : held) {
                StepVerifier.create(c.read(c.remoteRegion(0), 0, 8)).assertNext(b -> assertEquals(0x22, b[0] & 0xff))
                        .expectComplete().verify(T);
            }
            // Room again once one leaves.
            held.remove(0).disposeNow(T);
            awaitTrue(() -> s.stats().connections() == 3, () -> "" + s.stats());
            held.add(attacker.connect(s.address()).block(T));
        } finally {
            closeAll(held, sub, served, s);
        }
        neighbourStillWorks();
    }

    @Test
    void connectionsFromOneAddressPastItsBound_areRefused_andItsSlotsComeBackAsTheyGo() {
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.exposing(readOnly).withMaxConnectionsPerAddress(2))
                .block(T);
        List<RdmaConnection> served = new CopyOnWriteArrayList<>();
        Disposable sub = s.connections().subscribe(served::add);
        List<RdmaConnection> held = new CopyOnWriteArrayList<>();
        try {
            // A request refused after its admission gives its slot back: a malformed hello first.
            StepVerifier.create(attacker.connect(s.address(), ConnectOptions.rawPrivateData(malformedHellos()[0])))
                    .expectErrorSatisfies(e -> assertRefusalReads((ConnectionException) e, "malformed hello: "))
                    .verify(T);
            held.add(attacker.connect(s.address()).block(T));
            held.add(attacker.connect(s.address()).block(T));
            StepVerifier.create(attacker.connect(s.address()))
                    .expectErrorSatisfies(e -> {
                        ConnectionException c = org.junit.jupiter.api.Assertions.assertInstanceOf(ConnectionException.class, e, e::toString);
                        assertEquals(ConnectionEvent.REJECTED, c.event(), c::toString);
                        assertRefusalReads(c, "too many connections from your address; try again later");
                    })
                    .verify(T);
            assertEquals(1, s.stats().refusedOverMaxPerAddress(), () -> "" + s.stats());
            // The server counts a connection once its side is established, after its client may.
            awaitTrue(() -> s.stats().connections() == 2, () -> "" + s.stats());
            // A slot comes back once its connection is released on the server.
            held.remove(0).disposeNow(T);
            awaitTrue(() -> s.stats().connections() == 1, () -> "" + s.stats());
            held.add(attacker.connect(s.address()).block(T));
            assertEquals(1, s.stats().refusedOverMaxPerAddress(), () -> "" + s.stats());
        } finally {
            closeAll(held, sub, served, s);
        }
        neighbourStillWorks();
    }

    /** Ends a limit case: its clients, the subscription to the server's connections, those, the server. */
    static void closeAll(List<RdmaConnection> held, Disposable sub, List<RdmaConnection> served, RdmaServer s) {
        held.forEach(RdmaConnection::dispose);
        sub.dispose();
        served.forEach(RdmaConnection::dispose);
        s.disposeNow(T);
    }

    @Test
    void handshakesPastTheirLimit_areRefusedAtOnce() {
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.exposing(readOnly).authenticatedBy(r -> Mono.never())
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

    /**
     * What an operator's authenticator sees of a client besides its credentials: the address it
     * connected from, on every transport (rpma reads it from the RDMA CM id inside librpma's
     * request, which has no getter for it).
     */
    @Test
    void theAuthenticator_seesTheAddressTheClientConnectedFrom() {
        java.util.concurrent.atomic.AtomicReference<InetSocketAddress> seen = new java.util.concurrent.atomic.AtomicReference<>();
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.exposing(readOnly).authenticatedBy(r -> {
            seen.set(r.peerAddress());
            return Mono.just(io.cqflux.reactor.Authenticator.Decision.allow());
        })).block(T);
        try {
            RdmaConnection c = attacker.connect(s.address()).block(T);
            try {
                InetSocketAddress a = seen.get();
                assertTrue(a != null && a.getAddress().equals(s.address().getAddress()) && a.getPort() > 0
                        && a.getPort() != s.address().getPort(), () -> "the authenticator saw " + a + " for a client of "
                        + s.address() + " on the same host");
            } finally {
                c.disposeNow(T);
            }
        } finally {
            s.disposeNow(T);
        }
    }

    /**
     * The shared secret's credentials on this transport: a client that exposes no region presents
     * them within its connect's private data ({@code SharedSecretAuthenticator}: 22 bytes, which fit
     * rpma's 56 beside the rest of the hello). The valid client tells a receive buffer size above
     * 32,767 (the u32 form of the hello's trailer, its largest), so that the server reads the
     * largest such hello, and must still read the flag that lets its keep-alive probe the client.
     */
    @Test
    void wrongOrMissingCredentials_areRefusedWithTheServersReason_andNothingIsRegisteredForThem() {
        byte[] secret = "hostile-peer-test shared secret!".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        Region guarded = server.register(filled(0x55), RegionAccess.READ_SRC, RegionAccess.WRITE_DST);
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.exposing(guarded)
                .authenticatedBy(SharedSecretAuthenticator.of(secret))).block(T);
        List<RdmaConnection> served = new CopyOnWriteArrayList<>();
        Disposable sub = s.connections().subscribe(served::add);
        Cqflux authed = builder("authed").receiveBufferSize(BIG_RECEIVE_BUFFER).build();
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
            RdmaConnection ok = authed.connect(s.address(), ConnectOptions.defaults().credentials(captured)).block(T);
            refused(attacker.connect(s.address(), ConnectOptions.defaults().credentials(captured)),
                    "replayed credentials");
            assertEquals(4, s.stats().refusedByAuthenticator());
            StepVerifier.create(ok.read(ok.remoteRegion(0), 0, 8)).assertNext(b -> assertEquals(0x55, b[0] & 0xff))
                    .expectComplete().verify(T);
            assertEquals(1, s.stats().exposures());
            // What the server read from the valid client: its credentials, its buffer size and the flag.
            awaitTrue(() -> served.size() == 1, () -> served.size() + " connections served, expected 1");
            byte[] data = served.get(0).peerPrivateData();
            ClientHello hello = ClientHello.read(data);
            assertEquals(4, hello.version(), "a hello with credentials is version 4");
            assertArrayEquals(captured, hello.credentials());
            assertEquals(BIG_RECEIVE_BUFFER, hello.bufferSize());
            assertEquals(1, hello.flags() & 1, "the flag for the server's keep-alive is missing from the hello");
            assertTrue(hello.length() <= server.maxConnectPrivateData(), hello.length() + " bytes");
            System.out.println("FACT " + getClass().getSimpleName() + ": a client without regions presenting "
                    + captured.length + " bytes of shared-secret credentials sends a hello of " + hello.length()
                    + " bytes (" + hello.handshake() + "-byte handshake, " + hello.control() + "-byte control"
                    + " descriptor, u32 buffer size, flags) of the connect's " + server.maxConnectPrivateData()
                    + "; the server read " + data.length + " bytes");
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
            authed.disposeNow(T);
            s.disposeNow(T);
            guarded.close();
        }
        neighbourStillWorks();
    }

    /**
     * A client's hello as the server received it, read here by its documented layout
     * ({@code PeerHello}, not exported): {@code 'C' 'Q' version count}, the regions, then behind a
     * length byte each the handshake, the control words' descriptor and (version 4) the
     * credentials, then the receive buffer size (u16, or u32 with its top bit set) and the flags.
     *
     * @param handshake the handshake's length
     * @param control the control descriptor's length
     * @param length the bytes up to and with the flags
     */
    record ClientHello(int version, int handshake, int control, byte[] credentials, int bufferSize, int flags,
                       int length) {
        static ClientHello read(byte[] data) {
            ByteBuffer b = ByteBuffer.wrap(data);
            assertEquals('C', b.get(), "not a hello");
            assertEquals('Q', b.get(), "not a hello");
            int version = b.get();
            int regions = b.get() & 0xff;
            for (int i = 0; i < regions; i++) {
                b.position(b.position() + (b.getShort() & 0xffff));
            }
            int handshake = b.get() & 0xff;
            b.position(b.position() + handshake);
            int control = b.get() & 0xff;
            b.position(b.position() + control);
            byte[] credentials = new byte[version == 4 ? b.get() & 0xff : 0];
            b.get(credentials);
            int size = b.getShort(b.position()) & 0xffff;
            if ((size & 0x8000) != 0) {
                size = b.getInt() & 0x7fff_ffff;
            } else {
                b.getShort();
            }
            int flags = b.get() & 0xff;
            return new ClientHello(version, handshake, control, credentials, size, flags, b.position());
        }
    }

    /** The connect fails with REJECTED and a message that carries the server's reason. */
    static void refused(Mono<RdmaConnection> connect, String reason) {
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
    void readWith(long key, Region target, InetSocketAddress address, boolean expectSuccess) {
        RdmaConnection c = attacker.connect(address).block(T);
        try {
            PeerRegion forged = c.remoteRegion(forged(key, target, RegionAccess.READ_SRC), RegionAccess.READ_SRC);
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
     * The key of region {@code i} in the hello the server sent this connection: after the hello's
     * 4-byte header, each descriptor behind a 2-byte big-endian length ({@code PeerHello}).
     */
    long exposedKey(RdmaConnection c, int i) {
        return keyOfHelloDescriptor(exposedDescriptor(c, i));
    }

    /** {@return the descriptor of region {@code i} in the hello the server sent {@code c}} */
    static byte[] exposedDescriptor(RdmaConnection c, int i) {
        ByteBuffer hello = ByteBuffer.wrap(c.peerPrivateData());
        assertEquals('C', hello.get(0), "not a hello");
        assertTrue(i < (hello.get(3) & 0xff), "the hello names " + (hello.get(3) & 0xff) + " regions, not " + (i + 1));
        hello.position(4);
        for (int j = 0; j < i; j++) {
            int n = hello.getShort() & 0xffff;
            hello.position(hello.position() + n);
        }
        byte[] d = new byte[hello.getShort() & 0xffff];
        hello.get(d);
        return d;
    }

    static void awaitTrue(java.util.function.BooleanSupplier cond, java.util.function.Supplier<String> what) {
        long end = System.nanoTime() + T.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) {
                org.junit.jupiter.api.Assertions.fail(what.get());
            }
            java.util.concurrent.locks.LockSupport.parkNanos(10_000_000L);
        }
    }

    /** A fresh client of the public endpoint connects and reads what it was granted. */
    void aProperClientIsStillServed() {
        aProperClientIsServedBy(publicServer.address());
    }

    /** A well-behaved client of {@code server}, which exposes {@code readOnly} first, reads it. */
    void aProperClientIsServedBy(InetSocketAddress server) {
        RdmaConnection c = attacker.connect(server).block(T);
        try {
            StepVerifier.create(c.read(c.remoteRegion(0), 0, 8))
                    .assertNext(b -> assertEquals(0x22, b[0] & 0xff))
                    .expectComplete()
                    .verify(T);
        } finally {
            c.disposeNow(T);
        }
    }

    /**
     * One attacker connection of the public endpoint writes 64 bytes through a forged descriptor
     * with {@code key} at {@code target}'s address.
     */
    void forge(long key, Region target) {
        forge(key, target, publicServer.address(), RegionAccess.WRITE_DST);
    }

    /**
     * One client of {@code address} writes 64 bytes through a forged descriptor with {@code key} at
     * {@code target}'s address: the write must fail with a clear error, the connection must end,
     * no byte the server exposes may change and the trusted peer must keep working.
     */
    void forge(long key, Region target, InetSocketAddress address, RegionAccess claimed) {
        byte[] before = snapshot();
        forgeOnce(key, target, address, claimed);
        assertArrayEquals(before, snapshot(), "forged key 0x" + Long.toHexString(key)
                + " changed server memory outside its connection's grant");
        neighbourStillWorks();
    }

    /**
     * {@link #forge(long, Region)} for many keys, through clients of {@code address}, in groups of
     * {@code group}: each forging connection connects and has its write fail in turn, and the
     * group's connections are then checked to have ended (their ends overlap: an end waits for the
     * transport's disconnect more than it works). After each group the server's memory is compared
     * with the group's start and the trusted peer must still work, so a change is pinned to the
     * group's keys (named in the failure).
     */
    void forgeMany(long[] keys, Region target, InetSocketAddress address, int group) {
        for (int from = 0; from < keys.length; from += group) {
            long[] these = java.util.Arrays.copyOfRange(keys, from, Math.min(keys.length, from + group));
            byte[] before = snapshot();
            List<RdmaConnection> ending = new ArrayList<>();
            try {
                for (long key : these) {
                    ending.add(forgedWrite(key, target, address, RegionAccess.WRITE_DST));
                }
                for (RdmaConnection c : ending) {
                    assertEnded(c);
                }
            } finally {
                ending.forEach(RdmaConnection::dispose);
            }
            assertArrayEquals(before, snapshot(), () -> "one of the forged keys " + java.util.Arrays.stream(these)
                    .mapToObj(k -> "0x" + Long.toHexString(k)).toList() + " changed server memory outside its"
                    + " connection's grant");
            neighbourStillWorks();
        }
    }

    /** One client of {@code address} writes through a forged descriptor, and its connection ends. */
    private void forgeOnce(long key, Region target, InetSocketAddress address, RegionAccess claimed) {
        RdmaConnection c = forgedWrite(key, target, address, claimed);
        try {
            assertEnded(c);
        } finally {
            c.dispose();
        }
    }

    /**
     * One client of {@code address} writes 64 bytes through a forged descriptor: the write must
     * fail with a clear error. {@return the forging connection, to be checked to end}
     */
    private RdmaConnection forgedWrite(long key, Region target, InetSocketAddress address, RegionAccess claimed) {
        forgedTries.incrementAndGet();
        long t0 = System.nanoTime();
        RdmaConnection c = attacker.connect(address).block(T);
        long t1 = System.nanoTime();
        forgeNanos[0].addAndGet(t1 - t0);
        try {
            PeerRegion forged = c.remoteRegion(forged(key, target, claimed), claimed);
            byte[] payload = new byte[64];
            java.util.Arrays.fill(payload, (byte) 0x66);
            StepVerifier.create(c.write(forged, 0, payload))
                    .expectErrorSatisfies(e -> {
                        assertTrue(e instanceof OperationFailedException || e instanceof ConnectionException,
                                "forged key 0x" + Long.toHexString(key) + ": unexpected " + e);
                        assertFalse(e.getMessage() == null || e.getMessage().isBlank(), "an error without text");
                    })
                    .verify(T);
            forgeNanos[1].addAndGet(System.nanoTime() - t1);
            return c;
        } catch (RuntimeException | Error e) {
            c.dispose();
            throw e;
        }
    }

    /** The forging connection ends by itself, lost or closed, within {@link #T}. */
    private void assertEnded(RdmaConnection c) {
        long t0 = System.nanoTime();
        StepVerifier.create(c.onDispose()).expectComplete().verify(T);
        forgeNanos[2].addAndGet(System.nanoTime() - t0);
        assertTrue(c.isDisposed());
        List<ConnectionEvent> events = c.events().collectList().block(T);
        assertTrue(events.contains(ConnectionEvent.LOST) || events.contains(ConnectionEvent.CLOSED),
                "forging connection's events " + events);
    }

    /**
     * The trusted peer writes a fresh value and reads it back, and the server sees it: its
     * connection, credits and control words included, is intact.
     */
    void neighbourStillWorks() {
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
    byte[] snapshot() {
        ByteBuffer all = ByteBuffer.allocate(3 * SIZE);
        for (Region r : new Region[] {trusted, readOnly, readOnlyFlushable}) {
            all.put(r.segment().toArray(ValueLayout.JAVA_BYTE));
        }
        return all.array();
    }

    java.lang.foreign.MemorySegment filled(int b) {
        java.lang.foreign.MemorySegment m = arena.allocate(SIZE, 4096);
        m.fill((byte) b);
        return m;
    }

    /**
     * A server with a short keep-alive, so that its checks of the control words run every 100 ms
     * whether or not it sends anything (five misses: a neighbour's process held off the CPU of a
     * loaded host for a few hundred ms is not taken for a silent peer); one read-only region for the attacker, one writable for a
     * neighbour, each on a {@code bind()} of its own. Closed by the caller.
     */
    final class ControlWordRig implements AutoCloseable {
        final Cqflux srv = builder("words").keepAlive(Duration.ofMillis(100), 5).build();
        final Arena mem = Arena.ofShared();
        final Region open;
        final Region neighbourRegion;
        final RdmaServer publicSide;
        final RdmaServer neighbourSide;
        final List<RdmaConnection> accepted = new CopyOnWriteArrayList<>();
        final List<Disposable> subs = new ArrayList<>();

        ControlWordRig() {
            this(c -> { });
        }

        /** @param onAccepted also given each accepted connection, on the server's loop */
        ControlWordRig(java.util.function.Consumer<RdmaConnection> onAccepted) {
            this(onAccepted, onAccepted, true);
        }

        /**
         * @param onPublic also given each connection accepted on the attacker's side
         * @param onNeighbour also given each connection accepted on the neighbour's side
         * @param endOnReceiveOverflow the attacker's side's {@link AcceptOptions#withEndOnReceiveOverflow}
         */
        ControlWordRig(java.util.function.Consumer<RdmaConnection> onPublic,
                       java.util.function.Consumer<RdmaConnection> onNeighbour, boolean endOnReceiveOverflow) {
            open = srv.register(fill(mem, 0x66), RegionAccess.READ_SRC);
            neighbourRegion = srv.register(fill(mem, 0x77), RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
            publicSide = srv.bind(listenAddress(), AcceptOptions.exposing(open)
                    .withEndOnReceiveOverflow(endOnReceiveOverflow)).block(T);
            neighbourSide = srv.bind(listenAddress(), neighbourRegion).block(T);
            subs.add(publicSide.connections().subscribe(c -> {
                accepted.add(c);
                onPublic.accept(c);
            }));
            subs.add(neighbourSide.connections().subscribe(c -> {
                accepted.add(c);
                onNeighbour.accept(c);
            }));
        }

        static java.lang.foreign.MemorySegment fill(Arena a, int b) {
            java.lang.foreign.MemorySegment m = a.allocate(SIZE, 4096);
            m.fill((byte) b);
            return m;
        }

        byte[] snapshot() {
            ByteBuffer all = ByteBuffer.allocate(2 * SIZE);
            all.put(open.segment().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            all.put(neighbourRegion.segment().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            return all.array();
        }

        @Override
        public void close() {
            subs.forEach(Disposable::dispose);
            srv.disposeNow(T);
            mem.close();
        }
    }

    /** {@return the raw descriptor of the server's control words in the hello it sent {@code c}} */
    private byte[] controlWordsDescriptor(RdmaConnection c) {
        ByteBuffer hello = ByteBuffer.wrap(c.peerPrivateData());
        assertEquals('C', hello.get(0), "not a hello");
        assertTrue(hello.get(2) >= 3, "a hello of version " + hello.get(2) + " names no control words");
        int count = hello.get(3) & 0xff;
        hello.position(4);
        for (int j = 0; j < count; j++) {
            int n = hello.getShort() & 0xffff;
            hello.position(hello.position() + n);
        }
        int handshake = hello.get() & 0xff;
        hello.position(hello.position() + handshake);
        byte[] d = new byte[hello.get() & 0xff];
        assertEquals(rawDescriptorLength(), d.length, "the transport's raw descriptor of the control words");
        hello.get(d);
        return d;
    }

    private static byte[] le(long v) {
        return ByteBuffer.allocate(8).order(java.nio.ByteOrder.nativeOrder()).putLong(v).array();
    }

    private static long readWord(RdmaConnection c, PeerRegion words, long offset) {
        byte[] b = c.read(words, offset, 8).block(T);
        return ByteBuffer.wrap(b).order(java.nio.ByteOrder.nativeOrder()).getLong();
    }

    /** What a forger writes into its own connection's control words, given the count the server saw. */
    private record Forgery(String name, java.util.function.LongFunction<long[][]> writes) {
    }

    @Test
    void forgedControlWords_endOnlyTheForgersConnection_areCounted_andChangeNothingElse() {
        // The client writes into its OWN connection's control words on the server (it holds their
        // key with write access: the credit and goodbye words are written by RDMA): offset, value
        // pairs, given the credit count the server has seen. Each is what no cqflux peer can write.
        long goodbye = 0x6371_6678_2062_7965L;
        SecureRandom r = new SecureRandom();
        List<Forgery> forgeries = List.of(
                new Forgery("credits far beyond any receive queue", h -> new long[][] {{0, h + 1_000_000}}),
                new Forgery("credits going backwards", h -> new long[][] {{0, h - 1}}),
                new Forgery("a negative credit count", h -> new long[][] {{0, -5}}),
                new Forgery("'no receives' after a count", h -> new long[][] {{0, 0x8371_6678_206E_7278L}}),
                new Forgery("a goodbye word of impossible value", h -> new long[][] {{16, goodbye ^ 1}}),
                new Forgery("random bytes over all 40", h -> {
                    long[][] w = new long[5][];
                    for (int i = 0; i < 5; i++) {
                        w[i] = new long[] {8L * i, r.nextLong()};
                    }
                    return w;
                }));
        try (ControlWordRig rig = new ControlWordRig()) {
            RdmaConnection neighbourConn = trustedSide.connect(rig.neighbourSide.address()).block(T);
            try {
                long v = 0;
                for (Forgery f : forgeries) {
                    byte[] before = rig.snapshot();
                    long violations = rig.srv.serverStats().controlWordViolations();
                    // The forger posts receives, so that its own cqflux writes a count first.
                    RdmaConnection c = attacker.connect(rig.publicSide.address(),
                            ConnectOptions.defaults().withReceivePrefetch(4)).block(T);
                    PeerRegion words = c.remoteRegion(controlWordsDescriptor(c), RegionAccess.WRITE_DST,
                            RegionAccess.READ_SRC);
                    awaitTrue(() -> readWord(c, words, 0) > 0, () -> "the forger's cqflux granted no receive");
                    long h = readWord(c, words, 0);
                    // A keep-alive tick (every 100 ms) has read the honest count before the lie: the
                    // lie "no receives after a count" is one only to a server that saw the count.
                    // A second is room for a loop that a loaded host holds up.
                    Await.pause(Duration.ofSeconds(1));
                    // A liar keeps lying: the server ends a connection whose words read impossible at
                    // two checks in a row (PeerControl), and the forger's own cqflux may write an honest
                    // count in between, so the forgery is written again until the connection ends.
                    long until = System.nanoTime() + T.toNanos();
                    boolean ended;
                    do {
                        for (long[] w : f.writes().apply(h)) {
                            c.write(words, w[0], le(w[1])).onErrorResume(e -> reactor.core.publisher.Mono.empty())
                                    .block(T);
                        }
                        ended = c.onDispose().then(reactor.core.publisher.Mono.just(true))
                                .timeout(java.time.Duration.ofMillis(500), reactor.core.publisher.Mono.just(false))
                                .block(T);
                    } while (!ended && System.nanoTime() < until);
                    assertTrue(ended, f.name() + ": the forger's connection did not end within " + T);
                    List<ConnectionEvent> events = c.events().collectList().block(T);
                    assertTrue(events.contains(ConnectionEvent.LOST), f.name() + ": the forger's events " + events);
                    awaitTrue(() -> rig.srv.serverStats().controlWordViolations() == violations + 1,
                            () -> f.name() + ": not counted, " + rig.srv.serverStats());
                    assertArrayEquals(before, rig.snapshot(), f.name() + " changed the server's exposed memory");
                    awaitTrue(() -> rig.publicSide.stats().exposures() == 0 && rig.publicSide.stats().connections() == 0,
                            () -> f.name() + ": the forger's connection or keys outlived it " + rig.publicSide.stats());
                    // The neighbour, on the same server loop, writes and reads on.
                    byte[] b = ByteBuffer.allocate(8).putLong(++v).array();
                    StepVerifier.create(neighbourConn.write(neighbourConn.remoteRegion(0), 0, b)).expectComplete()
                            .verify(T);
                    StepVerifier.create(neighbourConn.read(neighbourConn.remoteRegion(0), 0, 8))
                            .assertNext(x -> assertArrayEquals(b, x)).expectComplete().verify(T);
                    assertFalse(neighbourConn.isDisposed(), "the neighbour ended");
                }
                assertEquals(forgeries.size(), rig.srv.serverStats().controlWordViolations(), "" + rig.srv.serverStats());
                assertEquals(1, rig.neighbourSide.stats().connections(), "the neighbour is still connected");
            } finally {
                neighbourConn.disposeNow(T);
            }
        }
        neighbourStillWorks();
    }

    @Test
    void aPlausibleCountAndAnHonestGoodbye_areNotViolations() {
        // What an honest peer may write: a count that grew (within any receive queue), and the
        // goodbye itself. Neither ends the connection nor is counted.
        try (ControlWordRig rig = new ControlWordRig()) {
            RdmaConnection c = attacker.connect(rig.publicSide.address(),
                    ConnectOptions.defaults().withReceivePrefetch(4)).block(T);
            try {
                PeerRegion words = c.remoteRegion(controlWordsDescriptor(c), RegionAccess.WRITE_DST,
                        RegionAccess.READ_SRC);
                awaitTrue(() -> readWord(c, words, 0) > 0, () -> "the client's cqflux granted no receive");
                // The server's side established first, so that a count of 0 below means it ended.
                awaitTrue(() -> rig.publicSide.stats().connections() == 1, () -> "" + rig.publicSide.stats());
                long h = readWord(c, words, 0);
                StepVerifier.create(c.write(words, 0, le(h + 10))).expectComplete().verify(T);
                Await.pause(Duration.ofMillis(500)); // several 100 ms ticks
                StepVerifier.create(c.read(c.remoteRegion(0), 0, 8)).assertNext(b -> assertEquals(0x66, b[0] & 0xff))
                        .expectComplete().verify(T);
                assertEquals(0, rig.srv.serverStats().controlWordViolations(), "" + rig.srv.serverStats());
                assertEquals(1, rig.publicSide.stats().connections());
            } finally {
                c.disposeNow(T);
            }
            assertEquals(0, rig.srv.serverStats().controlWordViolations(), "an orderly close counted: "
                    + rig.srv.serverStats());
        }
    }

    /**
     * A raw client's hello (version 3, no regions) with the attacker's handshake and, as its
     * control words, {@code words}: the server then grants it credits there, which a raw client
     * is free to ignore. The receive buffer size is not told.
     */
    private ByteBuffer helloNamingOwnControlWords(Region words) {
        byte[] raw = words.rawDescriptor();
        byte[] handshake = attacker.peerConfigurationDescriptor(); // tcp has none, rpma 1 byte
        ByteBuffer hello = ByteBuffer.allocate(4 + 1 + handshake.length + 1 + raw.length + 3);
        hello.put((byte) 'C').put((byte) 'Q').put((byte) 3).put((byte) 0); // version 3, no regions
        hello.put((byte) handshake.length).put(handshake);
        hello.put((byte) raw.length).put(raw); // control words: credits will be written here
        hello.putShort((short) 0).put((byte) 0); // receive buffer size not told; not readable
        return hello;
    }

    /**
     * A client that sends more messages than the server granted it receives for. Its hello (sent
     * as raw private data) names control words of its own, so the server grants it credits; its
     * connection is raw, so its sends ignore them. The server's application takes every message.
     */
    @Test
    void aPeerSendingBeyondItsCredits_isEndedAndCountedOrHeldBack_andTheNeighboursMessagesAllArrive() {
        int n = 400; // beyond the server's receive queue (128): the excess must wait for reposts
        java.util.Map<RdmaConnection, List<Long>> got = new java.util.concurrent.ConcurrentHashMap<>();
        try (ControlWordRig rig = new ControlWordRig(conn -> {
            // The server's application takes every message of every connection.
            List<Long> l = new CopyOnWriteArrayList<>();
            got.put(conn, l);
            conn.receive().subscribe(m -> l.add(ByteBuffer.wrap(m.data()).getLong()), e -> { });
        })) {
            RdmaConnection neighbourConn = trustedSide.connect(rig.neighbourSide.address()).block(T);
            Region words = attacker.register(ControlWordRig.fill(rig.mem, 0), RegionAccess.WRITE_DST);
            ByteBuffer hello = helloNamingOwnControlWords(words);
            String countersBefore = receiverNotReadyCounters();
            RdmaConnection c = attacker.connect(rig.publicSide.address(), ConnectOptions.rawPrivateData(hello.array()))
                    .block(T);
            try {
                reactor.core.publisher.Flux<Long> sends = reactor.core.publisher.Flux.range(0, n)
                        .concatMap(i -> c.send(ByteBuffer.allocate(8).putLong(0xBAD0_0000_0000_0000L | i).array())
                                .thenReturn(1L).onErrorResume(e -> reactor.core.publisher.Mono.empty()), 32);
                reactor.core.publisher.Flux<Long> honest = reactor.core.publisher.Flux.range(0, 50)
                        .concatMap(i -> neighbourConn.send(ByteBuffer.allocate(8).putLong(0x600D_0000_0000_0000L | i)
                                .array()).thenReturn(1L));
                StepVerifier.create(reactor.core.publisher.Flux.merge(sends, honest).count())
                        .assertNext(x -> assertTrue(x >= 50, "sends completed " + x)).expectComplete()
                        .verify(Duration.ofSeconds(30));
                awaitTrue(() -> got.entrySet().stream().anyMatch(e -> e.getValue().size() == 50
                        && e.getValue().getFirst() >> 48 == 0x600D), () -> "the neighbour's 50 messages: " + sizes(got));
                for (var e : got.entrySet()) {
                    List<Long> l = e.getValue();
                    if (!l.isEmpty() && l.getFirst() >> 48 == 0x600D) {
                        for (int i = 0; i < l.size(); i++) {
                            assertEquals(0x600D_0000_0000_0000L | i, l.get(i), "the neighbour's message " + i);
                        }
                    } else {
                        for (int i = 0; i < l.size(); i++) {
                            assertEquals(0xBAD0_0000_0000_0000L | i, l.get(i), "the offender's message " + i
                                    + " mis-delivered or out of order");
                        }
                    }
                }
                // Either the server caught a message beyond the grant (ended and counted), or the
                // transport held the excess back until receives were posted (all delivered, in order).
                awaitTrue(() -> rig.srv.serverStats().beyondCredits() == 1
                        || got.values().stream().anyMatch(l -> l.size() == n), () -> "neither ended nor all delivered: "
                        + rig.srv.serverStats() + " " + sizes(got));
                if (rig.srv.serverStats().beyondCredits() == 1) {
                    StepVerifier.create(c.onDispose()).expectComplete().verify(T);
                }
                System.out.println("FACT " + rig.srv.transportName() + ": a raw client sent " + n + " messages"
                        + " against a receive queue of 128 (the default) in a hello of " + hello.capacity()
                        + " bytes; beyondCredits " + rig.srv.serverStats().beyondCredits() + ", the server received "
                        + sizes(got) + ", the offender " + (c.isDisposed() ? "ended" : "still connected")
                        + (countersBefore.isEmpty() ? "" : "; NIC counters before " + countersBefore + ", after "
                        + receiverNotReadyCounters()));
                assertStillServed(neighbourConn);
            } finally {
                c.dispose();
                neighbourConn.disposeNow(T);
                words.close();
            }
        }
        neighbourStillWorks();
    }

    /**
     * A client that sends more than the server's receive queue holds while the server's application
     * asks for no message: the attacker's side does not end a connection whose posted receives are
     * all full ({@code withEndOnReceiveOverflow(false)}), so the sends beyond what is posted (at
     * most the queue) meet no posted receive (rpma: the responder answers with an RNR NAK and the sender's NIC
     * retries; tcp: the stream stalls). The neighbour's messages meanwhile arrive; once the
     * application asks, every message of the offender arrives in order, or it is ended and
     * counted as beyond its credits.
     */
    @Test
    void aPeerSendingIntoAFullReceiveQueue_isHeldBackOrEnded_andTheNeighboursMessagesArriveMeanwhile() {
        int n = 200; // beyond the server's receive queue (128): the excess finds no receive while held
        List<Long> offender = new CopyOnWriteArrayList<>();
        List<Long> fromNeighbour = new CopyOnWriteArrayList<>();
        List<reactor.core.publisher.BaseSubscriber<io.cqflux.reactor.Message>> held = new CopyOnWriteArrayList<>();
        try (ControlWordRig rig = new ControlWordRig(conn -> {
            reactor.core.publisher.BaseSubscriber<io.cqflux.reactor.Message> s =
                    new reactor.core.publisher.BaseSubscriber<>() {
                        @Override
                        protected void hookOnSubscribe(org.reactivestreams.Subscription subscription) {
                            // no demand until the test asks
                        }

                        @Override
                        protected void hookOnNext(io.cqflux.reactor.Message m) {
                            offender.add(ByteBuffer.wrap(m.data()).getLong());
                        }
                    };
            held.add(s);
            conn.receive().subscribe(s);
        }, conn -> conn.receive().subscribe(m -> fromNeighbour.add(ByteBuffer.wrap(m.data()).getLong()), e -> { }),
                false)) {
            RdmaConnection neighbourConn = trustedSide.connect(rig.neighbourSide.address()).block(T);
            Region words = attacker.register(ControlWordRig.fill(rig.mem, 0), RegionAccess.WRITE_DST);
            ByteBuffer hello = helloNamingOwnControlWords(words);
            String countersBefore = receiverNotReadyCounters();
            RdmaConnection c = attacker.connect(rig.publicSide.address(), ConnectOptions.rawPrivateData(hello.array()))
                    .block(T);
            try {
                java.util.concurrent.atomic.AtomicLong sent = new java.util.concurrent.atomic.AtomicLong();
                Disposable sending = reactor.core.publisher.Flux.range(0, n)
                        .concatMap(i -> c.send(ByteBuffer.allocate(8).putLong(0xBAD0_0000_0000_0000L | i).array())
                                .doOnSuccess(x -> sent.incrementAndGet()), 32)
                        .subscribe(x -> { }, e -> { });
                // The neighbour's messages arrive while the offender's wait.
                StepVerifier.create(reactor.core.publisher.Flux.range(0, 50)
                        .concatMap(i -> neighbourConn.send(ByteBuffer.allocate(8).putLong(0x600D_0000_0000_0000L | i)
                                .array())).then()).expectComplete().verify(T);
                awaitTrue(() -> fromNeighbour.size() == 50, () -> "the neighbour's messages: " + fromNeighbour.size());
                for (int i = 0; i < 50; i++) {
                    assertEquals(0x600D_0000_0000_0000L | i, fromNeighbour.get(i), "the neighbour's message " + i);
                }
                Await.pause(Duration.ofMillis(300)); // the offender meets the full queue
                assertTrue(offender.isEmpty(), "delivered without demand: " + offender.size());
                String countersHeld = receiverNotReadyCounters();
                long sentWhileHeld = sent.get();
                boolean endedWhileHeld = c.isDisposed();
                assertEquals(1, held.size(), "the offender's connection was not accepted once");
                long asked = System.nanoTime();
                held.getFirst().request(Long.MAX_VALUE);
                awaitTrue(() -> offender.size() == n || rig.srv.serverStats().beyondCredits() == 1,
                        () -> "neither all delivered nor ended: " + offender.size() + " delivered, "
                                + rig.srv.serverStats());
                long deliveredMs = (System.nanoTime() - asked) / 1_000_000;
                for (int i = 0; i < offender.size(); i++) {
                    assertEquals(0xBAD0_0000_0000_0000L | i, offender.get(i), "the offender's message " + i
                            + " mis-delivered or out of order");
                }
                if (rig.srv.serverStats().beyondCredits() == 1) {
                    StepVerifier.create(c.onDispose()).expectComplete().verify(T);
                }
                System.out.println("FACT " + rig.srv.transportName() + ": a raw client sent " + n + " messages into a"
                        + " server connection (receive queue 128) whose application asked for none for 300 ms: sends completed"
                        + " while held " + sentWhileHeld + ", offender ended while held " + endedWhileHeld
                        + "; then delivered " + offender.size() + " within " + deliveredMs + " ms, beyondCredits "
                        + rig.srv.serverStats().beyondCredits() + ", the offender "
                        + (c.isDisposed() ? "ended" : "still connected")
                        + (countersBefore.isEmpty() ? "" : "; NIC counters before " + countersBefore + ", held "
                        + countersHeld + ", after " + receiverNotReadyCounters()));
                sending.dispose();
                assertStillServed(neighbourConn);
            } finally {
                c.dispose();
                neighbourConn.disposeNow(T);
                words.close();
            }
        }
        neighbourStillWorks();
    }

    /** The neighbour's own connection is still up and reads from the region it was given. */
    private static void assertStillServed(RdmaConnection neighbourConn) {
        assertFalse(neighbourConn.isDisposed(), "the neighbour ended");
        StepVerifier.create(neighbourConn.read(neighbourConn.remoteRegion(0), 0, 8)).expectNextCount(1)
                .expectComplete().verify(T);
    }

    private static String sizes(java.util.Map<RdmaConnection, List<Long>> got) {
        return got.values().stream().map(l -> l.size() + (l.isEmpty() ? "" : l.getFirst() >> 48 == 0x600D
                ? " (neighbour)" : " (offender)")).toList().toString();
    }
}
