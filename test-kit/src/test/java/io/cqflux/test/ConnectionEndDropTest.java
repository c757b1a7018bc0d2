package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.OperationFailedException;
import io.cqflux.core.Opcode;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.WriteRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;

/**
 * What reaches {@code Operators.onErrorDropped} when a connection ends under operations whose
 * subscribers let go: the connection's end is reported once (its events, its log line), not once
 * more per cancelled operation in flight; an operation's own late failure still is. The faulty
 * transport's {@code hang()} keeps the writes in flight until the end fails them.
 */
@ExtendWith(VerifyTimeoutExtension.class)
class ConnectionEndDropTest {
    static final Duration T = Duration.ofSeconds(10);
    static final int WRITES = 8;

    final List<Throwable> dropped = new CopyOnWriteArrayList<>();
    Faults faults;
    LoopbackPeer peer;

    @BeforeEach
    void start() {
        Hooks.onErrorDropped(dropped::add);
        faults = Faults.create();
        peer = CqfluxTest.loopback().faults(faults).start();
    }

    @AfterEach
    void stop() {
        try {
            peer.close();
        } finally {
            Hooks.resetOnErrorDropped();
        }
    }

    private static void awaitHits(Fault f, long n) {
        assertTrue(Await.until(() -> f.hits() >= n, T), "only " + f.hits() + " of " + n + " writes reached " + f);
    }

    @Test
    void cancelledWritesInFlight_connectionEnds_theEndIsNotDroppedOncePerWrite() {
        Fault f = faults.on(Opcode.WRITE).hang();
        RdmaConnection conn = peer.connection();
        List<Disposable> writes = new ArrayList<>();
        for (int i = 0; i < WRITES; i++) {
            writes.add(conn.write(peer.remote(), 64L * i, peer.local(), 0, 64).subscribe());
        }
        awaitHits(f, WRITES);
        writes.forEach(Disposable::dispose);
        conn.disposeNow(T);
        assertEquals(List.of(), dropped, "the connection's end, once per cancelled write");
    }

    @Test
    void writeAll_endedByTheConnection_failsOnce_withoutADropPerWriteInFlight() {
        Fault f = faults.on(Opcode.WRITE).hang();
        RdmaConnection conn = peer.connection();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Disposable stream = conn.writeAll(Flux.range(0, WRITES)
                        .map(i -> new WriteRequest(peer.remote(), 64L * i, peer.local(), 0, 64, false)))
                .subscribe(r -> { }, failed::set);
        try {
            awaitHits(f, WRITES);
            conn.disposeNow(T);
            assertTrue(Await.until(() -> failed.get() != null, T), "the stream did not fail with the end");
            assertEquals(List.of(), dropped, "the end, dropped again by the writes still in flight");
        } finally {
            stream.dispose();
        }
    }

    @Test
    void cancelledWritesQueuedForACredit_connectionEnds_theEndIsNotDroppedOncePerWrite() {
        Fault f = faults.on(Opcode.WRITE).hang();
        RdmaConnection conn = peer.connection();
        int credits = conn.sendCredits();
        List<Disposable> writes = new ArrayList<>();
        for (int i = 0; i < credits + WRITES; i++) {
            writes.add(conn.write(peer.remote(), 64L * (i % 64), peer.local(), 0, 64).subscribe());
        }
        awaitHits(f, credits); // the rest wait in the queue for a credit that never comes back
        writes.forEach(Disposable::dispose);
        conn.disposeNow(T);
        assertEquals(List.of(), dropped, "the connection's end, once per cancelled write, queued ones included");
    }

    /**
     * Writes cancelled while their hand-over still waits in the loop's task queue, then a close:
     * the loop meets them after the close took effect, and fails them with the connection's end,
     * which their cancelled subscribers must not hear of through onErrorDropped either.
     */
    @Test
    void writesCancelledOnTheirWayToTheLoop_thenTheClose_dropNothing() throws Exception {
        RdmaConnection conn = peer.connection();
        java.util.concurrent.CountDownLatch onLoop = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch letGo = new java.util.concurrent.CountDownLatch(1);
        // Holds the connection's loop in a subscriber callback (a few milliseconds).
        AtomicReference<String> callbackThread = new AtomicReference<>();
        conn.write(peer.remote(), 0, peer.local(), 0, 8).doOnSuccess(v -> {
            callbackThread.set(Thread.currentThread().getName());
            onLoop.countDown();
            try {
                letGo.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }).subscribe();
        try {
            assertTrue(onLoop.await(T.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS),
                    "the loop never ran the callback");
            assertTrue(callbackThread.get().contains("-loop-"), "the callback ran on " + callbackThread.get());
            List<Disposable> writes = new ArrayList<>();
            for (int i = 0; i < WRITES; i++) {
                writes.add(conn.write(peer.remote(), 64L * i, peer.local(), 0, 64).subscribe());
            }
            writes.forEach(Disposable::dispose);
            conn.dispose(); // the close request, ahead of the loop meeting the hand-overs
        } finally {
            letGo.countDown();
        }
        assertTrue(Await.until(conn::isDisposed, T));
        conn.disposeNow(T);
        assertEquals(List.of(), dropped, "the connection's end, dropped by writes cancelled on their way to the loop");
    }

    @Test
    void writeAll_failedByAWritesOwnStatus_thenTheEnd_dropsNothing() {
        faults.on(Opcode.WRITE).nth(1).fail(CompletionStatus.REM_ACCESS_ERR, Duration.ofMillis(300));
        Fault hung = faults.on(Opcode.WRITE).hang();
        RdmaConnection conn = peer.connection();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Disposable stream = conn.writeAll(Flux.range(0, WRITES)
                        .map(i -> new WriteRequest(peer.remote(), 64L * i, peer.local(), 0, 64, false)))
                .subscribe(r -> { }, failed::set);
        try {
            awaitHits(hung, WRITES - 1);
            // The first write's error completion ends the connection, whose end fails the other
            // writes in flight: the stream fails with one of the two (whichever its writes report
            // first), the write's own error may be dropped once, the end never.
            assertTrue(Await.until(() -> failed.get() != null, T), "the stream did not fail");
            assertTrue(Await.until(conn::isDisposed, T), "the error completion did not end the connection");
            assertTrue(dropped.stream().noneMatch(ConnectionException.class::isInstance),
                    "the end, dropped by the writes in flight after the stream failed: " + dropped);
            assertTrue(dropped.size() <= 1 && dropped.stream().allMatch(OperationFailedException.class::isInstance),
                    "only the write's own failure may be dropped, once: " + dropped);
        } finally {
            stream.dispose();
        }
    }

    @Test
    void cancelledWrite_failingWithItsOwnStatus_isStillDropped_once() {
        // A second for the cancel to land before the failure does, even on a loaded host.
        Fault f = faults.on(Opcode.WRITE).once().fail(CompletionStatus.REM_ACCESS_ERR, Duration.ofMillis(1000));
        Disposable write = peer.connection().write(peer.remote(), 0, peer.local(), 0, 64).subscribe();
        awaitHits(f, 1);
        write.dispose();
        // The error completion also ends the connection: that end must not add a second drop.
        assertTrue(Await.until(() -> !dropped.isEmpty(), T), "the write's own failure was not dropped");
        peer.connection().disposeNow(T);
        assertEquals(1, dropped.size(), "dropped: " + dropped);
        assertInstanceOf(OperationFailedException.class, dropped.get(0));
    }
}
