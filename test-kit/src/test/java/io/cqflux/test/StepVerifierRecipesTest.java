package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.OperationFailedException;
import io.cqflux.core.Opcode;
import io.cqflux.reactor.Message;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.WriteRequest;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The recipes of the guide's "Testing with StepVerifier" section, each exactly as the guide shows
 * it: the text between a {@code tag::NAME[]} and its {@code end::NAME[]} comment is the guide's
 * snippet NAME, and the docs module's GuideSnippetsTest fails when the two differ.
 */
class StepVerifierRecipesTest {

    @Test
    void oneOperation_durableWrite_completes() {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            // tag::one-operation[]
            StepVerifier.create(conn.durableWrite(remote, 0, local, 0, 4096))
                    .expectComplete()
                    .verify(Duration.ofSeconds(10));
            // end::one-operation[]
        }
    }

    @Test
    void chain_writeThenReadBack_returnsTheBytes() {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            MemorySegment localMemory = peer.localMemory();
            byte[] record = "one record".getBytes(StandardCharsets.US_ASCII);
            localMemory.asSlice(0, record.length).copyFrom(MemorySegment.ofArray(record));
            // tag::chain[]
            Mono<byte[]> roundTrip = conn.durableWrite(remote, 1024, local, 0, record.length)
                    .then(conn.read(local, 2048, remote, 1024, record.length))
                    .then(Mono.fromSupplier(() -> localMemory.asSlice(2048, record.length)
                            .toArray(ValueLayout.JAVA_BYTE)));

            StepVerifier.create(roundTrip)
                    .assertNext(bytes -> assertArrayEquals(record, bytes))
                    .expectComplete()
                    .verify(Duration.ofSeconds(10));
            // end::chain[]
        }
    }

    @Test
    void expectedFailure_faultedWrite_failsWithItsStatus_andEndsTheConnection() {
        // tag::expected-failure[]
        Faults faults = Faults.create();
        try (LoopbackPeer peer = CqfluxTest.loopback().faults(faults).start()) {
            faults.on(Opcode.WRITE).once().fail(CompletionStatus.REM_ACCESS_ERR);

            StepVerifier.create(peer.connection().write(peer.remote(), 0, peer.local(), 0, 64))
                    .expectErrorSatisfies(e -> {
                        OperationFailedException failed = assertInstanceOf(OperationFailedException.class, e);
                        assertEquals(CompletionStatus.REM_ACCESS_ERR, failed.status());
                        assertEquals(Opcode.WRITE, failed.opcode());
                    })
                    .verify(Duration.ofSeconds(10));

            // As after a real error completion (ibv_poll_cq(3)), the connection has ended.
            StepVerifier.create(peer.connection().read(peer.local(), 0, peer.remote(), 0, 64))
                    .expectErrorSatisfies(e -> assertEquals(ConnectionEvent.LOST,
                            assertInstanceOf(ConnectionException.class, e).event()))
                    .verify(Duration.ofSeconds(10));
        }
        // end::expected-failure[]
    }

    @Test
    void cancellation_detachesTheSubscriber_andTheConnectionGoesOn() {
        try (LoopbackPeer peer = CqfluxTest.loopback().regionSize(1 << 20).start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            // tag::cancellation[]
            Flux<WriteRequest> requests = Flux.range(0, 256)
                    .map(i -> new WriteRequest(remote, i * 4096L, local, i * 4096L, 4096, true));

            StepVerifier.create(conn.writeAll(requests))
                    .expectNextCount(3)
                    .thenCancel()                   // the writes already posted still complete
                    .verify(Duration.ofSeconds(10));

            StepVerifier.create(conn.write(remote, 0, local, 0, 64))
                    .expectComplete()
                    .verify(Duration.ofSeconds(10));
            // end::cancellation[]
        }
    }

    @Test
    void virtualTime_hungRead_timesOutWithoutWaiting() {
        Faults faults = Faults.create();
        try (LoopbackPeer peer = CqfluxTest.loopback().faults(faults).start()) {
            long started = System.nanoTime();
            // tag::virtual-time[]
            faults.on(Opcode.READ).hang();                  // never posted, never completed

            StepVerifier.withVirtualTime(() -> peer.connection()
                            .read(peer.local(), 0, peer.remote(), 0, 64)
                            .timeout(Duration.ofMinutes(5)))
                    .expectSubscription()
                    .thenAwait(Duration.ofMinutes(5))
                    .expectError(TimeoutException.class)
                    .verify(Duration.ofSeconds(10));
            // end::virtual-time[]
            // Five virtual minutes took far less than a real one (not a timing test: a bound
            // that only a real wait would break).
            assertTrue(System.nanoTime() - started < Duration.ofMinutes(1).toNanos());
        }
    }

    @Test
    void slowConsumer_ofReceive_holdsThePeersSendsBack() {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection server = peer.serverConnection();
            MemorySegment out = peer.memory();
            for (int i = 0; i < 3; i++) {
                out.setString(i * 16, "message " + i);
            }
            Region serverRegion = peer.exposed();
            // tag::slow-consumer[]
            AtomicInteger sent = new AtomicInteger();
            Flux<Void> sends = Flux.range(0, 3)
                    .concatMap(i -> server.send(serverRegion, i * 16L, 16)
                            .doOnSuccess(v -> sent.incrementAndGet()));

            StepVerifier.create(peer.connection().receive(), 0)       // subscribed, no demand yet
                    .then(() -> sends.subscribe())
                    .expectNoEvent(Duration.ofMillis(200))            // no buffer posted: nothing lands
                    .then(() -> assertEquals(0, sent.get()))          // and the sender waits
                    .thenRequest(1)
                    .assertNext(m -> assertEquals("message 0", text(m)))
                    .thenRequest(2)
                    .assertNext(m -> assertEquals("message 1", text(m)))
                    .assertNext(m -> assertEquals("message 2", text(m)))
                    .thenCancel()
                    .verify(Duration.ofSeconds(10));
            // end::slow-consumer[]
        }
    }

    private static String text(Message m) {
        return MemorySegment.ofArray(m.data()).getString(0);
    }
}
