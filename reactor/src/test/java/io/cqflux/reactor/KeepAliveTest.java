package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The per-connection timers on the loop's timer heap: the operation deadline armed only while
 * operations are in flight, and the keep-alive that finds a silent peer of an idle connection
 * and sends nothing on a busy one.
 */
class KeepAliveTest {
    static final Duration T = FaultRig.T;

    FaultRig rig;
    PeerProcess.Handle peer;
    Arena arena;
    Cqflux client;

    @AfterEach
    void tearDown() {
        if (rig != null) {
            rig.close();
        }
        if (peer != null) {
            peer.destroy();
        }
        if (client != null) {
            client.dispose();
            client.onDispose().toFuture().completeOnTimeout(null, 30, TimeUnit.SECONDS).join();
        }
        if (arena != null) {
            arena.close();
        }
    }

    static <V> V onLoop(RdmaConnection c, Supplier<V> what) {
        CompletableFuture<V> f = new CompletableFuture<>();
        c.core().runOnLoop(() -> f.complete(what.get()));
        return f.orTimeout(T.toMillis(), TimeUnit.MILLISECONDS).join();
    }

    static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Test
    void operationDeadline_idleConnection_armsNothing_armsOnAPost_andDisarmsOnceNothingIsInFlight() {
        Duration timeout = Duration.ofMillis(200);
        rig = new FaultRig(b -> b, b -> b.operationTimeout(timeout));
        RdmaConnection conn = rig.conn;
        assertFalse(onLoop(conn, () -> conn.core().monitor.operationDeadlineArmed()), "an idle connection armed a deadline");
        conn.write(rig.remote(), 0, rig.local, 0, 64).block(T);
        assertTrue(onLoop(conn, () -> conn.core().monitor.operationDeadlineArmed()),
                "a post armed no deadline (it stays armed until it fires once)");
        assertTrue(FaultRig.await(() -> !onLoop(conn, () -> conn.core().monitor.operationDeadlineArmed()), T),
                "the deadline is still armed " + T + " after the last operation completed");
        long runs = onLoop(conn, () -> conn.core().monitor.operationDeadlineRuns());
        assertEquals(1, runs, "the deadline fired once and, finding nothing in flight, re-armed nothing");
        sleep(timeout.multipliedBy(3));
        assertEquals(runs, onLoop(conn, () -> conn.core().monitor.operationDeadlineRuns()),
                "an idle connection's deadline fired again");
        assertFalse(conn.isDisposed());
    }

    @Test
    void operationDeadline_busyConnection_firesAboutOncePerTimeout_notPerOperation_andKeepsItOpen() {
        Duration timeout = Duration.ofMillis(500);
        rig = new FaultRig(b -> b, b -> b.operationTimeout(timeout));
        RdmaConnection conn = rig.conn;
        long t0 = System.nanoTime();
        int ops = 0;
        long runs = 0;
        // At least 2 s, and on until the deadline has fired twice (a loaded host may hold the
        // timer back; 10 s at most): the upper bound below is what the test is about.
        while (System.nanoTime() - t0 < TimeUnit.MILLISECONDS.toNanos(2000)
                || (runs < 2 && System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(10))) {
            conn.write(rig.remote(), 0, rig.local, 0, 64).block(T);
            if (++ops % 256 == 0) {
                runs = onLoop(conn, () -> conn.core().monitor.operationDeadlineRuns());
            }
        }
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        runs = onLoop(conn, () -> conn.core().monitor.operationDeadlineRuns());
        System.out.printf("FACT busy connection, operationTimeout %d ms: %d operations in %d ms, the deadline fired %d"
                + " times%n", timeout.toMillis(), ops, elapsedMs, runs);
        assertTrue(ops > 100, "too little traffic to test anything: " + ops + " operations");
        long most = 2 * elapsedMs / timeout.toMillis() + 2;
        assertTrue(runs >= 2 && runs <= most, "the deadline fired " + runs + " times in " + elapsedMs + " ms of "
                + ops + " operations with a " + timeout.toMillis() + " ms timeout (expected about once per timeout,"
                + " re-armed from the oldest operation; at most " + most + ")");
        assertFalse(conn.isDisposed(), "a busy connection with timely completions was ended");
    }

    @Test
    void keepAlive_idleConnectionToALivePeer_probesOnBothSides_andStaysOpen() {
        rig = new FaultRig(b -> b.keepAlive(Duration.ofMillis(50), 3), b -> b.keepAlive(Duration.ofMillis(50), 3));
        sleep(Duration.ofMillis(600));
        assertFalse(rig.conn.isDisposed(), "an idle connection to a live peer was ended");
        assertFalse(rig.serverConn.isDisposed(), "the server side of an idle connection to a live peer was ended");
        assertTrue(rig.conn.keepAliveProbes() > 0, "the idle client sent no probe");
        assertTrue(rig.serverConn.keepAliveProbes() > 0, "the idle server side sent no probe");
        assertTrue(onLoop(rig.conn, () -> rig.conn.core().monitor.keepAliveArmed()), "the keep-alive stopped ticking");
    }

    @Test
    void keepAlive_oneMiss_idleConnectionToALivePeer_staysOpenForASecond() {
        // misses = 1 is legal: only a probe left unanswered for a whole interval is a miss, not
        // a quiet interval by itself.
        // 300 ms: a probe is answered by the peer's loop on fabric/tcp, which a loaded 2-core host
        // can hold off the CPU for over 100 ms (then a miss would be right).
        rig = new FaultRig(b -> b.keepAlive(Duration.ofMillis(300), 1), b -> b.keepAlive(Duration.ofMillis(300), 1));
        sleep(Duration.ofMillis(1500));
        assertFalse(rig.conn.isDisposed(), "an idle healthy connection with keepAlive(300 ms, 1) was ended");
        assertFalse(rig.serverConn.isDisposed(), "its server side was ended");
        assertTrue(rig.conn.keepAliveProbes() > 0, "the idle client sent no probe");
        assertTrue(rig.serverConn.keepAliveProbes() > 0, "the idle server side sent no probe");
    }

    @Test
    void keepAlive_busyConnection_sendsNoProbe() {
        rig = new FaultRig(b -> b, b -> b.keepAlive(Duration.ofMillis(200), 3));
        RdmaConnection conn = rig.conn;
        for (int i = 0; i < 1000; i++) { // warm: the first writes load and compile the path
            conn.write(rig.remote(), 0, rig.local, 0, 64).block(T);
        }
        long before = conn.keepAliveProbes();
        long t0 = System.nanoTime();
        while (System.nanoTime() - t0 < TimeUnit.MILLISECONDS.toNanos(1000)) {
            conn.write(rig.remote(), 0, rig.local, 0, 64).block(T);
        }
        assertEquals(before, conn.keepAliveProbes(), "a busy connection (a completion every few microseconds) sent"
                + " keep-alive probes");
    }

    @Test
    void keepAlive_off_idleConnection_armsNothing_andSendsNothing() {
        rig = new FaultRig(b -> b.noKeepAlive(), b -> b.noKeepAlive());
        sleep(Duration.ofMillis(200));
        assertFalse(onLoop(rig.conn, () -> rig.conn.core().monitor.keepAliveArmed()));
        assertEquals(0, rig.conn.keepAliveProbes());
        assertEquals(0, rig.serverConn.keepAliveProbes());
    }

    /**
     * The documented bound, (misses + 1) x interval of the peer's last sign of life, where that sign
     * was the answer to a probe: the peer goes silent right after it answered (its loop, which
     * answers probes on fabric/tcp, is held). The next probe goes out one interval after that
     * answer, and each miss takes one more. A keep-alive on a fixed beat took one interval more: its
     * tick after the answer found life and probed nothing.
     */
    @Test
    void keepAlive_peerSilentRightAfterAnsweringAProbe_isFoundLostWithinMissesPlusOneIntervals() throws Exception {
        Duration interval = Duration.ofMillis(400);
        int misses = 1;
        rig = new FaultRig(b -> b.keepAlive(interval, misses).loops(1), b -> b.keepAlive(interval, misses).loops(1));
        RdmaConnection c = rig.conn;
        CompletableFuture<Long> lost = new CompletableFuture<>();
        c.events().filter(e -> e == ConnectionEvent.LOST).subscribe(e -> lost.complete(System.nanoTime()));
        long probes = c.keepAliveProbes();
        assertTrue(FaultRig.await(() -> c.keepAliveProbes() > probes, T), "no probe went out");
        sleep(Duration.ofMillis(50)); // its answer is back (loopback: well under a ms); the peer's last sign of life
        CompletableFuture<Void> held = new CompletableFuture<>();
        CompletableFuture<Void> release = new CompletableFuture<>();
        rig.serverConn.core().runOnLoop(() -> {
            held.complete(null);
            release.completeOnTimeout(null, T.toMillis(), TimeUnit.MILLISECONDS).join();
        });
        try {
            held.get(T.toMillis(), TimeUnit.MILLISECONDS);
            long t0 = System.nanoTime();
            long took = (lost.get(T.toMillis(), TimeUnit.MILLISECONDS) - t0) / 1_000_000;
            long bound = interval.multipliedBy(misses + 1L).toMillis();
            System.out.printf("FACT keep-alive %d ms x %d: lost %d ms after the peer's last answer (bound %d ms)%n",
                    interval.toMillis(), misses, took, bound);
            // Slack for a late timer on a loaded host, well under the interval a fixed beat added.
            assertTrue(took <= bound + interval.toMillis() / 2, "found after " + took + " ms, beyond (misses + 1) x "
                    + interval.toMillis() + " ms = " + bound + " ms and slack");
            assertTrue(took >= interval.toMillis() / 2, "found after " + took + " ms: a probe was judged early");
        } finally {
            release.complete(null);
        }
    }

    @Test
    void keepAlive_idleConnection_peerStopped_endsLostNamingTheKeepAlive_withinTwiceIntervalTimesMisses()
            throws Exception {
        Duration interval = Duration.ofMillis(100);
        int misses = 3;
        peer = PeerProcess.start();
        arena = Arena.ofShared();
        client = FaultRig.fabric().keepAlive(interval, misses).build();
        client.register(arena.allocate(FaultRig.SIZE, 64), FaultRig.ALL);
        RdmaConnection conn = client.connect(peer.address()).block(T);
        sleep(interval.multipliedBy(3)); // idle, alive: probes answered
        assertFalse(conn.isDisposed(), "the idle connection ended while its peer ran");
        peer.signal("STOP");
        long t0 = System.nanoTime();
        Duration bound = interval.multipliedBy(2L * misses);
        boolean ended = FaultRig.await(conn::isDisposed, T);
        long took = System.nanoTime() - t0;
        System.out.printf("FACT idle connection, keep-alive %d ms x %d: the SIGSTOPped peer was found lost after"
                + " %.0f ms%n", interval.toMillis(), misses, took / 1e6);
        assertTrue(ended, "the idle connection is still open " + T + " after its peer stopped");
        assertTrue(took <= bound.plusMillis(200).toNanos(), "found after " + took / 1_000_000 + " ms, beyond "
                + bound + " (2 x interval x misses) and slack");
        assertEquals(List.of(ConnectionEvent.ESTABLISHED, ConnectionEvent.LOST), conn.events().collectList().block(T));
        ConnectionException e = assertInstanceOf(ConnectionException.class,
                assertThrows(RuntimeException.class, () -> conn.write(conn.remoteRegion(0), 0, new byte[8]).block(T)));
        assertEquals(ConnectionEvent.LOST, e.event(), e.toString());
        assertTrue(e.getMessage().contains("keep-alive"), e.getMessage());
    }

    @Test
    void keepAlive_badArguments_areRejectedNamingTheValueAndTheBound() {
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class,
                () -> Cqflux.builder().keepAlive(Duration.ZERO, 3));
        assertTrue(zero.getMessage().contains("PT0S") && zero.getMessage().contains("noKeepAlive"), zero.getMessage());
        IllegalArgumentException shortOne = assertThrows(IllegalArgumentException.class,
                () -> Cqflux.builder().keepAlive(Duration.ofMillis(1), 3));
        assertTrue(shortOne.getMessage().contains("PT0.001S") && shortOne.getMessage().contains("PT0.01S"),
                shortOne.getMessage());
        IllegalArgumentException misses = assertThrows(IllegalArgumentException.class,
                () -> Cqflux.builder().keepAlive(Duration.ofSeconds(1), 0));
        assertTrue(misses.getMessage().contains("misses 0") && misses.getMessage().contains("[1, 1000]"),
                misses.getMessage());
        assertThrows(NullPointerException.class, () -> Cqflux.builder().keepAlive(null, 3));
    }
}
