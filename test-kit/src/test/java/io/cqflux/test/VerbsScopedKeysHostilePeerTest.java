package io.cqflux.test;

import static io.cqflux.test.HostilePeerContract.awaitTrue;
import static io.cqflux.test.HostilePeerContract.exposedDescriptor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionException;
import io.cqflux.core.OperationFailedException;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.testing.RdmaResources;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.ConnectOptions;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.Isolated;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Keys scoped to their connection on fabric/verbs over Soft-RoCE (rxe), through the public API:
 * {@code AcceptOptions.withKeysScopedToConnection(true)} gives each accepted connection a protection
 * domain of its own, and the server's posts on it use registrations of the application's regions
 * and receive buffers in that domain (verbs has FI_MR_LOCAL). Lane only (tag {@code fabric-verbs});
 * server, trusted client and attacker are three instances of this JVM on the guest's one rxe
 * device.
 *
 * <p>The contract itself, its scoped-keys case included, runs on fabric/verbs in {@link
 * VerbsHostilePeerTest}; this class has what verbs adds beside a scoped-keys case of its own:
 * posts from the instance's regions on scoped connections, and the registrations' lifetimes,
 * counted on rxe0.
 *
 * <p>Counts the process's descriptors and rxe0's protection domains and memory regions
 * ({@code rdma resource show}): {@link Isolated}, and nothing else may use rxe0 meanwhile.
 */
@Tag("fabric-verbs")
@Tag("hostile-peer")
@Isolated
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class VerbsScopedKeysHostilePeerTest {

    static final Duration T = Duration.ofSeconds(20);
    static final int SIZE = 4096;

    final Arena arena = Arena.ofShared();
    final List<Disposable> subscriptions = new ArrayList<>();
    Cqflux server;
    Cqflux trustedSide;
    Cqflux attacker;

    Cqflux instance(String role) {
        return Cqflux.builder().transport(TransportChoice.FABRIC).fabricProvider("verbs")
                .localAddress(RpmaHostilePeerTest.address()).threadNamePrefix("cqflux-verbscope-" + role)
                .shutdownTimeout(Duration.ofSeconds(5)).build();
    }

    InetSocketAddress listenAddress() {
        return new InetSocketAddress(RpmaHostilePeerTest.address(), 0);
    }

    @BeforeAll
    void start() {
        server = instance("server");
        trustedSide = instance("trusted");
        attacker = instance("attacker");
    }

    @AfterAll
    void stop() {
        HostilePeerContract.tearDown(T, subscriptions, arena, attacker, trustedSide, server);
    }

    MemorySegment filled(int b) {
        MemorySegment m = arena.allocate(SIZE, 4096);
        m.fill((byte) b);
        return m;
    }

    /** Binds and keeps the server's side of every connection in {@code served}. */
    RdmaServer bind(AcceptOptions options, List<RdmaConnection> served) {
        RdmaServer s = server.bind(listenAddress(), options).block(T);
        subscriptions.add(s.connections().subscribe(served::add));
        return s;
    }

    /**
     * The raw descriptor (fabric/verbs: 4-byte key, virtual address, length) of region {@code i}
     * in the hello the server sent {@code c}: version 2 of RegionDescriptor, the key at offset 4,
     * the base at 8, the length in the low 56 bits at 16.
     */
    static byte[] leakedRaw(RdmaConnection c, int i) {
        byte[] d = exposedDescriptor(c, i);
        assertEquals(24, d.length, "fabric/verbs' descriptor in a hello");
        ByteBuffer b = ByteBuffer.wrap(d);
        return ByteBuffer.allocate(20).putInt(b.getInt(4)).putLong(b.getLong(8))
                .putLong(b.getLong(16) & 0x00ff_ffff_ffff_ffffL).array();
    }

    /** An attacker's client of {@code where} uses {@code raw} for a write or a read: it fails and its connection ends. */
    void presentFails(byte[] raw, InetSocketAddress where, boolean write) {
        RdmaConnection c = attacker.connect(where).block(T);
        try {
            PeerRegion p = c.remoteRegion(raw, write ? RegionAccess.WRITE_DST : RegionAccess.READ_SRC);
            Mono<?> op = write ? c.write(p, 0, new byte[] {1, 2, 3, 4, 5, 6, 7, 8}) : c.read(p, 0, 8);
            StepVerifier.create(op)
                    .expectErrorSatisfies(e -> assertTrue(e instanceof OperationFailedException
                            || e instanceof ConnectionException, () -> (write ? "write" : "read") + " on " + where
                            + ": " + e))
                    .verify(T);
            // rxe moves the queue pair to the error state: the connection ends.
            StepVerifier.create(c.onDispose()).expectComplete().verify(T);
        } finally {
            c.dispose();
        }
    }

    @Test
    void aKeyOfA_presentedOnTheSameBind_anotherScopedBind_andAnUnscopedOne_reachesNothing_andAGoesOn() {
        Region scopedRegion = server.register(filled(0x55), RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
        Region publicRegion = server.register(filled(0x22), RegionAccess.READ_SRC);
        List<RdmaConnection> served = new CopyOnWriteArrayList<>();
        AcceptOptions scoped = AcceptOptions.exposing(scopedRegion).withKeysScopedToConnection(true);
        RdmaServer s = bind(scoped, served);
        RdmaServer other = bind(scoped, served);
        RdmaServer unscoped = bind(AcceptOptions.exposing(publicRegion).withKeysScopedToConnection(false), served);
        RdmaConnection a = trustedSide.connect(s.address()).block(T);
        try {
            assertTrue(s.keysScopedToConnection(), "fabric/verbs offers scoped keys");
            byte[] leaked = leakedRaw(a, 0);
            byte[] before = scopedRegion.segment().toArray(ValueLayout.JAVA_BYTE);
            for (InetSocketAddress where : new InetSocketAddress[] {s.address(), other.address(), unscoped.address()}) {
                presentFails(leaked, where, true);
                presentFails(leaked, where, false);
            }
            assertArrayEquals(before, scopedRegion.segment().toArray(ValueLayout.JAVA_BYTE),
                    "A's key changed its region through another connection");
            // A goes on with its key: a write and a read back.
            byte[] mine = ByteBuffer.allocate(8).putLong(0x5C09_ED00_0000_0028L).array();
            StepVerifier.create(a.write(a.remoteRegion(0), 16, mine)).expectComplete().verify(T);
            StepVerifier.create(a.read(a.remoteRegion(0), 16, 8)).assertNext(r -> assertArrayEquals(mine, r))
                    .expectComplete().verify(T);
            // Ending A revokes its keys: its exposure is closed with its connection (and its
            // domain with it).
            a.disposeNow(T);
            awaitTrue(() -> s.stats().exposures() == 0, () -> "A's exposure was not revoked: " + s.stats());
        } finally {
            a.dispose();
            served.forEach(RdmaConnection::dispose);
            for (RdmaServer x : new RdmaServer[] {s, other, unscoped}) {
                x.disposeNow(T);
            }
            scopedRegion.close();
            publicRegion.close();
        }
    }

    @Test
    void aScopedConnection_writesReadsDurableWritesSendsAndReceives_fromApplicationRegionsAndTheSharedPool() {
        Region exposed = server.register(filled(0x11), RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
        Region appSrc = server.register(filled(0x5a), RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
        Region clientSide = trustedSide.register(filled(0), RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                RegionAccess.FLUSH_TYPE_VISIBILITY);
        List<RdmaConnection> served = new CopyOnWriteArrayList<>();
        // The server echoes every message: receives from its shared pool, sends from its buffers.
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.exposing(exposed).withKeysScopedToConnection(true)
                .withSharedReceivePool(), echoKeeping(served)).block(T);
        RdmaConnection c = trustedSide.connect(s.address(), ConnectOptions.exposing(clientSide)).block(T);
        try {
            assertTrue(s.keysScopedToConnection());
            awaitTrue(() -> served.size() == 1, () -> "the server's side: " + served);
            RdmaConnection sc = served.get(0);
            PeerRegion peer = sc.remoteRegion(0);
            // The server's application region as the source of a write, a durable write, and
            // the destination of a read.
            StepVerifier.create(sc.write(peer, 0, appSrc, 0, 64)).expectComplete().verify(T);
            StepVerifier.create(sc.durableWrite(peer, 64, appSrc, 64, 64)).expectComplete().verify(T);
            clientSide.segment().asSlice(1024, 8).fill((byte) 0x77);
            StepVerifier.create(sc.read(appSrc, 2048, peer, 1024, 8)).expectComplete().verify(T);
            assertEquals(0x5a, clientSide.segment().get(ValueLayout.JAVA_BYTE, 127) & 0xff, "the writes did not land");
            assertEquals(0x77, appSrc.segment().get(ValueLayout.JAVA_BYTE, 2055) & 0xff, "the read did not land");
            // The client on the server's exposure, and messages both ways.
            byte[] v = ByteBuffer.allocate(8).putLong(0x28L).array();
            StepVerifier.create(c.write(c.remoteRegion(0), 0, v)).expectComplete().verify(T);
            StepVerifier.create(c.read(c.remoteRegion(0), 0, 8)).assertNext(r -> assertArrayEquals(v, r))
                    .expectComplete().verify(T);
            for (int i = 0; i < 8; i++) {
                byte[] hello = ("scoped " + i).getBytes(StandardCharsets.UTF_8);
                StepVerifier.create(c.send(hello).thenMany(c.receive().take(1)))
                        .assertNext(m -> assertArrayEquals(hello, m.data())).expectComplete().verify(T);
            }
        } finally {
            c.disposeNow(T);
            served.forEach(RdmaConnection::dispose);
            s.disposeNow(T);
            exposed.close();
            appSrc.close();
            clientSide.close();
        }
    }

    @Test
    void aScopedConnectionsOwnReceivePool_isRegisteredOnce_inItsScope() {
        // Without the shared pool each connection that receives makes a pool of its own: on a
        // scoped connection it is registered in the connection's scope, so verbs posts its
        // receives as they are. Counted on rxe0 beside an unscoped connection of the same
        // instance: what a scoped one adds is its flush sink (the domain's, registered with the
        // connection; an unscoped one uses the instance's) and its registration of the buffer
        // pool its echo is sent from, not a second one of its receive pool.
        Region exposed = server.register(filled(0x33), RegionAccess.READ_SRC);
        List<RdmaConnection> served = new CopyOnWriteArrayList<>();
        Function<RdmaConnection, Publisher<Void>> echo = echoKeeping(served);
        RdmaServer plain = server.bind(listenAddress(), AcceptOptions.exposing(exposed)
                .withKeysScopedToConnection(false), echo).block(T);
        RdmaServer scoped = server.bind(listenAddress(), AcceptOptions.exposing(exposed)
                .withKeysScopedToConnection(true), echo).block(T);
        List<RdmaConnection> clients = new ArrayList<>();
        try {
            clients.add(echoed(plain)); // what the instances register once (buffer pools) is there before counting
            awaitTrue(() -> served.size() == 1, () -> "the server's side: " + served);
            int[] before = rxe0();
            clients.add(echoed(plain));
            awaitTrue(() -> served.size() == 2, () -> "the server's sides: " + served);
            int[] withPlain = rxe0();
            clients.add(echoed(scoped));
            awaitTrue(() -> served.size() == 3, () -> "the server's sides: " + served);
            int[] withScoped = rxe0();
            int plainMrs = withPlain[1] - before[1];
            int scopedMrs = withScoped[1] - withPlain[1];
            System.out.println("FACT verbs scoped keys: rxe0 memory regions per connection that echoed a message"
                    + " (both sides, one instance each): unscoped " + plainMrs + ", scoped " + scopedMrs);
            assertEquals(plainMrs + 2, scopedMrs, () -> "memory regions of an unscoped connection " + plainMrs
                    + ", of a scoped one " + scopedMrs + ": a scoped one should add only its flush sink and its"
                    + " buffer pool's registration in its scope");
        } finally {
            clients.forEach(c -> c.disposeNow(T));
            served.forEach(RdmaConnection::dispose);
            plain.disposeNow(T);
            scoped.disposeNow(T);
            exposed.close();
        }
    }

    /** {@return a handler that keeps the server's side of each connection in {@code served} and echoes what it receives} */
    static Function<RdmaConnection, Publisher<Void>> echoKeeping(List<RdmaConnection> served) {
        return c -> {
            served.add(c);
            return c.receive().concatMap(m -> c.send(m.data())).then();
        };
    }

    /** A trusted client of {@code s} that sent a message and got it back. */
    RdmaConnection echoed(RdmaServer s) {
        RdmaConnection c = trustedSide.connect(s.address()).block(T);
        byte[] hello = "echo".getBytes(StandardCharsets.UTF_8);
        StepVerifier.create(c.send(hello).thenMany(c.receive().take(1)))
                .assertNext(m -> assertArrayEquals(hello, m.data())).expectComplete().verify(T);
        return c;
    }

    @Test
    void closingARegionUsedOnScopedConnections_andEndingThem_leavesNoDescriptorDomainOrRegistration() {
        Region exposed = server.register(filled(0x33), RegionAccess.READ_SRC);
        List<RdmaConnection> served = new CopyOnWriteArrayList<>();
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.exposing(exposed).withKeysScopedToConnection(true)
                .withSharedReceivePool(), echoKeeping(served)).block(T);
        Region target = trustedSide.register(filled(0), RegionAccess.WRITE_DST);
        try {
            // A round first: what stays for the instances' lives (event queues, buffer pools, the
            // shared pool's chunks) is there before counting.
            round(s, served, target, 4);
            long fds = openFds();
            int[] rdma = rxe0();
            int[] during = round(s, served, target, 4);
            // What is counted moves: each scoped connection has a protection domain of its own,
            // with its exposure, control words, flush sink and the application's regions in it.
            assertTrue(during[0] >= rdma[0] + 4 && during[1] > rdma[1], () -> "rxe0's pd and mr counts before: "
                    + java.util.Arrays.toString(rdma) + ", with 4 scoped connections: "
                    + java.util.Arrays.toString(during));
            awaitTrue(() -> s.stats().exposures() == 0, () -> "exposures left: " + s.stats());
            awaitTrue(() -> openFds() <= fds, () -> "file descriptors left behind: " + fds + " before, "
                    + openFds() + " after");
            awaitTrue(() -> java.util.Arrays.equals(rxe0(), rdma), () -> "rxe0's protection domains and memory"
                    + " regions (pd, mr) before: " + java.util.Arrays.toString(rdma) + ", after: "
                    + java.util.Arrays.toString(rxe0()));
        } finally {
            served.forEach(RdmaConnection::dispose);
            s.disposeNow(T);
            exposed.close();
            target.close();
        }
    }

    /**
     * {@code n} clients of {@code s}; the server writes to each from one application region (one
     * registration of it per connection's domain), echoes a message of each, and closes that region
     * while the connections live; the connections go on with another region, then all end.
     *
     * @return rxe0's counts ({@link #rxe0()}) while the connections lived
     */
    int[] round(RdmaServer s, List<RdmaConnection> served, Region target, int n) {
        served.clear();
        Region appSrc = server.register(filled(0x44), RegionAccess.WRITE_SRC);
        Region other = server.register(filled(0x45), RegionAccess.WRITE_SRC);
        List<RdmaConnection> clients = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                RdmaConnection c = trustedSide.connect(s.address(), ConnectOptions.exposing(target)).block(T);
                clients.add(c);
                byte[] hello = ("round " + i).getBytes(StandardCharsets.UTF_8);
                StepVerifier.create(c.send(hello).thenMany(c.receive().take(1)))
                        .assertNext(m -> assertArrayEquals(hello, m.data())).expectComplete().verify(T);
            }
            awaitTrue(() -> served.size() == n, () -> "the server's sides: " + served);
            for (RdmaConnection sc : served) {
                StepVerifier.create(sc.write(sc.remoteRegion(0), 0, appSrc, 0, 64)).expectComplete().verify(T);
            }
            int[] during = rxe0();
            appSrc.close(); // its registrations in the n domains go with it
            for (RdmaConnection sc : served) {
                StepVerifier.create(sc.write(sc.remoteRegion(0), 64, other, 0, 64)).expectComplete().verify(T);
            }
            assertEquals(0x45, target.segment().get(ValueLayout.JAVA_BYTE, 127) & 0xff);
            return during;
        } finally {
            clients.forEach(c -> c.disposeNow(T));
            // isDisposed() turns true before the native close; onDispose() completes after it, so
            // that the next count of rxe0's objects sees none of this round's.
            for (RdmaConnection sc : served) {
                StepVerifier.create(sc.onDispose()).expectComplete().verify(T);
            }
            awaitTrue(() -> s.stats().exposures() == 0, () -> "exposures left after the round: " + s.stats());
            appSrc.close();
            other.close();
        }
    }

    private static long openFds() {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@return rxe0's protection domains and memory regions} Every instance of this JVM opens its domains on it. */
    static int[] rxe0() {
        return RdmaResources.protectionDomainsAndRegions("rxe0");
    }
}
