package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A peer in a separate JVM ({@link PeerProcess}) that dies (SIGKILL) or stops answering without
 * dying (SIGSTOP) while thousands of operations are in flight or queued: every Mono still
 * terminates within a bound, with {@code ConnectionException(LOST)} for a death. The peer is
 * resumed and killed after each test; every wait is bounded; traffic only to 127.0.0.1.
 */
class PeerProcessFaultTest {
    static final Duration BOUND = Duration.ofSeconds(5);
    static final int OPS = 50_000;

    PeerProcess.Handle peer;
    Arena arena;
    Cqflux client;
    Region local;
    RdmaConnection conn;

    @BeforeEach
    void setUp() throws Exception {
        peer = PeerProcess.start();
        arena = Arena.ofShared();
        client = FaultRig.fabric().pendingLimit(1 << 20).build();
        local = client.register(arena.allocate(FaultRig.SIZE, 64), FaultRig.ALL);
        conn = client.connect(peer.address()).block(FaultRig.T);
    }

    @AfterEach
    void tearDown() {
        if (peer != null) {
            peer.destroy();
        }
        if (client != null) {
            client.dispose();
            client.onDispose().toFuture().completeOnTimeout(null, 30, java.util.concurrent.TimeUnit.SECONDS).join();
        }
        if (arena != null) {
            arena.close();
        }
    }

    /** Starts {@code OPS} mixed operations and waits until some of them completed (traffic flows). */
    private Tally loadAndWaitForTraffic() {
        Tally t = new Tally(OPS);
        ConnectionEndTest.flood(conn, local, t, OPS);
        assertTrue(FaultRig.await(() -> t.terminated() >= 1_000, FaultRig.T), "no traffic to the peer: " + t);
        assertTrue(t.unterminated() > 1_000, "the load finished before the fault could hit it: " + t);
        return t;
    }

    @Test
    void peerKilled_withThousandsInFlight_everyOperationFailsWithConnectionLost_withinBound() {
        Tally t = loadAndWaitForTraffic();
        int pending = t.unterminated();
        long t0 = System.nanoTime();
        peer.process().destroyForcibly(); // SIGKILL
        boolean all = t.awaitAll(Duration.ofSeconds(15));
        long last = t.lastNanos() - t0;
        System.out.printf("FACT SIGKILLed peer with %d operations pending: %s; last Mono ended %.1f ms after the kill;"
                + " %s%n", pending, all ? "all ended" : "NOT all ended within 15 s", last / 1e6, t);
        assertTrue(all, "operations still pending 15 s after the peer was killed: " + t);
        assertTrue(last < BOUND.toNanos(), "the last operation ended " + last / 1_000_000 + " ms after the kill,"
                + " beyond " + BOUND);
        assertNull(t.firstOtherThan("ConnectionException(LOST)"),
                "a killed peer must fail every pending and queued operation with ConnectionException(LOST): " + t);
        assertEquals(0, t.twice(), t.toString());
        assertEquals(List.of(ConnectionEvent.ESTABLISHED, ConnectionEvent.LOST),
                conn.events().collectList().block(BOUND));
    }

    /** A stopped peer must not hold up a local close: everything ends at once with CLOSED. */
    @Test
    void peerStopped_localClose_failsEveryPendingOperationWithConnectionClosed_promptly() {
        Tally t = loadAndWaitForTraffic();
        peer.signal("STOP");
        FaultRig.await(() -> false, Duration.ofMillis(300));
        int pending = t.unterminated();
        long t0 = System.nanoTime();
        conn.close();
        boolean all = t.awaitAll(BOUND);
        System.out.printf("FACT SIGSTOPped peer, local close with %d operations pending: last Mono ended %.1f ms"
                + " after the close; %s%n", pending, (t.lastNanos() - t0) / 1e6, t);
        assertTrue(all, "operations still pending " + BOUND + " after closing the connection to a stopped peer: " + t);
        assertNull(t.firstOtherThan("ConnectionException(CLOSED)"),
                "a local close fails pending operations with ConnectionException(CLOSED): " + t);
        assertEquals(0, t.twice(), t.toString());
    }

    /** Closing the entry point while the peer is stopped ends every Mono and returns within a bound. */
    @Test
    void peerStopped_entryPointClose_endsEveryOperationAndReturnsPromptly() {
        Tally t = loadAndWaitForTraffic();
        peer.signal("STOP");
        FaultRig.await(() -> false, Duration.ofMillis(300));
        long t0 = System.nanoTime();
        client.close();
        long took = System.nanoTime() - t0;
        boolean all = t.awaitAll(BOUND);
        System.out.printf("FACT SIGSTOPped peer: Cqflux.close() took %.1f ms; %s%n", took / 1e6, t);
        assertTrue(all, "operations still pending after closing the entry point: " + t);
        assertEquals(0, t.twice(), t.toString());
        assertTrue(took < BOUND.toNanos(), "Cqflux.close() took " + took / 1_000_000 + " ms with a stopped peer");
    }
}
