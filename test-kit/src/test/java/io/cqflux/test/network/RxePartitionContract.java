package io.cqflux.test.network;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link PartitionTest}'s guarantee over Soft-RoCE, for every transport that runs on rxe (librpma;
 * libfabric's verbs provider): durable writes running into a partition shorter than the operation
 * timeout (2 s, and 10 s under the library's default timeout), one longer than every timeout, random loss, and reordering with duplication (each in
 * both directions) each end exactly once, within the operation timeout (plus the deadline's
 * slack) of their start, completed or with {@code ConnectionException(LOST)}; up to 5 % loss none
 * fails; after the heal a fresh connection finds every completed write in the server's memory byte
 * for byte. Client and server are two Cqflux instances of this JVM on the two ends of an
 * {@link RxeLinkRig}, whose netem shapes what crosses between them. A subclass names the transport
 * and its lane tag; the suite runs only in the Soft-RoCE lane (root, rdma_rxe and sch_netem in the
 * guest).
 */
abstract class RxePartitionContract extends RxeRigTest {
    static final Duration T = Duration.ofSeconds(20);
    /**
     * The deadline's slack: how late past {@code operationTimeout} a write may still end. Twice
     * the host's ({@link PartitionTest#SLACK}): the guest runs under TCG, where the loop's timer and
     * the completion path run many times slower, beside the host's builds.
     */
    static final Duration SLACK = Duration.ofMillis(3000);
    static final int CAPACITY = 4096;
    static final int WINDOW = 16;
    static final long PACE_NANOS = 250_000;

    Arena arena;
    Cqflux server;
    MemorySegment serverMem;
    InetSocketAddress serverAddress;
    Cqflux client;
    Region local;
    Region readBack;
    Records records;

    /** {@return {@code b} set to the transport under test} */
    abstract Cqflux.Builder transport(Cqflux.Builder b);

    /** {@return the transport's name in the FACT lines} */
    abstract String name();

    /**
     * {@return how late past {@code operationTimeout} a write may still end on this transport}:
     * {@link #SLACK} unless the transport's own end of a connection adds to it
     */
    Duration slack() {
        return SLACK;
    }

    void start(Duration operationTimeout, Duration connectTimeout) {
        arena = Arena.ofShared();
        server = transport(Cqflux.builder()).localAddress(rig.serverAddress)
                .shutdownTimeout(Duration.ofSeconds(2)).build();
        serverMem = arena.allocate((long) CAPACITY * Records.SIZE, 64);
        Region exposed = server.register(serverMem, RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                RegionAccess.FLUSH_TYPE_VISIBILITY);
        RdmaServer bound = server.bind(new InetSocketAddress(rig.serverAddress, RxePair.freePort()), exposed).block(T);
        bound.connections().subscribe();
        serverAddress = bound.address();
        client = transport(Cqflux.builder()).localAddress(rig.clientAddress)
                .operationTimeout(operationTimeout).connectionConfig(ConnectionConfig.DEFAULT.withTimeout(connectTimeout))
                .shutdownTimeout(Duration.ofSeconds(2)).build();
        MemorySegment mem = arena.allocate((long) CAPACITY * Records.SIZE, 64);
        records = new Records(System.nanoTime(), CAPACITY);
        records.fill(mem);
        local = client.register(mem, RegionAccess.WRITE_SRC);
        readBack = client.register(arena.allocate((long) CAPACITY * Records.SIZE, 64), RegionAccess.READ_DST);
    }

    @AfterEach
    void tearDown() {
        try {
            rig.heal();
        } finally {
            for (Cqflux c : new Cqflux[] {client, server}) {
                if (c != null) {
                    c.dispose();
                    c.onDispose().toFuture().completeOnTimeout(null, 20, TimeUnit.SECONDS).join();
                }
            }
            if (arena != null) {
                arena.close();
            }
        }
    }

    /** A connect whose timing is not under test, tried up to three times on a timeout (see PartitionTest). */
    RdmaConnection connectPatiently() {
        return PartitionTest.connectPatiently(client, serverAddress, T, name() + " ");
    }

    private Writer writeOn(RdmaConnection conn) {
        PeerRegion remote = conn.remoteRegion(0);
        return new Writer(records, CAPACITY, WINDOW, PACE_NANOS, i -> conn.durableWrite(remote, (long) i * Records.SIZE,
                local, (long) i * Records.SIZE, Records.SIZE));
    }

    private void awaitTraffic() {
        int from = records.ended();
        assertTrue(PartitionTest.await(() -> records.ended() >= from + 100, T), "no traffic to the server: " + records);
    }

    /**
     * Sets a fault under the running writes and checks that they run into it: within a second of
     * it, a write is in flight or one has failed. Setting it can take seconds under TCG (one tc
     * process, see {@link RxeLinkRig}); the fault holds from the call's return at the latest.
     *
     * @return {@code System.nanoTime()} at the call's return
     */
    private long faultUnderWrites(Runnable fault, String what) {
        long t0 = System.nanoTime();
        fault.run();
        long set = System.nanoTime();
        System.out.printf("FACT %s setting %s took %.0f ms%n", name(), what, (set - t0) / 1e6);
        assertTrue(PartitionTest.await(() -> records.started() > records.ended()
                        || records.firstErrorOtherThan("none") != null, Duration.ofSeconds(1)),
                "no write ran into the " + what + ": " + records);
        return set;
    }

    private void assertEveryWriteEndedOnce(Duration bound) {
        records.assertEveryWriteEndedOnce(bound, name() + " longest write");
    }

    /**
     * A fresh connection over the healed link: the server's memory (read directly, and over the
     * fresh connection) holds every completed write byte for byte.
     */
    void assertCompletedWritesLanded(String what) {
        RdmaConnection fresh = connectPatiently();
        byte[] read = records.readOver(fresh, readBack, T);
        byte[] direct = serverMem.asSlice(0, read.length).toArray(ValueLayout.JAVA_BYTE);
        records.assertCompletedWritesLanded(name() + " " + what, "server", "", direct, read, "; " + rig.rxeStatistics());
        fresh.dispose();
    }

    /**
     * A partition shorter than the operation timeout, at two lengths: 2 s under a 5 s timeout,
     * where rxe's fixed retransmission timer (about 2.2 s) decides whether the connection rides it
     * out or the deadline ends the writes in flight, and 10 s under the library's default timeout
     * (30 s), the middle length, which the connection is expected to ride out (the
     * guarantee allows either). The connect timeout is not under test: 10 s for the long case, whose
     * connects may be the first over a rig made moments before the JVM started.
     */
    @ParameterizedTest(name = "{0} s partition, operationTimeout {1} s")
    @CsvSource({"2, 5, 3", "10, 30, 10"})
    void durableWrites_partitionShorterThanTheTimeout_everyWriteEndsOnceInBound_completedOnesLanded(int seconds,
            int operationTimeoutSeconds, int connectTimeoutSeconds) {
        Duration partition = Duration.ofSeconds(seconds);
        Duration opTimeout = Duration.ofSeconds(operationTimeoutSeconds);
        start(opTimeout, Duration.ofSeconds(connectTimeoutSeconds));
        RdmaConnection conn = connectPatiently();
        long drops;
        try (Writer w = writeOn(conn)) {
            awaitTraffic();
            int endedAtPartition = records.ended();
            long t0 = faultUnderWrites(rig::partition, seconds + " s partition");
            PartitionTest.sleep(Duration.ofNanos(partition.toNanos() - (System.nanoTime() - t0)));
            int endedDuring = records.ended() - endedAtPartition;
            drops = rig.drops();
            rig.heal();
            long healed = System.nanoTime();
            int atHeal = records.ended();
            // Either the connection rides the partition out (rxe retransmits after its ack
            // timeout) or the deadline ends it: wait for one or the other.
            assertTrue(PartitionTest.await(() -> records.ended() > atHeal + 100 || conn.isDisposed(),
                    opTimeout.plus(slack())), "neither did writes resume after the heal nor did the connection end: "
                    + records);
            System.out.printf("FACT %s %d s partition, operationTimeout %d ms: %d packets dropped, %d writes ended"
                    + " during it; %s %.0f ms after the heal; first failure %s; %s%n", name(), seconds,
                    opTimeout.toMillis(), drops, endedDuring,
                    conn.isDisposed() ? "the connection ended" : "writes resumed", (System.nanoTime() - healed) / 1e6,
                    records.firstErrorOtherThan("none"), conn.description());
            w.close();
            assertTrue(PartitionTest.await(() -> records.ended() == records.started(), opTimeout.plus(slack())),
                    "writes pending long after the heal: " + records);
        }
        assertTrue(drops > 0, "netem dropped nothing during the partition: it tested nothing");
        assertEveryWriteEndedOnce(opTimeout.plus(slack()));
        assertCompletedWritesLanded(seconds + " s partition");
    }

    @Test
    void durableWrites_partitionLongerThanEveryTimeout_failLostInBound_connectFailsInBound_completedOnesLanded() {
        Duration opTimeout = Duration.ofSeconds(1);
        Duration connectTimeout = Duration.ofSeconds(1);
        start(opTimeout, connectTimeout);
        RdmaConnection conn = connectPatiently();
        long t0;
        try (Writer w = writeOn(conn)) {
            awaitTraffic();
            t0 = faultUnderWrites(rig::partition, "partition");
            assertTrue(PartitionTest.await(() -> records.ended() == records.started() && conn.isDisposed(),
                    opTimeout.plus(slack()).plus(slack())), "writes still pending " + opTimeout.plus(slack()).plus(slack())
                    + " into the partition: " + records);
            w.close();
        }
        long lastEnd = records.lastEndNanos() - t0;
        assertEveryWriteEndedOnce(opTimeout.plus(slack()));
        assertTrue(records.outcomes().containsKey("ConnectionException(LOST)"),
                "the partition ended no write, so it tested nothing: " + records);
        assertEquals(List.of(ConnectionEvent.ESTABLISHED, ConnectionEvent.LOST), conn.events().collectList().block(T));

        long c0 = System.nanoTime();
        Throwable connectError = null;
        try {
            client.connect(serverAddress).block(T);
        } catch (RuntimeException e) {
            connectError = e;
        }
        long connectTook = System.nanoTime() - c0;
        System.out.printf("FACT %s partition longer than every timeout (operationTimeout %d ms): last write ended"
                + " %.0f ms into it, first failure %s; a connect during it failed after %.0f ms with %s%n", name(),
                opTimeout.toMillis(), lastEnd / 1e6, records.firstErrorOtherThan("none"), connectTook / 1e6,
                connectError);
        ConnectionException ce = assertInstanceOf(ConnectionException.class, connectError,
                "a connect across the partition did not fail with a ConnectionException");
        assertEquals(ConnectionEvent.UNREACHABLE, ce.event(), ce.toString());
        assertTrue(connectTook <= connectTimeout.plus(SLACK).toNanos(),
                "the connect took " + connectTook / 1_000_000 + " ms to fail, beyond its timeout and slack");

        long left = Duration.ofSeconds(4).toNanos() - (System.nanoTime() - t0);
        if (left > 0) {
            PartitionTest.sleep(Duration.ofNanos(left));
        }
        rig.heal();
        assertCompletedWritesLanded("partition of 4 s");
    }

    /**
     * Random loss both ways for 3 s, at each rate the lane's netem applies. With the library's
     * default operationTimeout (30 s), RDMA's own retries are transparent up to 5 %: every write
     * completes (rxe resends a lost packet after its ack timeout, about 2.2 s), none fails. At 20 %
     * a write may outlast the timeout (several resends of one packet in a row) and end LOST; what
     * holds at every rate is that each ends once, in bound, and the completed ones landed.
     */
    @ParameterizedTest(name = "{0} % loss")
    @ValueSource(ints = {1, 5, 20})
    void durableWrites_underRandomLossBothWays_everyWriteEndsOnceInBound_completedOnesLanded_noneFailsUpToFivePercent(
            int percent) {
        Duration opTimeout = Duration.ofSeconds(30);
        start(opTimeout, Duration.ofSeconds(3));
        RdmaConnection conn = connectPatiently();
        int before;
        long drops;
        String what = percent + " % loss";
        try (Writer w = writeOn(conn)) {
            awaitTraffic();
            before = records.ended();
            faultUnderWrites(() -> rig.loss(percent), what);
            PartitionTest.sleep(Duration.ofSeconds(3));
            drops = rig.drops();
            rig.heal();
            w.close();
            assertTrue(PartitionTest.await(() -> records.ended() == records.started(), opTimeout.plus(slack())),
                    "writes pending after the loss ended: " + records);
        }
        assertTrue(drops > 0, "netem dropped nothing: it tested nothing");
        assertEveryWriteEndedOnce(opTimeout.plus(slack()));
        System.out.printf("FACT %s %d %% loss both ways for 3 s (operationTimeout %d ms): %d packets dropped, %d writes"
                + " ended during it, first failure %s; connection %s%n", name(), percent, opTimeout.toMillis(), drops,
                records.ended() - before, records.firstErrorOtherThan("none"), conn.isDisposed() ? "ended" : "still up");
        if (percent <= 5) {
            assertNull(records.firstErrorOtherThan("none"), what + ": RDMA's retries were not transparent, a write failed");
        }
        assertCompletedWritesLanded(what);
    }

    @Test
    void durableWrites_underReorderingAndDuplicationBothWays_everyWriteEndsOnceInBound_completedOnesLanded() {
        Duration opTimeout = Duration.ofSeconds(5);
        start(opTimeout, Duration.ofSeconds(3));
        RdmaConnection conn = connectPatiently();
        long duplicates;
        long outOfSequence;
        int before;
        try (Writer w = writeOn(conn)) {
            awaitTraffic();
            before = records.ended();
            long dup0 = rig.rxeCounter(true, "duplicate_request");
            long oos0 = rig.rxeCounter(true, "out_of_seq_request");
            faultUnderWrites(() -> rig.reorderAndDuplicate(Duration.ofMillis(2), 25, 5), "reordering");
            PartitionTest.sleep(Duration.ofSeconds(3));
            rig.heal();
            duplicates = rig.rxeCounter(true, "duplicate_request") - dup0;
            outOfSequence = rig.rxeCounter(true, "out_of_seq_request") - oos0;
            w.close();
            assertTrue(PartitionTest.await(() -> records.ended() == records.started(), opTimeout.plus(slack())),
                    "writes pending after the reordering ended: " + records);
        }
        System.out.printf("FACT %s reordering (25 %% at once, the rest 2 ms later) and 5 %% duplication both ways for"
                + " 3 s (operationTimeout %d ms): the server's rxe counted %d duplicate and %d out-of-sequence requests;"
                + " %d writes ended during it; connection %s%n", name(), opTimeout.toMillis(), duplicates, outOfSequence,
                records.ended() - before, conn.isDisposed() ? "ended" : "still up");
        assertTrue(duplicates + outOfSequence > 0,
                "the server's rxe saw no duplicate and no out-of-sequence request: the case tested nothing");
        assertEveryWriteEndedOnce(opTimeout.plus(slack()));
        assertCompletedWritesLanded("reordering and duplication");
    }

    /**
     * Delay is no fault: with 1 ms and then 50 ms added to what each end sends, durable writes
     * one at a time all complete, and their median takes at least the round trip's two delays
     * (a durable write waits for the flush's read response, one round trip at least).
     */
    @Test
    void durableWrites_underOneAndFiftyMillisecondsDelay_allComplete_medianAtLeastTheRoundTrip() {
        Duration opTimeout = Duration.ofSeconds(5);
        start(opTimeout, Duration.ofSeconds(3));
        RdmaConnection conn = connectPatiently();
        PeerRegion remote = conn.remoteRegion(0);
        for (int i = 0; i < 100; i++) { // warm, no fault: the first writes load and compile the path (TCG)
            conn.durableWrite(remote, 0, local, 0, Records.SIZE).block(T);
        }
        int next = 0;
        for (Duration delay : List.of(Duration.ofMillis(1), Duration.ofMillis(50))) {
            rig.delay(delay);
            long[] took = new long[CAPACITY];
            int n = 0;
            // At least ten writes (a median of fewer says little), then until 1.5 s have passed:
            // a count taken by time alone depends on how much CPU the emulated guest had.
            long end = System.nanoTime() + Duration.ofMillis(1500).toNanos();
            while ((n < 10 || System.nanoTime() < end) && next < CAPACITY) {
                int i = next++;
                long t0 = System.nanoTime();
                records.track(i, conn.durableWrite(remote, (long) i * Records.SIZE, local, (long) i * Records.SIZE,
                        Records.SIZE)).block(T);
                took[n++] = System.nanoTime() - t0;
            }
            rig.heal();
            long[] s = java.util.Arrays.copyOf(took, n);
            java.util.Arrays.sort(s);
            long p50 = s[(n - 1) / 2];
            long p99 = s[Math.max(0, (int) Math.ceil(0.99 * n) - 1)];
            System.out.printf("FACT %s delay %d ms each way: %d durable writes of %d B one at a time, p50 %.2f ms,"
                    + " p99 %.2f ms, max %.2f ms%n", name(), delay.toMillis(), n, Records.SIZE, p50 / 1e6, p99 / 1e6,
                    s[n - 1] / 1e6);
            assertTrue(n >= 10, "only " + n + " writes under a delay of " + delay);
            assertTrue(p50 >= delay.multipliedBy(2).toNanos(), "the median write took " + p50 / 1e6 + " ms under a"
                    + " delay of " + delay.toMillis() + " ms each way: less than the round trip, so the delay was not"
                    + " applied");
        }
        assertEquals(java.util.Map.of("ok", records.started()), records.outcomes(), "a write failed under delay: "
                + records);
        assertTrue(!conn.isDisposed(), "the connection ended under delay");
        assertCompletedWritesLanded("delay");
    }
}
