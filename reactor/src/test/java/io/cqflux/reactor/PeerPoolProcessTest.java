package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * {@link PeerPool} against a peer in its own JVM ({@link PeerProcess}) that is killed (SIGKILL),
 * stopped (SIGSTOP) and started again on the same port: operations during the gap wait or fail
 * fast as configured, the pool reconnects and learns the restarted peer's regions, in-flight
 * operations of the dead connection fail and are not retried, and a dispose while a connect hangs
 * ends everything. Every wait is bounded; traffic only to 127.0.0.1.
 */
class PeerPoolProcessTest {
    static final Duration T = FaultRig.T;
    /** Long enough for a peer JVM to start on a loaded 2-core machine. */
    static final Duration RESTART = Duration.ofSeconds(40);

    final List<PeerProcess.Handle> peers = new ArrayList<>();
    Arena arena;
    Cqflux client;
    Region local;
    PeerPool pool;
    PeerPoolEvents ev;

    @BeforeEach
    void setUp() {
        arena = Arena.ofShared();
        client = FaultRig.fabric().build();
        local = client.register(arena.allocate(FaultRig.SIZE, 64), FaultRig.ALL);
    }

    @AfterEach
    void tearDown() {
        if (ev != null) {
            ev.close();
        }
        for (PeerProcess.Handle p : peers) {
            p.destroy();
        }
        if (pool != null) {
            pool.dispose();
        }
        client.dispose();
        client.onDispose().toFuture().completeOnTimeout(null, 30, TimeUnit.SECONDS).join();
        arena.close();
    }

    private PeerProcess.Handle peer(int port, int generation) throws Exception {
        PeerProcess.Handle h = PeerProcess.start(port, generation);
        peers.add(h);
        return h;
    }

    private PeerPool pool(InetSocketAddress address, PeerPoolOptions options) {
        pool = client.peerPool(address, options);
        ev = new PeerPoolEvents(pool);
        return pool;
    }

    /** Reads the peer's generation (its region's first word) through the pool, and checks the region's size. */
    private Mono<Long> generation(PeerPool p) {
        return p.withConnection(conn -> {
            PeerRegion r = conn.remoteRegion(0); // looked up per call: re-learned on each reconnect
            long first = r.size();
            return conn.read(local, 0, r, 0, 8)
                    .then(Mono.fromSupplier(() -> {
                        long g = local.segment().get(ValueLayout.JAVA_LONG, 0);
                        assertEquals(PeerProcess.regionSize((int) g), first, "region size of generation " + g);
                        return g;
                    }));
        });
    }

    @Test
    void peerKilledAndRestartedOnSamePort_waitingOperationCompletesOnTheNewPeer_withItsRegions() throws Exception {
        PeerProcess.Handle first = peer(0, 1);
        InetSocketAddress address = first.address();
        pool(address, PeerPoolOptions.builder().reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(400))
                .maxAcquireTime(RESTART).build());
        StepVerifier.create(generation(pool)).expectNext(1L).expectComplete().verify(T);

        first.process().destroyForcibly(); // SIGKILL
        ev.await(1, e -> e.kind() == PeerPoolEvent.Kind.LOST, T, "LOST");
        PeerPoolEvent lost = ev.seen.stream().filter(e -> e.kind() == PeerPoolEvent.Kind.LOST).findFirst().get();
        assertInstanceOf(ConnectionException.class, lost.cause());
        assertEquals(ConnectionEvent.LOST, ((ConnectionException) lost.cause()).event(), lost.toString());
        // One RETRYING after the loss, one after a refused attempt.
        ev.await(2, e -> e.kind() == PeerPoolEvent.Kind.RETRYING, T, "a refused reconnect");
        assertEquals(PeerPool.State.RECONNECTING, pool.state());

        // An operation during the gap waits; the peer comes back on the same port, other regions.
        long t0 = System.nanoTime();
        StepVerifier.create(generation(pool))
                .then(() -> {
                    try {
                        peer(address.getPort(), 2);
                    } catch (Exception e) {
                        throw new AssertionError("restarting the peer on port " + address.getPort() + " failed", e);
                    }
                })
                .expectNext(2L)
                .expectComplete()
                .verify(RESTART);
        System.out.printf("FACT peer SIGKILLed and restarted on the same port: a waiting operation completed %.1f ms"
                + " after it was subscribed (peer JVM start included); events: %s%n", (System.nanoTime() - t0) / 1e6, ev);
        assertEquals(PeerPool.State.CONNECTED, pool.state());
        assertEquals(2, ev.count(PeerPoolEvent.Kind.CONNECTED), ev.toString());
        ev.assertInOrder();
    }

    @Test
    void peerKilled_operationsInFlightFailWithLost_notRetried_andFailFastAfterwards() throws Exception {
        PeerProcess.Handle p = peer(0, 0); // generation 0: the full region the flood addresses
        pool(p.address(), PeerPoolOptions.builder().whenUnavailable(PeerPoolOptions.WhenUnavailable.FAIL_FAST)
                .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(400)).build());
        StepVerifier.create(generation(pool)).expectNext(0L).expectComplete().verify(T);
        RdmaConnection conn = pool.acquire().block(T);
        Tally t = new Tally(3_000);
        ConnectionEndTest.flood(conn, local, t, 3_000);
        assertTrue(FaultRig.await(() -> t.terminated() >= 100, T), "no traffic: " + t);
        p.process().destroyForcibly();
        assertTrue(t.awaitAll(T), "operations still pending after the kill: " + t);
        String other = t.firstOtherThan("ConnectionException(LOST)");
        assertTrue(other == null, "in-flight operations fail LOST, and only that (nothing is replayed): " + other
                + "; " + t);
        assertEquals(0, t.twice(), t.toString());
        ev.await(1, e -> e.kind() == PeerPoolEvent.Kind.LOST, T, "LOST");
        long t0 = System.nanoTime();
        StepVerifier.create(generation(pool))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(ConnectionException.class, e);
                    assertEquals(ConnectionEvent.UNREACHABLE, ((ConnectionException) e).event());
                    assertTrue(e.getMessage().contains(p.address().getAddress().getHostAddress() + ":"
                            + p.address().getPort()), e.getMessage());
                })
                .verify(T);
        long took = System.nanoTime() - t0;
        System.out.printf("FACT peer SIGKILLed, FAIL_FAST: the next operation failed %.1f ms after it was subscribed;"
                + " in flight at the kill: %s%n", took / 1e6, t);
        assertTrue(took < Duration.ofSeconds(1).toNanos(), "fail fast took " + took / 1_000_000 + " ms");
        ev.assertInOrder();
    }

    @Test
    void peerKilled_waitingOperationFailsAfterMaxAcquireTime_namingAddressAndWait() throws Exception {
        PeerProcess.Handle p = peer(0, 1);
        Duration max = Duration.ofMillis(500);
        pool(p.address(), PeerPoolOptions.builder().maxAcquireTime(max)
                .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(200)).build());
        // The first connect to a freshly started peer JVM may take longer than the short bound.
        ev.await(1, e -> e.kind() == PeerPoolEvent.Kind.CONNECTED, T, "CONNECTED");
        StepVerifier.create(generation(pool)).expectNext(1L).expectComplete().verify(T);
        p.process().destroyForcibly();
        ev.await(1, e -> e.kind() == PeerPoolEvent.Kind.LOST, T, "LOST");
        long t0 = System.nanoTime();
        StepVerifier.create(generation(pool))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(ConnectionException.class, e);
                    assertTrue(e.getMessage().contains(":" + p.address().getPort()), e.getMessage());
                    assertTrue(e.getMessage().contains("within PT0.5S (waited "), e.getMessage());
                })
                .verify(T);
        long took = System.nanoTime() - t0;
        System.out.printf("FACT peer SIGKILLed, WAIT up to %s: the operation failed after %.1f ms; events: %s%n",
                max, took / 1e6, ev);
        assertTrue(took >= max.toNanos(), "failed before the bound: " + took / 1_000_000 + " ms");
        assertTrue(ev.count(PeerPoolEvent.Kind.RETRYING) >= 2, "kept retrying: " + ev);
    }

    @Test
    void dispose_whileAConnectHangsOnAStoppedPeer_endsAtOnce_andLeavesNoConnection() throws Exception {
        PeerProcess.Handle p = peer(0, 1);
        p.signal("STOP");
        int open = client.openConnections();
        // The stopped peer's kernel accepts the TCP connection; the handshake never answers.
        pool(p.address(), PeerPoolOptions.defaults());
        ev.await(1, e -> e.kind() == PeerPoolEvent.Kind.CONNECTING, T, "CONNECTING");
        assertTrue(FaultRig.await(() -> client.openConnections() > open, T), "the connect never started");
        long t0 = System.nanoTime();
        pool.disposeNow(T);
        long took = System.nanoTime() - t0;
        System.out.printf("FACT dispose with a connect hanging on a SIGSTOPped peer: disposeNow took %.1f ms%n",
                took / 1e6);
        // The entry point forgets a released connection in a dependent of the same future.
        assertTrue(FaultRig.await(() -> client.openConnections() == open, T),
                "the cancelled connect's connection is not released: " + client.openConnections() + " open");
        assertTrue(FaultRig.await(() -> ev.completed, T), "events() did not complete: " + ev);
        assertEquals(0, ev.count(PeerPoolEvent.Kind.CONNECTED), ev.toString());
        assertTrue(took < Duration.ofSeconds(3).toNanos(), "disposeNow took " + took / 1_000_000 + " ms");
        ev.assertInOrder();
    }
}
