package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.OperationFailedException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * A peer in a separate JVM ({@link PeerProcess}) that dies (SIGKILL) or stops answering without
 * dying (SIGSTOP) while thousands of operations are in flight or queued: every Mono still
 * terminates within a bound, with {@code ConnectionException(LOST)} for a death and
 * {@code ConnectionException(CLOSED)} for a close by this side, none twice. The peer is resumed and
 * killed after each test (unless the transport keeps a resumed peer: {@link #releasePeer}); every
 * wait is bounded. Each transport gives its client builder, its peer and the bounds that suit
 * where it runs; the assertions are the same. The {@link Order}s matter only to a transport that
 * keeps its peer: the kill comes last.
 */
abstract class PeerProcessFaultContract {
    PeerProcess.Handle peer;
    Arena arena;
    Cqflux client;
    Region local;
    RdmaConnection conn;

    /** {@return the client's builder, on the transport and address the peer serves} */
    abstract Cqflux.Builder builder();

    /** {@return a started peer, listening} */
    abstract PeerProcess.Handle startPeer() throws IOException;

    /** {@return the transport's name in the FACT lines, e.g. "fabric/tcp"} */
    abstract String transport();

    /** {@return how many mixed operations are subscribed before the fault} */
    abstract int operations();

    /** {@return how many must have ended (traffic flows) before the fault is set} */
    abstract int trafficBeforeFault();

    /** {@return how long traffic may take to reach {@link #trafficBeforeFault()}} */
    abstract Duration trafficBound();

    /** {@return the bound after a kill, a local close or an entry-point close within which everything must end} */
    abstract Duration bound();

    /**
     * {@return whether an operation in flight at the peer's death may fail with its own error
     * completion {@code REM_ACCESS_ERR} instead of {@code LOST}: only operations in flight, so at
     * most the send credits}
     */
    boolean deathMayFailInFlightWithRemoteAccessError() {
        return false;
    }

    @BeforeEach
    void setUp() throws Exception {
        long t0 = System.nanoTime();
        peer = startPeer();
        System.out.printf("FACT %s: the peer JVM listened %.1f ms after its start%n", transport(),
                (System.nanoTime() - t0) / 1e6);
        arena = Arena.ofShared();
        client = builder().pendingLimit(1 << 20).build();
        local = client.register(arena.allocate(FaultRig.SIZE, 64), FaultRig.ALL);
        conn = client.connect(peer.address()).block(FaultRig.T);
    }

    /**
     * Ends the test's use of its peer: by default resumes and kills it. A transport whose peer is
     * costly to start may resume one that is still alive and keep it for the next test.
     */
    void releasePeer(PeerProcess.Handle p) {
        p.destroy();
    }

    @AfterEach
    void tearDown() {
        if (peer != null) {
            releasePeer(peer);
        }
        if (client != null) {
            client.dispose();
            client.onDispose().toFuture().completeOnTimeout(null, 30, TimeUnit.SECONDS).join();
        }
        if (arena != null) {
            arena.close();
        }
    }

    /** Starts {@link #operations()} mixed operations and waits until some of them ended (traffic flows). */
    private Tally loadAndWaitForTraffic() {
        int ops = operations();
        Tally t = new Tally(ops);
        ConnectionEndTest.flood(conn, local, t, ops);
        assertTrue(FaultRig.await(() -> t.terminated() >= trafficBeforeFault(), trafficBound()),
                "no traffic to the peer within " + trafficBound() + ": " + t);
        assertTrue(t.unterminated() > 1_000, "the load finished before the fault could hit it: " + t);
        return t;
    }

    @Test
    @Order(3)
    void peerKilled_withThousandsInFlight_everyOperationFailsWithConnectionLost_withinBound() {
        Tally t = loadAndWaitForTraffic();
        int pending = t.unterminated();
        Duration max = bound().multipliedBy(3);
        long t0 = System.nanoTime();
        peer.process().destroyForcibly(); // SIGKILL
        boolean all = t.awaitAll(max);
        long last = t.lastNanos() - t0;
        System.out.printf("FACT %s: SIGKILLed peer with %d operations pending: %s; last Mono ended %.1f ms after the"
                + " kill; %s%n", transport(), pending, all ? "all ended" : "NOT all ended within " + max, last / 1e6, t);
        assertTrue(all, "operations still pending " + max + " after the peer was killed: " + t);
        assertTrue(last < bound().toNanos(), "the last operation ended " + last / 1_000_000 + " ms after the kill,"
                + " beyond " + bound());
        int accessErrors = 0;
        for (int i = 0; i < operations(); i++) {
            Throwable e = t.error(i);
            if (e == null || FaultRig.kind(e).equals("ConnectionException(LOST)")) {
                continue;
            }
            if (deathMayFailInFlightWithRemoteAccessError() && e instanceof OperationFailedException ofe
                    && ofe.status() == CompletionStatus.REM_ACCESS_ERR) {
                accessErrors++;
                continue;
            }
            fail("a killed peer must fail every pending and queued operation with ConnectionException(LOST)"
                    + (deathMayFailInFlightWithRemoteAccessError() ? " (or one in flight with its own REM_ACCESS_ERR)"
                    : "") + ", not " + FaultRig.kind(e) + ": " + e.getMessage() + "; " + t);
        }
        assertTrue(accessErrors <= conn.sendCredits(), accessErrors + " operations failed REM_ACCESS_ERR, more than"
                + " the " + conn.sendCredits() + " send credits that can have been in flight: " + t);
        assertEquals(0, t.twice(), t.toString());
        assertEquals(List.of(ConnectionEvent.ESTABLISHED, ConnectionEvent.LOST),
                conn.events().collectList().block(bound()));
    }

    /** A stopped peer must not hold up a local close: everything ends at once with CLOSED. */
    @Test
    @Order(1)
    void peerStopped_localClose_failsEveryPendingOperationWithConnectionClosed_promptly() {
        Tally t = loadAndWaitForTraffic();
        peer.signal("STOP");
        FaultRig.await(() -> false, Duration.ofMillis(300));
        int pending = t.unterminated();
        long t0 = System.nanoTime();
        conn.close();
        boolean all = t.awaitAll(bound());
        System.out.printf("FACT %s: SIGSTOPped peer, local close with %d operations pending: last Mono ended %.1f ms"
                + " after the close; %s%n", transport(), pending, (t.lastNanos() - t0) / 1e6, t);
        assertTrue(all, "operations still pending " + bound() + " after closing the connection to a stopped peer: "
                + t);
        assertNull(t.firstOtherThan("ConnectionException(CLOSED)"),
                "a local close fails pending operations with ConnectionException(CLOSED): " + t);
        assertEquals(0, t.twice(), t.toString());
    }

    /** Closing the entry point while the peer is stopped ends every Mono and returns within a bound. */
    @Test
    @Order(2)
    void peerStopped_entryPointClose_endsEveryOperationAndReturnsPromptly() {
        Tally t = loadAndWaitForTraffic();
        peer.signal("STOP");
        FaultRig.await(() -> false, Duration.ofMillis(300));
        int pending = t.unterminated();
        long t0 = System.nanoTime();
        client.close();
        long took = System.nanoTime() - t0;
        boolean all = t.awaitAll(bound());
        System.out.printf("FACT %s: SIGSTOPped peer with %d operations pending: Cqflux.close() took %.1f ms; %s%n",
                transport(), pending, took / 1e6, t);
        assertTrue(all, "operations still pending after closing the entry point: " + t);
        assertEquals(0, t.twice(), t.toString());
        assertTrue(took < bound().toNanos(), "Cqflux.close() took " + took / 1_000_000 + " ms with a stopped peer,"
                + " beyond " + bound());
    }
}
