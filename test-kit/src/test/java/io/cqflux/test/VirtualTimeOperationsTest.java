package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.Opcode;
import io.cqflux.reactor.RdmaConnection;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Operations under {@code StepVerifier.withVirtualTime}, which swaps Reactor's schedulers for a
 * virtual clock while it runs: only the caller's own {@code timeout()}s may move with it. The
 * library's own timers (a starved sender's re-read of its credit word, the operation timeout,
 * the ENDING deadline, the goodbye's bound) are real time, or an operation that would complete
 * on its own waits for a virtual clock that nothing advances, and a timer armed in the window
 * is lost with the virtual scheduler when the window closes.
 */
class VirtualTimeOperationsTest {
    static final Duration T = Duration.ofSeconds(10);

    @Test
    void send_waitingForThePeersReceive_underVirtualTime_completesOnceThePeerReceives() {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            StepVerifier.withVirtualTime(() -> conn.send(peer.local(), 0, 16))
                    .expectSubscription()
                    // The send waits for a credit from the peer's receiver, which has posted
                    // no receive yet: the sender re-reads its credit word until one comes.
                    .then(() -> assertTrue(Await.until(() -> conn.waiting() == 1, T), "the send did not wait"))
                    .then(() -> peer.serverConnection().receive().subscribe())
                    .expectComplete()
                    .verify(T);
        }
    }

    @Test
    void connection_establishedUnderVirtualTime_stillEndsLostAfterTheOperationTimeout() {
        Faults faults = Faults.create();
        try (LoopbackPeer peer = CqfluxTest.loopback().faults(faults)
                .client(b -> b.operationTimeout(Duration.ofMillis(300))).start()) {
            AtomicReference<RdmaConnection> second = new AtomicReference<>();
            StepVerifier.withVirtualTime(() -> Mono.fromCallable(peer::connectAnother))
                    .assertNext(second::set)
                    .expectComplete()
                    .verify(T);
            // The window has closed; the connection it made lives on in real time.
            faults.on(Opcode.WRITE).hang();
            RdmaConnection conn = second.get();
            StepVerifier.create(conn.write(conn.remoteRegion(0), 0, peer.local(), 0, 64))
                    .expectErrorSatisfies(e -> assertEquals(ConnectionEvent.LOST,
                            assertInstanceOf(ConnectionException.class, e).event()))
                    .verify(T);
        }
    }
}
