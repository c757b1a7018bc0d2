package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.reactor.internal.op.OpMono;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * An operation Mono is its own first subscription (claimed by a CAS; later ones run on copies):
 * what the old separate subscription object guaranteed must hold for the shared instance too.
 */
class OpMonoSharedInstanceTest {
    private FaultRig rig;

    @AfterEach
    void tearDown() {
        if (rig != null) {
            rig.close();
        }
    }

    @Test
    void oneMono_subscribedFromEightThreadsAtOnce_isEightOperations_eachSignalledOnce() throws Exception {
        rig = new FaultRig();
        int threads = 8;
        int rounds = 40;
        AtomicInteger posted = new AtomicInteger();
        Disposable monitor = rig.conn.completions().subscribe(c -> posted.incrementAndGet());
        Tally tally = new Tally(threads * rounds);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int r = 0; r < rounds; r++) {
                Mono<Void> w = rig.conn.write(rig.remote(), 0, rig.local, 0, 8);
                CyclicBarrier together = new CyclicBarrier(threads);
                Future<?>[] f = new Future<?>[threads];
                for (int t = 0; t < threads; t++) {
                    int i = r * threads + t;
                    f[t] = pool.submit(() -> {
                        together.await();
                        tally.subscribe(i, w);
                        return null;
                    });
                }
                for (Future<?> x : f) {
                    x.get(10, TimeUnit.SECONDS);
                }
            }
            assertTrue(tally.awaitAll(FaultRig.T), tally.toString());
        } finally {
            pool.shutdownNow();
        }
        assertEquals(0, tally.twice(), tally.toString());
        assertEquals(java.util.Map.of("complete", threads * rounds), tally.kinds());
        StepVerifier.create(rig.conn.read(rig.local, 1024, rig.remote(), 4096, 8)).expectComplete().verify(FaultRig.T);
        assertEquals(threads * rounds + 1, posted.get(), "every subscription posted once");
        assertTrue(FaultRig.await(() -> rig.conn.inFlight() == 0 && rig.local.inFlight() == 0, FaultRig.T),
                "in flight " + rig.conn.inFlight() + ", local region " + rig.local.inFlight());
        monitor.dispose();
    }

    @Test
    void cancelRacingCompletion_fromManyThreads_signalsAtMostOnce_andReleasesEverything() throws Exception {
        rig = new FaultRig();
        int n = 4000;
        Tally tally = new Tally(n);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            for (int i = 0; i < n; i++) {
                int k = i;
                Mono<Void> m = (i & 1) == 0 ? rig.conn.write(rig.remote(), 0, rig.local, 0, 64)
                        : rig.conn.durableWrite(rig.remote(), 64, rig.local, 64, 64);
                pool.execute(() -> {
                    tally.subscribe(k, m);
                    if (ThreadLocalRandom.current().nextBoolean()) {
                        Thread.onSpinWait();
                    }
                    tally.cancel(k);
                    // the same Mono again after its first subscription was cancelled: a copy
                    m.subscribe();
                });
            }
            pool.shutdown();
            assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
        } finally {
            pool.shutdownNow();
        }
        assertEquals(0, tally.twice(), tally.toString());
        assertTrue(FaultRig.await(() -> rig.conn.inFlight() == 0 && rig.conn.waiting() == 0
                && rig.local.inFlight() == 0 && rig.serverRegion.inFlight() == 0, FaultRig.T),
                "in flight " + rig.conn.inFlight() + ", waiting " + rig.conn.waiting() + ", local region "
                        + rig.local.inFlight());
        StepVerifier.create(rig.conn.write(rig.remote(), 0, rig.local, 0, 8)).expectComplete().verify(FaultRig.T);
    }

    @Test
    void repeat_ofOneMono_postsEachTime_afterItsFirstSubscriptionWasCancelledInFlight() {
        rig = new FaultRig();
        AtomicInteger posted = new AtomicInteger();
        Disposable monitor = rig.conn.completions().subscribe(c -> posted.incrementAndGet());
        Mono<Void> w = rig.conn.write(rig.remote(), 0, rig.local, 0, 8);
        w.subscribe().dispose(); // the Mono's own instance: cancelled, maybe posted
        StepVerifier.create(w.repeat(9).then()).expectComplete().verify(FaultRig.T);
        StepVerifier.create(w.then(Mono.error(new IllegalStateException("again"))).retry(2))
                .expectError(IllegalStateException.class).verify(FaultRig.T);
        assertTrue(FaultRig.await(() -> rig.conn.inFlight() == 0 && rig.local.inFlight() == 0, FaultRig.T));
        int p = posted.get();
        assertTrue(p == 13 || p == 14, "ten of repeat and three of retry posted, the cancelled one maybe: " + p);
        monitor.dispose();
    }

    @Test
    void throwingListener_neitherStopsTheSignal_norReportsTwice_forEverySubscriptionOfOneMono() {
        rig = new FaultRig();
        ConcurrentHashMap<OperationOutcome, AtomicInteger> reports = new ConcurrentHashMap<>();
        rig.client.addListener(new CqfluxListener() {
            @Override
            public void operationFinished(RdmaConnection connection, OperationKind kind, OperationOutcome outcome,
                                          String error, long nanos) {
                reports.computeIfAbsent(outcome, o -> new AtomicInteger()).incrementAndGet();
                throw new IllegalStateException("listener bug");
            }
        });
        Mono<Void> w = rig.conn.write(rig.remote(), 0, rig.local, 0, 8);
        StepVerifier.create(w).expectComplete().verify(FaultRig.T);
        StepVerifier.create(w).expectComplete().verify(FaultRig.T);
        StepVerifier.create(w.then(w)).expectComplete().verify(FaultRig.T);
        Disposable d = w.subscribe();
        d.dispose();
        // The cancel reports at once, unless the completion got there first: then the loop
        // reports the success after it gave the credit back, so inFlight() 0 can come before it.
        java.util.function.IntSupplier total = () -> reports.values().stream().mapToInt(AtomicInteger::get).sum();
        assertTrue(FaultRig.await(() -> rig.conn.inFlight() == 0 && total.getAsInt() >= 5, FaultRig.T),
                "in flight " + rig.conn.inFlight() + ", reports " + reports);
        assertEquals(5, total.getAsInt(), "one report per subscription: " + reports);
        assertTrue(reports.get(OperationOutcome.SUCCESS).get() >= 4, reports.toString());
    }

    @Test
    void finishedMono_keptByTheUser_noLongerReachesItsFirstSubscriber() throws Exception {
        rig = new FaultRig();
        // Completed, failed at its check, and cancelled before its completion.
        Mono<Void> completed = rig.conn.write(rig.remote(), 0, rig.local, 0, 8);
        Mono<Void> refused = rig.conn.write(rig.remote(), FaultRig.SIZE, rig.local, 0, 8);
        Mono<Void> cancelled = rig.conn.write(rig.remote(), 64, rig.local, 64, 8);
        WeakReference<CoreSubscriber<Void>> a = subscribeAndAwait(completed, false);
        WeakReference<CoreSubscriber<Void>> b = subscribeAndAwait(refused, false);
        WeakReference<CoreSubscriber<Void>> c = subscribeAndAwait(cancelled, true);
        for (Mono<Void> m : java.util.List.of(completed, refused, cancelled)) {
            OpMono op = assertInstanceOf(OpMono.class, m, "no assembly hook wraps it here");
            // The cancelled one ends when the loop takes it from its task queue (never posted),
            // and lets go of its subscriber once its regions are released, right after: a plain
            // store on the loop thread, so this waits for it rather than reading it once.
            assertTrue(FaultRig.await(op::isTerminated, FaultRig.T), op.toString());
            assertTrue(FaultRig.await(() -> op.actual == null, FaultRig.T), "a finished operation lets go of its subscriber");
        }
        // The field aside, nothing else of the operation keeps the subscriber: it can be collected.
        for (int i = 0; i < 50 && (a.get() != null || b.get() != null || c.get() != null); i++) {
            System.gc();
            Thread.sleep(10);
        }
        assertNull(a.get(), "the completed operation's subscriber is collectable");
        assertNull(b.get(), "the refused operation's subscriber is collectable");
        assertNull(c.get(), "the cancelled operation's subscriber is collectable");
        // The Mono still works: another subscription runs on a copy.
        StepVerifier.create(completed).expectComplete().verify(FaultRig.T);
    }

    /**
     * Subscribes a subscriber only a weak reference is kept of; waits for its terminal signal, or
     * cancels it at once.
     */
    private static WeakReference<CoreSubscriber<Void>> subscribeAndAwait(Mono<Void> m, boolean cancel)
            throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        CoreSubscriber<Void> s = new CoreSubscriber<>() {
            @Override
            public void onSubscribe(Subscription sub) {
                if (cancel) {
                    sub.cancel();
                    done.countDown();
                }
            }

            @Override
            public void onNext(Void v) {
            }

            @Override
            public void onError(Throwable t) {
                done.countDown();
            }

            @Override
            public void onComplete() {
                done.countDown();
            }
        };
        m.subscribe(s);
        assertTrue(done.await(FaultRig.T.toSeconds(), java.util.concurrent.TimeUnit.SECONDS));
        return new WeakReference<>(s);
    }
}
