package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.epoll.LoopStats;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.WriteRequest;
import io.cqflux.reactor.WriteResult;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * Where writeAll posts from: requests that upstream emits on another thread wait in their slots
 * and one loop task posts them all (a hand-over per burst), rather than one hand-over per write.
 */
class WriteAllPostingTest {
    static final Duration T = Duration.ofSeconds(10);

    private static long tasks(LoopbackPeer peer) {
        return peer.client().loopStats().stream().mapToLong(LoopStats::tasks).sum();
    }

    @Test
    void writeAll_requestsEmittedOffTheLoop_arePostedByOneLoopTaskPerBurst_inOrder_withEveryByteAtThePeer()
            throws Exception {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            // writeAll's window is half the send credits: N requests fit in it at once.
            int N = Math.min(64, conn.sendCredits() / 2);
            assertTrue(N >= 16, "window " + N);
            for (int i = 0; i < N; i++) {
                local.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 8L * i, 1000L + i);
            }
            // Hold the client's loop inside a completion, so that every request below is emitted
            // (on this thread) while the loop cannot run a task: a hand-over per write would queue
            // N tasks, a hand-over per burst queues one.
            long before;
            CompletableFuture<List<WriteResult>> results;
            try (HeldLoop _ = new HeldLoop(conn, remote, local, 8L * N)) {
                before = tasks(peer);
                // Flux.range emits every request on this thread, inside subscribe (all fit the window).
                results = conn.writeAll(Flux.range(0, N).map(i -> new WriteRequest(remote, 8L * i, local, 8L * i, 8,
                        false))).collectList().toFuture();
            }
            List<WriteResult> got = results.get(T.toMillis(), TimeUnit.MILLISECONDS);
            long handOvers = tasks(peer) - before;

            assertEquals(N, got.size());
            for (int i = 0; i < N; i++) {
                assertEquals(i, got.get(i).sequence(), "results in request order");
                assertEquals(8L * i, got.get(i).request().remoteOffset());
            }
            long[] atPeer = new long[N];
            long[] sent = new long[N];
            for (int i = 0; i < N; i++) {
                atPeer[i] = peer.exposed().segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * i);
                sent[i] = 1000L + i;
            }
            assertArrayEquals(sent, atPeer, "every write's bytes at the peer");
            // One post task, plus whatever periodic work (the connection's deadline check, at
            // most every 10 ms) ran meanwhile; one hand-over per write would be N or more.
            assertTrue(handOvers >= 1 && handOvers < 8, "loop tasks while posting " + N + " writes: " + handOvers);
        }
    }

    @Test
    void writeAll_cancelledWhileItsRequestsWaitToBePosted_postsNone_andDiscardsEachOnce() throws Exception {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            int n = Math.min(64, conn.sendCredits() / 2);
            for (int i = 0; i < n; i++) {
                local.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 8L * i, 7000L + i);
            }
            List<WriteRequest> discarded = new CopyOnWriteArrayList<>();
            try (HeldLoop _ = new HeldLoop(conn, remote, local, 8L * n)) {
                // Every request is emitted here and waits for the held loop; the cancel comes first.
                Disposable d = conn.writeAll(Flux.range(0, n)
                                .map(i -> new WriteRequest(remote, 8L * i, local, 8L * i, 8, false)))
                        .doOnDiscard(WriteRequest.class, discarded::add)
                        .subscribe();
                d.dispose();
            }
            // The loop's post task (if it runs) finds nothing to post; a round trip through the
            // connection shows the loop got past it.
            conn.write(remote, 8L * (n + 1), local, 0, 8).block(T);
            assertEquals(n, discarded.size(), "each request taken, never posted, discarded");
            assertEquals(n, discarded.stream().distinct().count(), "each once");
            for (int i = 0; i < n; i++) {
                assertEquals(0L, peer.exposed().segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * i),
                        "nothing of request " + i + " reached the peer");
            }
        }
    }

    /**
     * After the end, each discard of one request object reaches the hook: an application that
     * emits the same object twice into a cancelled sink (retaining a buffer per emission, releasing
     * it in the hook) sees two discards, as Reactor gives them.
     */
    @Test
    void writeAll_theSameRequestEmittedTwiceAfterTheCancel_reachesTheHookTwice() throws Exception {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            WriteRequest same = new WriteRequest(peer.remote(), 0, peer.local(), 0, 8, false);
            List<WriteRequest> discarded = new CopyOnWriteArrayList<>();
            Sinks.Many<WriteRequest> sink = Sinks.many().unicast().onBackpressureBuffer();
            Disposable d = conn.writeAll(sink.asFlux()).doOnDiscard(WriteRequest.class, discarded::add).subscribe();
            d.dispose();
            // emitNext discards what a cancelled sink refuses (FAIL_CANCELLED), through the context.
            sink.emitNext(same, Sinks.EmitFailureHandler.FAIL_FAST);
            sink.emitNext(same, Sinks.EmitFailureHandler.FAIL_FAST);
            assertEquals(2, discarded.size(), "each emission after the cancel discarded: " + discarded);
        }
    }

    /**
     * A producer thread emitting while the subscriber cancels at a random moment, many times over:
     * every request writeAll took is either emitted as a result or discarded, exactly once, and
     * nothing hangs (the race between a late onNext, the posting scan and stop()). Every other
     * round the producer stalls after each offer to the sink, as a producer preempted there does:
     * the loop's drain of the sink (asking for more) then delivers its requests meanwhile, which
     * widens the race with the cancel.
     */
    @Test
    void writeAll_producerThreadRacingACancel_everyRequestTakenIsEmittedOrDiscardedExactlyOnce() throws Exception {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            java.util.Random random = new java.util.Random(42);
            int cutMidStream = 0;
            for (int round = 0; round < 100; round++) {
                Set<WriteRequest> taken = ConcurrentHashMap.newKeySet();
                List<WriteRequest> out = new CopyOnWriteArrayList<>();
                AtomicInteger emitted = new AtomicInteger();
                AtomicBoolean cancelled = new AtomicBoolean();
                Sinks.Many<WriteRequest> sink = round % 2 == 0 ? Sinks.many().unicast().onBackpressureBuffer()
                        : Sinks.many().unicast().onBackpressureBuffer(new StallingQueue(taken, cancelled));
                // The hook doOnDiscard sets reaches upstream too (through the context), and the
                // unicast sink discards on its own (SinkManyUnicast.drain(T)):
                // an emitNext that offered a request and then finds the sink cancelled and its
                // drain owned discards that request, though the owner (the loop, asking for more)
                // may have delivered it already. writeAll keeps that discard from the hook: the
                // request is writeAll's, discarded (or emitted) once its write is done.
                Disposable d = conn.writeAll(sink.asFlux().doOnNext(taken::add))
                        .doOnDiscard(WriteRequest.class, out::add)
                        .subscribe(res -> {
                            emitted.incrementAndGet();
                            out.add(res.request());
                        });
                Thread producer = Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < 200; i++) {
                        // Distinct local offsets: WriteRequest is a record, equal by value.
                        sink.emitNext(new WriteRequest(remote, 8L * (i % 64), local, 8L * i, 8, i % 8 == 0),
                                Sinks.EmitFailureHandler.busyLooping(Duration.ofSeconds(1)));
                    }
                });
                Thread.sleep(0, random.nextInt(500_000));
                d.dispose();
                cancelled.set(true);
                // In-flight writes are discarded at their completion: wait for the count.
                List<WriteRequest> mine = eachTakenOnce(round, producer, out, taken);
                if (emitted.get() > 0 && emitted.get() < taken.size()) {
                    cutMidStream++;
                }
            }
            // Not vacuous: some cancels landed while results were flowing and requests were taken
            // but not yet emitted.
            assertTrue(cutMidStream > 0, "rounds cut mid-stream: " + cutMidStream);
            conn.write(remote, 0, local, 0, 8).block(T); // the connection is still fine
        }
    }

    /**
     * The interleaving behind a request that reached the application twice, forced step by step
     * rather than left to timing: the unicast sink's drain owner (here the subscribing thread) has
     * polled a request but not yet handed it to writeAll; the subscriber cancels; the producer that
     * offered that request then finds the sink cancelled and its drain owned, and discards it
     * ({@code SinkManyUnicast.drain(T)}) before writeAll took it; writeAll, handed the request after
     * its end, must not discard it again.
     */
    @Test
    void writeAll_sinkDiscardsARequestItsDrainOwnerHasNotHandedOverYet_theRequestReachesTheHookOnce()
            throws Exception {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            WriteRequest first = new WriteRequest(remote, 0, local, 0, 8, false);
            WriteRequest racing = new WriteRequest(remote, 8, local, 8, 8, false);
            CountDownLatch offered = new CountDownLatch(1);
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch cancelledLatch = new CountDownLatch(1);
            CountDownLatch producerDone = new CountDownLatch(1);
            // The producer stalls between the sink's offer of racing and its drain, until the cancel.
            Sinks.Many<WriteRequest> sink = Sinks.many().unicast().onBackpressureBuffer(
                    new ConcurrentLinkedQueue<WriteRequest>() {
                        @Override
                        public boolean offer(WriteRequest r) {
                            boolean ok = super.offer(r);
                            if (r == racing) {
                                offered.countDown();
                                await(cancelledLatch);
                            }
                            return ok;
                        }
                    });
            // Buffered before the subscription: its delivery makes the subscribing thread the
            // sink's drain owner, which then waits for the producer to offer racing.
            assertEquals(Sinks.EmitResult.OK, sink.tryEmitNext(first));
            List<WriteRequest> out = new CopyOnWriteArrayList<>();
            AtomicReference<Subscription> subscription =
                    new AtomicReference<>();
            Flux<WriteRequest> requests = sink.asFlux().doOnNext(r -> {
                if (r == first) {
                    await(offered);
                } else if (r == racing) {
                    // Polled by the drain owner, not yet handed to writeAll: the cancel and the
                    // producer's discard happen now.
                    held.countDown();
                    await(producerDone);
                }
            });
            Thread owner = Thread.ofPlatform().start(() -> conn.writeAll(requests)
                    .doOnSubscribe(subscription::set)
                    .doOnDiscard(WriteRequest.class, out::add)
                    .subscribe(res -> out.add(res.request())));
            Thread producer = Thread.ofPlatform().start(() -> {
                sink.tryEmitNext(racing);
                producerDone.countDown();
            });
            assertTrue(held.await(T.toMillis(), TimeUnit.MILLISECONDS), "the drain owner holds racing");
            subscription.get().cancel();
            cancelledLatch.countDown();
            producer.join(T.toMillis());
            owner.join(T.toMillis());
            assertFalse(producer.isAlive() || owner.isAlive(), "the producer and the drain owner ended");
            // first was posted before the cancel: emitted, or discarded at its completion.
            assertTrue(Await.until(() -> out.contains(first), T), "first emitted or discarded");
            conn.write(remote, 16, local, 16, 8).block(T); // a round trip: nothing more is on its way
            assertEquals(1, out.stream().filter(r -> r == racing).count(), "racing reached the app once");
            assertEquals(1, out.stream().filter(r -> r == first).count(), "first reached the app once");
        }
    }

    /**
     * The same race as the producer test above, many rounds over, with the window in which it
     * doubled a request held open rather than left to preemption: the sink's drain owner on the
     * loop (asking for more) holds each request it polled, before writeAll gets it, until the
     * cancel (for up to 200 µs) and a little after it, while the producer that offered that
     * request waits for the cancel before its own drain ({@link StallingQueue}), which then finds
     * the sink cancelled and its drain owned. {@code -Dcqflux.test.writeAllCancelRounds=N} runs
     * more rounds than the suite's.
     */
    @Test
    void writeAll_cancelWhileTheSinksDrainOwnerHoldsARequest_manyRounds_everyRequestTakenReachesTheAppOnce()
            throws Exception {
        int rounds = Integer.getInteger("cqflux.test.writeAllCancelRounds", 600);
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            java.util.Random random = new java.util.Random(7);
            int ownerHeldAtCancel = 0;
            for (int round = 0; round < rounds; round++) {
                Set<WriteRequest> taken = ConcurrentHashMap.newKeySet();
                List<WriteRequest> out = new CopyOnWriteArrayList<>();
                AtomicBoolean cancelled = new AtomicBoolean();
                AtomicBoolean heldAtCancel = new AtomicBoolean();
                AtomicReference<Thread> producerThread = new AtomicReference<>();
                Sinks.Many<WriteRequest> sink = Sinks.many().unicast()
                        .onBackpressureBuffer(new StallingQueue(taken, cancelled));
                Disposable d = conn.writeAll(sink.asFlux().doOnNext(r -> {
                            taken.add(r);
                            if (Thread.currentThread() != producerThread.get()) {
                                long start = System.nanoTime();
                                while (!cancelled.get() && System.nanoTime() - start < 200_000) {
                                    Thread.onSpinWait();
                                }
                                if (cancelled.get()) {
                                    heldAtCancel.set(true);
                                    long after = System.nanoTime();
                                    while (System.nanoTime() - after < 20_000) {
                                        Thread.onSpinWait();
                                    }
                                }
                            }
                        }))
                        .doOnDiscard(WriteRequest.class, out::add)
                        .subscribe(res -> out.add(res.request()));
                Thread producer = Thread.ofPlatform().unstarted(() -> {
                    for (int i = 0; i < 200; i++) {
                        sink.emitNext(new WriteRequest(remote, 8L * (i % 64), local, 8L * i, 8, false),
                                Sinks.EmitFailureHandler.busyLooping(Duration.ofSeconds(1)));
                    }
                });
                producerThread.set(producer);
                producer.start();
                Thread.sleep(0, random.nextInt(500_000));
                d.dispose();
                cancelled.set(true);
                List<WriteRequest> mine = eachTakenOnce(round, producer, out, taken);
                if (heldAtCancel.get()) {
                    ownerHeldAtCancel++;
                }
            }
            // Not vacuous: in some rounds the cancel came while the drain owner held a request.
            assertTrue(ownerHeldAtCancel > 0, "rounds cancelled while the owner held a request: " + ownerHeldAtCancel);
            conn.write(remote, 0, local, 0, 8).block(T); // the connection is still fine
        }
    }

    /**
     * The end of a cancel round: the producer ended, every request taken reached the application
     * (emitted or discarded: in-flight writes at their completion), and each exactly once.
     * {@return what reached it of those taken}
     */
    private static List<WriteRequest> eachTakenOnce(int round, Thread producer, List<WriteRequest> out,
                                                    Set<WriteRequest> taken) throws InterruptedException {
        producer.join(T.toMillis());
        assertFalse(producer.isAlive(), "round " + round + ": the producer ended");
        assertTrue(Await.until(() -> ofTaken(out, taken).size() >= taken.size(), T),
                "round " + round + ": " + taken.size() + " taken, " + ofTaken(out, taken).size()
                        + " of them emitted or discarded");
        List<WriteRequest> mine = ofTaken(out, taken);
        assertEquals(mine.size(), Set.copyOf(mine).size(), "round " + round + ": each exactly once");
        return mine;
    }

    private static List<WriteRequest> ofTaken(List<WriteRequest> out, Set<WriteRequest> taken) {
        return out.stream().filter(taken::contains).toList();
    }

    /**
     * A sink's queue whose producer stalls right after each offer, as one preempted between the
     * sink's offer and its drain does: for up to 50 µs, or, once another thread (the loop, asking
     * for more) took the request meanwhile, until the stream was cancelled (up to 1 ms) — the
     * interleaving in which the sink also discards a request it delivered.
     */
    private static final class StallingQueue extends ConcurrentLinkedQueue<WriteRequest> {
        private final Set<WriteRequest> taken;
        private final AtomicBoolean cancelled;

        StallingQueue(Set<WriteRequest> taken, AtomicBoolean cancelled) {
            this.taken = taken;
            this.cancelled = cancelled;
        }

        @Override
        public boolean offer(WriteRequest r) {
            boolean offered = super.offer(r);
            long start = System.nanoTime();
            while (!taken.contains(r) && System.nanoTime() - start < 50_000) {
                Thread.onSpinWait();
            }
            while (taken.contains(r) && !cancelled.get() && System.nanoTime() - start < 1_000_000) {
                Thread.onSpinWait();
            }
            return offered;
        }
    }

    /**
     * A callback that holds the loop for longer than a short operationTimeout, then posts: the
     * write is young, and the connection must not be declared lost (a posting time taken from the
     * start of that long unit of work would make it look older than the timeout).
     */
    @Test
    void shortOperationTimeout_aWritePostedAtTheEndOfALongCallback_doesNotEndTheConnection() throws Exception {
        try (LoopbackPeer peer = CqfluxTest.loopback().client(b -> b.operationTimeout(Duration.ofMillis(300)))
                .start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            CompletableFuture<Void> late = new CompletableFuture<>();
            conn.write(remote, 0, local, 0, 8).doOnSuccess(v -> {
                sleep(500); // holds the loop past the timeout (the blocked-loop warning is expected)
                conn.write(remote, 8, local, 8, 8).subscribe(null, late::completeExceptionally, () -> late.complete(null));
            }).block(T);
            late.get(T.toMillis(), TimeUnit.MILLISECONDS);
            conn.write(remote, 16, local, 16, 8).block(T); // still established
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Holds the client's loop inside the completion of a write (to {@code remoteOffset}) until
     * closed; closing releases it and waits for that write's subscriber.
     */
    private static final class HeldLoop implements AutoCloseable {
        private final CountDownLatch release = new CountDownLatch(1);
        private final CompletableFuture<Void> holder;

        HeldLoop(RdmaConnection conn, PeerRegion remote, Region local, long remoteOffset) throws InterruptedException {
            CountDownLatch held = new CountDownLatch(1);
            holder = conn.write(remote, remoteOffset, local, 0, 8)
                    .doOnSuccess(v -> {
                        held.countDown();
                        await(release);
                    }).toFuture();
            assertTrue(held.await(T.toMillis(), TimeUnit.MILLISECONDS), "the loop is held");
        }

        @Override
        public void close() throws ExecutionException, TimeoutException {
            release.countDown();
            try {
                holder.get(T.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while the held loop was released", e);
            }
        }
    }

    private static void await(CountDownLatch l) {
        try {
            if (!l.await(T.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("never released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
