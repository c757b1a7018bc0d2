package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A peer that stops answering without dying (SIGSTOP) makes pending operations fail within a
 * bounded, configurable time: the operation deadline / keep-alive. A stopped peer is a lost
 * connection: every pending and queued operation fails with {@code ConnectionException(LOST)}.
 */
class OperationTimeoutTest {
    static final Duration DEADLINE = Duration.ofSeconds(1);

    PeerProcess.Handle peer;
    Arena arena;
    Cqflux client;

    @AfterEach
    void tearDown() {
        if (peer != null) {
            peer.destroy(); // SIGCONT, then SIGKILL
        }
        if (client != null) {
            client.dispose();
            client.onDispose().toFuture().completeOnTimeout(null, 30, TimeUnit.SECONDS).join();
        }
        if (arena != null) {
            arena.close();
        }
    }

    @Test
    void peerStopped_pendingOperationsFailWithConnectionLost_withinOperationTimeout() throws Exception {
        peer = PeerProcess.start();
        arena = Arena.ofShared();
        client = FaultRig.fabric().pendingLimit(1 << 20).operationTimeout(DEADLINE).build();
        Region local = client.register(arena.allocate(FaultRig.SIZE, 64), FaultRig.ALL);
        RdmaConnection conn = client.connect(peer.address()).block(FaultRig.T);
        int ops = 50_000;
        Tally t = new Tally(ops);
        ConnectionEndTest.flood(conn, local, t, ops);
        assertTrue(FaultRig.await(() -> t.terminated() >= 1_000, FaultRig.T), "no traffic to the peer: " + t);
        peer.signal("STOP");
        long t0 = System.nanoTime();
        Duration bound = DEADLINE.plusSeconds(3);
        boolean all = t.awaitAll(bound);
        System.out.printf("FACT SIGSTOPped peer, operationTimeout %d ms: last Mono ended %.1f ms after the stop; %s%n",
                DEADLINE.toMillis(), (t.lastNanos() - t0) / 1e6, t);
        assertTrue(all, "operations still pending " + bound + " after the peer stopped answering: " + t);
        assertNull(t.firstOtherThan("ConnectionException(LOST)"),
                "a peer that stops answering must fail pending operations with ConnectionException(LOST): " + t);
        assertEquals(0, t.twice(), t.toString());
    }

    @Test
    void operationTimeout_nonPositive_isRejectedNamingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Cqflux.builder().operationTimeout(Duration.ZERO));
        assertTrue(e.getMessage().contains("operationTimeout"), e.getMessage());
    }
}
