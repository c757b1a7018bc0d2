package io.cqflux.test.network;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.ConnectOptions;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Durable writes over fabric/tcp while the link to the peer goes down: a partition of 2 s
 * (shorter than the operation timeout), one longer than every timeout, and a peer host that
 * vanishes. Whatever happens, every write's {@code Mono} ends exactly once, within the operation
 * timeout (plus the deadline check's slack) of its start, and either completes or fails with
 * {@code ConnectionException(LOST)}; after the heal a fresh connection to the same peer finds every
 * completed write in the peer's memory byte for byte (the peer's own dump, and a read over the
 * fresh connection). A write whose {@code Mono} failed may or may not have landed; the figures say
 * which. Idle connections across a partition are the keep-alive's: it ends them LOST on both
 * sides (a receive-only side too) within 2 x interval x misses, sends no probe on a busy
 * connection and none ever to a peer with raw private data.
 */
class PartitionTest {
    static final Duration T = Duration.ofSeconds(10);
    /** The deadline's own slack: how late past {@code operationTimeout} a write may still end. */
    static final Duration SLACK = Duration.ofMillis(1500);
    static final int CAPACITY = 8192;
    static final int WINDOW = 16;
    static final long PACE_NANOS = 250_000;

    NetworkRig rig;
    NetPeer.Handle peer;
    Arena arena;
    Cqflux client;
    Region local;
    Region readBack;
    Records records;

    private void start(Duration operationTimeout, Duration connectTimeout) {
        start(operationTimeout, connectTimeout, UnaryOperator.identity());
    }

    /**
     * @param clientB adjusts the client's builder
     * @param peerOptions the peer's further arguments ({@link NetPeer#main}: its keep-alive)
     */
    private void start(Duration operationTimeout, Duration connectTimeout, UnaryOperator<Cqflux.Builder> clientB,
                       String... peerOptions) {
        rig = NetworkRig.create();
        peer = rig.startPeer((long) CAPACITY * Records.SIZE, peerOptions);
        client = clientB.apply(Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(rig.rootAddress)
                .operationTimeout(operationTimeout).connectionConfig(ConnectionConfig.DEFAULT.withTimeout(connectTimeout))
                .shutdownTimeout(Duration.ofSeconds(2))).build();
        arena = Arena.ofShared();
        MemorySegment mem = arena.allocate((long) CAPACITY * Records.SIZE, 64);
        records = new Records(System.nanoTime(), CAPACITY);
        records.fill(mem);
        local = client.register(mem, RegionAccess.WRITE_SRC);
        readBack = client.register(arena.allocate((long) CAPACITY * Records.SIZE, 64), RegionAccess.READ_DST);
    }

    @AfterEach
    void tearDown() {
        try {
            if (client != null) {
                client.dispose();
                client.onDispose().toFuture().completeOnTimeout(null, 20, TimeUnit.SECONDS).join();
            }
            if (arena != null) {
                arena.close();
            }
        } finally {
            if (rig != null) {
                rig.close();
            }
        }
    }

    static boolean await(BooleanSupplier c, Duration max) {
        long end = System.nanoTime() + max.toNanos();
        while (System.nanoTime() < end) {
            if (c.getAsBoolean()) {
                return true;
            }
            sleep(Duration.ofMillis(10));
        }
        return c.getAsBoolean();
    }

    static void sleep(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /**
     * A connect whose own timing is not under test: the first one to a peer JVM that has just
     * started (its first accept runs cold code), or the first after a heal, may take longer than
     * the short connect timeouts these tests use on a shared 2-core machine, so it is tried up to
     * three times (only a timeout, UNREACHABLE, is retried) and each retry is printed.
     */
    static RdmaConnection connectPatiently(Cqflux client, NetPeer.Handle peer) {
        return connectPatiently(client, peer.address(), T, "");
    }

    /**
     * The same for any client and address (the rxe rig's tests too), each attempt bounded by
     * {@code bound}; {@code who} prefixes the printed retries ("rpma ", or empty).
     */
    static RdmaConnection connectPatiently(Cqflux client, java.net.InetSocketAddress address, Duration bound, String who) {
        for (int attempt = 1; ; attempt++) {
            try {
                return client.connect(address).block(bound);
            } catch (ConnectionException e) {
                if (attempt == 3 || e.event() != ConnectionEvent.UNREACHABLE) {
                    throw e;
                }
                System.out.printf("FACT %sconnect to %s, attempt %d: %s%n", who, address, attempt, e.getMessage());
            }
        }
    }

    private Writer writeOn(RdmaConnection conn) {
        PeerRegion remote = conn.remoteRegion(0);
        return new Writer(records, CAPACITY, WINDOW, PACE_NANOS, i -> conn.durableWrite(remote, (long) i * Records.SIZE,
                local, (long) i * Records.SIZE, Records.SIZE));
    }

    /** Waits until writes flow (some ended). */
    private void awaitTraffic() {
        int from = records.ended();
        assertTrue(await(() -> records.ended() >= from + 200, T), "no traffic to the peer: " + records);
    }

    /** Checks, a little after the fault, that writes were still running into it. */
    private void assertWritesRunIntoTheFault() {
        sleep(Duration.ofMillis(200));
        assertTrue(records.started() > records.ended(), "no write running while the link is down: " + records);
    }

    /** {@link Records#assertEveryWriteEndedOnce}, the longest printed as this suite's. */
    private void assertEveryWriteEndedOnce(Duration bound) {
        records.assertEveryWriteEndedOnce(bound, "longest write");
    }

    /**
     * A fresh connection to the same peer: the peer's memory (its dump, and a read over the fresh
     * connection) holds every completed write byte for byte.
     */
    private void assertCompletedWritesLanded(String what) {
        RdmaConnection fresh = connectPatiently(client, peer);
        assertTrue(fresh != null && !fresh.isDisposed(), "no fresh connection after the heal");
        byte[] read = records.readOver(fresh, readBack, T);
        records.assertCompletedWritesLanded(what, "peer", " (its dump)", peer.dump(0, read.length), read, "");
        fresh.dispose();
    }


    @Test
    void durableWrites_twoSecondPartition_shorterThanTheTimeout_everyWriteEndsOnceInBound_completedOnesLanded() {
        Duration opTimeout = Duration.ofSeconds(5);
        start(opTimeout, Duration.ofSeconds(2));
        RdmaConnection conn = connectPatiently(client, peer);
        try (Writer w = writeOn(conn)) {
            awaitTraffic();
            rig.partition();
            long t0 = System.nanoTime();
            int endedAtPartition = records.ended();
            assertWritesRunIntoTheFault();
            sleep(Duration.ofNanos(Duration.ofSeconds(2).toNanos() - (System.nanoTime() - t0)));
            int endedDuring = records.ended() - endedAtPartition;
            rig.heal();
            long healed = System.nanoTime();
            int atHeal = records.ended();
            // Either the connection rides the partition out (TCP retransmits once the link is
            // back) or the deadline ends it: wait for one or the other.
            assertTrue(await(() -> records.ended() > atHeal + 200 || conn.isDisposed(), opTimeout.plus(SLACK)),
                    "neither did writes resume after the heal nor did the connection end: " + records);
            System.out.printf("FACT 2 s partition, operationTimeout %d ms: %d writes ended during it; %s %.0f ms after"
                    + " the heal%n", opTimeout.toMillis(), endedDuring, conn.isDisposed() ? "the connection ended"
                    : "writes resumed", (System.nanoTime() - healed) / 1e6);
            w.close();
            assertTrue(await(() -> records.ended() == records.started(), opTimeout.plus(SLACK)),
                    "writes pending long after the heal: " + records);
        }
        assertEveryWriteEndedOnce(opTimeout.plus(SLACK));
        assertCompletedWritesLanded("2 s partition");
    }

    @Test
    void durableWrites_partitionLongerThanEveryTimeout_failLostInBound_connectFailsInBound_completedOnesLanded() {
        Duration opTimeout = Duration.ofSeconds(1);
        Duration connectTimeout = Duration.ofSeconds(1);
        start(opTimeout, connectTimeout);
        RdmaConnection conn = connectPatiently(client, peer);
        long t0;
        try (Writer w = writeOn(conn)) {
            awaitTraffic();
            rig.partition();
            t0 = System.nanoTime();
            assertWritesRunIntoTheFault();
            assertTrue(await(() -> records.ended() == records.started() && conn.isDisposed(), opTimeout.plus(SLACK).plus(SLACK)),
                    "writes still pending " + opTimeout.plus(SLACK).plus(SLACK) + " into the partition: " + records);
            w.close();
        }
        long lastEnd = records.lastEndNanos() - t0;
        assertEveryWriteEndedOnce(opTimeout.plus(SLACK));
        assertTrue(records.outcomes().containsKey("ConnectionException(LOST)"),
                "the partition ended no write, so it tested nothing: " + records);
        assertEquals(List.of(ConnectionEvent.ESTABLISHED, ConnectionEvent.LOST),
                conn.events().collectList().block(T));

        long c0 = System.nanoTime();
        Throwable connectError = null;
        try {
            client.connect(peer.address()).block(T);
        } catch (RuntimeException e) {
            connectError = e;
        }
        long connectTook = System.nanoTime() - c0;
        System.out.printf("FACT partition longer than every timeout (operationTimeout %d ms): last write ended %.0f ms"
                + " into it; a connect during it failed after %.0f ms with %s%n", opTimeout.toMillis(), lastEnd / 1e6,
                connectTook / 1e6, connectError);
        ConnectionException ce = assertInstanceOf(ConnectionException.class, connectError,
                "a connect across the partition did not fail with a ConnectionException");
        assertEquals(ConnectionEvent.UNREACHABLE, ce.event(), ce.toString());
        assertTrue(connectTook <= connectTimeout.plus(SLACK).toNanos(),
                "the connect took " + connectTook / 1_000_000 + " ms to fail, beyond its timeout and slack");

        // Hold the partition past 4 s in all before the heal.
        long left = Duration.ofSeconds(4).toNanos() - (System.nanoTime() - t0);
        if (left > 0) {
            sleep(Duration.ofNanos(left));
        }
        rig.heal();
        assertCompletedWritesLanded("partition of 4 s");
    }

    @Test
    void durableWrites_underTenPercentLoss_everyWriteEndsOnceInBound_completedOnesLanded() {
        Duration opTimeout = Duration.ofSeconds(5);
        start(opTimeout, Duration.ofSeconds(2));
        RdmaConnection conn = connectPatiently(client, peer);
        int before;
        long drops;
        try (Writer w = writeOn(conn)) {
            awaitTraffic();
            before = records.ended();
            rig.loss(10);
            sleep(Duration.ofSeconds(2));
            drops = rig.lossDrops();
            rig.noLoss();
            w.close();
            assertTrue(await(() -> records.ended() == records.started(), opTimeout.plus(SLACK)),
                    "writes pending after the loss ended: " + records);
        }
        assertTrue(drops > 0, "the loss filter dropped nothing: it tested nothing");
        assertEveryWriteEndedOnce(opTimeout.plus(SLACK));
        System.out.printf("FACT 10 %% loss for 2 s (operationTimeout %d ms): %d packets dropped, %d writes ended during it;"
                + " connection %s%n", opTimeout.toMillis(), drops, records.ended() - before,
                conn.isDisposed() ? "ended" : "still up");
        assertCompletedWritesLanded("10 % loss");
    }

    /**
     * The transparency claim: under 5 % loss in both directions (what each side sends, acks
     * included), durable writes with the library's default operation timeout all complete, slower,
     * and none fails; the connection stays up, and every write is in the peer's memory. The
     * latency and throughput this costs are the loss benchmark's ({@link LossBench}).
     */
    @Test
    void durableWrites_underFivePercentLossBothWays_allComplete_noneFails_allLanded() {
        Duration opTimeout = Duration.ofSeconds(30); // the library's default
        start(opTimeout, Duration.ofSeconds(2));
        RdmaConnection conn = connectPatiently(client, peer);
        int before;
        long toPeer;
        long toClient;
        try (Writer w = writeOn(conn)) {
            awaitTraffic();
            before = records.ended();
            rig.loss(5, 5);
            sleep(Duration.ofSeconds(2));
            toPeer = rig.lossDropsToPeer();
            toClient = rig.lossDropsToClient();
            rig.noLoss();
            w.close();
            assertTrue(await(() -> records.ended() == records.started(), opTimeout.plus(SLACK)),
                    "writes pending after the loss ended: " + records);
        }
        System.out.printf("FACT 5 %% loss both ways for 2 s (operationTimeout %d ms): %d packets dropped to the peer, %d"
                + " to the client, %d writes ended during it; connection %s%n", opTimeout.toMillis(), toPeer, toClient,
                records.ended() - before, conn.isDisposed() ? "ended" : "still up");
        assertTrue(toPeer > 0 && toClient > 0, "a direction lost nothing (to the peer " + toPeer + ", to the client "
                + toClient + "): it tested nothing");
        assertEveryWriteEndedOnce(opTimeout.plus(SLACK));
        assertEquals(java.util.Map.of("ok", records.started()), records.outcomes(),
                "a write failed under 5 % loss: " + records);
        assertTrue(!conn.isDisposed(), "the connection ended under 5 % loss");
        assertCompletedWritesLanded("5 % loss both ways");
    }

    /** The keep-alive of the idle-connection cases, on both sides: a silent peer is found within about 4 x this. */
    static final Duration KEEP_ALIVE = Duration.ofMillis(200);
    static final int MISSES = 3;
    /** What the keep-alive promises: an idle connection across a partition ends within 2 x interval x misses. */
    static final Duration KEEP_ALIVE_BOUND = KEEP_ALIVE.multipliedBy(2L * MISSES);

    private void startWithKeepAlive() {
        start(Duration.ofMillis(500), Duration.ofSeconds(1), b -> b.keepAlive(KEEP_ALIVE, MISSES),
                Long.toString(KEEP_ALIVE.toMillis()), Integer.toString(MISSES));
    }

    /**
     * An idle connection across a partition: the keep-alive finds the loss on both sides without
     * any operation, within 2 x interval x misses, the client's events read ESTABLISHED then
     * LOST, and a write posted afterwards fails at once with that LOST.
     */
    @Test
    void idleConnection_partitioned_endsLostOnBothSides_withinTheKeepAliveBound_andAWriteThenFailsAtOnce() {
        startWithKeepAlive();
        RdmaConnection conn = connectPatiently(client, peer);
        sleep(KEEP_ALIVE.multipliedBy(3)); // idle across a few probes, alive
        assertTrue(!conn.isDisposed(), "the idle connection ended while the link was up");
        assertEquals(1, peer.connections()[1], "the peer's side is not open while the link is up");
        rig.partition();
        long t0 = System.nanoTime();
        assertTrue(await(conn::isDisposed, T), "the idle connection is still open " + T + " into the partition");
        long clientTook = System.nanoTime() - t0;
        assertTrue(await(() -> peer.connections()[2] == 1, T), "the peer's side did not end LOST within " + T);
        long peerTook = System.nanoTime() - t0;
        long w0 = System.nanoTime();
        Throwable error = null;
        try {
            records.track(0, conn.durableWrite(conn.remoteRegion(0), 0, local, 0, Records.SIZE)).block(T);
        } catch (RuntimeException e) {
            error = e;
        }
        long writeTook = System.nanoTime() - w0;
        System.out.printf("FACT idle connection partitioned, keep-alive %d ms x %d: the client ended LOST after %.0f ms,"
                + " the peer after at most %.0f ms; a write then failed after %.1f ms with %s; client probes %d%n",
                KEEP_ALIVE.toMillis(), MISSES, clientTook / 1e6, peerTook / 1e6, writeTook / 1e6, error,
                conn.keepAliveProbes());
        assertTrue(clientTook <= KEEP_ALIVE_BOUND.toNanos(), "the client found the loss after " + clientTook / 1_000_000
                + " ms, beyond 2 x interval x misses = " + KEEP_ALIVE_BOUND.toMillis() + " ms");
        assertTrue(peerTook <= KEEP_ALIVE_BOUND.toNanos(), "the peer found the loss after at most " + peerTook / 1_000_000
                + " ms, beyond 2 x interval x misses = " + KEEP_ALIVE_BOUND.toMillis() + " ms");
        assertTrue(conn.keepAliveProbes() > 0, "the idle client sent no probe");
        assertEquals(List.of(ConnectionEvent.ESTABLISHED, ConnectionEvent.LOST), conn.events().collectList().block(T));
        ConnectionException ce = assertInstanceOf(ConnectionException.class, error, "the write after the loss");
        assertEquals(ConnectionEvent.LOST, ce.event(), ce.toString());
        assertTrue(ce.getMessage().contains("keep-alive"), "the LOST does not name the keep-alive: " + ce.getMessage());
        assertTrue(writeTook < Duration.ofMillis(100).toNanos(), "the write took " + writeTook / 1_000_000 + " ms to fail");
        rig.heal();
    }

    /** A side that only receives (it never posts an operation) finds a silent peer through the keep-alive. */
    @Test
    void receiveOnlySide_partitioned_itsReceiveFailsLost_withinTheKeepAliveBound() {
        startWithKeepAlive();
        RdmaConnection conn = connectPatiently(client, peer);
        java.util.concurrent.CompletableFuture<Throwable> receiveEnd = new java.util.concurrent.CompletableFuture<>();
        conn.receive().subscribe(m -> { }, receiveEnd::complete, () -> receiveEnd.complete(null));
        sleep(KEEP_ALIVE.multipliedBy(3));
        assertTrue(!receiveEnd.isDone(), "the receive ended while the link was up: " + receiveEnd.getNow(null));
        rig.partition();
        long t0 = System.nanoTime();
        Throwable end = receiveEnd.completeOnTimeout(null, T.toMillis(), TimeUnit.MILLISECONDS).join();
        long took = System.nanoTime() - t0;
        System.out.printf("FACT receive-only side partitioned, keep-alive %d ms x %d: its receive ended after %.0f ms"
                + " with %s%n", KEEP_ALIVE.toMillis(), MISSES, took / 1e6, end);
        ConnectionException ce = assertInstanceOf(ConnectionException.class, end, "the receive across the partition");
        assertEquals(ConnectionEvent.LOST, ce.event(), ce.toString());
        assertTrue(took <= KEEP_ALIVE_BOUND.toNanos(), "the receive ended after " + took / 1_000_000 + " ms, beyond "
                + KEEP_ALIVE_BOUND.toMillis() + " ms");
        rig.heal();
    }

    /**
     * A connection with raw private data (a stand-in for a peer not written with cqflux) is never
     * probed, by either side: nothing may reach such a peer that it did not ask for. It has no
     * keep-alive, so an idle one stays established across a partition (its next operation finds it).
     */
    @Test
    void foreignConnection_rawPrivateData_isNeverProbed_byEitherSide() {
        startWithKeepAlive();
        RdmaConnection conn = client.connect(peer.rawAddress(), ConnectOptions.rawPrivateData(new byte[0])).block(T);
        sleep(KEEP_ALIVE.multipliedBy(2L * MISSES + 2));
        long[] peerSide = peer.connections();
        System.out.printf("FACT raw connection idle for %d ms with keep-alive %d ms x %d: client probes %d, peer %s%n",
                KEEP_ALIVE.multipliedBy(2L * MISSES + 2).toMillis(), KEEP_ALIVE.toMillis(), MISSES,
                conn.keepAliveProbes(), java.util.Arrays.toString(peerSide));
        assertEquals(0, conn.keepAliveProbes(), "the client probed a foreign peer");
        assertEquals(1, peerSide[0], "the peer did not accept the raw connection");
        assertEquals(0, peerSide[3], "the peer probed a foreign client");
        assertTrue(!conn.isDisposed() && peerSide[1] == 1, "an idle raw connection ended with the link up");
        rig.partition();
        sleep(KEEP_ALIVE.multipliedBy(2L * MISSES + 2));
        assertTrue(!conn.isDisposed(), "an idle raw connection ended: something judged a foreign peer by silence");
        assertEquals(0, conn.keepAliveProbes(), "the client probed a foreign peer across the partition");
        rig.heal();
    }

    /** A busy connection is its own proof of life: its keep-alive sends no probe. */
    @Test
    void busyConnection_sendsNoKeepAliveProbe() {
        startWithKeepAlive();
        RdmaConnection conn = connectPatiently(client, peer);
        PeerRegion remote = conn.remoteRegion(0);
        for (int i = 0; i < 100; i++) { // warm: the first writes load and compile the path
            conn.durableWrite(remote, 0, local, 0, Records.SIZE).block(T);
        }
        long before = conn.keepAliveProbes();
        long t0 = System.nanoTime();
        int writes = 0;
        while (System.nanoTime() - t0 < KEEP_ALIVE.multipliedBy(2L * MISSES).toNanos()) {
            conn.durableWrite(remote, (long) (writes % CAPACITY) * Records.SIZE, local,
                    (long) (writes % CAPACITY) * Records.SIZE, Records.SIZE).block(T);
            writes++;
        }
        System.out.printf("FACT busy connection, keep-alive %d ms x %d: %d durable writes in %d ms, probes %d -> %d%n",
                KEEP_ALIVE.toMillis(), MISSES, writes, KEEP_ALIVE.multipliedBy(2L * MISSES).toMillis(), before,
                conn.keepAliveProbes());
        assertTrue(writes > 100, "too little traffic to test anything: " + writes);
        assertEquals(before, conn.keepAliveProbes(), "a busy connection sent keep-alive probes");
    }

    @Test
    void durableWrites_peerHostVanishes_everyWriteEndsOnceWithLostInBound_andNoConnectHangs() {
        Duration opTimeout = Duration.ofSeconds(1);
        Duration connectTimeout = Duration.ofSeconds(1);
        start(opTimeout, connectTimeout);
        RdmaConnection conn = connectPatiently(client, peer);
        long t0;
        try (Writer w = writeOn(conn)) {
            awaitTraffic();
            t0 = System.nanoTime();
            rig.vanish();
            System.out.printf("FACT the vanish (link down, peer killed, namespace deleted) took %.0f ms%n",
                    (System.nanoTime() - t0) / 1e6);
            assertTrue(records.started() > records.ended(), "no write running when the peer vanished: " + records);
            assertTrue(await(() -> records.ended() == records.started() && conn.isDisposed(), opTimeout.plus(SLACK).plus(SLACK)),
                    "writes still pending " + opTimeout.plus(SLACK).plus(SLACK) + " after the peer vanished: " + records);
            w.close();
        }
        assertEveryWriteEndedOnce(opTimeout.plus(SLACK));
        assertTrue(records.outcomes().containsKey("ConnectionException(LOST)"),
                "the vanish ended no write, so it tested nothing: " + records);
        long c0 = System.nanoTime();
        Throwable connectError = null;
        try {
            client.connect(peer.address()).block(T);
        } catch (RuntimeException e) {
            connectError = e;
        }
        long connectTook = System.nanoTime() - c0;
        System.out.printf("FACT vanished peer (operationTimeout %d ms): last write ended %.0f ms after the vanish; %s;"
                + " a connect to it failed after %.0f ms with %s%n", opTimeout.toMillis(),
                (records.lastEndNanos() - t0) / 1e6, records, connectTook / 1e6, connectError);
        ConnectionException ce = assertInstanceOf(ConnectionException.class, connectError,
                "a connect to a vanished host did not fail with a ConnectionException");
        assertEquals(ConnectionEvent.UNREACHABLE, ce.event(), ce.toString());
        assertTrue(connectTook <= connectTimeout.plus(SLACK).toNanos(),
                "the connect took " + connectTook / 1_000_000 + " ms to fail, beyond its timeout and slack");
    }
}
