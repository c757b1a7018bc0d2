package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.OperationFailedException;
import io.cqflux.core.Opcode;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.WriteRequest;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** {@code writeAll} when a write's completion fails: the stream fails with it and lets go of everything. */
class WriteAllFaultTest {
    static final Duration T = Duration.ofSeconds(10);

    @Test
    void writeAll_failedCompletion_failsTheStreamWithIt_cancelsUpstream_andReleasesTheRegion() throws Exception {
        Faults faults = Faults.create();
        try (LoopbackPeer peer = CqfluxTest.loopback().faults(faults).start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            faults.on(Opcode.WRITE).nth(40).fail(CompletionStatus.REM_ACCESS_ERR);
            AtomicInteger cancelled = new AtomicInteger();
            Flux<WriteRequest> requests = Flux.range(0, Integer.MAX_VALUE)
                    .map(i -> new WriteRequest(remote, 8L * (i % 512), local, 0, 8, i % 3 == 0))
                    .doOnCancel(cancelled::incrementAndGet);

            StepVerifier.create(conn.writeAll(requests))
                    .thenConsumeWhile(r -> r.sequence() < 39)
                    .expectErrorSatisfies(e -> {
                        // The error completion ends the connection, which fails every write in
                        // flight in its table's order: the first failure the stream sees is the
                        // faulted write's own, or another write's ConnectionException naming it.
                        if (e instanceof OperationFailedException failed) {
                            assertEquals(CompletionStatus.REM_ACCESS_ERR, failed.status());
                        } else {
                            ConnectionException ce = assertInstanceOf(ConnectionException.class, e);
                            assertEquals(ConnectionEvent.LOST, ce.event());
                            assertTrue(ce.getMessage().contains("REM_ACCESS_ERR"), ce.getMessage());
                        }
                    })
                    .verify(T);
            assertEquals(1, cancelled.get(), "upstream cancelled once");
            // The error completion ends the connection; the writes still in flight are flushed
            // with it, and every region reference goes back.
            long deadline = System.nanoTime() + T.toNanos();
            while (local.inFlight() != 0 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(0, local.inFlight());
        }
    }

    @Test
    void writeAll_failureInOneBatchWithEarlierCompletions_emitsTheirResultsFirst() throws Exception {
        Faults faults = Faults.create();
        try (LoopbackPeer peer = CqfluxTest.loopback().faults(faults).start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            // Writes 0-2 complete and are held back 300 ms; write 3 fails 300 ms after its post,
            // after them. A write of the test's own, handed to the loop once the four were
            // emitted (so posted after them: the loop's tasks run in order, and over one TCP
            // stream it completes after them, when their completions are held already), holds the
            // client's loop in its callback past all four times, so that they come out of one
            // poll, in order: three successes, then the failure. The results of the three are put
            // off to the batch's end (writeAll drains once per batch); the failure must not
            // overtake them. (Should the batch split after all, the results come first anyway.)
            Duration later = Duration.ofMillis(300);
            faults.on(Opcode.WRITE).matching(op -> op.remoteOffset() < 24).delay(later);
            faults.on(Opcode.WRITE).matching(op -> op.remoteOffset() == 24)
                    .fail(CompletionStatus.REM_ACCESS_ERR, later);
            Flux<WriteRequest> requests = Flux.range(0, 4)
                    .map(i -> new WriteRequest(remote, 8L * i, local, 0, 8, false))
                    .doOnComplete(() -> conn.write(remote, 1024, local, 0, 8)
                            .doOnSuccess(v -> holdTheLoop(Duration.ofMillis(700)))
                            .subscribe());

            StepVerifier.create(conn.writeAll(requests))
                    .assertNext(r -> assertEquals(0, r.sequence()))
                    .assertNext(r -> assertEquals(1, r.sequence()))
                    .assertNext(r -> assertEquals(2, r.sequence()))
                    .expectErrorSatisfies(e -> assertEquals(CompletionStatus.REM_ACCESS_ERR,
                            assertInstanceOf(OperationFailedException.class, e).status()))
                    .verify(T);
        }
    }

    /** Keeps the calling thread (here the connection's loop, in a subscriber's callback) busy. */
    private static void holdTheLoop(Duration d) {
        long end = System.nanoTime() + d.toNanos();
        for (long left = d.toNanos(); left > 0; left = end - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }
}
