package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionStatus;
import io.cqflux.core.Opcode;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.WriteRequest;
import io.cqflux.reactor.WriteResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Operators;
import reactor.test.StepVerifier;
import reactor.util.context.Context;

/**
 * writeAll towards its subscriber: a subscriber that throws from {@code onNext} ends the stream
 * (no hang), and every request taken from upstream is either emitted as a result or discarded
 * ({@code doOnDiscard}) exactly once, never while its write may still be read by the NIC.
 */
class WriteAllDownstreamTest {
    static final Duration T = Duration.ofSeconds(10);
    /** Enough for a stream that hangs to show it; far more than a loopback write takes. */
    static final Duration HANG = Duration.ofSeconds(5);

    @Test
    void writeAll_subscriberOnNextThrows_failsTheStreamThroughOnOperatorError_cancelsUpstreamOnce_andReleasesAll()
            throws Exception {
        IllegalStateException boom = new IllegalStateException("subscriber bug");
        List<Object> hookSaw = new CopyOnWriteArrayList<>();
        Hooks.onOperatorError("writeAllDownstream", (e, data) -> {
            hookSaw.add(data);
            return e;
        });
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            AtomicInteger cancelled = new AtomicInteger();
            Flux<WriteRequest> requests = Flux.range(0, 1000)
                    .map(i -> new WriteRequest(remote, 8L * (i % 512), local, 0, 8, i % 4 == 0))
                    .doOnCancel(cancelled::incrementAndGet);
            // A raw subscriber between writeAll and the verifier, whose onNext throws on the 5th
            // result (Reactive Streams §2.13 forbids it; BaseSubscriber or doOnNext would catch it).
            Flux<WriteResult> throwing = conn.writeAll(requests).transform(Operators.<WriteResult, WriteResult>lift(
                    (scannable, downstream) -> new CoreSubscriber<WriteResult>() {
                        int seen;

                        @Override
                        public Context currentContext() {
                            return downstream.currentContext();
                        }

                        @Override
                        public void onSubscribe(Subscription s) {
                            downstream.onSubscribe(s);
                        }

                        @Override
                        public void onNext(WriteResult r) {
                            if (++seen == 5) {
                                throw boom;
                            }
                            downstream.onNext(r);
                        }

                        @Override
                        public void onError(Throwable t) {
                            downstream.onError(t);
                        }

                        @Override
                        public void onComplete() {
                            downstream.onComplete();
                        }
                    }));

            StepVerifier.create(throwing)
                    .expectNextCount(4)
                    .expectErrorMatches(e -> e == boom)
                    .verify(HANG);
            assertEquals(1, cancelled.get(), "upstream cancelled once");
            assertTrue(hookSaw.stream().anyMatch(d -> d instanceof WriteResult r && r.sequence() == 4),
                    "Operators.onOperatorError saw the result onNext threw on: " + hookSaw);
            // The writes in flight were cancelled: each gives back its credits and region
            // reference when its completion arrives, and the connection goes on.
            assertTrue(Await.until(() -> conn.inFlight() == 0 && local.inFlight() == 0, T),
                    "in flight " + conn.inFlight() + ", region " + local.inFlight());
            StepVerifier.create(conn.write(remote, 0, local, 0, 8)).expectComplete().verify(T);
        } finally {
            Hooks.resetOnOperatorError("writeAllDownstream");
        }
    }

    @Test
    void writeAll_cancel_discardsHeldResultsAtOnce_andInFlightRequestsOnlyOnceTheirWritesEnded() throws Exception {
        Faults faults = Faults.create();
        try (LoopbackPeer peer = CqfluxTest.loopback().faults(faults).start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            int window = Math.max(1, conn.sendCredits() / 2);
            int emitted = 3;
            // The writes asked for after the first window stay in flight for a while.
            Duration held = Duration.ofSeconds(3);
            faults.on(Opcode.WRITE).matching(o -> o.remoteOffset() >= 8L * window).delay(held);
            List<WriteRequest> taken = new CopyOnWriteArrayList<>();
            List<WriteRequest> discarded = new CopyOnWriteArrayList<>();
            Flux<WriteRequest> requests = Flux.range(0, 2 * window + 16)
                    .map(i -> new WriteRequest(remote, 8L * i, local, 0, 8, false))
                    .doOnNext(taken::add);
            List<WriteResult> results = new CopyOnWriteArrayList<>();

            StepVerifier.create(conn.writeAll(requests).doOnNext(results::add)
                            .doOnDiscard(WriteRequest.class, discarded::add), 0)
                    // No demand: the first window's writes complete and their results are held.
                    .then(() -> assertTrue(Await.until(() -> taken.size() == window && conn.inFlight() == 0, T)))
                    .thenRequest(emitted)
                    .expectNextCount(emitted)
                    // Three slots freed: three more requests taken, their writes posted and held in
                    // flight (a write cancelled before the loop posted it is discarded at once).
                    .then(() -> assertTrue(Await.until(() -> taken.size() == window + emitted
                            && conn.inFlight() == emitted, T)))
                    .thenCancel()
                    .verify(T);

            List<WriteRequest> heldResults = taken.subList(emitted, window);
            List<WriteRequest> inFlight = taken.subList(window, window + emitted);
            // The cancel's drain may be the loop's: inFlight() read the last write of the window
            // done before that write's own drain had let go, and the cancel's drain then runs
            // there, after verify() returned. The writes in flight stay held for seconds.
            assertTrue(Await.until(() -> discarded.size() >= heldResults.size(), T),
                    "discarded " + discarded.size() + " of the " + heldResults.size() + " held results");
            assertEquals(offsets(heldResults), offsets(discarded),
                    "at the cancel, exactly the held results are discarded, none of the writes in flight");
            assertTrue(Await.until(() -> discarded.size() == window, T), "discarded " + discarded.size() + " of " + window);
            assertEquals(emitted, results.size());
            List<WriteRequest> late = new ArrayList<>(discarded.subList(heldResults.size(), discarded.size()));
            assertEquals(offsets(inFlight), offsets(late), "the writes in flight, once they ended");
            assertEveryTakenRequestOnce(taken, results, discarded);
            assertTrue(Await.until(() -> conn.inFlight() == 0 && local.inFlight() == 0, T));
        }
    }

    @Test
    void writeAll_failure_discardsEveryTakenRequestNotEmitted_exactlyOnce() throws Exception {
        Faults faults = Faults.create();
        try (LoopbackPeer peer = CqfluxTest.loopback().faults(faults).start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            int window = Math.max(1, conn.sendCredits() / 2);
            // The second write after the first window fails (and ends the connection LOST).
            faults.on(Opcode.WRITE).nth(window + 2).fail(CompletionStatus.REM_ACCESS_ERR);
            List<WriteRequest> taken = new CopyOnWriteArrayList<>();
            List<WriteRequest> discarded = new CopyOnWriteArrayList<>();
            List<WriteResult> results = new CopyOnWriteArrayList<>();
            Flux<WriteRequest> requests = Flux.range(0, 4 * window)
                    .map(i -> new WriteRequest(remote, 8L * i, local, 0, 8, false))
                    .doOnNext(taken::add);

            StepVerifier.create(conn.writeAll(requests).doOnNext(results::add)
                            .doOnDiscard(WriteRequest.class, discarded::add), 0)
                    .then(() -> assertTrue(Await.until(() -> taken.size() == window && conn.inFlight() == 0, T)))
                    .thenRequest(3)
                    .expectNextCount(3)
                    .expectError()
                    .verify(T);

            assertTrue(Await.until(() -> results.size() + discarded.size() == taken.size(), T),
                    "taken " + taken.size() + ", emitted " + results.size() + ", discarded " + discarded.size());
            assertEveryTakenRequestOnce(taken, results, discarded);
            assertTrue(Await.until(() -> local.inFlight() == 0, T), "region " + local.inFlight());
        }
    }

    /**
     * The connection's end fails the writes in flight at once (the stream's {@code onError}), but
     * their queue pair, which may still read their buffers, is destroyed only afterwards: the
     * requests go to discard only once their regions are released. Each request has a region of
     * its own, whose in-flight count the discard hook reads (before: 1 at every discard).
     */
    @Test
    void writeAll_connectionClosedWithWritesInFlight_discardsOnlyAfterTheirRegionsAreReleased() throws Exception {
        Faults faults = Faults.create();
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared();
             LoopbackPeer peer = CqfluxTest.loopback().faults(faults).start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            int window = Math.max(1, conn.sendCredits() / 2);
            List<Region> regions = new ArrayList<>();
            for (int i = 0; i < window; i++) {
                regions.add(peer.client().register(arena.allocate(64, 64), io.cqflux.core.RegionAccess.WRITE_SRC));
            }
            // Every completion held back 3 s: the writes are in flight when the connection closes.
            faults.on(Opcode.WRITE).delay(Duration.ofSeconds(3));
            List<WriteRequest> taken = new CopyOnWriteArrayList<>();
            List<Long> inFlightAtDiscard = new CopyOnWriteArrayList<>();
            List<WriteRequest> discarded = new CopyOnWriteArrayList<>();
            Flux<WriteRequest> requests = Flux.range(0, window)
                    .map(i -> new WriteRequest(remote, 8L * i, regions.get(i), 0, 8, false))
                    .doOnNext(taken::add);

            StepVerifier.create(conn.writeAll(requests).doOnDiscard(WriteRequest.class, r -> {
                        inFlightAtDiscard.add(r.local().inFlight());
                        discarded.add(r);
                    }))
                    .then(() -> assertTrue(Await.until(() -> conn.inFlight() == window, T), "in flight " + conn.inFlight()))
                    .then(conn::close)
                    .expectError()
                    .verify(T);

            assertTrue(Await.until(() -> discarded.size() == window, T), "discarded " + discarded.size() + " of " + window);
            assertEquals(java.util.Collections.nCopies(window, 0L), inFlightAtDiscard,
                    "a request was discarded while its write's region was still held (the NIC may read it)");
            assertEveryTakenRequestOnce(taken, List.of(), discarded);
        }
    }

    /**
     * A write refused by its own check (never posted) fails the stream; its request, and every
     * other one taken, is discarded: the refusal releases its regions before it fails, so the
     * discard needs no native close.
     */
    @Test
    void writeAll_writeRefusedByItsCheck_discardsItsRequest() {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            List<WriteRequest> taken = new CopyOnWriteArrayList<>();
            List<WriteRequest> discarded = new CopyOnWriteArrayList<>();
            List<WriteResult> results = new CopyOnWriteArrayList<>();
            // The fourth request reaches past the peer's region.
            Flux<WriteRequest> requests = Flux.range(0, 8)
                    .map(i -> new WriteRequest(remote, i == 3 ? remote.size() : 8L * i, local, 0, 8, false))
                    .doOnNext(taken::add);
            StepVerifier.create(conn.writeAll(requests).doOnNext(results::add)
                            .doOnDiscard(WriteRequest.class, discarded::add))
                    .thenConsumeWhile(r -> true) // the first three, if they complete before the refusal fails the stream
                    .expectError(IllegalArgumentException.class)
                    .verify(T);
            assertTrue(Await.until(() -> results.size() + discarded.size() == taken.size(), T),
                    "taken " + taken.size() + ", emitted " + results.size() + ", discarded " + discarded.size());
            assertEveryTakenRequestOnce(taken, results, discarded);
            assertTrue(!conn.isDisposed(), "a refused write does not end the connection");
        }
    }

    /** Every request taken from upstream was emitted or discarded, and only one of them, once. */
    private static void assertEveryTakenRequestOnce(List<WriteRequest> taken, List<WriteResult> results,
                                                    List<WriteRequest> discarded) {
        List<WriteRequest> accounted = new ArrayList<>();
        results.forEach(r -> accounted.add(r.request()));
        accounted.addAll(discarded);
        assertEquals(taken.size(), accounted.size(), "taken " + offsets(taken) + ", emitted or discarded "
                + offsets(accounted));
        for (WriteRequest r : taken) {
            long n = accounted.stream().filter(a -> a == r).count();
            assertEquals(1, n, r + " emitted or discarded " + n + " times");
        }
        results.forEach(r -> assertSame(taken.get((int) r.sequence()), r.request()));
    }

    /** {@return the requests' remote offsets (each request of a test has its own), sorted} */
    private static java.util.SortedSet<Long> offsets(List<WriteRequest> requests) {
        java.util.SortedSet<Long> s = new java.util.TreeSet<>();
        requests.forEach(r -> s.add(r.remoteOffset()));
        return s;
    }
}
