package io.cqflux.test.network;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The keep-alive on librpma over Soft-RoCE ({@link PartitionTest}'s keep-alive cases on
 * fabric/tcp): an idle connection across a partition ends {@code LOST} on both sides within
 * 2 x interval x misses, a side that only receives learns it through its {@code receive()}, and a
 * busy connection sends no probe. On rpma the probe, an 8-byte RDMA read of the peer's credit
 * word, is answered by the peer's rxe device, not by its process. Client and server are two
 * Cqflux instances of this JVM on the two ends of an {@link RxeLinkRig}. Runs only in the
 * Soft-RoCE lane (tag {@code rpma}).
 */
@Tag("rpma")
class RpmaKeepAliveTest extends RxeRigTest {
    /**
     * The keep-alive of both sides. Longer than the host's 200 ms: under TCG beside the host's
     * builds the loop's timers run late.
     */
    static final Duration INTERVAL = Duration.ofMillis(400);
    static final int MISSES = 3;
    /** What the keep-alive promises, (misses + 1) x interval, with slack for timers that run late here: 2 x interval x misses. */
    static final Duration BOUND = INTERVAL.multipliedBy(2L * MISSES);
    /**
     * The bound on a side's observed end: the keep-alive's decision ({@link #BOUND}, checked on the
     * silence its LOST message measures) and then the end itself, whose native calls on the loop
     * took up to 1.2 s under TCG in a partitioned lane (the blocked-loop WARN names it).
     */
    static final Duration END_BOUND = BOUND.plusSeconds(2);

    /** {@return the silence a keep-alive's LOST message measured, in ms ("... for ~N ms ...")} */
    static long silenceMillis(Throwable lost) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("for ~(\\d+) ms").matcher(String.valueOf(lost));
        assertTrue(m.find(), "not a keep-alive's LOST: " + lost);
        return Long.parseLong(m.group(1));
    }

    RxePair pair;

    @AfterEach
    void tearDown() {
        if (pair != null) {
            pair.close();
        }
    }

    private void start() {
        pair = new RxePair(rig, 1 << 20, b -> b.keepAlive(INTERVAL, MISSES).operationTimeout(Duration.ofSeconds(5)),
                b -> b.keepAlive(INTERVAL, MISSES).operationTimeout(Duration.ofSeconds(5)));
    }

    /**
     * An idle connection across a partition: the client (which posts nothing) and the server's
     * side (which only receives) each end {@code LOST} naming the keep-alive, whose decision comes
     * within 2 x interval x misses of the peer's last sign of life (the silence its message
     * measures) and the end within {@link #END_BOUND}, the server's {@code receive()} fails with that {@code LOST}, both
     * sides' events read ESTABLISHED then LOST, and a write posted afterwards fails at once.
     */
    @Test
    void idleConnection_partitioned_bothSidesEndLost_theReceiveOnlySideToo_withinTheKeepAliveBound() {
        start();
        RdmaConnection conn = pair.connectPatiently();
        RdmaConnection serverSide = pair.accepted();
        CompletableFuture<Throwable> receiveEnd = new CompletableFuture<>();
        serverSide.receive().subscribe(m -> { }, receiveEnd::complete, () -> receiveEnd.complete(null));
        PartitionTest.sleep(INTERVAL.multipliedBy(4)); // idle across a few probes, alive
        assertFalse(conn.isDisposed(), "the idle connection ended while the link was up");
        assertFalse(serverSide.isDisposed(), "the server's side of the idle connection ended while the link was up");
        assertFalse(receiveEnd.isDone(), "the receive ended while the link was up: " + receiveEnd.getNow(null));
        long clientProbes = conn.keepAliveProbes();
        long serverProbes = serverSide.keepAliveProbes();
        assertTrue(clientProbes > 0, "the idle client sent no probe");
        assertTrue(serverProbes > 0, "the idle server side sent no probe");

        rig.partition();
        long t0 = System.nanoTime();
        assertTrue(PartitionTest.await(conn::isDisposed, RxePair.T), "the idle client is still open " + RxePair.T
                + " into the partition");
        long clientTook = System.nanoTime() - t0;
        Throwable received = receiveEnd.completeOnTimeout(null, RxePair.T.toMillis(), TimeUnit.MILLISECONDS).join();
        long receiveTook = System.nanoTime() - t0;
        assertTrue(PartitionTest.await(serverSide::isDisposed, RxePair.T), "the server's side is still open");
        long serverTook = System.nanoTime() - t0;

        Region local = pair.client.register(pair.arena.allocate(64, 64), RegionAccess.WRITE_SRC);
        long w0 = System.nanoTime();
        Throwable writeError = null;
        try {
            conn.write(conn.remoteRegion(0), 0, local, 0, 64).block(RxePair.T);
        } catch (RuntimeException e) {
            writeError = e;
        }
        long writeTook = System.nanoTime() - w0;
        System.out.printf("FACT rpma idle connection partitioned, keep-alive %d ms x %d: the client ended LOST after"
                + " %.0f ms, the server's receive after %.0f ms, its side after at most %.0f ms (bound %d ms); probes"
                + " before it: client %d, server %d; a write then failed after %.1f ms with %s%n", INTERVAL.toMillis(),
                MISSES, clientTook / 1e6, receiveTook / 1e6, serverTook / 1e6, BOUND.toMillis(), clientProbes,
                serverProbes, writeTook / 1e6, writeError);
        assertTrue(silenceMillis(writeError) <= BOUND.toMillis(), "the client's keep-alive decided after "
                + silenceMillis(writeError) + " ms of silence, beyond " + BOUND.toMillis() + " ms");
        assertTrue(clientTook <= END_BOUND.toNanos(), "the client ended after " + clientTook / 1_000_000
                + " ms, beyond " + END_BOUND.toMillis() + " ms");
        ConnectionException re = assertInstanceOf(ConnectionException.class, received,
                "the receive-only side's receive across the partition");
        assertEquals(ConnectionEvent.LOST, re.event(), re.toString());
        assertTrue(re.getMessage().contains("keep-alive"), "the receive's LOST does not name the keep-alive: " + re);
        assertTrue(silenceMillis(re) <= BOUND.toMillis(), "the receive-only side's keep-alive decided after "
                + silenceMillis(re) + " ms of silence, beyond " + BOUND.toMillis() + " ms");
        assertTrue(receiveTook <= END_BOUND.toNanos(), "the receive-only side found the loss after "
                + receiveTook / 1_000_000 + " ms, beyond " + END_BOUND.toMillis() + " ms");
        assertTrue(serverTook <= END_BOUND.toNanos(), "the server's side ended after " + serverTook / 1_000_000
                + " ms, beyond " + END_BOUND.toMillis() + " ms");
        assertEquals(List.of(ConnectionEvent.ESTABLISHED, ConnectionEvent.LOST), conn.events().collectList()
                .block(RxePair.T));
        assertEquals(List.of(ConnectionEvent.ESTABLISHED, ConnectionEvent.LOST), serverSide.events().collectList()
                .block(RxePair.T));
        ConnectionException ce = assertInstanceOf(ConnectionException.class, writeError, "the write after the loss");
        assertEquals(ConnectionEvent.LOST, ce.event(), ce.toString());
        assertTrue(ce.getMessage().contains("keep-alive"), "the LOST does not name the keep-alive: " + ce.getMessage());
        // At once, not after the 5 s operation timeout: 2 s leaves an emulated guest its stalls.
        assertTrue(writeTook < Duration.ofSeconds(2).toNanos(), "the write took " + writeTook / 1_000_000
                + " ms to fail");
    }

    /**
     * A busy connection is its own proof of life: durable writes back to back for
     * 2 x interval x misses, and its keep-alive sends no probe (nor does its timer end it).
     */
    @Test
    void busyConnection_sendsNoKeepAliveProbe() {
        start();
        RdmaConnection conn = pair.connectPatiently();
        RdmaConnection serverSide = pair.accepted();
        Region local = pair.client.register(pair.arena.allocate(1 << 20, 64), RegionAccess.WRITE_SRC);
        PeerRegion remote = conn.remoteRegion(0);
        for (int i = 0; i < 200; i++) { // warm: the first writes load and compile the path (TCG)
            conn.durableWrite(remote, 0, local, 0, Records.SIZE).block(RxePair.T);
        }
        long before = conn.keepAliveProbes();
        long serverBefore = serverSide.keepAliveProbes();
        long t0 = System.nanoTime();
        int writes = 0;
        while (System.nanoTime() - t0 < BOUND.toNanos()) {
            long off = (long) (writes % 2048) * Records.SIZE;
            conn.durableWrite(remote, off, local, off, Records.SIZE).block(RxePair.T);
            writes++;
        }
        long after = conn.keepAliveProbes();
        System.out.printf("FACT rpma busy connection, keep-alive %d ms x %d: %d durable writes in %d ms, client probes"
                + " %d -> %d; the server's side (one-sided writes give it no completion) %d -> %d%n",
                INTERVAL.toMillis(), MISSES, writes, BOUND.toMillis(), before, after, serverBefore,
                serverSide.keepAliveProbes());
        assertTrue(writes > 100, "too little traffic to test anything: " + writes);
        assertEquals(before, after, "a busy connection sent keep-alive probes");
        assertFalse(conn.isDisposed() || serverSide.isDisposed(), "the busy connection ended");
    }
}
