package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.QueueFullException;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import io.cqflux.reactor.internal.resources.LibraryTimer;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.util.TestLogger;
import reactor.util.Logger;

/**
 * {@link PeerPool} against an in-process server over fabric/tcp on 127.0.0.1: connections spread
 * and healed, validation evicts, the backoff is bounded, dispose during a reconnect ends
 * everything and leaks nothing, bad options are refused naming the value. The tests with a peer
 * process that dies are {@link PeerPoolProcessTest}.
 */
class PeerPoolTest {
    static final Duration T = FaultRig.T;
    FaultRig rig;
    PeerPool pool;
    PeerPoolEvents ev;

    @BeforeEach
    void setUp() {
        rig = new FaultRig();
        rig.serverRegion.segment().set(ValueLayout.JAVA_LONG, 0, 42L);
    }

    @AfterEach
    void tearDown() {
        if (ev != null) {
            ev.close();
        }
        if (pool != null) {
            pool.disposeNow(T);
        }
        rig.close();
    }

    private PeerPool pool(InetSocketAddress address, PeerPoolOptions options) {
        pool = rig.client.peerPool(address, options);
        ev = new PeerPoolEvents(pool);
        return pool;
    }

    /** A read of the peer region's first 8 bytes through the pool. */
    private Mono<Long> readFirstWord(PeerPool p) {
        return p.withConnection(conn -> conn.read(rig.local, 0, conn.remoteRegion(0), 0, 8)
                .then(Mono.fromSupplier(() -> rig.local.segment().get(ValueLayout.JAVA_LONG, 0))));
    }

    /** An address where nothing listens: a server bound there and closed again. */
    private InetSocketAddress deadAddress() {
        RdmaServer s = rig.server.bind(new InetSocketAddress(FaultRig.LO, 0)).block(T);
        InetSocketAddress a = s.address();
        s.disposeNow(T);
        return a;
    }

    @Test
    void withConnection_onLivePeer_runsTheActionWithThePeersRegions() {
        pool(rig.srv.address(), PeerPoolOptions.defaults());
        StepVerifier.create(readFirstWord(pool)).expectNext(42L).expectComplete().verify(T);
        assertEquals(PeerPool.State.CONNECTED, pool.state());
        assertEquals(1, pool.liveConnections());
        ev.assertInOrder();
    }

    @Test
    void severalConnections_operationsSpreadOverThem_andALostOneIsReplacedWhileTheOthersCarryOn() {
        int size = 3;
        pool(rig.srv.address(), PeerPoolOptions.builder().size(size)
                .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(200)).build());
        ev.await(size, e -> e.kind() == PeerPoolEvent.Kind.CONNECTED, T, "three connections");
        assertTrue(FaultRig.await(() -> pool.liveConnections() == size, T), "live " + pool.liveConnections());
        Set<RdmaConnection> used = new HashSet<>();
        for (int i = 0; i < 3 * size; i++) {
            used.add(pool.acquire().block(T));
        }
        assertEquals(size, used.size(), "idle connections are taken in turn");

        // The server closes one of the pool's connections (in order): only that slot reconnects.
        assertTrue(FaultRig.await(() -> rig.accepted.size() == size + 1, T), "accepted " + rig.accepted);
        RdmaConnection serverSide = rig.accepted.stream().filter(a -> a != rig.serverConn).findFirst().orElseThrow();
        serverSide.dispose();
        ev.await(1, e -> e.kind() == PeerPoolEvent.Kind.LOST, T, "LOST");
        PeerPoolEvent lost = ev.seen.stream().filter(e -> e.kind() == PeerPoolEvent.Kind.LOST).findFirst().get();
        assertInstanceOf(ConnectionException.class, lost.cause());
        assertEquals(ConnectionEvent.CLOSED, ((ConnectionException) lost.cause()).event(), lost.toString());
        // The others carry on during the gap.
        StepVerifier.create(readFirstWord(pool)).expectNext(42L).expectComplete().verify(T);
        ev.await(size + 1, e -> e.kind() == PeerPoolEvent.Kind.CONNECTED, T, "the replacement");
        assertTrue(FaultRig.await(() -> pool.liveConnections() == size, T), "live " + pool.liveConnections());
        assertEquals(1, ev.count(PeerPoolEvent.Kind.LOST), ev.toString());
        for (int i = 0; i < 2 * size; i++) {
            StepVerifier.create(readFirstWord(pool)).expectNext(42L).expectComplete().verify(T);
        }
        assertEquals(PeerPool.State.CONNECTED, pool.state());
        ev.assertInOrder();
    }

    /**
     * The pool's connection is shared: an action that disposes it anyway does not break the pool.
     * The slot reconnects (LOST with this side's CLOSED, then CONNECTED again) and a waiting
     * operation gets the new connection, never the disposed one.
     */
    @Test
    void actionThatDisposesTheSharedConnection_isReplaced_andTheNextOperationGetsTheNewOne() {
        pool(rig.srv.address(), PeerPoolOptions.builder().reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(200))
                .whenUnavailable(PeerPoolOptions.WhenUnavailable.WAIT).build());
        RdmaConnection first = pool.withConnection(c -> {
            c.dispose();
            return Mono.just(c);
        }).block(T);
        RdmaConnection next = pool.acquire().block(T);
        assertTrue(next != first && !next.isDisposed(), next + " after " + first);
        StepVerifier.create(readFirstWord(pool)).expectNext(42L).expectComplete().verify(T);
        ev.await(2, e -> e.kind() == PeerPoolEvent.Kind.CONNECTED, T, "the replacement");
        PeerPoolEvent lost = ev.seen.stream().filter(e -> e.kind() == PeerPoolEvent.Kind.LOST).findFirst().orElseThrow();
        assertEquals(ConnectionEvent.CLOSED, ((ConnectionException) lost.cause()).event(), lost.toString());
        assertEquals(PeerPool.State.CONNECTED, pool.state());
        ev.assertInOrder();
    }

    @Test
    void serverRestartedOnTheSamePort_poolReconnects_andLearnsTheNewRegions() {
        InetSocketAddress address = rig.srv.address();
        pool(address, PeerPoolOptions.builder().reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(200))
                .maxAcquireTime(T).build());
        PeerRegion before = pool.acquire().map(c -> c.remoteRegion(0)).block(T);
        rig.srv.disposeNow(T);
        for (RdmaConnection a : rig.accepted) {
            a.dispose();
        }
        ev.await(1, e -> e.kind() == PeerPoolEvent.Kind.LOST, T, "LOST");
        // One RETRYING after the loss, one after a refused attempt.
        ev.await(2, e -> e.kind() == PeerPoolEvent.Kind.RETRYING, T, "a failed reconnect");
        // A different region now, same port.
        Region other = rig.server.register(rig.arena.allocate(8192, 64), FaultRig.ALL);
        other.segment().set(ValueLayout.JAVA_LONG, 0, 7L);
        RdmaServer again = rig.server.bind(address, other).block(T);
        try {
            StepVerifier.create(readFirstWord(pool)).expectNext(7L).expectComplete().verify(T);
            PeerRegion after = pool.acquire().map(c -> c.remoteRegion(0)).block(T);
            assertNotSame(before, after);
            assertEquals(8192, after.size(), "the restarted peer's region, learned from the new hello");
            ev.assertInOrder();
        } finally {
            again.dispose();
        }
    }

    @Test
    void validationThatFails_evictsTheConnection_andTheNextOperationGetsAFreshOne() {
        AtomicBoolean refuseNext = new AtomicBoolean();
        pool(rig.srv.address(), PeerPoolOptions.builder().reconnectBackoff(Duration.ofMillis(10), Duration.ofMillis(50))
                .validation(c -> !refuseNext.getAndSet(false)).maxAcquireTime(T).build());
        RdmaConnection first = pool.acquire().block(T);
        refuseNext.set(true);
        RdmaConnection second = pool.acquire().block(T);
        assertNotSame(first, second);
        assertTrue(first.isDisposed(), "the evicted connection is disposed");
        PeerPoolEvent lost = ev.seen.stream().filter(e -> e.kind() == PeerPoolEvent.Kind.LOST).findFirst()
                .orElseThrow(() -> new AssertionError("no LOST: " + ev));
        assertTrue(lost.cause().getMessage().contains("validation"), lost.toString());
        StepVerifier.create(readFirstWord(pool)).expectNext(42L).expectComplete().verify(T);
        ev.assertInOrder();
    }

    @Test
    void backoff_doublesFromMinToMax_andNoFurther() {
        pool(deadAddress(), PeerPoolOptions.builder().jitter(0)
                .reconnectBackoff(Duration.ofMillis(10), Duration.ofMillis(80)).build());
        ev.await(7, e -> e.kind() == PeerPoolEvent.Kind.RETRYING, T, "seven retries");
        List<Long> delays = ev.seen.stream().filter(e -> e.kind() == PeerPoolEvent.Kind.RETRYING).limit(7)
                .map(e -> e.delay().toMillis()).toList();
        // The first attempt runs at once; attempt n waits min * 2^(n-1), capped at max.
        assertEquals(List.of(20L, 40L, 80L, 80L, 80L, 80L, 80L), delays, ev.toString());
        PeerPoolEvent r = ev.seen.stream().filter(e -> e.kind() == PeerPoolEvent.Kind.RETRYING).findFirst().get();
        assertInstanceOf(ConnectionException.class, r.cause());
        assertEquals(PeerPool.State.CONNECTING, pool.state());
        ev.assertInOrder();
    }

    @Test
    void backoff_withJitter_staysWithinItsBoundsAndTheNominalSpread() {
        double j = 0.5;
        pool(deadAddress(), PeerPoolOptions.builder().jitter(j)
                .reconnectBackoff(Duration.ofMillis(10), Duration.ofMillis(40)).build());
        ev.await(10, e -> e.kind() == PeerPoolEvent.Kind.RETRYING, T, "ten retries");
        for (PeerPoolEvent e : ev.seen) {
            if (e.kind() != PeerPoolEvent.Kind.RETRYING) {
                continue;
            }
            long nominal = pool.options().nominalBackoff(e.attempt()).toNanos();
            long d = e.delay().toNanos();
            assertTrue(d >= Duration.ofMillis(10).toNanos() && d <= Duration.ofMillis(40).toNanos(), e.toString());
            assertTrue(d >= nominal * (1 - j) - 1 && d <= nominal * (1 + j) + 1, e + " vs nominal " + nominal);
        }
    }

    @Test
    void nominalBackoff_neverOverflows_atHugeAttemptNumbers() {
        PeerPoolOptions o = PeerPoolOptions.builder().reconnectBackoff(Duration.ofMillis(100), Duration.ofDays(1)).build();
        assertEquals(Duration.ofMillis(100), o.nominalBackoff(1));
        assertEquals(Duration.ofMillis(200), o.nominalBackoff(2));
        assertEquals(Duration.ofDays(1), o.nominalBackoff(64));
        assertEquals(Duration.ofDays(1), o.nominalBackoff(Integer.MAX_VALUE));
    }

    @Test
    void failFast_withNoLiveConnection_failsAtOnce_namingTheAddress() {
        InetSocketAddress dead = deadAddress();
        pool(dead, PeerPoolOptions.builder().whenUnavailable(PeerPoolOptions.WhenUnavailable.FAIL_FAST).build());
        ev.await(1, e -> e.kind() == PeerPoolEvent.Kind.RETRYING, T, "a failed attempt");
        StepVerifier.create(readFirstWord(pool))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(ConnectionException.class, e);
                    assertEquals(ConnectionEvent.UNREACHABLE, ((ConnectionException) e).event());
                    assertTrue(e.getMessage().contains(":" + dead.getPort()), e.getMessage());
                    assertTrue(e.getMessage().contains("failing fast"), e.getMessage());
                })
                .verify(T);
    }

    /**
     * FAIL_FAST waits only for the pool's very first connect, before any attempt failed: an
     * operation that joined the queue then fails as soon as that attempt fails, not at the end of
     * maxAcquireTime (it waited it out whole, as WAIT does).
     */
    @Test
    void failFast_anOperationWaitingForTheFirstConnect_failsWhenThatAttemptFails_notAtMaxAcquireTime()
            throws Exception {
        // A peer that takes the TCP connection and never answers the handshake: the first attempt
        // cannot fail before the operation has joined the queue.
        // A connect timeout of its own, 1 s: the attempt fails then.
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 16, FaultRig.LO);
             Cqflux client = FaultRig.fabric().connectionConfig(io.cqflux.core.ConnectionConfig.DEFAULT
                     .withTimeout(Duration.ofSeconds(1))).build()) {
            Duration max = Duration.ofSeconds(20);
            PeerPool p = client.peerPool(new InetSocketAddress(FaultRig.LO, silent.getLocalPort()),
                    PeerPoolOptions.builder().whenUnavailable(PeerPoolOptions.WhenUnavailable.FAIL_FAST)
                            .reconnectBackoff(Duration.ofMillis(500), Duration.ofMillis(500)).maxAcquireTime(max).build());
            PeerPoolEvents events = new PeerPoolEvents(p);
            long t0 = System.nanoTime();
            StepVerifier.create(p.acquire())
                    .expectErrorSatisfies(e -> {
                        assertInstanceOf(ConnectionException.class, e);
                        assertEquals(ConnectionEvent.UNREACHABLE, ((ConnectionException) e).event());
                        assertTrue(e.getMessage().contains("failing fast"), e.getMessage());
                    })
                    .verify(T);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms >= 300, "failed after " + ms + " ms: before the first attempt could have failed");
            assertTrue(ms < max.toMillis() / 2, "failed after " + ms + " ms, maxAcquireTime " + max.toMillis() + " ms");
            events.await(1, e -> e.kind() == PeerPoolEvent.Kind.RETRYING, T, "the failed attempt was reported");
            events.close();
            p.disposeNow(T);
        }
    }

    /**
     * {@code StepVerifier.withVirtualTime} swaps Reactor's schedulers for a virtual clock while it
     * runs: the pool's own timers (its reconnect backoff, an acquire's bound) must stay real time,
     * or a reconnect scheduled in the window waits for a clock nothing advances and the acquire
     * never completes.
     */
    @Test
    void acquireUnderVirtualTime_poolStillReconnectsInRealTime_onceThePeerListens() {
        InetSocketAddress address = deadAddress();
        pool(address, PeerPoolOptions.builder().jitter(0).reconnectBackoff(Duration.ofMillis(10), Duration.ofMillis(50))
                .maxAcquireTime(T).build());
        RdmaServer[] again = new RdmaServer[1];
        try {
            StepVerifier.withVirtualTime(() -> pool.acquire().map(RdmaConnection::remoteRegions))
                    // A reconnect scheduled while the virtual clock is installed.
                    .then(() -> ev.await(2, e -> e.kind() == PeerPoolEvent.Kind.RETRYING, T, "two refused attempts"))
                    .then(() -> again[0] = rig.server.bind(address, rig.serverRegion).block(T))
                    .assertNext(regions -> assertEquals(1, regions.size()))
                    .expectComplete()
                    .verify(T);
        } finally {
            if (again[0] != null) {
                again[0].dispose();
            }
        }
    }

    /**
     * A raw subscriber of {@code events()} that throws from {@code onNext} (Reactive Streams §2.13
     * forbids it; Reactor's sink lets the throw out): before, it left the pool's event drain held,
     * and no later event (CLOSED, the completion) reached anyone.
     */
    @Test
    void eventsSubscriberThatThrows_stopsNeitherTheOthersEvents_norTheEnd() {
        pool(rig.srv.address(), PeerPoolOptions.defaults());
        AtomicInteger thrown = new AtomicInteger();
        // Throws only on an event emitted live (not replayed at subscription): CLOSED.
        pool.events().subscribe(RuleBreakingSubscribers.<PeerPoolEvent>throwingOnNext(
                e -> e.kind() == PeerPoolEvent.Kind.CLOSED, thrown::incrementAndGet));
        StepVerifier.create(readFirstWord(pool)).expectNext(42L).expectComplete().verify(T);
        pool.dispose();
        assertTrue(FaultRig.await(() -> ev.completed, T), "events() did not complete for the other subscriber: " + ev);
        assertEquals(PeerPoolEvent.Kind.CLOSED, ev.seen.get(ev.seen.size() - 1).kind(), ev.toString());
        assertEquals(1, thrown.get(), "the thrower's throws");
        pool.disposeNow(T);
    }

    /**
     * A reconnect takes one step of the instance's round-robin over its loops, as a first connect
     * does: before, the timer's hand-over to a loop took one more, and with two loops every
     * reconnected connection of a pool of two landed on the same loop.
     */
    @Test
    void reconnects_areSpreadOverTheLoops_asFirstConnectsAre() {
        rig.close();
        rig = new FaultRig(UnaryOperator.identity(), b -> b.loops(2));
        int size = 2;
        pool(rig.srv.address(), PeerPoolOptions.builder().size(size).jitter(0)
                .reconnectBackoff(Duration.ofMillis(10), Duration.ofMillis(50)).build());
        ev.await(size, e -> e.kind() == PeerPoolEvent.Kind.CONNECTED, T, "two connections");
        assertEquals(2, loopsOfThePoolsConnections(size), "first connects");
        // The server closes both: each slot reconnects through its backoff timer.
        assertTrue(FaultRig.await(() -> rig.accepted.size() == size + 1, T), "accepted " + rig.accepted);
        rig.accepted.stream().filter(a -> a != rig.serverConn).forEach(RdmaConnection::dispose);
        ev.await(2 * size, e -> e.kind() == PeerPoolEvent.Kind.CONNECTED, T, "two reconnects");
        assertTrue(FaultRig.await(() -> pool.liveConnections() == size, T), "live " + pool.liveConnections());
        assertEquals(2, loopsOfThePoolsConnections(size), "reconnects");
    }

    /** {@return how many loops the pool's {@code size} live connections are on (idle ones are taken in turn)} */
    private int loopsOfThePoolsConnections(int size) {
        Set<RdmaConnection> conns = new HashSet<>();
        for (int i = 0; i < 3 * size && conns.size() < size; i++) {
            conns.add(pool.acquire().block(T));
        }
        assertEquals(size, conns.size(), "the pool's connections");
        Set<Object> loops = new HashSet<>();
        for (RdmaConnection c : conns) {
            loops.add(c.core().loop);
        }
        return loops.size();
    }

    @Test
    void wait_withNoLiveConnection_failsAfterMaxAcquireTime_namingAddressAndWait() {
        InetSocketAddress dead = deadAddress();
        pool(dead, PeerPoolOptions.builder().maxAcquireTime(Duration.ofMillis(300)).build());
        long t0 = System.nanoTime();
        StepVerifier.create(readFirstWord(pool))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(ConnectionException.class, e);
                    assertTrue(e.getMessage().contains(":" + dead.getPort()), e.getMessage());
                    assertTrue(e.getMessage().contains("PT0.3S") && e.getMessage().contains("waited"), e.getMessage());
                })
                .verify(T);
        assertTrue(System.nanoTime() - t0 >= Duration.ofMillis(300).toNanos(), "it waited the bound");
    }

    /**
     * A pool to a server that refuses it (an authenticator, no credentials): an operation's
     * UNREACHABLE names the last failure, so the server's reason reaches the caller; the server
     * registered nothing for any of the attempts.
     */
    @Test
    void poolToAServerThatRefusesIt_operationFailsUnreachable_namingTheServersReason() {
        RdmaServer guarded = rig.server.bind(new InetSocketAddress(FaultRig.LO, 0), AcceptOptions.exposing(rig.serverRegion)
                .authenticatedBy(SharedSecretAuthenticator.of(new byte[32]))).block(T);
        pool(guarded.address(), PeerPoolOptions.builder().maxAcquireTime(Duration.ofMillis(300))
                .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(100)).build());
        StepVerifier.create(readFirstWord(pool))
                .expectErrorSatisfies(e -> {
                    ConnectionException c = assertInstanceOf(ConnectionException.class, e);
                    assertEquals(ConnectionEvent.UNREACHABLE, c.event());
                    assertTrue(e.getMessage().contains("refused by the server: no credentials"), e.getMessage());
                })
                .verify(T);
        assertTrue(guarded.stats().refusedByAuthenticator() >= 1, guarded.stats().toString());
        assertEquals(0, guarded.stats().exposures(), guarded.stats().toString());
        guarded.disposeNow(T);
    }

    @Test
    void waiting_beyondMaxPendingAcquires_failsWithQueueFull_namingTheLimit() {
        pool(deadAddress(), PeerPoolOptions.builder().maxPendingAcquires(1).maxAcquireTime(T).build());
        StepVerifier.create(pool.acquire().then(pool.acquire()), 1)
                .then(() -> StepVerifier.create(pool.acquire())
                        .expectErrorSatisfies(e -> {
                            assertInstanceOf(QueueFullException.class, e);
                            assertEquals(1, ((QueueFullException) e).limit());
                        })
                        .verify(T))
                .thenCancel()
                .verify(T);
    }

    @Test
    void dispose_duringReconnect_failsWaiters_endsEvents_andLeavesNoConnectionOrDescriptor() {
        int fds = FaultRig.openFds();
        int open = rig.client.openConnections();
        Set<String> threads = threadNames();
        pool(deadAddress(), PeerPoolOptions.builder().size(2)
                .reconnectBackoff(Duration.ofMillis(5), Duration.ofMillis(20)).maxAcquireTime(T).build());
        ev.await(4, e -> e.kind() == PeerPoolEvent.Kind.RETRYING, T, "retries");
        Mono<Long> waiting = readFirstWord(pool);
        StepVerifier.create(waiting)
                .then(() -> pool.dispose())
                .expectError(ResourceClosedException.class)
                .verify(T);
        pool.disposeNow(T);
        assertTrue(FaultRig.await(() -> ev.completed, T), "events() did not complete: " + ev);
        assertEquals(PeerPoolEvent.Kind.CLOSED, ev.seen.get(ev.seen.size() - 1).kind(), ev.toString());
        assertEquals(PeerPool.State.CLOSED, pool.state());
        ev.assertInOrder();
        assertTrue(FaultRig.await(() -> rig.client.openConnections() == open, T),
                "connections left open: " + rig.client.openConnections());
        assertTrue(FaultRig.await(() -> FaultRig.openFds() <= fds, T), "fds " + fds + " -> " + FaultRig.openFds());
        StepVerifier.create(pool.acquire()).expectError(ResourceClosedException.class).verify(T);
        Set<String> added = threadNames();
        added.removeAll(threads);
        // Reactor's shared timers and the library's one (LibraryTimer), each started on first use,
        // and the instances' close threads (the instances', not the pool's: the client's started
        // with its first connection's native close, a failed connect's here; the server's with
        // the close of deadAddress()'s listener; each ended with its instance).
        Set<String> instanceCloseThreads = Set.of(rig.client.factory.closes().toString(),
                rig.server.factory.closes().toString());
        added.removeIf(n -> n.startsWith("parallel-") || n.equals("cqflux-timer") || instanceCloseThreads.contains(n));
        assertEquals(Set.of(), added, "threads the pool left behind");
    }

    private static Set<String> threadNames() {
        Set<String> names = new HashSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive()) {
                names.add(t.getName());
            }
        }
        return names;
    }

    @Test
    void dispose_withLiveConnections_closesThem_andOnDisposeCompletesOnceReleased() {
        pool(rig.srv.address(), PeerPoolOptions.builder().size(2).build());
        ev.await(2, e -> e.kind() == PeerPoolEvent.Kind.CONNECTED, T, "two connections");
        RdmaConnection c = pool.acquire().block(T);
        pool.dispose();
        StepVerifier.create(pool.onDispose()).expectComplete().verify(T);
        assertTrue(c.isDisposed());
        StepVerifier.create(c.onDispose()).expectComplete().verify(T);
        assertEquals(0, ev.count(PeerPoolEvent.Kind.LOST), "the pool's own close is no loss: " + ev);
        ev.assertInOrder();
    }

    @Test
    void entryPointDisposed_disposesThePool() {
        pool(rig.srv.address(), PeerPoolOptions.defaults());
        ev.await(1, e -> e.kind() == PeerPoolEvent.Kind.CONNECTED, T, "CONNECTED");
        rig.client.dispose();
        assertTrue(FaultRig.await(() -> ev.completed, T), "events() did not complete: " + ev);
        assertEquals(PeerPool.State.CLOSED, pool.state());
        StepVerifier.create(pool.onDispose()).expectComplete().verify(T);
        assertThrows(ResourceClosedException.class, () -> rig.client.peerPool(rig.srv.address()));
    }

    @Test
    void entryPointDisposed_whileTheOnlySlotWaitsOutALongBackoff_closesThePoolAtOnce_andFailsWaitersClosed() {
        Cqflux cq = FaultRig.fabric().build();
        try {
            PeerPool p = cq.peerPool(deadAddress(), PeerPoolOptions.builder().jitter(0)
                    .reconnectBackoff(Duration.ofSeconds(20), Duration.ofSeconds(20))
                    .maxAcquireTime(Duration.ofMinutes(1)).build());
            try (PeerPoolEvents e = new PeerPoolEvents(p)) {
                e.await(1, x -> x.kind() == PeerPoolEvent.Kind.RETRYING, T, "the first failed attempt");
                // The waiter is queued on subscription; then the entry point goes. Neither the
                // 20 s retry timer nor the waiter's minute may hold the pool open.
                StepVerifier.create(p.acquire())
                        .then(cq::dispose)
                        .expectErrorSatisfies(x -> {
                            assertInstanceOf(ResourceClosedException.class, x);
                            assertTrue(x.getMessage().contains("disposed"), x.getMessage());
                        })
                        .verify(T);
                assertEquals(PeerPool.State.CLOSED, p.state());
                assertTrue(p.isDisposed());
                StepVerifier.create(p.onDispose()).expectComplete().verify(T);
                assertTrue(FaultRig.await(() -> e.completed, T), "events() did not complete: " + e);
                assertEquals(PeerPoolEvent.Kind.CLOSED, e.seen.get(e.seen.size() - 1).kind(), e.toString());
                e.assertInOrder();
            }
            StepVerifier.create(cq.onDispose()).expectComplete().verify(T);
        } finally {
            cq.dispose();
        }
    }

    /** Runs {@code body} with the pool's logger replaced by one that records; {@return what it recorded} */
    private static TestLogger logged(Runnable body) {
        Logger saved = PeerPool.log;
        TestLogger logs = new TestLogger(false);
        PeerPool.log = logs;
        try {
            body.run();
        } finally {
            PeerPool.log = saved;
        }
        return logs;
    }

    private static long warnings(TestLogger logs, InetSocketAddress about) {
        return logs.getErrContent().lines()
                .filter(l -> l.contains("WARN") && l.contains("peer pool ") && l.contains(":" + about.getPort()))
                .count();
    }

    private List<Long> retryDelays(int n) {
        return ev.seen.stream().filter(e -> e.kind() == PeerPoolEvent.Kind.RETRYING).limit(n)
                .map(e -> e.delay().toMillis()).toList();
    }

    @Test
    void peerThatAcceptsAndDropsEveryConnection_backoffKeepsDoubling_andOnlyTheFirstLossIsAWarning() {
        RdmaServer dropping = rig.server.bind(new InetSocketAddress(FaultRig.LO, 0), c -> Mono.<Void>empty(),
                rig.serverRegion).block(T);
        try {
            TestLogger logs = logged(() -> {
                pool(dropping.address(), PeerPoolOptions.builder().jitter(0)
                        .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(160)).build());
                ev.await(6, e -> e.kind() == PeerPoolEvent.Kind.RETRYING, T, "six retries");
                pool.dispose();
            });
            // Connections were established and dropped, yet none counts as a success: the delays
            // double as for a peer that refuses, attempt n waiting min * 2^(n-1) (the first
            // RETRYING is for attempt 2), capped at max. Before: every delay was the minimum.
            assertTrue(ev.count(PeerPoolEvent.Kind.LOST) >= 3, "the peer accepted and dropped: " + ev);
            assertEquals(List.of(40L, 80L, 160L, 160L, 160L, 160L), retryDelays(6), ev.toString());
            // One outage, one WARN line at most (none when the first end was LOST: ConnectionCore said it).
            assertTrue(warnings(logs, dropping.address()) <= 1, logs.getErrContent());
            assertTrue(logs.getOutContent().contains("ended again"), "later losses at DEBUG: " + logs.getOutContent());
            ev.assertInOrder();
        } finally {
            dropping.disposeNow(T);
        }
    }

    @Test
    void connectionThatStaysUpBackoffResetAfter_resetsTheBackoffToItsMinimum() {
        // Each connection lives 300 ms, longer than the 50 ms it takes to count as stable.
        RdmaServer brief = rig.server.bind(new InetSocketAddress(FaultRig.LO, 0),
                c -> Mono.delay(Duration.ofMillis(300)).then(), rig.serverRegion).block(T);
        try {
            pool(brief.address(), PeerPoolOptions.builder().jitter(0).backoffResetAfter(Duration.ofMillis(50))
                    .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(160)).build());
            ev.await(3, e -> e.kind() == PeerPoolEvent.Kind.LOST, T, "three losses");
            ev.await(3, e -> e.kind() == PeerPoolEvent.Kind.RETRYING, T, "three retries");
            assertEquals(List.of(20L, 20L, 20L), retryDelays(3), ev.toString());
            assertTrue(ev.seen.stream().filter(e -> e.kind() == PeerPoolEvent.Kind.RETRYING).limit(3)
                    .allMatch(e -> e.attempt() == 1), ev.toString());
            ev.assertInOrder();
        } finally {
            brief.disposeNow(T);
        }
    }

    @Test
    void validationThatThrowsAnError_evictsTheConnectionLikeAFailedOne_andTheDisposeReleasesEveryConnection() {
        AtomicInteger calls = new AtomicInteger();
        pool(rig.srv.address(), PeerPoolOptions.builder().maxAcquireTime(T)
                .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(40))
                .validation(c -> {
                    if (calls.incrementAndGet() <= 3) {
                        throw new AssertionError("validation " + calls.get());
                    }
                    return true;
                }).build());
        assertEquals(1, pool.withConnection(c -> Mono.just(1)).block(T));
        assertTrue(calls.get() >= 4, "validated " + calls.get() + " times");
        pool.disposeNow(T); // every connection it opened released, the evicted ones included
        assertTrue(FaultRig.await(() -> rig.server.openConnections() == 1, T),
                "server connections left: " + rig.server.openConnections() + " (the rig's own is 1)");
    }

    @Test
    void validationThatAlwaysFails_backoffKeepsDoubling() {
        pool(rig.srv.address(), PeerPoolOptions.builder().jitter(0).validation(c -> false).maxAcquireTime(T)
                .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(160)).build());
        // A waiting operation tries each new connection, evicts it, and waits on.
        Disposable waiting = pool.acquire().subscribe(c -> { }, e -> { });
        try {
            ev.await(5, e -> e.kind() == PeerPoolEvent.Kind.RETRYING, T, "five retries");
        } finally {
            waiting.dispose();
        }
        // Each evicted connection continues the backoff (attempt n waits min * 2^(n-1)).
        assertEquals(List.of(40L, 80L, 160L, 160L, 160L), retryDelays(5), ev.toString());
        ev.assertInOrder();
    }

    @Test
    void peerPool_unresolvedAddressOrNoPort_isRefusedNamingTheAddress() {
        int open = rig.client.openConnections();
        InetSocketAddress unresolved = InetSocketAddress.createUnresolved("nosuchhost.invalid", 7000);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> rig.client.peerPool(unresolved));
        assertTrue(e.getMessage().contains("nosuchhost.invalid") && e.getMessage().contains("7000")
                && e.getMessage().contains("resolve"), e.getMessage());
        IllegalArgumentException p0 = assertThrows(IllegalArgumentException.class,
                () -> rig.client.peerPool(new InetSocketAddress(FaultRig.LO, 0), PeerPoolOptions.defaults()));
        assertTrue(p0.getMessage().contains(":0") && p0.getMessage().contains("[1, 65535]"), p0.getMessage());
        assertEquals(open, rig.client.openConnections(), "nothing was started");
    }

    @Test
    void peerPool_whoseConnectRequestCannotBeSent_isRefusedAtOnce_notRetriedForever() {
        int open = rig.client.openConnections();
        int max = rig.client.maxConnectPrivateData();
        IllegalArgumentException raw = assertThrows(IllegalArgumentException.class, () -> rig.client.peerPool(
                rig.srv.address(), PeerPoolOptions.builder()
                        .connectOptions(ConnectOptions.rawPrivateData(new byte[max + 1])).build()));
        assertTrue(raw.getMessage().contains((max + 1) + " bytes") && raw.getMessage().contains(String.valueOf(max)),
                raw.getMessage());
        // A region of another instance in the hello, and more regions than the hello can carry.
        IllegalArgumentException foreign = assertThrows(IllegalArgumentException.class, () -> rig.client.peerPool(
                rig.srv.address(), PeerPoolOptions.builder()
                        .connectOptions(ConnectOptions.exposing(rig.serverRegion)).build()));
        assertTrue(foreign.getMessage().contains("another Cqflux instance"), foreign.getMessage());
        Region[] many = new Region[64];
        java.util.Arrays.fill(many, rig.local);
        assertThrows(IllegalArgumentException.class, () -> rig.client.peerPool(rig.srv.address(),
                PeerPoolOptions.builder().connectOptions(ConnectOptions.exposing(many)).build()));
        assertEquals(open, rig.client.openConnections(), "nothing was started");
    }

    /**
     * Fixed credentials whose hello is over the transport's limit (255 bytes on fabric/tcp's 256):
     * every connect of the pool would fail before sending anything, so the pool is refused when it
     * is made, naming the sizes, as a raw request over the limit is; it kept retrying.
     */
    @Test
    void peerPool_withFixedCredentialsTheHelloCannotCarry_isRefusedAtOnce_notRetriedForever() {
        int open = rig.client.openConnections();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> rig.client.peerPool(
                rig.srv.address(), PeerPoolOptions.builder()
                        .connectOptions(ConnectOptions.defaults().credentials(new byte[255])).build()));
        assertTrue(e.getMessage().contains("255 bytes of credentials")
                && e.getMessage().contains(String.valueOf(rig.client.maxConnectPrivateData())), e.getMessage());
        assertEquals(open, rig.client.openConnections(), "nothing was started");
        // Credentials that fit are taken.
        pool(rig.srv.address(), PeerPoolOptions.builder()
                .connectOptions(ConnectOptions.defaults().credentials(new byte[16])).build());
        assertEquals(42L, readFirstWord(pool).block(T));
    }

    /**
     * A region the pool exposes, closed after the pool was made: the reconnect cannot send its
     * request, nor could any later one, so the pool ends as a dispose ends it, with the reason:
     * a waiting acquire and a later one fail with ResourceClosedException naming the region, no
     * further attempt is made, and CLOSED carries the cause.
     */
    @Test
    void exposedRegionClosedAfterCreation_poolStopsRetrying_failsItsAcquiresNamingTheRegion_andCloses() {
        Region exposed = rig.client.register(rig.arena.allocate(4096, 64), io.cqflux.core.RegionAccess.WRITE_DST,
                io.cqflux.core.RegionAccess.READ_SRC);
        pool(rig.srv.address(), PeerPoolOptions.builder().connectOptions(ConnectOptions.exposing(exposed))
                .reconnectBackoff(Duration.ofMillis(300), Duration.ofSeconds(1)).jitter(0)
                .maxAcquireTime(Duration.ofSeconds(3)).build());
        ev.await(1, e -> e.kind() == PeerPoolEvent.Kind.CONNECTED, T, "the first connection");
        assertTrue(FaultRig.await(() -> rig.accepted.size() == 2, T), "accepted " + rig.accepted);
        exposed.close();
        // The server ends the pool's connection: the slot reconnects, with a hello naming a closed region.
        rig.accepted.stream().filter(a -> a != rig.serverConn).findFirst().orElseThrow().dispose();
        ev.await(1, e -> e.kind() == PeerPoolEvent.Kind.LOST, T, "LOST");
        String region = exposed.toString();
        // Subscribed during the backoff (600 ms): it waits, and the failed reconnect fails it.
        StepVerifier.create(pool.acquire())
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(ResourceClosedException.class, e);
                    assertTrue(e.getMessage().contains(region) && e.getMessage().contains("can no longer be sent"),
                            e.getMessage());
                })
                .verify(T);
        ev.await(1, e -> e.kind() == PeerPoolEvent.Kind.CLOSED, T, "CLOSED");
        assertEquals(PeerPool.State.CLOSED, pool.state());
        assertTrue(pool.isDisposed());
        PeerPoolEvent closed = ev.seen.stream().filter(e -> e.kind() == PeerPoolEvent.Kind.CLOSED).findFirst().get();
        assertInstanceOf(ResourceClosedException.class, closed.cause(), closed.toString());
        assertTrue(closed.cause().getMessage().contains(region), closed.toString());
        // CLOSED is the last event: the first attempt and the refused reconnect, nothing after.
        assertEquals(2, ev.count(PeerPoolEvent.Kind.CONNECTING), ev.toString());
        StepVerifier.create(pool.acquire())
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(ResourceClosedException.class, e);
                    assertTrue(e.getMessage().contains(region), e.getMessage());
                })
                .verify(T);
        StepVerifier.create(pool.onDispose()).expectComplete().verify(T);
        ev.assertInOrder();
    }

    @Test
    void poolName_isTheHostAsGiven() {
        InetSocketAddress byName = new InetSocketAddress("localhost", deadAddress().getPort());
        pool(byName, PeerPoolOptions.builder().whenUnavailable(PeerPoolOptions.WhenUnavailable.FAIL_FAST).build());
        ev.await(1, e -> e.kind() == PeerPoolEvent.Kind.RETRYING, T, "a failed attempt");
        StepVerifier.create(pool.acquire())
                .expectErrorSatisfies(e -> assertTrue(e.getMessage().contains("peer pool localhost/")
                        && e.getMessage().contains(":" + byName.getPort()), e.getMessage()))
                .verify(T);
    }

    /** The example of docs/guide.md "Connections that heal", as written there but for the address. */
    @Test
    void guideExample_connectionsThatHeal_compilesAndRuns() {
        Cqflux cqflux = rig.client;
        Region staging = rig.local;
        long slot = 3;
        reactor.util.Logger log = reactor.util.Loggers.getLogger(PeerPoolTest.class);
        InetSocketAddress peer = rig.srv.address();
        // --- as in the guide
        PeerPool pool = cqflux.peerPool(peer, PeerPoolOptions.builder()
                .size(2)                                                     // connections to the one peer
                .reconnectBackoff(Duration.ofMillis(100), Duration.ofSeconds(10))   // doubling, jitter 0.5
                .whenUnavailable(PeerPoolOptions.WhenUnavailable.WAIT)       // or FAIL_FAST
                .maxAcquireTime(Duration.ofSeconds(2))
                .build());

        // Look the regions up inside the callback: each reconnect brings the peer's regions anew.
        Mono<Void> put = pool.withConnection(conn ->
                conn.durableWrite(conn.remoteRegion(0), slot * 4096L, staging, 0, 4096));

        pool.events().subscribe(e -> log.info("{}", e));   // CONNECTING, CONNECTED, LOST, RETRYING, CLOSED
        PeerPool.State now = pool.state();                 // CONNECTING, CONNECTED, RECONNECTING, CLOSED
        // --- end
        this.pool = pool;
        assertTrue(now == PeerPool.State.CONNECTING || now == PeerPool.State.CONNECTED, now.toString());
        StepVerifier.create(put).expectComplete().verify(T);
    }

    @Test
    void options_outOfRange_areRefusedNamingTheValue() {
        PeerPoolOptions.Builder b = PeerPoolOptions.builder();
        assertTrue(assertThrows(IllegalArgumentException.class, () -> b.size(0)).getMessage().contains("size 0"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> b.size(PeerPoolOptions.MAX_SIZE + 1))
                .getMessage().contains("1025"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> b.reconnectBackoff(Duration.ZERO, Duration.ofSeconds(1))).getMessage().contains("PT0S"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> b.reconnectBackoff(Duration.ofSeconds(2), Duration.ofSeconds(1))).getMessage().contains("PT1S"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> b.jitter(1.5)).getMessage().contains("1.5"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> b.jitter(Double.NaN)).getMessage().contains("NaN"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> b.maxAcquireTime(Duration.ZERO))
                .getMessage().contains("maxAcquireTime PT0S"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> b.maxPendingAcquires(-1))
                .getMessage().contains("-1"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> b.backoffResetAfter(Duration.ofSeconds(-1)))
                .getMessage().contains("backoffResetAfter PT-1S"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> b.backoffResetAfter(Duration.ofDays(2)))
                .getMessage().contains("PT48H"));
        assertThrows(NullPointerException.class, () -> b.connectOptions(null));
    }
}
