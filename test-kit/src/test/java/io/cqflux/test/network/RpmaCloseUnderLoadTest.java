package io.cqflux.test.network;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * Closing a connection, and the whole client instance, while thousands of operations are queued
 * and in flight on librpma over Soft-RoCE: every operation ends exactly once, completed or with
 * the close's failure, the close is not held up behind the backlog (under TCG the loop serves
 * completions far slower than the test thread queues operations), and another connection's
 * operation on the same loop still gets through. Client and server are two Cqflux instances of
 * this JVM on the two ends of an {@link RxeLinkRig} (no fault set). Runs only in the Soft-RoCE
 * lane (tag {@code rpma}).
 */
@Tag("rpma")
class RpmaCloseUnderLoadTest extends RxeRigTest {
    static final int BACKLOG = 20_000;
    static final int SIZE = 4096;
    /** How soon after the close its effect (the CLOSED event) must show, though thousands of operations wait. */
    static final Duration CLOSE_BOUND = Duration.ofSeconds(3);
    /** How soon after the close every operation must have ended. */
    static final Duration END_BOUND = Duration.ofSeconds(10);

    RxePair pair;

    @AfterEach
    void tearDown() {
        if (pair != null) {
            pair.close();
        }
    }

    private Region start() {
        pair = new RxePair(rig, 1 << 20, b -> b, b -> b.loops(1).pendingLimit(1 << 20));
        return pair.client.register(pair.arena.allocate(1 << 20, 64), RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
    }

    /** Subscribes {@code n} 4 KiB operations (writes, durable writes, reads) on {@code c}, each counted. */
    private static void flood(RdmaConnection c, Region local, Records t, int n) {
        PeerRegion dst = c.remoteRegion(0);
        for (int i = 0; i < n; i++) {
            long off = (long) (i % 256) * SIZE;
            Mono<Void> op = switch (i % 4) {
                case 0 -> c.durableWrite(dst, off, local, off, SIZE);
                case 1 -> c.read(local, off, dst, off, SIZE);
                default -> c.write(dst, off, local, off, SIZE);
            };
            t.track(i, op).subscribe(v -> { }, e -> { });
        }
    }

    private static void warm(RdmaConnection c, Region local) {
        for (int i = 0; i < 200; i++) { // the first operations load and compile the path (TCG)
            c.durableWrite(c.remoteRegion(0), 0, local, 0, SIZE).block(RxePair.T);
        }
    }

    private static void assertEndedOnceEach(Records t, Set<String> allowed) {
        assertEquals(t.started(), t.ended(), "operations still pending: " + t);
        assertEquals(0, t.twice(), "an operation signalled twice: " + t);
        for (String outcome : t.outcomes().keySet()) {
            assertTrue(allowed.contains(outcome), "an operation ended with " + outcome + ", not one of " + allowed
                    + ": " + t);
        }
    }

    @Test
    void connectionClose_withThousandsQueued_takesEffectPromptly_endsEveryOperationOnce_andTheLoopStillServes() {
        Region local = start();
        RdmaConnection conn = pair.connectPatiently();
        RdmaConnection other = pair.connectPatiently();
        warm(conn, local);
        warm(other, local);
        AtomicLong closedAt = new AtomicLong();
        conn.events().subscribe(e -> {
            if (e == ConnectionEvent.CLOSED) {
                closedAt.set(System.nanoTime());
            }
        });
        Records t = new Records(0, BACKLOG);
        long f0 = System.nanoTime();
        flood(conn, local, t, BACKLOG);
        long flooded = System.nanoTime() - f0;
        int endedBefore = t.ended();
        long t0 = System.nanoTime();
        conn.close();
        // Another connection of the same loop: one operation, subscribed behind the backlog.
        long o0 = System.nanoTime();
        Throwable otherError = null;
        try {
            other.durableWrite(other.remoteRegion(0), 0, local, 0, SIZE).block(RxePair.T);
        } catch (RuntimeException e) {
            otherError = e;
        }
        long otherTook = System.nanoTime() - o0;
        boolean all = PartitionTest.await(() -> t.ended() == t.started(), END_BOUND);
        long lastEnd = t.lastEndNanos() - t0;
        long closeTook = closedAt.get() == 0 ? -1 : closedAt.get() - t0;
        System.out.printf("FACT rpma connection close under load: %d operations subscribed in %.0f ms, %d ended before"
                + " the close; the CLOSED event %.0f ms after the close, the last operation %.0f ms after it; another"
                + " connection's durable write on the loop took %.0f ms (%s); %s; loop %s%n", BACKLOG, flooded / 1e6,
                endedBefore, closeTook / 1e6, lastEnd / 1e6, otherTook / 1e6, otherError == null ? "completed"
                : otherError, t, pair.client.loopStats());
        assertTrue(all, "not every operation ended within " + END_BOUND + " of the close: " + t);
        assertEndedOnceEach(t, Set.of("ok", "ConnectionException(CLOSED)"));
        assertTrue(closeTook >= 0 && closeTook <= CLOSE_BOUND.toNanos(), "the close took effect (CLOSED) "
                + closeTook / 1_000_000 + " ms after it, beyond " + CLOSE_BOUND.toMillis() + " ms: it waited behind"
                + " the backlog; " + t);
        assertTrue(t.outcomes().containsKey("ConnectionException(CLOSED)"), "the close failed nothing: every"
                + " operation had completed before it ran; " + t);
        assertEquals(List.of(ConnectionEvent.ESTABLISHED, ConnectionEvent.CLOSED), conn.events().collectList()
                .block(RxePair.T));
        assertEquals(null, otherError, "another connection's write on the same loop failed");
        assertTrue(otherTook <= END_BOUND.toNanos(), "another connection's write took " + otherTook / 1_000_000
                + " ms");
    }

    @Test
    void entryPointClose_withThousandsQueued_returnsInBound_andEndsEveryOperationOnce() {
        Region local = start();
        RdmaConnection conn = pair.connectPatiently();
        warm(conn, local);
        Records t = new Records(0, BACKLOG);
        long f0 = System.nanoTime();
        flood(conn, local, t, BACKLOG);
        long flooded = System.nanoTime() - f0;
        int endedBefore = t.ended();
        long t0 = System.nanoTime();
        pair.client.close(); // disposeNow(shutdownTimeout 2 s)
        long closeTook = System.nanoTime() - t0;
        boolean all = PartitionTest.await(() -> t.ended() == t.started(), END_BOUND);
        long lastEnd = t.lastEndNanos() - t0;
        System.out.printf("FACT rpma Cqflux.close() under load: %d operations subscribed in %.0f ms, %d ended before"
                + " the close; close() returned after %.0f ms, the last operation ended %.0f ms after it; %s%n",
                BACKLOG, flooded / 1e6, endedBefore, closeTook / 1e6, lastEnd / 1e6, t);
        assertTrue(all, "not every operation ended within " + END_BOUND + " of Cqflux.close(): " + t);
        assertEndedOnceEach(t, Set.of("ok", "ConnectionException(CLOSED)", "ResourceClosedException"));
        assertTrue(closeTook <= END_BOUND.toNanos(), "Cqflux.close() took " + closeTook / 1_000_000 + " ms");
        assertTrue(conn.isDisposed(), "the connection is still open after Cqflux.close()");
    }
}
