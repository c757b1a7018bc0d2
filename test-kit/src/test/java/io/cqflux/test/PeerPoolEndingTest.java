package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionRecord;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.Opcode;
import io.cqflux.reactor.PeerPool;
import io.cqflux.reactor.PeerPoolOptions;
import io.cqflux.reactor.RdmaConnection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

/**
 * A {@link PeerPool} never hands out a connection whose end has begun: a flushed completion
 * (injected with the faulty transport, the real fabric/tcp connection underneath stays up) makes
 * the connection ENDING, still open while the transport's verdict is awaited, for up to the
 * connect timeout. Here in the test kit because only the faulty transport makes that state
 * reliably.
 */
@ExtendWith(VerifyTimeoutExtension.class)
class PeerPoolEndingTest {
    static final Duration T = Duration.ofSeconds(10);
    /** How long an ENDING connection waits for the transport's verdict before it ends LOST. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);

    @Test
    void connectionWhoseEndHasBegun_isNotHandedOut_theOperationGetsTheReplacement() {
        Faults faults = Faults.create();
        try (LoopbackPeer peer = CqfluxTest.loopback().faults(faults)
                .client(b -> b.connectionConfig(ConnectionConfig.DEFAULT.withTimeout(CONNECT_TIMEOUT))).start()) {
            PeerPool pool = peer.client().peerPool(peer.address(), PeerPoolOptions.builder()
                    .reconnectBackoff(Duration.ofMillis(10), Duration.ofMillis(50)).maxAcquireTime(T).build());
            try {
                RdmaConnection first = pool.acquire().block(T);
                List<CompletionRecord> seen = new CopyOnWriteArrayList<>();
                Disposable watch = first.completions().subscribe(seen::add);
                faults.on(Opcode.WRITE).nth(1).fail(CompletionStatus.WR_FLUSH_ERR);
                // The flushed write stays pending: the end fails it with the verdict.
                Disposable write = first.write(first.remoteRegion(0), 0, peer.local(), 0, 64).subscribe(v -> { }, e -> { });
                assertTrue(Await.until(() -> seen.stream().anyMatch(r -> r.status() == CompletionStatus.WR_FLUSH_ERR), T),
                        "no flushed completion: " + seen);
                // Submitted after the flushed completion was handled on the loop: it waits, as
                // only an ENDING connection makes an operation with credits free wait.
                Disposable read = first.read(peer.local(), 0, first.remoteRegion(0), 0, 8).subscribe(v -> { }, e -> { });
                assertTrue(Await.until(() -> first.waiting() == 1, T), "the read did not queue: " + first.waiting());
                assertFalse(first.isDisposed(), "ENDING is still open: the case under test");

                StepVerifier.create(pool.acquire())
                        .assertNext(c -> {
                            assertNotSame(first, c, "the ending connection was handed out");
                            assertFalse(c.isDisposed());
                        })
                        .expectComplete()
                        .verify(T);
                watch.dispose();
                write.dispose();
                read.dispose();
            } finally {
                pool.disposeNow(T);
            }
        }
    }
}
