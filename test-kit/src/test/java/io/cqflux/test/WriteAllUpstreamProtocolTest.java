package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.Opcode;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.WriteRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.test.StepVerifier;

/** writeAll towards its upstream: cancelled exactly once and never after its own terminal signal; a late error is dropped, not lost. */
class WriteAllUpstreamProtocolTest {
    static final Duration T = Duration.ofSeconds(10);

    @Test
    void writeAll_upstreamError_doesNotCancelTheUpstreamThatFailed() {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            AtomicInteger cancelled = new AtomicInteger();
            IllegalStateException boom = new IllegalStateException("boom");
            Flux<WriteRequest> requests = Flux.range(0, 4)
                    .map(i -> new WriteRequest(remote, 8L * i, local, 0, 8, false))
                    .concatWith(Flux.error(boom))
                    .doOnCancel(cancelled::incrementAndGet);
            StepVerifier.create(conn.writeAll(requests))
                    .thenConsumeWhile(r -> true)
                    .expectErrorMatches(e -> e == boom)
                    .verify(T);
            assertEquals(0, cancelled.get(), "an upstream that failed is not cancelled");
        }
    }

    /**
     * writeAll gives upstream a discard hook of its own only where its caller set one: with a hook
     * in the context, a cancelled {@code Flux.fromIterable} of a collection builds every element it
     * has left, to discard it (on the loop thread, when a failed write cancels upstream).
     */
    @Test
    void writeAll_cancelledWithoutADiscardHook_leavesTheRestOfAFiniteSourceUnbuilt() {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            AtomicInteger built = new AtomicInteger();
            List<WriteRequest> lazy = new java.util.AbstractList<>() {
                @Override
                public WriteRequest get(int i) {
                    built.incrementAndGet();
                    return new WriteRequest(remote, 0, local, 0, 8, false);
                }

                @Override
                public int size() {
                    return 1_000_000;
                }
            };
            StepVerifier.create(conn.writeAll(Flux.fromIterable(lazy)).take(5))
                    .expectNextCount(5)
                    .expectComplete()
                    .verify(T);
            assertTrue(built.get() < 10_000, built.get() + " of the source's requests built");
        }
    }

    @Test
    void writeAll_overflowingUpstream_failsWithOverflow_andCancelsUpstreamOnce() {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            AtomicInteger cancelled = new AtomicInteger();
            AtomicInteger sent = new AtomicInteger();
            AtomicInteger discarded = new AtomicInteger();
            // Ignores demand: sends 10_000 requests on the first request(n).
            Publisher<WriteRequest> rogue = s -> s.onSubscribe(new Subscription() {
                boolean started;

                @Override
                public void request(long n) {
                    if (started) {
                        return;
                    }
                    started = true;
                    for (int i = 0; i < 10_000 && cancelled.get() == 0; i++) {
                        sent.incrementAndGet();
                        s.onNext(new WriteRequest(remote, 8L * (i % 512), local, 0, 8, false));
                    }
                }

                @Override
                public void cancel() {
                    cancelled.incrementAndGet();
                }
            });
            StepVerifier.create(conn.writeAll(rogue).doOnDiscard(WriteRequest.class, r -> discarded.incrementAndGet()), 0)
                    .expectErrorMatches(Exceptions::isOverflow)
                    .verify(T);
            assertEquals(1, cancelled.get(), "upstream cancelled once");
            // Nothing was emitted (no demand): every request sent, the one that overflowed
            // included, is discarded once its write (if any) ended.
            assertTrue(Await.until(() -> discarded.get() == sent.get(), T),
                    "sent " + sent.get() + ", discarded " + discarded.get());
        }
    }

    @Test
    void writeAll_upstreamWhoseRequestThrows_failsWithIt_andCancelsUpstreamOnce() {
        Faults faults = Faults.create();
        // Rules that change nothing (no delay): their counts are the writes posted below, and at
        // or past, the offset where the requests emitted with the throw begin (set once the
        // window is known).
        AtomicLong extraFrom = new AtomicLong(Long.MAX_VALUE);
        Fault postedFirst = faults.on(Opcode.WRITE).matching(o -> o.remoteOffset() < extraFrom.get())
                .delay(Duration.ZERO);
        Fault postedExtra = faults.on(Opcode.WRITE).matching(o -> o.remoteOffset() >= extraFrom.get())
                .delay(Duration.ZERO);
        try (LoopbackPeer peer = CqfluxTest.loopback().faults(faults).start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            AtomicInteger cancelled = new AtomicInteger();
            AtomicInteger requests = new AtomicInteger();
            AtomicInteger discarded = new AtomicInteger();
            AtomicInteger extra = new AtomicInteger();
            IllegalStateException boom = new IllegalStateException("request throws");
            // Emits what is asked for at once; its second request(n) (the first one the stream
            // makes from a drain on the loop, once results went out) emits up to three requests
            // (no more than n: a batch may have completed only one or two writes, and more would
            // be an overflow) and then throws, which Reactive Streams §3.16 forbids: the stream
            // fails with it instead of stalling, and those requests are discarded, never posted.
            Publisher<WriteRequest> rude = s -> s.onSubscribe(new Subscription() {
                int next;
                /** The first request's emissions are over: it runs on the subscribing thread. */
                volatile boolean firstDone;
                volatile Thread firstThread;

                @Override
                public void request(long n) {
                    boolean second = requests.incrementAndGet() == 2;
                    if (!second) {
                        firstThread = Thread.currentThread();
                    } else if (Thread.currentThread() != firstThread) { // inside the first: serial already
                        // The stream may ask again from its loop while the first request is still
                        // emitting on the test's thread (it posts in turns, and asks once a turn's
                        // results went out): emit serially, as Reactive Streams §1.3 wants, so the
                        // extras come after the whole window. The first request's emissions never
                        // wait for the loop.
                        while (!firstDone) {
                            Thread.onSpinWait();
                        }
                    }
                    long emit = second ? Math.min(3, n) : n;
                    for (long i = 0; i < emit && cancelled.get() == 0; i++, next++) {
                        if (second) {
                            extra.incrementAndGet();
                        }
                        s.onNext(new WriteRequest(remote, 8L * (next % 512), local, 0, 8, false));
                    }
                    if (second) {
                        throw boom;
                    }
                    firstDone = true;
                }

                @Override
                public void cancel() {
                    cancelled.incrementAndGet();
                }
            });
            int window = conn.sendCredits() / 2;
            // The first window writes offsets 0 to 8 * (window - 1), those emitted with the throw
            // the next three: distinct while they fit before the offsets wrap at 512 requests.
            assertTrue(window + 3 <= 512, "window " + window);
            extraFrom.set(8L * window);
            AtomicInteger results = new AtomicInteger();
            StepVerifier.create(conn.writeAll(rude).doOnDiscard(WriteRequest.class, r -> discarded.incrementAndGet()))
                    .thenConsumeWhile(r -> results.incrementAndGet() > 0)
                    .expectErrorMatches(e -> e == boom)
                    .verify(T);
            assertEquals(1, cancelled.get(), "upstream cancelled once");
            assertEquals(2, requests.get(), "asked again only once, the request that threw");
            // Every request taken is emitted or discarded: the first window's results went out
            // (some, at least), the rest of the window and those emitted with the throw are
            // discarded once their writes, if any, ended.
            assertTrue(extra.get() >= 1, "the throwing request emitted " + extra.get());
            assertTrue(Await.until(() -> results.get() + discarded.get() == window + extra.get(), T),
                    "results " + results.get() + " + discarded " + discarded.get() + " != " + (window + extra.get()));
            // Only the first window may be posted, and not all of it: the loop posts it in turns,
            // and the second request may come from the drain of an early turn's results, when
            // the stream's failure discards what it has not posted yet.
            assertEquals(0, postedExtra.seen(), "a request that came with the throw was posted");
            assertTrue(results.get() <= postedFirst.seen() && postedFirst.seen() <= window,
                    "results " + results.get() + ", first-window writes posted " + postedFirst.seen() + ", window "
                            + window);
        }
    }

    @Test
    void writeAll_hookThrowsForTheWriteMono_failsWithIt_andCancelsUpstreamOnce() {
        IllegalStateException boom = new IllegalStateException("hook");
        AtomicInteger writes = new AtomicInteger();
        Hooks.onEachOperator("review", p -> {
            if ("cqflux.write".equals(Scannable.from(p).name()) && writes.incrementAndGet() == 5) {
                throw boom;
            }
            return p;
        });
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            AtomicInteger cancelled = new AtomicInteger();
            Flux<WriteRequest> requests = Flux.range(0, 100)
                    .map(i -> new WriteRequest(remote, 8L * i, local, 0, 8, false))
                    .doOnCancel(cancelled::incrementAndGet);
            StepVerifier.create(conn.writeAll(requests))
                    .thenConsumeWhile(r -> true)
                    .expectErrorMatches(e -> e == boom)
                    .verify(T);
            assertEquals(1, cancelled.get(), "upstream cancelled once");
        } finally {
            Hooks.resetOnEachOperator("review");
        }
    }

    @Test
    void writeAll_errorOfUpstreamAfterCancel_isDropped_notLost() {
        List<Throwable> dropped = new CopyOnWriteArrayList<>();
        Hooks.onErrorDropped(dropped::add);
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            org.reactivestreams.Subscriber<?>[] sub = new org.reactivestreams.Subscriber<?>[1];
            Publisher<WriteRequest> late = s -> {
                sub[0] = s;
                s.onSubscribe(new Subscription() {
                    @Override
                    public void request(long n) {
                    }

                    @Override
                    public void cancel() {
                    }
                });
            };
            StepVerifier.create(conn.writeAll(late), 0)
                    .thenCancel()
                    .verify(T);
            IllegalStateException boom = new IllegalStateException("late");
            sub[0].onError(boom);
            assertTrue(dropped.contains(boom), "dropped: " + dropped);
        } finally {
            Hooks.resetOnErrorDropped();
        }
    }
}
