package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionStatus;
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
    void cancelledWrite_failingWithItsOwnStatus_isStillDropped_once() {
        Fault f = faults.on(Opcode.WRITE).once().fail(CompletionStatus.REM_ACCESS_ERR, Duration.ofMillis(300));
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
