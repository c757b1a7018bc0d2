package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.OperationFailedException;
import io.cqflux.core.Opcode;
import io.cqflux.reactor.Cqflux;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.test.StepVerifier;

@ExtendWith(VerifyTimeoutExtension.class)
class FaultsTest {
    static final Duration T = Duration.ofSeconds(10);

    Faults faults;
    LoopbackPeer peer;

    @BeforeEach
    void start() {
        faults = Faults.create();
        peer = CqfluxTest.loopback().faults(faults).start();
    }

    @AfterEach
    void stop() {
        peer.close();
    }

    @Test
    void client_isOnTheFaultyTransport_wrappingFabric() {
        assertEquals("faulty(fabric/tcp)", peer.client().transportName());
        assertEquals("fabric/tcp", peer.server().transportName());
    }

    @Test
    void fail_secondWrite_failsWithThatStatus_firstCompletes() {
        Fault f = faults.on(Opcode.WRITE).nth(2).fail(CompletionStatus.REM_ACCESS_ERR);
        StepVerifier.create(peer.connection().write(peer.remote(), 0, peer.local(), 0, 64))
                .expectComplete()
                .verify(T);
        StepVerifier.create(peer.connection().write(peer.remote(), 0, peer.local(), 0, 64))
                .expectErrorSatisfies(e -> {
                    OperationFailedException o = assertInstanceOf(OperationFailedException.class, e);
                    assertEquals(CompletionStatus.REM_ACCESS_ERR, o.status());
                    assertEquals(Opcode.WRITE, o.opcode());
                })
                .verify(T);
        assertEquals(1, f.hits());
        assertEquals(2, f.seen());
        // As a real error completion does, it ended the connection.
        StepVerifier.create(peer.connection().write(peer.remote(), 0, peer.local(), 0, 64))
                .expectErrorSatisfies(e -> assertEquals(ConnectionEvent.LOST,
                        assertInstanceOf(ConnectionException.class, e).event()))
                .verify(T);
    }

    @Test
    void fail_eighthOfEightWritesInFlight_failsOnlyIt_theSevenBeforeItComplete() {
        // Subscribed back to back: seven real writes are in flight when the eighth is failed.
        // A reliable connection completes in the order of posting, so they complete first.
        for (int round = 0; round < 3; round++) {
            Faults rules = Faults.create();
            try (LoopbackPeer p = CqfluxTest.loopback().faults(rules).start()) {
                rules.on(Opcode.WRITE).nth(8).fail(CompletionStatus.REM_ACCESS_ERR);
                List<String> got = inFlight(8, i -> p.connection().write(p.remote(), i * 64L, p.local(), 0, 64),
                        e -> e.getClass().getSimpleName());
                assertEquals(java.util.Collections.nCopies(7, "ok"), got.subList(0, 7), got.toString());
                assertEquals("OperationFailedException", got.get(7), got.toString());
            }
        }
    }

    @Test
    void fail_ofTheUnsignaledWriteOfADurableWrite_comesBeforeItsFlush_asOnAReliableConnection() {
        // nth(2): the second WRITE is the unsignaled write of the durable write; its flush,
        // posted after it, must not complete first (the durable write would have succeeded).
        faults.on(Opcode.WRITE).nth(2).fail(CompletionStatus.REM_ACCESS_ERR);
        StepVerifier.create(peer.connection().write(peer.remote(), 0, peer.local(), 0, 64)).expectComplete().verify(T);
        StepVerifier.create(peer.connection().durableWrite(peer.remote(), 64, peer.local(), 0, 64))
                .expectErrorSatisfies(e -> assertEquals(CompletionStatus.REM_ACCESS_ERR,
                        assertInstanceOf(OperationFailedException.class, e).status()))
                .verify(T);
    }

    @Test
    void drop_ofTheFifthOfEightWritesInFlight_endsTheConnection_andLosesNoCompletion() {
        Faults rules = Faults.create();
        try (LoopbackPeer p = CqfluxTest.loopback().faults(rules).start()) {
            rules.on(Opcode.WRITE).nth(5).drop();
            // Every write ends (none hangs, none is lost), the fifth with the connection's end,
            // which is the drop's LOST: not a completion queue that failed in the kit's own code
            // (the loop then stops serving the connection).
            List<String> got = inFlight(8, i -> p.connection().write(p.remote(), i * 64L, p.local(), 0, 64),
                    e -> e.getClass().getSimpleName() + ": " + e.getMessage());
            assertEquals(8, got.size(), String.valueOf(got));
            assertTrue(got.get(4).startsWith("ConnectionException"), String.valueOf(got));
            assertTrue(got.stream().noneMatch(o -> o.contains("stopped serving")), String.valueOf(got));
        }
    }

    @Test
    void fail_amidReadsAndDurableWrites_keepsTheOrderOfPosting_andNothingHangs() {
        Faults rules = Faults.create();
        try (LoopbackPeer p = CqfluxTest.loopback().faults(rules).start()) {
            rules.on(Opcode.WRITE).nth(4).fail(CompletionStatus.REM_ACCESS_ERR);
            List<String> got = inFlight(12, i -> switch (i % 3) {
                case 0 -> p.connection().read(p.local(), 0, p.remote(), i * 64L, 64);
                case 1 -> p.connection().durableWrite(p.remote(), i * 64L, p.local(), 0, 64);
                default -> p.connection().write(p.remote(), i * 64L, p.local(), 0, 64);
            }, e -> e.getClass().getSimpleName());
            assertEquals(12, got.size(), String.valueOf(got));
            assertTrue(got.contains("OperationFailedException"), String.valueOf(got));
        }
    }

    @Test
    void fail_matchingPredicate_selectsOnlyThoseOperations() {
        faults.on(Opcode.READ).matching(op -> op.remoteOffset() >= 4096).fail(CompletionStatus.REM_OP_ERR);
        StepVerifier.create(peer.connection().read(peer.local(), 0, peer.remote(), 0, 64))
                .expectComplete()
                .verify(T);
        StepVerifier.create(peer.connection().read(peer.local(), 0, peer.remote(), 4096, 64))
                .expectErrorSatisfies(e -> assertEquals(CompletionStatus.REM_OP_ERR,
                        assertInstanceOf(OperationFailedException.class, e).status()))
                .verify(T);
    }

    @Test
    void matching_calledTwice_selectsOnlyWhatBothPredicatesAccept() {
        Fault f = faults.on(Opcode.READ)
                .matching(op -> op.remoteOffset() >= 4096)
                .matching(op -> op.length() == 64)
                .fail(CompletionStatus.REM_OP_ERR);
        // Accepted by the second predicate only: not selected.
        StepVerifier.create(peer.connection().read(peer.local(), 0, peer.remote(), 0, 64))
                .expectComplete()
                .verify(T);
        // Accepted by the first only: not selected either.
        StepVerifier.create(peer.connection().read(peer.local(), 0, peer.remote(), 4096, 128))
                .expectComplete()
                .verify(T);
        assertEquals(0, f.seen());
        StepVerifier.create(peer.connection().read(peer.local(), 0, peer.remote(), 4096, 64))
                .expectErrorSatisfies(e -> assertEquals(CompletionStatus.REM_OP_ERR,
                        assertInstanceOf(OperationFailedException.class, e).status()))
                .verify(T);
        assertEquals(1, f.hits());
    }

    @Test
    void hang_thenPeerClosed_failsTheHungOperationInsteadOfLeavingItPending() {
        faults.on(Opcode.WRITE).hang();
        java.util.concurrent.CompletableFuture<Void> write =
                peer.connection().write(peer.remote(), 0, peer.local(), 0, 64).toFuture();
        peer.close();
        java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> write.get(T.toSeconds(), java.util.concurrent.TimeUnit.SECONDS));
        assertInstanceOf(io.cqflux.core.CqfluxException.class, e.getCause());
    }

    @Test
    void hang_withVirtualTime_timeoutFires() {
        Fault f = faults.on(Opcode.READ).hang();
        StepVerifier.withVirtualTime(() -> peer.connection().read(peer.local(), 0, peer.remote(), 0, 64)
                        .timeout(Duration.ofMinutes(5)))
                .expectSubscription()
                .then(() -> awaitHit(f)) // the loop took the read (and did not post it)
                .thenAwait(Duration.ofMinutes(5))
                .expectError(TimeoutException.class)
                .verify(T);
        assertEquals(1, f.hits());
    }

    /**
     * A durable write is an unsignaled WRITE and its FLUSH: a hung WRITE shows on the FLUSH that
     * covers it (it never completes: the data is never reported durable), a delayed one delays it,
     * and the connection carries on with what comes after.
     */
    @Test
    void hangOrDelayOfADurableWritesWrite_holdsBackItsFlush_andTheDataIsNeverReportedDurableEarly() {
        peer.localMemory().set(ValueLayout.JAVA_LONG, 0, 0x1234L);
        Fault hung = faults.on(Opcode.WRITE).once().hang();
        StepVerifier.create(peer.connection().durableWrite(peer.remote(), 0, peer.local(), 0, 8)
                        .timeout(Duration.ofMillis(500)))
                .expectError(TimeoutException.class)
                .verify(T);
        assertEquals(1, hung.hits());
        assertEquals(0L, peer.memory().get(ValueLayout.JAVA_LONG, 0), "the hung write never landed");
        faults.on(Opcode.WRITE).once().delay(Duration.ofMillis(300));
        long t0 = System.nanoTime();
        StepVerifier.create(peer.connection().durableWrite(peer.remote(), 8, peer.local(), 0, 8))
                .expectComplete()
                .verify(T);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms >= 300, "the durable write completed " + ms + " ms after it began, before its write's delay");
        assertEquals(0x1234L, peer.memory().get(ValueLayout.JAVA_LONG, 8));
    }

    @Test
    void hang_removed_laterOperationsComplete() {
        Fault f = faults.on(Opcode.WRITE).once().hang();
        peer.connection().write(peer.remote(), 0, peer.local(), 0, 64).subscribe();
        awaitHit(f);
        f.remove();
        StepVerifier.create(peer.connection().write(peer.remote(), 64, peer.local(), 0, 64))
                .expectComplete()
                .verify(T);
        assertEquals(1, f.hits());
    }

    /** Waits (bounded) until the loop has applied {@code f} once: posting is asynchronous. */
    /**
     * Subscribes {@code n} operations back to back, so that they are in flight together, and
     * {@return their outcomes in order: "ok", or what {@code describe} says of the error}
     */
    static List<String> inFlight(int n, java.util.function.IntFunction<reactor.core.publisher.Mono<Void>> op,
                                 java.util.function.Function<Throwable, String> describe) {
        List<reactor.core.publisher.Mono<String>> outcomes = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            reactor.core.publisher.Mono<String> o = op.apply(i).thenReturn("ok")
                    .onErrorResume(e -> reactor.core.publisher.Mono.just(describe.apply(e))).cache();
            o.subscribe();
            outcomes.add(o);
        }
        return reactor.core.publisher.Flux.concat(outcomes).collectList().block(T);
    }

    static void awaitHit(Fault f) {
        long end = System.nanoTime() + T.toNanos();
        while (f.hits() == 0) {
            if (System.nanoTime() > end) {
                throw new AssertionError("no operation reached " + f + " within " + T);
            }
            Thread.onSpinWait();
        }
    }

    @Test
    void delay_write_completesAfterTheDelay_withTheBytesWritten() {
        Duration delay = Duration.ofMillis(300);
        faults.on(Opcode.WRITE).delay(delay);
        peer.localMemory().set(ValueLayout.JAVA_LONG, 0, 42L);
        long t0 = System.nanoTime();
        StepVerifier.create(peer.connection().write(peer.remote(), 128, peer.local(), 0, 8))
                .expectComplete()
                .verify(T);
        long elapsed = System.nanoTime() - t0;
        assertTrue(elapsed >= delay.toNanos(), "completed after " + elapsed / 1_000_000 + " ms, before the delay");
        assertEquals(42L, peer.memory().get(ValueLayout.JAVA_LONG, 128));
    }

    @Test
    void drop_write_failsWithConnectionLost_andTheConnectionReportsLost() {
        faults.on(Opcode.WRITE).drop();
        StepVerifier.create(peer.connection().write(peer.remote(), 0, peer.local(), 0, 16))
                .expectErrorSatisfies(e -> assertEquals(ConnectionEvent.LOST,
                        assertInstanceOf(ConnectionException.class, e).event()))
                .verify(T);
        StepVerifier.create(peer.connection().events().filter(ConnectionEvent::isTerminal).next())
                .expectNext(ConnectionEvent.LOST)
                .expectComplete()
                .verify(T);
    }

    @Test
    void globalRules_applyToABuilderThatOnlyNamesTheTransport() {
        Fault f = Faults.global().on(Opcode.WRITE).once().fail(CompletionStatus.GENERAL_ERR);
        try (LoopbackPeer p = CqfluxTest.loopback().client(b -> b.transport(Faults.TRANSPORT)).start()) {
            StepVerifier.create(p.connection().write(p.remote(), 0, p.local(), 0, 8))
                    .expectError(OperationFailedException.class)
                    .verify(T);
        } finally {
            Faults.global().clear();
        }
        assertEquals(1, f.hits());
    }

    @Test
    void fail_success_isRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> faults.on(Opcode.WRITE).fail(CompletionStatus.SUCCESS));
        assertTrue(e.getMessage().contains("SUCCESS"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> faults.on(Opcode.RECEIVE));
        assertThrows(IllegalArgumentException.class, () -> faults.on(Opcode.WRITE).nth(0));
    }

    @Test
    void configure_unknownWrappedTransport_failsNamingIt() {
        Faults other = Faults.create();
        var e = assertThrows(io.cqflux.core.TransportUnavailableException.class,
                () -> other.configure(Cqflux.builder(), "nosuch").build());
        assertTrue(e.getMessage().contains("nosuch"), e.getMessage());
    }
}
