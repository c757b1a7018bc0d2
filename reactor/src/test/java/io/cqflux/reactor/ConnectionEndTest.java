package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * The end of a connection, by either side, on fabric/tcp over 127.0.0.1: every pending and queued
 * operation fails with {@code ConnectionException} (CLOSED for an orderly close by either side)
 * within a bounded time, nothing is posted after the end is known, a local close emits CLOSED on
 * the connection's own events, and one connection's death never stalls its neighbours on the
 * same event loop.
 */
class ConnectionEndTest {
    static final Duration BOUND = Duration.ofSeconds(5);
    static final int BACKLOG = 20_000;

    FaultRig rig;

    @AfterEach
    void tearDown() {
        if (rig != null) {
            rig.close();
        }
    }

    /** Subscribes {@code n} 4 KiB writes (mixed with durable writes and reads) on {@code c}. */
    static void flood(RdmaConnection c, Region local, Tally t, int n) {
        PeerRegion dst = c.remoteRegion(0);
        for (int i = 0; i < n; i++) {
            long off = (long) (i % 256) * 4096;
            t.subscribe(i, switch (i % 4) {
                case 0 -> c.durableWrite(dst, off, local, off, 4096);
                case 1 -> c.read(local, off, dst, off, 4096);
                default -> c.write(dst, off, local, off, 4096);
            });
        }
    }

    @Test
    void localClose_failsPendingAndQueuedWithConnectionClosed_andEmitsClosed() {
        rig = new FaultRig(b -> b, b -> b.pendingLimit(1 << 20));
        localCloseCase(rig, BACKLOG, BOUND, "fabric/tcp");
    }

    /**
     * The byte[] forms subscribed before a local close, most of them still waiting for a pooled
     * buffer (the default pool holds 64) when it comes: each ends with its data at the peer or
     * {@code ConnectionException(CLOSED)}, as the operations pending at a close do, never with the
     * {@code ResourceClosedException} of an operation subscribed after it. One granted its buffer
     * between the close's request and the end was judged anew at that grant, as if subscribed
     * after the close.
     */
    @Test
    void localClose_failsStagedOperationsSubscribedBeforeIt_withConnectionClosed() {
        rig = new FaultRig(b -> b, b -> b.pendingLimit(1 << 20));
        int n = 2_000;
        Tally t = new Tally(n);
        PeerRegion dst = rig.conn.remoteRegion(0);
        byte[] data = new byte[4096];
        for (int i = 0; i < n; i++) {
            t.subscribe(i, i % 2 == 0 ? rig.conn.write(dst, (long) (i % 256) * 4096, data) : rig.conn.send(data));
        }
        rig.conn.close();
        assertTrue(t.awaitAll(BOUND), "not every staged operation ended within " + BOUND + " of the close: " + t);
        System.out.printf("FACT fabric/tcp: local close behind %d staged operations: %s%n", n, t);
        assertNull(t.firstOtherThan("ConnectionException(CLOSED)"),
                "a staged operation subscribed before the close failed otherwise: " + t);
        assertEquals(0, t.twice(), t.toString());
    }

    @Test
    void peerClose_failsPendingAndQueuedWithConnectionClosed_withinBound() {
        rig = new FaultRig(b -> b, b -> b.pendingLimit(1 << 20));
        peerCloseCase(rig, BACKLOG, BOUND, "fabric/tcp");
    }

    /**
     * {@code backlog} mixed operations queued on {@code rig}'s connection (its client needs a
     * pendingLimit above it), then this side closes: every one ends within {@code bound}, each
     * failure {@code ConnectionException(CLOSED)}, none twice; the events read ESTABLISHED, CLOSED.
     */
    static void localCloseCase(FaultRig rig, int backlog, Duration bound, String transport) {
        Tally t = new Tally(backlog);
        flood(rig.conn, rig.local, t, backlog);
        FaultRig.drainLoop(rig.conn);
        int before = t.terminated();
        long t0 = System.nanoTime();
        rig.conn.close();
        boolean all = t.awaitAll(bound);
        System.out.printf("FACT %s: local close with %d of %d operations pending: last Mono ended %.1f ms after the"
                + " close; %s%n", transport, backlog - before, backlog, (t.lastNanos() - t0) / 1e6, t);
        assertTrue(all, "not every operation ended within " + bound + " of the local close: " + t);
        assertTrue(t.terminated() - before > 0, "the close came too late to fail anything: " + t);
        assertNull(t.firstOtherThan("ConnectionException(CLOSED)"),
                "a local close must fail pending and queued operations with ConnectionException(CLOSED): " + t);
        assertEquals(0, t.twice(), t.toString());
        List<ConnectionEvent> events = rig.conn.events().collectList().block(bound);
        assertEquals(List.of(ConnectionEvent.ESTABLISHED, ConnectionEvent.CLOSED), events,
                "a local close emits CLOSED on the connection's own events()");
    }

    /** As {@link #localCloseCase}, but the peer's side of the connection closes; prints a FACT line. */
    static void peerCloseCase(FaultRig rig, int backlog, Duration bound, String transport) {
        Tally t = new Tally(backlog);
        flood(rig.conn, rig.local, t, backlog);
        FaultRig.drainLoop(rig.conn);
        int before = t.terminated();
        long t0 = System.nanoTime();
        rig.serverConn.close();
        boolean all = t.awaitAll(bound);
        System.out.printf("FACT %s: peer close with %d of %d operations pending: last Mono ended %.1f ms after the"
                + " close; %s%n", transport, backlog - before, backlog, (t.lastNanos() - t0) / 1e6, t);
        assertTrue(all, "not every operation ended within " + bound + " of the peer's close: " + t);
        assertTrue(t.kinds().containsKey("ConnectionException(CLOSED)"),
                "the peer's close came too late to fail anything: " + t);
        assertNull(t.firstOtherThan("ConnectionException(CLOSED)"),
                "an orderly close by the peer must fail pending and queued operations with"
                        + " ConnectionException(CLOSED): " + t);
        assertEquals(0, t.twice(), t.toString());
        List<ConnectionEvent> events = rig.conn.events().collectList().block(bound);
        assertEquals(List.of(ConnectionEvent.ESTABLISHED, ConnectionEvent.CLOSED), events);
    }

    /**
     * A close by this side queued behind thousands of operations handed over to the loop (here
     * while the loop is held, as a slow loop under an emulator is) takes effect at the first of
     * them the loop takes: none of them is posted, each fails with
     * {@code ConnectionException(CLOSED)}, and the peer still gets the goodbye (its side ends
     * CLOSED, not LOST). Before, the close task ran only after every operation ahead of it had
     * been posted or queued, and under rpma/TCG after they had all completed.
     */
    @Test
    void localClose_behindThousandsOfHandedOverOperations_takesEffectAtTheFirst_postingNone() throws Exception {
        rig = new FaultRig(b -> b, b -> b.pendingLimit(1 << 20));
        java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        rig.conn.core().runOnLoop(() -> {
            entered.countDown();
            try {
                release.await(FaultRig.T.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(entered.await(FaultRig.T.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS),
                "the loop did not take the holding task");
        int n = 5_000;
        int mostInFlightBefore = rig.conn.maxInFlight();
        Tally t = new Tally(n);
        flood(rig.conn, rig.local, t, n);
        rig.conn.close();
        release.countDown();
        assertTrue(t.awaitAll(BOUND), "not every operation ended within " + BOUND + " of the close: " + t);
        int mostInFlight = rig.conn.maxInFlight();
        System.out.printf("FACT fabric/tcp: local close queued behind %d handed-over operations: most send credits in"
                + " use %d before, %d after; %s%n", n, mostInFlightBefore, mostInFlight, t);
        // The goodbye, a control write, may take one credit.
        assertTrue(mostInFlight <= mostInFlightBefore + 1, "operations handed over before the close were posted:"
                + " most send credits in use went from " + mostInFlightBefore + " to " + mostInFlight + "; " + t);
        assertEquals(java.util.Map.of("ConnectionException(CLOSED)", n), t.kinds(),
                "an operation handed over before the close was posted (or ended otherwise): " + t);
        assertEquals(0, t.twice(), t.toString());
        assertEquals(List.of(ConnectionEvent.ESTABLISHED, ConnectionEvent.CLOSED),
                rig.conn.events().collectList().block(BOUND));
        assertEquals(List.of(ConnectionEvent.ESTABLISHED, ConnectionEvent.CLOSED),
                rig.serverConn.events().collectList().block(BOUND), "the peer did not get the goodbye");
    }

    /** The peer closing its whole entry point is an orderly close too. */
    @Test
    void peerEntryPointClose_failsPendingAndQueuedWithConnectionClosed_withinBound() {
        rig = new FaultRig(b -> b, b -> b.pendingLimit(1 << 20));
        Tally t = new Tally(BACKLOG);
        flood(rig.conn, rig.local, t, BACKLOG);
        FaultRig.drainLoop(rig.conn);
        rig.server.close();
        assertTrue(t.awaitAll(BOUND), "not every operation ended within " + BOUND + " of the peer's Cqflux.close(): " + t);
        assertNull(t.firstOtherThan("ConnectionException(CLOSED)"),
                "the peer closing its entry point must fail pending and queued operations with"
                        + " ConnectionException(CLOSED): " + t);
        assertEquals(0, t.twice(), t.toString());
    }

    /**
     * Nothing is posted after the end is known: only what was in flight when the peer closed
     * (at most {@link RdmaConnection#sendCredits()} work requests) can come back as a failed
     * completion; every queued operation must fail without being posted.
     */
    @Test
    void peerClose_nothingIsPostedAfterTheEnd() {
        rig = new FaultRig(b -> b, b -> b.pendingLimit(1 << 20));
        AtomicLong failedEntries = new AtomicLong();
        AtomicLong entries = new AtomicLong();
        Disposable monitor = rig.conn.completions().subscribe(c -> {
            entries.incrementAndGet();
            if (!c.isSuccess()) {
                failedEntries.incrementAndGet();
            }
        });
        Tally t = new Tally(BACKLOG);
        flood(rig.conn, rig.local, t, BACKLOG);
        FaultRig.drainLoop(rig.conn);
        rig.serverConn.close();
        assertTrue(t.awaitAll(BOUND), "not every operation ended within " + BOUND + ": " + t);
        monitor.dispose();
        System.out.printf("FACT peer close: %d failed completion entries (send credits %d), %d entries total; %s%n",
                failedEntries.get(), rig.conn.sendCredits(), entries.get(), t);
        assertTrue(failedEntries.get() <= rig.conn.sendCredits(),
                failedEntries.get() + " failed completions after the peer's close: more than the "
                        + rig.conn.sendCredits() + " that can have been in flight, so queued operations were"
                        + " posted after the end was known; " + t);
    }

    /**
     * A backlog of 500,000 operations on a connection whose peer closes must not stall a healthy
     * connection on the same event loop: its worst gap between completions stays small (target
     * below 50 ms; asserted below 1 s).
     */
    @Test
    void peerCloseOfBackloggedConnection_neighbourOnSameLoop_keepsCompleting() {
        int backlog = 500_000;
        rig = new FaultRig(b -> b.loops(1), b -> b.loops(1).pendingLimit(1 << 20));
        RdmaConnection victim = rig.conn;
        RdmaConnection victimPeer = rig.serverConn;
        RdmaConnection healthy = rig.connectOne();
        assertTrue(healthy.core().loop == victim.core().loop, "both connections must share the one loop");

        AtomicLong last = new AtomicLong();
        AtomicLong worstGap = new AtomicLong();
        AtomicInteger healthyDone = new AtomicInteger();
        AtomicLong healthyError = new AtomicLong();
        PeerRegion hDst = healthy.remoteRegion(0);
        long hOff = 512L * 1024;
        Disposable ping = healthy.write(hDst, hOff, rig.local, hOff, 8)
                .doOnSuccess(v -> {
                    long now = System.nanoTime();
                    long prev = last.getAndSet(now);
                    if (prev != 0) {
                        worstGap.accumulateAndGet(now - prev, Math::max);
                    }
                    healthyDone.incrementAndGet();
                })
                .repeat()
                .subscribe(null, e -> healthyError.incrementAndGet());

        Tally t = new Tally(backlog);
        PeerRegion dst = victim.remoteRegion(0);
        for (int i = 0; i < backlog; i++) {
            long off = (long) (i % 64) * 4096;
            t.subscribe(i, victim.write(dst, off, rig.local, off, 4096));
        }
        FaultRig.drainLoop(victim);
        // Measure from here: the backlog is queued on the loop.
        FaultRig.await(() -> false, Duration.ofMillis(200));
        last.set(0);
        worstGap.set(0);
        int doneAtClose = healthyDone.get();
        long t0 = System.nanoTime();
        victimPeer.close();
        boolean all = t.awaitAll(Duration.ofSeconds(30));
        long victimEnd = t.lastNanos() - t0;
        FaultRig.await(() -> false, Duration.ofMillis(300));
        ping.dispose();
        long gap = worstGap.get();
        System.out.printf("FACT neighbour on the same loop while a %d-operation backlog ends: worst gap %.1f ms,"
                        + " %d neighbour completions since the close; backlog ended in %.1f ms; %s%n",
                backlog, gap / 1e6, healthyDone.get() - doneAtClose, victimEnd / 1e6, t);
        assertEquals(0, healthyError.get(), "the healthy connection failed");
        assertTrue(all, "the backlog of the closed connection did not end within 30 s: " + t);
        assertTrue(healthyDone.get() > doneAtClose, "the healthy connection completed nothing after the close");
        assertTrue(gap < Duration.ofSeconds(1).toNanos(), "the healthy neighbour stalled " + gap / 1_000_000
                + " ms while the closed connection's backlog was failed (target < 50 ms)");
    }
}
