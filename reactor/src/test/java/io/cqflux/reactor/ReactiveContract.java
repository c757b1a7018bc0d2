package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionRecord;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.FlushType;
import io.cqflux.core.Opcode;
import io.cqflux.core.OperationFailedException;
import io.cqflux.core.QueueFullException;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.UnsupportedCapabilityException;
import io.cqflux.core.testing.FreePorts;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.util.context.Context;

/**
 * The reactive contract every transport must pass: each operation and failure path, through
 * StepVerifier, over a real connection. Subclasses pick the transport and the address.
 *
 * <p>Its tests that set Reactor's global {@code Hooks.onErrorDropped} or install virtual time
 * (which replaces every scheduler) are {@link ReactiveGlobalStateContract}'s, run on this class's
 * fixture: they hold JUnit's global lock, which JUnit takes for the whole class of a test that
 * holds it, so here they would make every subclass run alone where classes run concurrently (the
 * Soft-RoCE lane). The lock on the static shared instances ({@link #sharesInstances()}), which
 * the global-state classes hold too, keeps two classes from using them at once.
 */
@ResourceLock(ReactiveContract.SHARED_INSTANCES)
abstract class ReactiveContract {
    /** The lock over {@link #sharedServer} and {@link #sharedClient}, held by every subclass. */
    static final String SHARED_INSTANCES = "io.cqflux.reactor.ReactiveContract.sharedInstances";

    static final Duration T = Duration.ofSeconds(15);
    static final int SIZE = 64 * 1024;

    Cqflux server;
    Cqflux client;
    Arena arena;
    MemorySegment serverMem;
    Region serverRegion;
    RdmaServer srv;
    RdmaConnection conn;
    RdmaConnection serverConn;
    MemorySegment localMem;
    Region local;

    /**
     * The server and client instances of a class whose tests share them ({@link #sharesInstances()}),
     * made by its first test (or by the next one after a test disposed one) and closed after its last.
     */
    private static Cqflux sharedServer;
    private static Cqflux sharedClient;
    /** The class whose tests the shared instances serve. */
    private static Class<?> sharedOwner;

    /** {@return a builder for the transport under test (address, transport choice)} */
    abstract Cqflux.Builder builder();

    /**
     * {@return whether the class's tests share one server and one client instance} Each test still
     * binds its own server endpoint, registers its own regions and makes its own connection; after
     * it, the instances are handed to the next test only when they are back to what the test found
     * (no connection, server or region left, see {@link #tearDown()}), and closed otherwise. For a
     * transport whose instance is slow to build and close (the Soft-RoCE lane under TCG), where the
     * two instances per test cost more than most tests themselves.
     */
    boolean sharesInstances() {
        return false;
    }

    /** {@return where the server listens; port 0 where the transport reports the bound port} */
    abstract InetSocketAddress listenAddress();

    /** {@return whether the transport has 8-byte atomic writes (fabric/tcp does not)} */
    abstract boolean atomicWriteSupported();

    /**
     * {@return the flush accesses the server's region is registered with: what the memory behind
     * it really offers on this transport}
     */
    abstract RegionAccess[] serverFlushAccess();

    /**
     * Scales an iteration count to the transport's speed (Soft-RoCE under TCG emulation is some
     * hundred times slower than tcp on loopback).
     *
     * @param n the count on fabric
     * @return the count here
     */
    int rounds(int n) {
        return n;
    }

    @BeforeEach
    void setUp() {
        arena = Arena.ofShared();
        if (sharesInstances()) {
            // Static, so one class's instances must never serve another's tests: the class that
            // built them is remembered, and another class (another transport) builds its own.
            if (sharedOwner != getClass()) {
                closeShared();
                sharedOwner = getClass();
            }
            if (sharedServer == null || sharedServer.isDisposed()) {
                sharedServer = builder().build();
            }
            if (sharedClient == null || sharedClient.isDisposed()) {
                sharedClient = builder().build();
            }
            server = sharedServer;
            client = sharedClient;
        } else {
            server = builder().build();
            client = builder().build();
        }
        serverMem = arena.allocate(SIZE, 64);
        java.util.EnumSet<RegionAccess> access = java.util.EnumSet.of(RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                RegionAccess.SEND, RegionAccess.RECV, RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
        access.addAll(List.of(serverFlushAccess()));
        serverRegion = server.register(serverMem, access.toArray(RegionAccess[]::new));
        srv = server.bind(listenAddress(), serverRegion).block(T);
        conn = client.connect(srv.address()).block(T);
        // Keep subscribed: connections made later by tests must not be refused by the server.
        CompletableFuture<RdmaConnection> first = new CompletableFuture<>();
        srv.connections().subscribe(first::complete);
        serverConn = first.orTimeout(T.toMillis(), TimeUnit.MILLISECONDS).join();
        localMem = arena.allocate(SIZE, 64);
        local = client.register(localMem, RegionAccess.WRITE_SRC, RegionAccess.READ_DST, RegionAccess.SEND);
    }

    /**
     * Closes both instances, which fails the test when something is left that the shutdown cannot
     * release within its budget ({@link Cqflux#close()}). Instances shared by the class
     * ({@link #sharesInstances()}) are kept instead when the test's connection, server endpoint and
     * regions are released within {@link #T} and nothing else is left on either instance; after a
     * test that left a connection, server or region of its own open, or disposed an instance, they
     * are closed as above and the next test makes new ones. So every test starts from instances
     * with no connection, server or region.
     */
    @AfterEach
    void tearDown() {
        if (!sharesInstances() || !handedBack()) {
            if (sharesInstances()) {
                sharedServer = null;
                sharedClient = null;
            }
            try {
                if (client != null) {
                    client.close();
                }
            } finally {
                if (server != null) {
                    server.close();
                }
            }
        }
        arena.close();
    }

    /**
     * Releases what {@link #setUp()} made on the shared instances: {@return whether both are back
     * to no connection, server and region}
     */
    private boolean handedBack() {
        if (server == null || client == null || server.isDisposed() || client.isDisposed()) {
            return false;
        }
        List<Mono<Void>> ours = new ArrayList<>();
        // The client's side first, as Cqflux.close() of the client would: its orderly close ends
        // the server's side.
        if (conn != null) {
            conn.dispose();
            ours.add(conn.onDispose());
        }
        if (serverConn != null) {
            try {
                serverConn.onDispose().block(T);
            } catch (RuntimeException e) {
                serverConn.dispose();
            }
            ours.add(serverConn.onDispose());
        }
        if (srv != null) {
            srv.dispose();
            ours.add(srv.onDispose());
        }
        for (Region r : new Region[] {serverRegion, local}) {
            if (r != null) {
                r.close();
                ours.add(r.onClose());
            }
        }
        try {
            Mono.when(ours).block(T);
        } catch (RuntimeException e) {
            return false; // Cqflux.close() below names what is left
        }
        // What the test made itself and left (a connection, a server, a region) is not ours to end:
        // those instances go.
        return FaultRig.await(() -> server.openConnections() + client.openConnections() + server.openServers()
                + client.openServers() + server.openRegions() + client.openRegions() == 0, Duration.ofMillis(200));
    }

    @AfterAll
    static void closeSharedInstances() {
        closeShared();
    }

    private static void closeShared() {
        try {
            if (sharedClient != null) {
                sharedClient.close();
            }
        } finally {
            if (sharedServer != null) {
                sharedServer.close();
            }
            sharedClient = null;
            sharedServer = null;
        }
    }

    PeerRegion remote() {
        return conn.remoteRegion(0);
    }

    static void fillRandom(MemorySegment s, long seed) {
        Random r = new Random(seed);
        for (long i = 0; i < s.byteSize(); i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) r.nextInt());
        }
    }

    // ------------------------------------------------------------------ data path

    @Test
    void connect_exposesServerRegions_andReportsEstablished() {
        assertEquals(1, conn.remoteRegions().size());
        assertEquals(SIZE, remote().size());
        assertTrue(remote().access().contains(RegionAccess.WRITE_DST));
        StepVerifier.create(conn.events().take(1)).expectNext(ConnectionEvent.ESTABLISHED).expectComplete()
                .verify(T);
    }

    @Test
    void write_thenRead_roundTripsEveryByte() {
        fillRandom(localMem.asSlice(0, 4096), 1);
        StepVerifier.create(conn.write(remote(), 8192, local, 0, 4096)).expectComplete().verify(T);
        assertEquals(-1, serverMem.asSlice(8192, 4096).mismatch(localMem.asSlice(0, 4096)));
        localMem.asSlice(4096, 4096).fill((byte) 0);
        StepVerifier.create(conn.read(local, 4096, remote(), 8192, 4096)).expectComplete().verify(T);
        assertEquals(-1, localMem.asSlice(4096, 4096).mismatch(localMem.asSlice(0, 4096)));
    }

    @Test
    void durableWrite_completesAfterFlush_withDataInServerMemory() {
        fillRandom(localMem.asSlice(0, 1000), 2);
        StepVerifier.create(conn.durableWrite(remote(), 100, local, 0, 1000)).expectComplete().verify(T);
        assertEquals(-1, serverMem.asSlice(100, 1000).mismatch(localMem.asSlice(0, 1000)));
    }

    /**
     * A durable write of a region's last bytes completes on every transport, and so do flushes
     * ending there: librpma's emulated flush reads 8 bytes at the offset it is given
     * (its src/flush.c), which for such a range would pass the region's end, so the transport moves
     * that read inside the region; fabric's read-back stays inside the range.
     */
    @Test
    void durableWrite_ofTheRegionsLastBytes_andFlushesEndingThere_complete_withTheBytesInPlace() {
        long size = remote().size();
        localMem.asSlice(0, 4).fill((byte) 0x5a);
        serverMem.asSlice(size - 4, 4).fill((byte) 0);
        StepVerifier.create(conn.durableWrite(remote(), size - 4, local, 0, 4)).expectComplete().verify(T);
        assertEquals(-1, serverMem.asSlice(size - 4, 4).mismatch(localMem.asSlice(0, 4)), "the data did not land");
        localMem.asSlice(0, 1).fill((byte) 0x6b);
        StepVerifier.create(conn.durableWrite(remote(), size - 1, local, 0, 1)).expectComplete().verify(T);
        assertEquals((byte) 0x6b, serverMem.get(ValueLayout.JAVA_BYTE, size - 1));
        StepVerifier.create(conn.flush(remote(), size, 0, FlushType.VISIBILITY)).expectComplete().verify(T);
        StepVerifier.create(conn.flush(remote(), size - 3, 3, FlushType.VISIBILITY)).expectComplete().verify(T);
        StepVerifier.create(conn.flush(remote(), size - 8, 8, FlushType.VISIBILITY)).expectComplete().verify(T);
        assertFalse(conn.isDisposed());
    }

    @Test
    void register_persistentWithoutDeliverablePersistence_failsNamingTransportAndDeliverableTypes() {
        // Neither side declared direct write to persistent memory (fabric never delivers it):
        // the region is refused, never registered at VISIBILITY behind the caller's back.
        UnsupportedCapabilityException e = org.junit.jupiter.api.Assertions.assertThrows(
                UnsupportedCapabilityException.class, () -> client.register(arena.allocate(4096, 64),
                        RegionAccess.WRITE_DST, RegionAccess.FLUSH_TYPE_PERSISTENT));
        assertTrue(e.getMessage().contains(client.transportName()) && e.getMessage().contains("FLUSH_TYPE_PERSISTENT")
                && e.getMessage().contains("[VISIBILITY]"), e.getMessage());
        assertEquals(FlushType.VISIBILITY, remote().strongestFlush());
    }

    @Test
    void flush_ofEverySupportedType_completes() {
        for (FlushType t : remote().flushTypes()) {
            StepVerifier.create(conn.flush(remote(), 0, 4096, t)).expectComplete().verify(T);
        }
        assertFalse(remote().flushTypes().isEmpty());
    }

    @Test
    void operations_areCold_nothingPostedBeforeSubscription_andEachSubscriptionPostsAgain() {
        AtomicInteger seen = new AtomicInteger();
        Disposable monitor = conn.completions().subscribe(c -> seen.incrementAndGet());
        fillRandom(localMem.asSlice(0, 64), 3);
        Mono<Void> w = conn.write(remote(), 0, local, 0, 64);
        // A signaled operation after it proves the queue drained what came before.
        StepVerifier.create(conn.read(local, 1024, remote(), 4096, 8)).expectComplete().verify(T);
        assertEquals(1, seen.get(), "only the read was posted");
        assertEquals(0, serverMem.get(ValueLayout.JAVA_LONG, 0));
        StepVerifier.create(w.then(w)).expectComplete().verify(T);
        assertEquals(3, seen.get(), "two subscriptions posted twice");
        assertEquals(-1, serverMem.asSlice(0, 64).mismatch(localMem.asSlice(0, 64)));
        monitor.dispose();
    }

    /**
     * An operation Mono is its own first subscription (issue 13: nothing allocated from subscribe
     * to completion); two subscriptions of one Mono at the same time must still be two operations
     * with two subscribers, each signalled once.
     */
    @Test
    void oneMono_subscribedTwiceConcurrently_runsTwoIndependentOperations() throws Exception {
        AtomicInteger seen = new AtomicInteger();
        Disposable monitor = conn.completions().subscribe(c -> seen.incrementAndGet());
        int rounds = rounds(200);
        Tally tally = new Tally(2 * rounds);
        java.util.concurrent.ExecutorService two = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            for (int r = 0; r < rounds; r++) {
                Mono<Void> w = conn.write(remote(), 0, local, 0, 8);
                java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(2);
                int first = 2 * r;
                java.util.concurrent.Future<?> a = two.submit(() -> {
                    together.await();
                    tally.subscribe(first, w);
                    return null;
                });
                java.util.concurrent.Future<?> b = two.submit(() -> {
                    together.await();
                    tally.subscribe(first + 1, w);
                    return null;
                });
                a.get(T.toMillis(), TimeUnit.MILLISECONDS);
                b.get(T.toMillis(), TimeUnit.MILLISECONDS);
            }
            assertTrue(tally.awaitAll(T), tally.toString());
        } finally {
            two.shutdownNow();
        }
        assertEquals(0, tally.twice(), tally.toString());
        assertEquals(java.util.Map.of("complete", 2 * rounds), tally.kinds());
        // A signaled operation after them proves the queue drained what came before.
        StepVerifier.create(conn.read(local, 1024, remote(), 4096, 8)).expectComplete().verify(T);
        assertEquals(2 * rounds + 1, seen.get(), "every subscription posted once");
        monitor.dispose();
    }

    /**
     * The first subscription of a Mono owns the Mono's own instance: cancelling it, or failing it
     * with {@code request(0)}, must not touch a later subscription of the same Mono.
     */
    @Test
    void cancelledOrFailedFirstSubscription_leavesALaterOneOfTheSameMonoUnaffected() {
        Mono<Void> w = conn.write(remote(), 0, local, 0, 8);
        Disposable first = w.subscribe();
        first.dispose();
        StepVerifier.create(w).expectComplete().verify(T);

        Mono<Void> v = conn.write(remote(), 0, local, 0, 8);
        CompletableFuture<Throwable> refused = new CompletableFuture<>();
        v.subscribe(new reactor.core.CoreSubscriber<Void>() {
            @Override
            public void onSubscribe(org.reactivestreams.Subscription s) {
                s.request(0); // a protocol error (Reactive Streams 3.9): this subscription fails
            }

            @Override
            public void onNext(Void x) {
            }

            @Override
            public void onError(Throwable t) {
                refused.complete(t);
            }

            @Override
            public void onComplete() {
                refused.complete(null);
            }
        });
        assertInstanceOf(IllegalArgumentException.class, refused.orTimeout(T.toMillis(), TimeUnit.MILLISECONDS).join());
        StepVerifier.create(v).expectComplete().verify(T);
        StepVerifier.create(v.then(v)).expectComplete().verify(T);
    }

    @Test
    void completions_hotFlux_reportsSnapshots_andCostsNothingWithoutSubscribers() {
        assertEquals(0, conn.core().monitor.monitors());
        List<CompletionRecord> got = new ArrayList<>();
        StepVerifier.create(conn.completions().take(2).doOnNext(got::add))
                .then(() -> conn.write(remote(), 0, local, 0, 8).then(conn.read(local, 8, remote(), 0, 8)).subscribe())
                .expectNextCount(2).expectComplete().verify(T);
        assertEquals(Opcode.WRITE, got.get(0).opcode());
        assertEquals(Opcode.READ, got.get(1).opcode());
        assertEquals(0, conn.core().monitor.monitors(), "monitor flag cleared after cancel");
    }

    /**
     * The hot Flux buffers nothing: a subscriber without outstanding demand misses the records
     * completed meanwhile (the guide says so), and another subscriber with demand still gets
     * every one.
     */
    @Test
    void completions_subscriberWithoutDemand_missesRecords_whileOneWithDemandGetsEvery() {
        List<CompletionRecord> slow = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<CompletionRecord> all = new java.util.concurrent.CopyOnWriteArrayList<>();
        reactor.core.publisher.BaseSubscriber<CompletionRecord> one = new reactor.core.publisher.BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                request(1);
            }

            @Override
            protected void hookOnNext(CompletionRecord r) {
                slow.add(r);
            }
        };
        conn.completions().subscribe(one);
        Disposable every = conn.completions().subscribe(all::add);
        // A record reaches the subscribers on the loop before its operation's own signal.
        for (int i = 0; i < 4; i++) {
            StepVerifier.create(conn.write(remote(), 0, local, 0, 8)).expectComplete().verify(T);
        }
        one.request(1);
        StepVerifier.create(conn.read(local, 0, remote(), 0, 8)).expectComplete().verify(T);
        one.dispose();
        every.dispose();
        assertEquals(List.of(Opcode.WRITE, Opcode.WRITE, Opcode.WRITE, Opcode.WRITE, Opcode.READ),
                all.stream().map(CompletionRecord::opcode).toList());
        assertEquals(List.of(Opcode.WRITE, Opcode.READ), slow.stream().map(CompletionRecord::opcode).toList(),
                "the three writes completed without its demand are not kept for it");
    }

    // ------------------------------------------------------------------ checks before posting

    @Test
    void write_outOfRange_failsAsSignalNamingTheBound_withoutThrowingAtAssembly() {
        Mono<Void> m = conn.write(remote(), SIZE - 10, local, 0, 100);
        StepVerifier.create(m).expectErrorSatisfies(e -> {
            assertInstanceOf(IllegalArgumentException.class, e);
            assertTrue(e.getMessage().contains(String.valueOf(SIZE)), e.getMessage());
        }).verify(T);
        StepVerifier.create(conn.read(local, -1, remote(), 0, 8)).expectError(IllegalArgumentException.class).verify(T);
        StepVerifier.create(conn.write(remote(), 0, local, 0, 0)).expectError(IllegalArgumentException.class).verify(T);
    }

    @Test
    void localRegion_withoutNeededAccess_isRefusedBeforePosting() {
        Region readOnly = client.register(arena.allocate(64), RegionAccess.READ_DST);
        StepVerifier.create(conn.write(remote(), 0, readOnly, 0, 8))
                .expectErrorSatisfies(e -> assertTrue(e.getMessage().contains("WRITE_SRC"), e.getMessage()))
                .verify(T);
        StepVerifier.create(conn.send(readOnly, 0, 8)).expectError(IllegalArgumentException.class).verify(T);
    }

    @Test
    void atomicWrite_misaligned_isRefused_andUnsupportedTransportSaysSo() {
        StepVerifier.create(conn.atomicWrite(remote(), 4, 1L))
                .expectErrorSatisfies(e -> assertTrue(e.getMessage().contains("multiple of 8"), e.getMessage()))
                .verify(T);
        if (atomicWriteSupported()) {
            StepVerifier.create(conn.atomicWrite(remote(), 16, 0x0102030405060708L)).expectComplete().verify(T);
            assertEquals(0x0102030405060708L, serverMem.get(ValueLayout.JAVA_LONG, 16));
        } else {
            StepVerifier.create(conn.atomicWrite(remote(), 16, 1L))
                    .expectError(UnsupportedCapabilityException.class).verify(T);
        }
    }

    @Test
    void flush_nullType_andRegionFromAnotherConnection_areRefused() {
        StepVerifier.create(conn.flush(remote(), 0, 8, null)).expectError(IllegalArgumentException.class).verify(T);
        RdmaConnection other = client.connect(srv.address()).block(T);
        StepVerifier.create(conn.write(other.remoteRegion(0), 0, local, 0, 8))
                .expectErrorSatisfies(e -> assertTrue(e.getMessage().contains("not a region of the peer"), e.getMessage()))
                .verify(T);
    }

    @Test
    void regionOfAnotherInstance_exposedOrUsedLocally_isRefusedBeforeAnythingIsPosted() {
        // The server's region, handed to the client: its key means nothing on the client's side
        // (on fabric/tcp it may even equal a client region's key, so the peer's writes would land
        // in memory nobody exposed).
        StepVerifier.create(client.connect(srv.address(), serverRegion))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(IllegalArgumentException.class, e);
                    assertTrue(e.getMessage().contains("another Cqflux instance"), e.getMessage());
                })
                .verify(T);
        StepVerifier.create(client.bind(listenAddress(), serverRegion))
                .expectErrorSatisfies(e -> assertInstanceOf(IllegalArgumentException.class, e))
                .verify(T);
        // Refused on the subscribing thread, before a credit or a slot is taken.
        StepVerifier.create(conn.write(remote(), 0, serverRegion, 0, 8))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(IllegalArgumentException.class, e);
                    assertTrue(e.getMessage().contains("another Cqflux instance"), e.getMessage());
                })
                .verify(T);
        StepVerifier.create(conn.read(serverRegion, 0, remote(), 0, 8))
                .expectError(IllegalArgumentException.class).verify(T);
        assertEquals(0, serverRegion.inFlight());
        assertEquals(0, conn.inFlight());
        StepVerifier.create(conn.write(remote(), 0, local, 0, 8)).expectComplete().verify(T);
    }

    @Test
    void register_freedReadOnlyOrNullBearingArguments_areRefusedNamingWhat() {
        Arena gone = Arena.ofShared();
        MemorySegment freed = gone.allocate(4096, 64);
        gone.close();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> client.register(freed, RegionAccess.WRITE_SRC));
        assertTrue(e.getMessage().contains("freed"), e.getMessage());
        MemorySegment readOnly = arena.allocate(4096, 64).asReadOnly();
        for (RegionAccess writing : new RegionAccess[] {RegionAccess.READ_DST, RegionAccess.WRITE_DST,
                RegionAccess.RECV}) {
            e = assertThrows(IllegalArgumentException.class,
                    () -> client.register(readOnly, RegionAccess.WRITE_SRC, writing));
            assertTrue(e.getMessage().contains("read-only") && e.getMessage().contains(writing.name()), e.getMessage());
        }
        // What only reads the memory is fine on a read-only view.
        Region source = client.register(readOnly, RegionAccess.WRITE_SRC, RegionAccess.SEND, RegionAccess.READ_SRC);
        StepVerifier.create(conn.write(remote(), 0, source, 0, 8)).expectComplete().verify(T);
        source.close();
        e = assertThrows(IllegalArgumentException.class,
                () -> client.register(arena.allocate(64), RegionAccess.WRITE_SRC, null));
        assertTrue(e.getMessage().contains("access 1 of 2 is null"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> conn.remoteRegion(local.rawDescriptor(), RegionAccess.WRITE_DST, null));
        assertTrue(e.getMessage().contains("1 of 2 is null"), e.getMessage());
    }

    // ------------------------------------------------------------------ two-sided

    @Test
    void send_arrivesInPostedReceive_withExactBytes() {
        fillRandom(localMem.asSlice(0, 300), 4);
        byte[] expected = localMem.asSlice(0, 300).toArray(ValueLayout.JAVA_BYTE);
        StepVerifier.create(serverConn.receive().take(1))
                .then(() -> conn.send(local, 0, 300).subscribe())
                .assertNext(m -> {
                    assertEquals(Opcode.RECEIVE, m.opcode());
                    assertEquals(300, m.length());
                    assertTrue(java.util.Arrays.equals(expected, m.data()));
                    assertFalse(m.hasImmediate());
                }).expectComplete().verify(T);
    }

    @Test
    void send_longerThanThePeersReceiveBuffer_isRefusedBeforePosting_andTheConnectionCarriesOn() {
        // The server told its receive buffer size (the default 4096) in its hello.
        Region big = client.register(arena.allocate(8192, 64), RegionAccess.SEND);
        for (Mono<Void> tooLong : List.of(conn.send(big, 0, 4097), conn.sendWithImmediate(big, 0, 8192, 1),
                conn.send(new byte[5000]))) {
            StepVerifier.create(tooLong)
                    .expectErrorSatisfies(e -> {
                        assertInstanceOf(IllegalArgumentException.class, e);
                        assertTrue(e.getMessage().contains("receive buffer of 4096 bytes"), e.getMessage());
                    })
                    .verify(T);
        }
        assertEquals(0, conn.inFlight());
        StepVerifier.create(serverConn.receive().next().map(Message::data))
                .then(() -> conn.send(big, 0, 4096).subscribe())
                .assertNext(d -> assertEquals(4096, d.length))
                .expectComplete().verify(T);
    }

    /**
     * Memory of a confined arena may be accessed by its owner thread only, but the library
     * registers an exposed region again for each accepted connection, and posts, on threads of
     * its own: a region of such memory serves every operation as any other (the NIC never asks
     * which thread owns it).
     */
    @Test
    void regionsOfConfinedArenas_serveExposuresAndOperationsOnTheLibrarysThreads() {
        try (Arena confined = Arena.ofConfined()) {
            MemorySegment exposedMem = confined.allocate(4096, 64);
            MemorySegment localConfined = confined.allocate(4096, 64);
            Region exposed = server.register(exposedMem, RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
            Region mine = client.register(localConfined, RegionAccess.WRITE_SRC, RegionAccess.READ_DST,
                    RegionAccess.SEND, RegionAccess.RECV);
            RdmaServer s = server.bind(listenAddress(), exposed).block(T);
            assertNotNull(s);
            CompletableFuture<RdmaConnection> accepted = new CompletableFuture<>();
            s.connections().subscribe(accepted::complete);
            RdmaConnection c = client.connect(s.address()).block(T);
            assertNotNull(c);
            RdmaConnection sc = accepted.orTimeout(T.toMillis(), TimeUnit.MILLISECONDS).join();
            localConfined.set(ValueLayout.JAVA_LONG, 0, 0x0C0F_13EDL);
            c.write(c.remoteRegion(0), 64, mine, 0, 8).then(c.read(mine, 8, c.remoteRegion(0), 64, 8)).block(T);
            assertEquals(0x0C0F_13EDL, exposedMem.get(ValueLayout.JAVA_LONG, 64), "the write landed");
            assertEquals(0x0C0F_13EDL, localConfined.get(ValueLayout.JAVA_LONG, 8), "the read landed");
            StepVerifier.create(sc.receive(InboundMessage::length).take(1))
                    .then(() -> c.send(mine, 0, 16).subscribe())
                    .expectNext(16L).expectComplete().verify(T);
            c.dispose();
            c.onDispose().block(T);
            s.dispose();
            exposed.close();
            mine.close();
            exposed.onClose().block(T);
            mine.onClose().block(T);
        }
    }

    @Test
    void sendWithImmediate_andWriteWithImmediate_deliverTheValueInHostOrder() {
        fillRandom(localMem.asSlice(0, 64), 5);
        StepVerifier.create(serverConn.receive(msg -> msg.immediate() + ":" + msg.opcode()).take(2))
                .then(() -> conn.sendWithImmediate(local, 0, 16, 0xCAFEBABE)
                        .then(conn.writeWithImmediate(remote(), 512, local, 0, 64, 0x01020304)).subscribe())
                .expectNext(0xCAFEBABE + ":" + Opcode.RECEIVE)
                .expectNext(0x01020304 + ":" + Opcode.RECEIVE_WRITE_WITH_IMMEDIATE)
                .expectComplete().verify(T);
        assertEquals(-1, serverMem.asSlice(512, 64).mismatch(localMem.asSlice(0, 64)));
    }

    @Test
    void receive_demandPostsBuffers_soMessagesNeverExceedRequests() {
        StepVerifier.create(serverConn.receive(InboundMessage::length), 0)
                .expectSubscription()
                .then(() -> conn.send(local, 0, 1).then(conn.send(local, 0, 2)).subscribe())
                .expectNoEvent(Duration.ofMillis(50))
                .thenRequest(1).expectNext(1L)
                .thenRequest(1).expectNext(2L)
                .thenCancel().verify(T);
    }

    // ------------------------------------------------------------------ receive side: credits, backlog, absent receivers

    /** Bytes of a numbered test message. */
    static final int MSG = 64;

    /** {@return byte {@code k} of numbered message {@code id} (after its 4-byte id)} */
    static byte pattern(int id, int k) {
        return (byte) (id * 31 + k * 7 + 1);
    }

    /**
     * Writes numbered message {@code id} into its own slot of the client's source region and
     * returns its (cold) send. Ids below {@code SIZE / MSG} never share a slot.
     */
    Mono<Void> sendNumbered(int id) {
        long off = (long) (id % (SIZE / MSG)) * MSG;
        MemorySegment s = localMem.asSlice(off, MSG);
        s.set(ValueLayout.JAVA_INT_UNALIGNED, 0, id);
        for (int k = 4; k < MSG; k++) {
            s.set(ValueLayout.JAVA_BYTE, k, pattern(id, k));
        }
        return conn.send(local, off, MSG);
    }

    /** {@return the id of a numbered message, after checking its opcode, length and every byte} */
    static int idOf(Message m) {
        assertEquals(Opcode.RECEIVE, m.opcode());
        assertEquals(MSG, m.length());
        assertEquals(MSG, m.data().length);
        int id = MemorySegment.ofArray(m.data()).get(ValueLayout.JAVA_INT_UNALIGNED, 0);
        for (int k = 4; k < MSG; k++) {
            assertEquals(pattern(id, k), m.data()[k], "byte " + k + " of message " + id);
        }
        return id;
    }

    /** {@return what the receive side of {@code c} keeps for its next subscriber, read on its loop} */
    static int backlogOf(RdmaConnection c) {
        CompletableFuture<Integer> f = new CompletableFuture<>();
        c.core().runOnLoop(() -> f.complete(c.core().receiver.backlog()));
        return f.orTimeout(T.toMillis(), TimeUnit.MILLISECONDS).join();
    }

    /** {@return whether nothing of {@code t} terminated within {@code d} (a bounded wait)} */
    static boolean stillPending(Tally t, Duration d) {
        return !FaultRig.await(() -> t.terminated() > 0, d);
    }

    /** Still pending after this long counts as "waits" (the credit re-read runs every 1 ms). */
    static final Duration HELD = Duration.ofMillis(200);

    /**
     * The old bug: {@code next()} requests unbounded demand, takes one message and cancels; the
     * receives it left posted must keep what lands in them for the next subscriber.
     */
    @Test
    void receive_nextTwice_getsConsecutiveMessages_nothingLost() {
        int n = 10;
        Tally sends = new Tally(n);
        for (int i = 0; i < n; i++) {
            sends.subscribe(i, sendNumbered(i));
        }
        for (int i = 0; i < n; i++) {
            Message m = serverConn.receive().next().block(T);
            assertNotNull(m, "next() #" + i);
            assertEquals(i, idOf(m), "next() #" + i);
        }
        assertTrue(sends.awaitAll(T), sends.toString());
        assertEquals(java.util.Map.of("complete", n), sends.kinds());
        assertEquals(0, backlogOf(serverConn));
    }

    @Test
    void send_withNoReceiver_waitsForACredit_andArrivesOnceSubscribed() {
        int n = 8;
        Tally sends = new Tally(n);
        for (int i = 0; i < n; i++) {
            sends.subscribe(i, sendNumbered(i));
        }
        // A message waits for the peer's credit in its own queue: a write behind it goes through.
        StepVerifier.create(conn.write(remote(), 0, local, SIZE - 64, 64)).expectComplete().verify(T);
        assertTrue(stillPending(sends, HELD), "a send completed with nobody receiving: " + sends);
        assertEquals(n, sends.unterminated());
        long t0 = System.nanoTime();
        List<Integer> ids = serverConn.receive().take(n).map(ReactiveContract::idOf).collectList().block(T);
        assertTrue(sends.awaitAll(T), sends.toString());
        long took = System.nanoTime() - t0;
        assertEquals(java.util.stream.IntStream.range(0, n).boxed().toList(), ids);
        assertEquals(java.util.Map.of("complete", n), sends.kinds());
        System.out.printf("FACT %s: %d sends held for a credit; subscribe to all arrived and completed: %.2f ms%n",
                client.transportName(), n, took / 1e6);
    }

    @Test
    void send_cancelledWhileWaitingForACredit_isNeverSent() {
        Tally sends = new Tally(3);
        sends.subscribe(0, sendNumbered(0));
        sends.subscribe(1, sendNumbered(1));
        sends.subscribe(2, sendNumbered(2));
        assertTrue(stillPending(sends, Duration.ofMillis(50)));
        sends.cancel(1);
        FaultRig.drainLoop(conn);
        StepVerifier.create(serverConn.receive().map(ReactiveContract::idOf), 3)
                .expectNext(0, 2)
                .expectNoEvent(Duration.ofMillis(100))
                .thenCancel().verify(T);
        assertTrue(FaultRig.await(() -> sends.terminated() == 2, T), sends.toString());
        assertEquals(0, backlogOf(serverConn));
    }

    /**
     * Credits are the receives posted for demand: a sender never completes more sends than the
     * receiver has asked for, however many it issues at once, and the receiver gets them in order.
     */
    @Test
    void slowReceiver_holdsSendersBack_neverMoreInFlightThanItsDemand() throws Exception {
        int n = 30;
        AtomicLong requested = new AtomicLong();
        AtomicLong completed = new AtomicLong();
        AtomicLong worstExcess = new AtomicLong(Long.MIN_VALUE);
        List<Integer> ids = java.util.Collections.synchronizedList(new ArrayList<>());
        long[] requestedAt = new long[n + 1];
        long[] arrivedAt = new long[n];
        CountDownLatch received = new CountDownLatch(n);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        reactor.core.publisher.BaseSubscriber<Message> slow = new reactor.core.publisher.BaseSubscriber<Message>() {
            void askOne() {
                requestedAt[(int) requested.get()] = System.nanoTime();
                requested.incrementAndGet(); // counted before it is asked: a lower bound everywhere
                request(1);
            }

            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                askOne();
            }

            @Override
            protected void hookOnNext(Message m) {
                arrivedAt[ids.size()] = System.nanoTime();
                ids.add(idOf(m));
                received.countDown();
                if (ids.size() < n) {
                    Schedulers.parallel().schedule(this::askOne, 10, TimeUnit.MILLISECONDS);
                }
            }

            @Override
            protected void hookOnError(Throwable t) {
                failure.set(t);
            }
        };
        serverConn.receive().subscribe(slow);
        Tally sends = new Tally(n);
        for (int i = 0; i < n; i++) {
            sends.subscribe(i, sendNumbered(i).doOnSuccess(v -> {
                long excess = completed.incrementAndGet() - requested.get();
                worstExcess.accumulateAndGet(excess, Math::max);
            }));
        }
        assertTrue(received.await(T.toMillis(), TimeUnit.MILLISECONDS), "received " + ids + ", " + failure.get());
        assertTrue(sends.awaitAll(T), sends.toString());
        slow.dispose();
        assertEquals(java.util.stream.IntStream.range(0, n).boxed().toList(), ids);
        assertEquals(java.util.Map.of("complete", n), sends.kinds());
        assertTrue(worstExcess.get() <= 0, "a send completed " + worstExcess.get()
                + " beyond the receiver's demand");
        long worst = 0;
        long sum = 0;
        for (int i = 1; i < n; i++) {
            long lat = arrivedAt[i] - requestedAt[i];
            worst = Math.max(worst, lat);
            sum += lat;
        }
        System.out.printf("FACT %s: starved sender, request(1) -> message delivered: mean %.2f ms, worst %.2f ms"
                + " over %d; sends completed minus demand at worst %d%n", client.transportName(),
                sum / 1e6 / (n - 1), worst / 1e6, n - 1, worstExcess.get());
    }

    @Test
    void resubscribingReceiver_getsWhatArrivedMeanwhile_inOrder() {
        Tally sends = new Tally(7);
        sends.subscribe(0, sendNumbered(0));
        sends.subscribe(1, sendNumbered(1));
        // requests 5 (five receives posted, five credits), takes 2 and leaves
        StepVerifier.create(serverConn.receive().map(ReactiveContract::idOf), 5)
                .expectNext(0, 1).thenCancel().verify(T);
        // three more land in the receives it left posted: kept, their sends complete
        for (int i = 2; i < 5; i++) {
            sends.subscribe(i, sendNumbered(i));
        }
        assertTrue(FaultRig.await(() -> sends.terminated() == 5, T), sends.toString());
        assertTrue(FaultRig.await(() -> backlogOf(serverConn) == 3, T), "backlog " + backlogOf(serverConn));
        // no credit is left: these wait for the next subscriber
        Tally later = new Tally(2);
        later.subscribe(0, sendNumbered(5));
        later.subscribe(1, sendNumbered(6));
        assertTrue(stillPending(later, HELD), "a send beyond the posted receives completed: " + later);
        StepVerifier.create(serverConn.receive().map(ReactiveContract::idOf), 5)
                .expectNext(2, 3, 4)
                .expectNext(5, 6)
                .thenCancel().verify(T);
        assertTrue(later.awaitAll(T), later.toString());
        assertEquals(java.util.Map.of("complete", 5), sends.kinds());
        assertEquals(java.util.Map.of("complete", 2), later.kinds());
    }

    /**
     * Messages that arrived while nobody was receiving are not lost when the peer then closes in
     * order: the next subscriber gets them, then completion.
     */
    @Test
    void peerClosesInOrder_messagesKeptForNobody_areDeliveredBeforeCompletion() {
        Tally first = new Tally(1);
        first.subscribe(0, sendNumbered(0));
        // four receives posted (four credits); the receiver takes one and leaves
        StepVerifier.create(serverConn.receive().map(ReactiveContract::idOf), 4)
                .expectNext(0).thenCancel().verify(T);
        Tally sends = new Tally(3);
        for (int i = 1; i < 4; i++) {
            sends.subscribe(i - 1, sendNumbered(i));
        }
        assertTrue(sends.awaitAll(T), sends.toString());
        assertTrue(FaultRig.await(() -> backlogOf(serverConn) == 3, T), "backlog " + backlogOf(serverConn));
        conn.dispose(); // the peer (this client) closes in order
        StepVerifier.create(serverConn.events().filter(ConnectionEvent::isTerminal).take(1))
                .expectNext(ConnectionEvent.CLOSED).expectComplete().verify(T);
        StepVerifier.create(serverConn.receive().map(ReactiveContract::idOf), 1)
                .expectNext(1)
                .thenRequest(2)
                .expectNext(2, 3)
                .expectComplete()
                .verify(T);
    }

    /** {@return whether a peer's write-with-immediate consumes one of this side's posted receives} */
    abstract boolean notificationConsumesReceive();

    /**
     * {@return what a write-with-immediate notification reports as its length for
     * {@code written} bytes: the bytes written, or -1 where the transport cannot tell}
     */
    abstract long notificationLength(long written);

    @Test
    void notification_beforeAnyoneSubscribes_isKept_andDeliveredOnSubscribe() {
        int len = 128;
        fillRandom(localMem.asSlice(0, len), 11);
        Tally w = new Tally(1);
        w.subscribe(0, conn.writeWithImmediate(remote(), 1024, local, 0, len, 0x5EED_0001));
        if (notificationConsumesReceive()) {
            // it needs a posted receive: credit-controlled like a send
            assertTrue(stillPending(w, HELD), "a write-with-immediate completed with no receive posted: " + w);
        } else {
            // it needs none: it completes, and the notification is kept for the subscriber
            assertTrue(w.awaitAll(T), w.toString());
            assertTrue(FaultRig.await(() -> backlogOf(serverConn) == 1, T), "backlog " + backlogOf(serverConn));
        }
        StepVerifier.create(serverConn.receive().take(1))
                .assertNext(m -> {
                    assertEquals(Opcode.RECEIVE_WRITE_WITH_IMMEDIATE, m.opcode());
                    assertTrue(m.hasImmediate());
                    assertEquals(0x5EED_0001, m.immediate());
                    assertEquals(notificationLength(len), m.length());
                    assertEquals(0, m.data().length);
                }).expectComplete().verify(T);
        assertTrue(w.awaitAll(T), w.toString());
        assertEquals(java.util.Map.of("complete", 1), w.kinds());
        assertEquals(-1, serverMem.asSlice(1024, len).mismatch(localMem.asSlice(0, len)));
    }

    @Test
    void notifications_andMessages_keptForAnAbsentReceiver_arriveInOrderOfArrival() {
        // Sends need credits: a first subscriber posts 4 receives and leaves.
        StepVerifier.create(serverConn.receive(), 4).expectSubscription()
                .then(() -> FaultRig.drainLoop(serverConn)) // attached, its receives posted
                .thenCancel().verify(T);
        fillRandom(localMem.asSlice(SIZE - 256, 256), 12);
        List<Mono<Void>> ops = List.of(sendNumbered(0),
                conn.writeWithImmediate(remote(), 0, local, SIZE - 256, 32, 7),
                sendNumbered(1),
                conn.writeWithImmediate(remote(), 64, local, SIZE - 256, 32, 8));
        // One after the other: each lands before the next is posted, so the order is known.
        StepVerifier.create(Flux.concat(ops)).expectComplete().verify(T);
        assertTrue(FaultRig.await(() -> backlogOf(serverConn) == 4, T), "backlog " + backlogOf(serverConn));
        StepVerifier.create(serverConn.receive(m -> m.opcode() == Opcode.RECEIVE ? "m" + idOf(m.copy())
                        : "n" + m.immediate()).take(4))
                .expectNext("m0", "n7", "m1", "n8").expectComplete().verify(T);
    }

    /**
     * Cancel storms on both sides leave the credits exact: once everything settled, an absent
     * receiver's posted receives take exactly as many sends as there are receives, the next send
     * waits, and a subscriber then gets all of them in order.
     */
    @Test
    void credits_afterCancelStormsAndResubscribes_stayExact_nothingLeaks() throws Exception {
        int storm = rounds(300);
        Tally kept = new Tally(storm);
        Tally dropped = new Tally(storm);
        AtomicReference<Throwable> receiveFailure = new AtomicReference<>();
        // Every message reaches a subscriber, or - handed to one at the instant it cancelled from
        // another thread - Reactor's discard hook; never nowhere.
        List<Integer> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Integer> discarded = new java.util.concurrent.CopyOnWriteArrayList<>();
        Thread receiver = Thread.ofPlatform().start(() -> {
            java.util.concurrent.ThreadLocalRandom r = java.util.concurrent.ThreadLocalRandom.current();
            for (int k = 0; k < 20; k++) {
                Disposable d = serverConn.receive().doOnDiscard(Message.class, m -> discarded.add(idOf(m)))
                        .map(ReactiveContract::idOf).subscribe(got::add, receiveFailure::set);
                // an unbounded subscriber cancelled from another thread at a random moment
                java.util.concurrent.locks.LockSupport.parkNanos(r.nextLong(200_000, 3_000_000));
                d.dispose();
            }
        });
        for (int i = 0; i < storm; i++) {
            if (i % 3 == 2) {
                kept.subscribe(i, sendNumbered(i));
            } else {
                int id = i;
                dropped.subscribe(i, sendNumbered(i));
                Schedulers.parallel().schedule(() -> dropped.cancel(id));
            }
        }
        receiver.join(T.toMillis());
        assertEquals(null, receiveFailure.get());
        // Settle: an unbounded subscriber takes what was kept and what still arrives, up to a
        // marker sent last; ids only grow (order), every byte is checked, no kept send is missing.
        int marker = storm;
        Disposable settle = serverConn.receive().map(ReactiveContract::idOf)
                .subscribe(got::add, receiveFailure::set);
        sendNumbered(marker).subscribe();
        assertTrue(FaultRig.await(() -> got.contains(marker), T), "the marker did not arrive: " + got);
        assertTrue(kept.awaitAll(T), kept.toString());
        assertEquals(java.util.Map.of("complete", kept.subscribed()), kept.kinds());
        for (int i = 1; i < got.size(); i++) {
            assertTrue(got.get(i) > got.get(i - 1), "out of order at " + i + ": " + got);
        }
        for (int i = 2; i < storm; i += 3) {
            assertTrue(got.contains(i) || discarded.contains(i), "send " + i + " completed but never arrived: "
                    + got + ", discarded " + discarded);
        }
        assertEquals(null, receiveFailure.get());
        // The settled subscriber keeps every buffer of the pool posted; it leaves, and exactly that
        // many sends go through with nobody receiving: one credit more or less would show here.
        settle.dispose();
        FaultRig.drainLoop(serverConn);
        int depth = serverConn.core().config.receiveQueueSize();
        int first = marker + 1;
        Tally after = new Tally(depth);
        for (int i = 0; i < depth; i++) {
            after.subscribe(i, sendNumbered(first + i));
        }
        assertTrue(after.awaitAll(T), "a credit leaked: " + after + " of " + depth + " posted receives took a send");
        Tally beyond = new Tally(1);
        beyond.subscribe(0, sendNumbered(first + depth));
        assertTrue(stillPending(beyond, HELD), "a send beyond the posted receives completed");
        assertTrue(FaultRig.await(() -> backlogOf(serverConn) == depth, T), "backlog " + backlogOf(serverConn));
        List<Integer> rest = serverConn.receive().map(ReactiveContract::idOf).take(depth + 1).collectList().block(T);
        assertEquals(java.util.stream.IntStream.rangeClosed(first, first + depth).boxed().toList(), rest);
        assertTrue(beyond.awaitAll(T), beyond.toString());
        System.out.printf("FACT %s: cancel storm of %d sends (%d cancelled), 20 receive subscribers cancelled"
                + " mid-stream: %d messages arrived, %d handed to a cancelling subscriber (discarded), credits exact"
                + " afterwards (%d of %d)%n", client.transportName(), storm, dropped.subscribed(), got.size(),
                discarded.size(), depth, depth);
    }

    // ------------------------------------------------------------------ backpressure and credits

    @Test
    void pendingQueueFull_failsTheOverflowingOperation_namingTheLimit() {
        try (Cqflux small = builder().connectionConfig(client.connectionConfig().withSendQueueSize(2)).pendingLimit(1)
                .build()) {
            Region src = small.register(arena.allocate(64, 64), RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
            RdmaConnection c = small.connect(srv.address()).block(T);
            PeerRegion r = c.remoteRegion(0);
            // Subscribe all ten inside one loop callback, so no completion can free a credit between them.
            Flux<String> outcomes = c.read(src, 0, r, 0, 8)
                    .then(Mono.fromCallable(() -> c))
                    .flatMapMany(x -> Flux.range(0, 10).flatMap(i -> c.write(r, 8L * i, src, 0, 8)
                            .thenReturn("ok").onErrorResume(QueueFullException.class,
                                    e -> Mono.just("full:" + e.limit())), 10));
            List<String> got = outcomes.collectList().block(T);
            assertNotNull(got);
            assertEquals(10, got.size());
            assertEquals(3, got.stream().filter("ok"::equals).count(), got.toString());
            assertEquals(7, got.stream().filter("full:1"::equals).count(), got.toString());
        }
    }

    @Test
    void pendingQueueFull_theRefusedOperationsRegion_isReleasedBeforeItsSubscriberHears() {
        try (Cqflux small = builder().connectionConfig(client.connectionConfig().withSendQueueSize(2)).pendingLimit(1)
                .build()) {
            Region src = small.register(arena.allocate(64, 64), RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
            Region refusedSrc = small.register(arena.allocate(64, 64), RegionAccess.WRITE_SRC);
            RdmaConnection c = small.connect(srv.address()).block(T);
            PeerRegion r = c.remoteRegion(0);
            java.util.concurrent.atomic.AtomicLong inFlightAtError = new java.util.concurrent.atomic.AtomicLong(-1);
            // Inside one loop callback: two writes take the credits, one waits (pendingLimit 1),
            // the fourth, the only user of refusedSrc, is refused.
            Flux<String> outcomes = c.read(src, 0, r, 0, 8).thenMany(Flux.range(0, 4).flatMap(i -> {
                Region from = i == 3 ? refusedSrc : src;
                return c.write(r, 8L * i, from, 0, 8).thenReturn("ok").onErrorResume(QueueFullException.class, e -> {
                    inFlightAtError.set(from.inFlight());
                    return Mono.just("full:" + i);
                });
            }, 4));
            List<String> got = outcomes.collectList().block(T);
            assertNotNull(got);
            assertEquals(List.of("full:3", "ok", "ok", "ok"), got.stream().sorted().toList(),
                    "three writes take the credits and the one waiting place: " + got);
            assertEquals(0, inFlightAtError.get(),
                    "a refused operation, never posted, still held its region when its subscriber heard of it");
        }
    }

    @Test
    void manySubscribers_farBeyondQueueDepth_eachCompleteExactlyOnce_neverOverrunningTheQueue() throws Exception {
        try (Cqflux small = builder().connectionConfig(client.connectionConfig().withSendQueueSize(8))
                .pendingLimit(100_000).build()) {
            Region src = small.register(arena.allocate(4096, 64), RegionAccess.WRITE_SRC);
            RdmaConnection c = small.connect(srv.address()).block(T);
            PeerRegion r = c.remoteRegion(0);
            int threads = 8;
            int each = rounds(500);
            AtomicIntegerArray signals = new AtomicIntegerArray(threads * each);
            AtomicReference<Throwable> firstError = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(threads * each);
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int base = t * each;
                ts.add(Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < each; i++) {
                        int id = base + i;
                        Mono<Void> op = (id % 3 == 0) ? c.durableWrite(r, 8L * (id % 512), src, 0, 8)
                                : c.write(r, 8L * (id % 512), src, 0, 8);
                        op.subscribe(null, e -> {
                            firstError.compareAndSet(null, e);
                            signals.addAndGet(id, 1000);
                            done.countDown();
                        }, () -> {
                            signals.incrementAndGet(id);
                            done.countDown();
                        });
                    }
                }));
            }
            for (Thread t : ts) {
                t.join(T.toMillis());
            }
            assertTrue(done.await(60, TimeUnit.SECONDS), "every Mono terminated");
            for (int i = 0; i < signals.length(); i++) {
                assertEquals(1, signals.get(i), "operation " + i + " signals; first error " + firstError.get());
            }
            assertTrue(c.maxInFlight() <= c.sendCredits(), "in flight " + c.maxInFlight() + " > " + c.sendCredits());
            assertEquals(c.sendCredits(), c.maxInFlight(), "the queue was actually filled");
        }
    }

    @Test
    void writeAll_streamsInOrder_withDemandBoundedByCredits() {
        int n = rounds(2000);
        List<Long> seq = Flux.range(0, n)
                .map(i -> new WriteRequest(remote(), 8L * (i % 1024), local, 0, 8, i % 10 == 0))
                .as(conn::writeAll)
                .map(WriteResult::sequence)
                .collectList().block(T);
        assertNotNull(seq);
        assertEquals(n, seq.size());
        for (int i = 0; i < n; i++) {
            assertEquals(i, seq.get(i));
        }
        assertTrue(conn.maxInFlight() <= conn.sendCredits());
    }

    /** {@return the writes writeAll keeps in flight on {@link #conn}} */
    int writeAllWindow() {
        return Math.max(1, conn.sendCredits() / 2);
    }

    /** Waits (bounded) until no operation of {@link #conn} holds a credit or {@link #local}. */
    void awaitNothingInFlight() throws InterruptedException {
        long deadline = System.nanoTime() + T.toNanos();
        while ((conn.inFlight() != 0 || local.inFlight() != 0) && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(0, conn.inFlight(), "credits held");
        assertEquals(0, local.inFlight(), "region references held");
    }

    @Test
    void writeAll_mixedDurableAndPlain_emitsEachRequestInOrder_withSequenceFromZero() {
        int n = rounds(300);
        List<WriteRequest> requests = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            requests.add(new WriteRequest(remote(), 8L * (i % 1024), local, 8L * (i % 64), 8, i % 3 == 1));
        }
        List<WriteResult> results = conn.writeAll(Flux.fromIterable(requests)).collectList().block(T);
        assertNotNull(results);
        assertEquals(n, results.size());
        for (int i = 0; i < n; i++) {
            assertEquals(i, results.get(i).sequence());
            assertTrue(requests.get(i) == results.get(i).request(), "result " + i + " carries its own request");
        }
    }

    @Test
    void writeAll_requestsFromAnotherThread_andDemandFromAThird_stayInOrder() {
        int n = rounds(2000);
        List<Long> seq = Flux.range(0, n)
                .publishOn(Schedulers.parallel(), 7)
                .map(i -> new WriteRequest(remote(), 8L * (i % 1024), local, 0, 8, i % 9 == 0))
                .as(conn::writeAll)
                .publishOn(Schedulers.boundedElastic(), 5)
                .map(WriteResult::sequence)
                .collectList().block(T);
        assertNotNull(seq);
        assertEquals(n, seq.size());
        for (int i = 0; i < n; i++) {
            assertEquals(i, seq.get(i));
        }
    }

    @Test
    void writeAll_emptyUpstream_completes() {
        StepVerifier.create(conn.writeAll(Flux.empty())).expectComplete().verify(T);
    }

    @Test
    void writeAll_isNamed_forMetricsAndCheckpoints() {
        assertEquals("cqflux.writeAll", reactor.core.Scannable.from(conn.writeAll(Flux.empty())).name());
    }

    @Test
    void writeAll_oneAtATimeDemand_completes_andAsksUpstreamNeverBeyondTheWindow() throws Exception {
        int n = rounds(500);
        int window = writeAllWindow();
        AtomicLong askedOfUpstream = new AtomicLong();
        AtomicLong consumed = new AtomicLong();
        AtomicLong worst = new AtomicLong();
        AtomicInteger maxCredits = new AtomicInteger();
        Flux<WriteRequest> requests = Flux.range(0, n)
                .map(i -> new WriteRequest(remote(), 8L * (i % 1024), local, 0, 8, i % 4 == 0))
                .doOnRequest(r -> {
                    long outstanding = askedOfUpstream.addAndGet(r) - consumed.get();
                    worst.accumulateAndGet(outstanding, Math::max);
                });
        CompletableFuture<Long> last = new CompletableFuture<>();
        conn.writeAll(requests).subscribe(new reactor.core.publisher.BaseSubscriber<WriteResult>() {
            long expected;

            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                s.request(1);
            }

            @Override
            protected void hookOnNext(WriteResult r) {
                if (r.sequence() != expected++) {
                    last.completeExceptionally(new AssertionError("sequence " + r.sequence()));
                }
                consumed.incrementAndGet();
                maxCredits.accumulateAndGet(conn.inFlight(), Math::max);
                request(1);
            }

            @Override
            protected void hookOnComplete() {
                last.complete(expected);
            }

            @Override
            protected void hookOnError(Throwable t) {
                last.completeExceptionally(t);
            }
        });
        assertEquals(n, last.get(T.toMillis(), TimeUnit.MILLISECONDS));
        assertTrue(worst.get() <= window, "upstream asked for " + worst.get() + " beyond what was consumed, window "
                + window);
        // a durable write holds two credits: the window keeps within the send queue
        assertTrue(maxCredits.get() <= conn.sendCredits(), "credits " + maxCredits.get());
        assertTrue(conn.maxInFlight() <= conn.sendCredits());
    }

    @Test
    void writeAll_withoutDownstreamDemand_holdsAtMostTheWindow_thenDeliversAll() throws Exception {
        int window = writeAllWindow();
        int n = window * 3;
        AtomicLong askedOfUpstream = new AtomicLong();
        AtomicInteger taken = new AtomicInteger();
        Flux<WriteRequest> requests = Flux.range(0, n)
                .map(i -> new WriteRequest(remote(), 8L * i, local, 0, 8, false))
                .doOnRequest(askedOfUpstream::addAndGet)
                .doOnNext(r -> taken.incrementAndGet());
        StepVerifier.create(conn.writeAll(requests), 0)
                .expectSubscription()
                .then(() -> {
                    // Nothing requested downstream: the window's writes run and their results wait.
                    // Their completion is read off the region they use, not the connection's
                    // credits: on rpma and verbs the connection's receiver posts credit grants of
                    // its own (internal writes) at any time, and one of those in flight made
                    // conn.inFlight() read 1 right after it had read 0 (lane, 2026-11-23).
                    long deadline = System.nanoTime() + T.toNanos();
                    while (taken.get() < window && System.nanoTime() < deadline) {
                        Thread.onSpinWait();
                    }
                    // Taken is not yet posted: the loop posts what was emitted here in one task,
                    // which may not have run yet (in-flight 0 then means "not posted", not
                    // "completed"). A write of the test's own, handed to the loop after that
                    // task, completes only after it ran.
                    conn.write(remote(), 8L * n, local, 0, 8).block(T);
                    while (local.inFlight() != 0 && System.nanoTime() < deadline) {
                        Thread.onSpinWait();
                    }
                    assertEquals(window, taken.get(), "requests taken while no result was requested");
                    assertEquals(window, askedOfUpstream.get(), "upstream asked for exactly the window");
                    assertEquals(0, local.inFlight(), "the window's writes completed");
                })
                .thenRequest(1)
                .expectNextMatches(r -> r.sequence() == 0)
                .then(() -> {
                    // The drain asks upstream after it emitted, and it may be the loop's (a last
                    // completion's drain holding it when the request came): wait for the ask,
                    // then check it was exactly one.
                    long deadline = System.nanoTime() + T.toNanos();
                    while (askedOfUpstream.get() < window + 1 && System.nanoTime() < deadline) {
                        Thread.onSpinWait();
                    }
                    assertEquals(window + 1, askedOfUpstream.get(), "one result out, one request in");
                })
                .thenRequest(Long.MAX_VALUE)
                .expectNextCount(n - 1)
                .expectComplete()
                .verify(T);
    }

    @Test
    void writeAll_outOfBoundsRequest_failsWithWritesCheckError_andCancelsUpstream() throws Exception {
        long bad = remote().size();
        Throwable expected = conn.write(remote(), bad, local, 0, 8).materialize().block(T).getThrowable();
        assertNotNull(expected);
        AtomicInteger cancelled = new AtomicInteger();
        Flux<WriteRequest> requests = Flux.range(0, 100_000)
                .map(i -> new WriteRequest(remote(), i == 5 ? bad : 8L * i, local, 0, 8, i % 2 == 0))
                .doOnCancel(cancelled::incrementAndGet);
        StepVerifier.create(conn.writeAll(requests))
                .thenConsumeWhile(r -> r.sequence() < 5)
                .expectErrorSatisfies(e -> {
                    assertEquals(expected.getClass(), e.getClass());
                    assertEquals(expected.getMessage(), e.getMessage());
                })
                .verify(T);
        assertEquals(1, cancelled.get(), "upstream cancelled once");
        awaitNothingInFlight();
        StepVerifier.create(conn.write(remote(), 0, local, 0, 8)).expectComplete().verify(T);
    }

    @Test
    void writeAll_cancelMidStream_cancelsUpstream_andEveryCreditAndRegionReturns() throws Exception {
        AtomicInteger cancelled = new AtomicInteger();
        Flux<WriteRequest> requests = Flux.range(0, Integer.MAX_VALUE)
                .map(i -> new WriteRequest(remote(), 8L * (i % 1024), local, 0, 8, i % 5 == 0))
                .doOnCancel(cancelled::incrementAndGet);
        StepVerifier.create(conn.writeAll(requests))
                .expectNextCount(rounds(100))
                .thenCancel()
                .verify(T);
        assertEquals(1, cancelled.get());
        awaitNothingInFlight();
        StepVerifier.create(conn.write(remote(), 0, local, 0, 8)).expectComplete().verify(T);
    }

    @Test
    void writeAll_upstreamError_failsTheStreamAtOnce_andTheWritesInFlightStillReturnTheirCredits()
            throws Exception {
        IllegalStateException boom = new IllegalStateException("no more requests");
        Flux<WriteRequest> requests = Flux.range(0, 10)
                .map(i -> new WriteRequest(remote(), 8L * i, local, 0, 8, i % 2 == 0))
                .concatWith(Flux.error(boom));
        StepVerifier.create(conn.writeAll(requests))
                .thenConsumeWhile(r -> true)
                .expectErrorMatches(e -> e == boom)
                .verify(T);
        awaitNothingInFlight();
    }

    @Test
    void writeAll_peerClosesMidStream_failsWithConnectionException() {
        AtomicInteger cancelled = new AtomicInteger();
        Flux<WriteRequest> requests = Flux.range(0, Integer.MAX_VALUE)
                .map(i -> new WriteRequest(remote(), 8L * (i % 1024), local, 0, 8, i % 7 == 0))
                .doOnCancel(cancelled::incrementAndGet);
        StepVerifier.create(conn.writeAll(requests))
                .expectNextCount(rounds(50))
                .then(serverConn::dispose)
                .thenConsumeWhile(r -> true)
                .expectError(ConnectionException.class)
                .verify(T);
        assertEquals(1, cancelled.get(), "upstream cancelled");
    }

    @Test
    void writeAll_nonPositiveRequest_signalsIllegalArgumentException() {
        CompletableFuture<Throwable> error = new CompletableFuture<>();
        conn.writeAll(Flux.just(new WriteRequest(remote(), 0, local, 0, 8, false)))
                .subscribe(new reactor.core.publisher.BaseSubscriber<WriteResult>() {
                    @Override
                    protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                        s.request(0);
                    }

                    @Override
                    protected void hookOnError(Throwable t) {
                        error.complete(t);
                    }

                    @Override
                    protected void hookOnComplete() {
                        error.complete(null);
                    }
                });
        assertInstanceOf(IllegalArgumentException.class, error.orTimeout(T.toMillis(), TimeUnit.MILLISECONDS).join());
    }

    // ------------------------------------------------------------------ races, cancellation, callbacks

    @Test
    void cancelRacingCompletion_fromAnotherThread_repeated_signalsAtMostOnce_andLeaksNoSlot() throws Exception {
        int rounds = rounds(1000);
        AtomicIntegerArray signals = new AtomicIntegerArray(rounds);
        CountDownLatch cancelled = new CountDownLatch(rounds);
        for (int i = 0; i < rounds; i++) {
            int id = i;
            Disposable d = conn.durableWrite(remote(), 8L * (i % 64), local, 0, 8)
                    .subscribe(null, e -> signals.incrementAndGet(id), () -> signals.incrementAndGet(id));
            // Cancel from another thread while the loop may be completing it right now.
            Schedulers.parallel().schedule(() -> {
                d.dispose();
                cancelled.countDown();
            });
        }
        assertTrue(awaitLatch(cancelled));
        // Queue order: once this completes, every earlier operation has completed or been dropped.
        StepVerifier.create(conn.read(local, 0, remote(), 0, 8)).expectComplete().verify(T);
        for (int i = 0; i < rounds; i++) {
            assertTrue(signals.get(i) <= 1, "operation " + i + " signalled " + signals.get(i) + " times");
        }
        assertEquals(0, conn.inFlight(), "every slot retired after cancellation");
        assertTrue(conn.maxInFlight() <= conn.sendCredits());
    }

    @Test
    void block_onTheLoopThread_failsFast() {
        StepVerifier.create(conn.write(remote(), 0, local, 0, 8).then(Mono.fromCallable(() -> Mono.just(1).delayElement(
                        Duration.ofMillis(10)).block())))
                .expectErrorSatisfies(e -> assertTrue(e.getMessage().contains("not supported in thread"), e.getMessage()))
                .verify(T);
    }

    @Test
    void block_onTheLoopThread_ofAcquireConnectOrBind_refusesBeforeSubscribing_soNothingIsLeftOwnerless() {
        long marker = 0x5eed_0f_b10c_0bL;
        // The lease forms take their lease over and post at subscription, as the others post.
        BufferLease lease = client.buffers().acquire().block(T);
        lease.segment().set(ValueLayout.JAVA_LONG, 0, marker);
        int leased = client.buffers().leased();
        int connections = client.openConnections();
        int servers = client.openServers();
        localMem.set(ValueLayout.JAVA_LONG, 1024, marker);
        List<Throwable> refusals = new ArrayList<>();
        StepVerifier.create(conn.write(remote(), 0, local, 0, 8).then(Mono.fromRunnable(() -> {
                    // On the loop (the write's completion): each must throw before it starts anything.
                    for (Runnable blocking : List.<Runnable>of(
                            () -> client.buffers().acquire().block(T),
                            () -> client.buffers().acquire().block(),
                            () -> client.connect(srv.address()).block(T),
                            () -> client.connect(srv.address()).blockOptional(T),
                            () -> client.bind(listenAddress()).block(T),
                            () -> conn.write(remote(), 1024, local, 1024, 8).blockOptional(T),
                            () -> conn.write(remote(), 1024, lease, 8).block(T),
                            () -> conn.durableWrite(remote(), 1024, lease, 8).blockOptional(T),
                            () -> conn.send(lease, 8).block())) {
                        try {
                            blocking.run();
                        } catch (IllegalStateException e) {
                            refusals.add(e);
                        }
                    }
                })))
                .expectComplete().verify(T);
        assertEquals(9, refusals.size(), refusals.toString());
        refusals.forEach(e -> assertTrue(e.getMessage().contains("not supported in thread"), e.getMessage()));
        // Given the time a started connect or acquire would take to land.
        StepVerifier.create(Mono.delay(Duration.ofMillis(300))).expectNextCount(1).expectComplete().verify(T);
        assertEquals(leased, client.buffers().leased(), "a lease taken by a refused block()");
        assertEquals(connections, client.openConnections(), "a connection made by a refused block()");
        assertEquals(servers, client.openServers(), "a server bound by a refused block()");
        assertEquals(0, serverMem.get(ValueLayout.JAVA_LONG, 1024), "a write posted by a refused blockOptional()");
        assertTrue(lease.isHeld(), "a lease taken over by a refused block()");
        lease.release();
    }

    @Test
    void reactorContext_isVisibleDownstreamOfAnOperation() {
        StepVerifier.create(conn.write(remote(), 0, local, 0, 8)
                        .then(Mono.deferContextual(ctx -> Mono.just(ctx.<String>get("request-id"))))
                        .contextWrite(Context.of("request-id", "r-42")))
                .expectNext("r-42").expectComplete().verify(T);
    }

    // ------------------------------------------------------------------ lifecycle and failures

    @Test
    void regionClose_withOperationInFlight_deregistersOnlyAfterItCompletes_andRefusesNewOnes() {
        Region r = client.register(arena.allocate(4096, 64), RegionAccess.WRITE_SRC);
        List<Mono<Void>> ops = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            ops.add(conn.durableWrite(remote(), 0, r, 0, 4096));
        }
        StepVerifier.create(Flux.merge(ops).then(Mono.fromRunnable(() -> { })).and(Mono.fromRunnable(r::close)))
                .expectComplete().verify(T);
        StepVerifier.create(r.onClose()).expectComplete().verify(T);
        assertEquals(0, r.inFlight());
        StepVerifier.create(conn.write(remote(), 0, r, 0, 8)).expectError(ResourceClosedException.class).verify(T);
    }

    @Test
    void errorCompletion_failsItsOwnMono_withStatusPostedOpcodeAndConnection() {
        // The server deregisters the region the client still addresses: the next access uses a
        // dead key. rpma reports REM_ACCESS_ERR for that operation; fabric/tcp drops the
        // connection and flushes what was in flight (ECANCELED, WR_FLUSH_ERR). Either way the
        // operation fails with an OperationFailedException naming what was posted, or - when
        // the loss event wins the race - with a ConnectionException.
        serverRegion.close();
        StepVerifier.create(serverRegion.onClose()).expectComplete().verify(T);
        StepVerifier.create(conn.durableWrite(remote(), 0, local, 0, 64)
                        .then(conn.write(remote(), 0, local, 0, 64)))
                .expectErrorSatisfies(e -> {
                    if (e instanceof OperationFailedException f) {
                        assertTrue(f.opcode() == Opcode.WRITE || f.opcode() == Opcode.FLUSH, f.toString());
                        assertFalse(f.status() == io.cqflux.core.CompletionStatus.SUCCESS);
                        assertEquals(conn.description(), f.connection());
                        assertTrue(f.getMessage().contains(f.status().name()), f.getMessage());
                    } else {
                        assertInstanceOf(ConnectionException.class, e);
                    }
                }).verify(T);
        // Nothing stays pending afterwards: the queue pair is in the error state (rpma: the
        // connection manager may report nothing; later work requests are flushed) or the
        // connection is gone (fabric/tcp): either way a further operation fails, it never hangs.
        StepVerifier.create(conn.write(remote(), 0, local, 0, 8))
                .expectErrorSatisfies(e -> assertTrue(e instanceof OperationFailedException
                        || e instanceof ConnectionException || e instanceof ResourceClosedException, e.toString()))
                .verify(T);
    }

    @Test
    void peerClosing_failsPendingAndLaterOperations_withConnectionException() {
        List<Mono<String>> outcomes = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            outcomes.add(conn.durableWrite(remote(), 0, local, 0, 4096).thenReturn("ok")
                    .onErrorResume(e -> Mono.just(e.getClass().getSimpleName())));
        }
        Flux<String> all = Flux.merge(outcomes);
        serverConn.dispose();
        List<String> got = all.collectList().block(T);
        assertNotNull(got);
        assertEquals(200, got.size(), "every Mono terminated");
        assertTrue(got.stream().allMatch(g -> g.equals("ok") || g.equals("ConnectionException")), got::toString);
        // An orderly close by the peer (it says goodbye first) is CLOSED, on both sides.
        StepVerifier.create(conn.events().filter(ConnectionEvent::isTerminal).take(1))
                .expectNext(ConnectionEvent.CLOSED).expectComplete().verify(T);
        StepVerifier.create(serverConn.events().filter(ConnectionEvent::isTerminal).take(1))
                .expectNext(ConnectionEvent.CLOSED).expectComplete().verify(T);
        StepVerifier.create(conn.write(remote(), 0, local, 0, 8))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(ConnectionException.class, e);
                    assertEquals(ConnectionEvent.CLOSED, ((ConnectionException) e).event());
                })
                .verify(T);
        assertTrue(conn.isDisposed());
    }

    /**
     * A peer that ends the connection without the orderly close (here its connection is ended
     * abruptly, as a crashed process's kernel would: no goodbye word) is LOST, and so are the
     * operations pending on it.
     */
    @Test
    void peerEndingWithoutItsOrderlyClose_isLost_andFailsPendingWithLost() {
        List<Mono<String>> outcomes = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            outcomes.add(conn.durableWrite(remote(), 0, local, 0, 4096).thenReturn("ok")
                    .onErrorResume(e -> Mono.just(e instanceof ConnectionException ce ? ce.event().name()
                            : e.getClass().getSimpleName())));
        }
        Flux<String> all = Flux.merge(outcomes);
        ConnectionCore peer = serverConn.core();
        peer.runOnLoop(() -> peer.end(new ConnectionException(ConnectionEvent.LOST, "test: the peer crashes"),
                ConnectionEvent.LOST));
        List<String> got = all.collectList().block(T);
        assertNotNull(got);
        assertEquals(200, got.size(), "every Mono terminated");
        assertTrue(got.stream().allMatch(g -> g.equals("ok") || g.equals("LOST")), got::toString);
        StepVerifier.create(conn.events().filter(ConnectionEvent::isTerminal).take(1))
                .expectNext(ConnectionEvent.LOST).expectComplete().verify(T);
    }

    @Test
    void closingConnectionUnderLoad_terminatesEveryMono() {
        AtomicInteger terminated = new AtomicInteger();
        CountDownLatch all = new CountDownLatch(2000);
        for (int i = 0; i < 2000; i++) {
            conn.write(remote(), 0, local, 0, 64).subscribe(null, e -> {
                terminated.incrementAndGet();
                all.countDown();
            }, () -> {
                terminated.incrementAndGet();
                all.countDown();
            });
        }
        conn.dispose();
        assertTrue(awaitLatch(all), "terminated " + terminated.get() + " of 2000");
        StepVerifier.create(conn.onDispose()).expectComplete().verify(T);
        StepVerifier.create(conn.write(remote(), 0, local, 0, 8)).expectError(ResourceClosedException.class).verify(T);
    }

    /**
     * Closing from a completion callback runs inside the transport's drain of that very CQ: the
     * drain must stop touching the freed queue (it crashed the JVM in fi_cq_read before).
     */
    @Test
    void closingConnection_fromInsideACompletionCallback_terminatesEverythingWithoutCrashing() {
        int n = 200;
        CountDownLatch all = new CountDownLatch(n);
        AtomicInteger succeeded = new AtomicInteger();
        for (int i = 0; i < n; i++) {
            conn.write(remote(), 0, local, 0, 64)
                    .doOnSuccess(v -> conn.dispose())
                    .subscribe(null, e -> all.countDown(), () -> {
                        succeeded.incrementAndGet();
                        all.countDown();
                    });
        }
        assertTrue(awaitLatch(all), "terminated " + (n - all.getCount()) + " of " + n);
        assertTrue(succeeded.get() >= 1, "the first completion closes the connection");
        StepVerifier.create(conn.onDispose()).expectComplete().verify(T);
        StepVerifier.create(conn.write(remote(), 0, local, 0, 8)).expectError(ResourceClosedException.class).verify(T);
    }

    @Test
    void closingTheEntryPoint_terminatesEverythingPending() {
        CountDownLatch all = new CountDownLatch(1000);
        for (int i = 0; i < 1000; i++) {
            conn.durableWrite(remote(), 0, local, 0, 64).subscribe(null, e -> all.countDown(), all::countDown);
        }
        Mono<Message> pendingReceive = conn.receive().next();
        StepVerifier.create(pendingReceive).then(client::dispose)
                .expectError().verify(T);
        assertTrue(awaitLatch(all));
        assertTrue(client.isDisposed());
        StepVerifier.create(client.connect(srv.address())).expectError(ResourceClosedException.class).verify(T);
    }

    @Test
    void connect_toPortWithoutListener_failsWithConnectionException() {
        InetSocketAddress nobody = new InetSocketAddress(srv.address().getAddress(), freePort());
        StepVerifier.create(client.connect(nobody))
                .expectErrorSatisfies(e -> assertInstanceOf(ConnectionException.class, e))
                .verify(T);
    }

    // ---------------------------------------------------------------- pooled staging buffers

    @Test
    void pooledForms_writeDurableWriteReadSend_roundTripThroughTheBufferPool() {
        byte[] data = new byte[3000];
        new Random(7).nextBytes(data);
        StepVerifier.create(conn.write(remote(), 0, data)).expectComplete().verify(T);
        StepVerifier.create(conn.durableWrite(remote(), 4096, java.nio.ByteBuffer.wrap(data))).expectComplete()
                .verify(T);
        assertTrue(java.util.Arrays.equals(data, serverMem.asSlice(0, 3000).toArray(ValueLayout.JAVA_BYTE)));
        assertTrue(java.util.Arrays.equals(data, serverMem.asSlice(4096, 3000).toArray(ValueLayout.JAVA_BYTE)));
        StepVerifier.create(conn.read(remote(), 4096, 3000))
                .assertNext(b -> assertTrue(java.util.Arrays.equals(data, b)))
                .expectComplete().verify(T);
        StepVerifier.create(serverConn.receive().take(1).map(Message::data))
                .then(() -> conn.send(java.util.Arrays.copyOf(data, 100)).subscribe())
                .assertNext(b -> assertTrue(java.util.Arrays.equals(java.util.Arrays.copyOf(data, 100), b)))
                .expectComplete().verify(T);
        BufferPool pool = client.buffers();
        assertTrue(FaultRig.await(() -> pool.leased() == 0, T), pool.toString());
    }

    /** {@return a port to listen on where the transport needs one named ({@link FreePorts})} */
    static int freePort() {
        return FreePorts.next();
    }

    static boolean awaitLatch(CountDownLatch l) {
        try {
            return l.await(T.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
