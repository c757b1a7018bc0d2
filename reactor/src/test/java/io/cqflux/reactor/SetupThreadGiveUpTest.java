package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.internal.resources.SetupThread;
import java.lang.foreign.Arena;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * A set-up the caller gave up on (a connect cancelled or timed out while its native part runs,
 * a pool's attempt abandoned) no longer holds the connects queued behind it: the set-up thread
 * hands its queue to a fresh worker and the given-up task finishes alone; the instance's shutdown
 * still waits for it before it frees the transport.
 */
class SetupThreadGiveUpTest {
    private static final InetAddress LO = InetAddress.getLoopbackAddress();
    private static final Duration T = Duration.ofSeconds(30);

    /** A task that waits for {@code release}, telling {@code entered}. */
    private static Runnable held(CountDownLatch entered, CountDownLatch release) {
        return () -> {
            entered.countDown();
            try {
                release.await(T.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
    }

    @Test
    void aGivenUpTask_letsTheQueueGoOn_andTheShutdownWaitsForIt() throws Exception {
        SetupThread t = new SetupThread("giveup-test");
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Runnable stuck = held(entered, release);
        t.execute(stuck);
        assertTrue(entered.await(T.toSeconds(), TimeUnit.SECONDS));
        CountDownLatch behind = new CountDownLatch(1);
        AtomicReference<Boolean> behindOnTheThread = new AtomicReference<>();
        Runnable next = () -> {
            behindOnTheThread.set(t.inSetupThread());
            behind.countDown();
        };
        t.execute(next);
        assertFalse(t.giveUp(next), "a queued task is not running: nothing to hand over");
        assertFalse(behind.await(100, TimeUnit.MILLISECONDS), "a task ran beside the running one before any give-up");
        assertTrue(t.giveUp(stuck), "the running task was not given up");
        assertFalse(t.giveUp(stuck), "a task is given up once");
        assertTrue(behind.await(T.toSeconds(), TimeUnit.SECONDS), "the queue waited for the given-up task");
        assertTrue(behindOnTheThread.get(), "the fresh worker is the set-up thread");
        CompletableFuture<Void> ended = t.shutdown();
        assertFalse(ended.isDone(), "the shutdown ended while a given-up task still ran");
        release.countDown();
        ended.get(T.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void pastMaxGivenUpTasks_theNextGivenUpOneHoldsTheQueue_untilOneOfThemEnds() throws Exception {
        SetupThread t = new SetupThread("giveup-bound");
        List<CountDownLatch> releases = new ArrayList<>();
        try {
            for (int i = 0; i <= 4; i++) {
                CountDownLatch entered = new CountDownLatch(1);
                CountDownLatch release = new CountDownLatch(1);
                releases.add(release);
                Runnable r = held(entered, release);
                t.execute(r);
                assertTrue(entered.await(T.toSeconds(), TimeUnit.SECONDS), "task " + i + " did not start");
                boolean handed = t.giveUp(r);
                if (i < 4) {
                    assertTrue(handed, "give-up " + i + " of at most 4 refused");
                } else {
                    assertFalse(handed, "a fifth given-up task would run beside the queue at once");
                }
            }
            CountDownLatch behind = new CountDownLatch(1);
            t.execute(behind::countDown);
            assertFalse(behind.await(200, TimeUnit.MILLISECONDS), "the queue went on past the bound");
            releases.get(0).countDown(); // one of the four ends: the fifth is handed over
            assertTrue(behind.await(T.toSeconds(), TimeUnit.SECONDS),
                    "the fifth given-up task still held the queue after one of the four ended");
        } finally {
            releases.forEach(CountDownLatch::countDown);
        }
        t.shutdown().get(T.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void aGivenUpTask_afterTheShutdown_endsItAndNoWorkerIsLeft() throws Exception {
        SetupThread t = new SetupThread("giveup-shutdown");
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Runnable r = held(entered, release);
        t.execute(r);
        assertTrue(entered.await(T.toSeconds(), TimeUnit.SECONDS));
        CompletableFuture<Void> ended = t.shutdown();
        assertTrue(t.giveUp(r), "a running task can be given up after the shutdown");
        assertFalse(ended.isDone(), "the shutdown ended while the given-up task ran");
        release.countDown();
        ended.get(T.toSeconds(), TimeUnit.SECONDS);
        assertTrue(FaultRig.await(() -> Thread.getAllStackTraces().keySet().stream()
                .noneMatch(x -> x.isAlive() && x.getName().equals("giveup-shutdown")), T), "a worker outlived the shutdown");
    }

    @Test
    void aConnectCancelledInItsSetup_doesNotHoldTheNextConnect_sendsNothing_andTheInstanceWaitsForIt()
            throws Exception {
        try (Arena arena = Arena.ofShared(); Cqflux server = Cqflux.builder().transport(TransportChoice.FABRIC)
                .localAddress(LO).loops(1).build()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            // The authenticator is asked about every request that reaches the server.
            java.util.concurrent.atomic.AtomicInteger requests = new java.util.concurrent.atomic.AtomicInteger();
            RdmaServer s = server.bind(new InetSocketAddress(LO, 0), AcceptOptions.exposing(exposed)
                    .authenticatedBy(r -> {
                        requests.incrementAndGet();
                        return reactor.core.publisher.Mono.just(Authenticator.Decision.allow());
                    })).block(T);
            assertNotNull(s);
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            try (Cqflux client = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO).loops(1)
                    .threadNamePrefix("giveup-client").shutdownTimeout(Duration.ofMillis(200)).build()) {
                Disposable stuck = client.connect(s.address(), ConnectOptions.defaults()
                        .credentials(SetupThreadTest.heldCredentials(entered, release, new AtomicReference<>()))).subscribe(c -> { }, e -> { });
                try {
                    assertTrue(entered.await(T.toSeconds(), TimeUnit.SECONDS), "the stuck connect's set-up began");
                    stuck.dispose(); // given up while its set-up runs
                    // Well within the stuck set-up's hold (T): without the give-up this waits for it.
                    RdmaConnection next = client.connect(s.address(), ConnectOptions.defaults()
                            .credentials(new byte[] {2})).block(Duration.ofSeconds(10));
                    assertNotNull(next, "the next connect waited for the given-up set-up");
                    next.write(next.remoteRegion(0), 0, new byte[8]).block(T);
                } finally {
                    release.countDown(); // the given-up set-up goes on past its credentials
                }
                // Its worker ends with it: then whatever it sent was sent before the barrier's.
                assertTrue(FaultRig.await(() -> Thread.getAllStackTraces().keySet().stream()
                        .filter(x -> x.isAlive() && x.getName().equals("giveup-client-setup")).count() <= 1, T),
                        "the given-up set-up did not end");
                // A barrier on the same listener: the server has read every request sent before it.
                RdmaConnection barrier = client.connect(s.address(), ConnectOptions.defaults()
                        .credentials(new byte[] {3})).block(T);
                assertNotNull(barrier);
                assertEquals(2, requests.get(), "the given-up connect sent its request after all");
                client.dispose();
                assertTrue(FaultRig.await(() -> client.openConnections() == 0, T), "the connections were not closed");
                client.onDispose().block(T);
                assertTrue(nativeClosed(client), "the client's domain was not freed after the given-up set-up ended");
            }
            assertTrue(FaultRig.await(() -> s.stats().connections() == 0 && s.stats().pendingHandshakes() == 0, T),
                    "server " + s.stats());
        }
    }

    /**
     * The instance's shutdown waits for a given-up set-up that is still running: the transport is
     * freed only after it ended.
     */
    @Test
    void theInstancesShutdown_waitsForAGivenUpSetup() throws Exception {
        try (Arena arena = Arena.ofShared(); Cqflux server = Cqflux.builder().transport(TransportChoice.FABRIC)
                .localAddress(LO).loops(1).build()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            RdmaServer s = server.bind(new InetSocketAddress(LO, 0), exposed).block(T);
            assertNotNull(s);
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            try (Cqflux client = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO).loops(1)
                    .shutdownTimeout(Duration.ofMillis(200)).build()) {
                Disposable stuck = client.connect(s.address(), ConnectOptions.defaults()
                        .credentials(SetupThreadTest.heldCredentials(entered, release, new AtomicReference<>()))).subscribe(c -> { }, e -> { });
                try {
                    assertTrue(entered.await(T.toSeconds(), TimeUnit.SECONDS), "the stuck connect's set-up began");
                    stuck.dispose();
                    client.dispose();
                    assertFalse(client.onDispose().toFuture().isDone(), "the shutdown did not wait");
                    Thread.sleep(300); // past the shutdown's 200 ms budget: the loops have ended meanwhile
                    assertFalse(nativeClosed(client), "the transport was freed while a given-up set-up still ran");
                } finally {
                    release.countDown();
                }
                client.onDispose().block(T);
                assertTrue(nativeClosed(client), "the client's domain was not freed after the given-up set-up ended");
            }
        }
    }

    @Test
    void aTasksInterrupt_doesNotReachTheNextTask() throws Exception {
        SetupThread t = new SetupThread("giveup-interrupt");
        CompletableFuture<Boolean> nextSawInterrupt = new CompletableFuture<>();
        t.execute(() -> Thread.currentThread().interrupt());
        t.execute(() -> nextSawInterrupt.complete(Thread.currentThread().isInterrupted()));
        assertFalse(nextSawInterrupt.get(T.toSeconds(), TimeUnit.SECONDS), "the next task ran interrupted");
        t.shutdown().get(T.toSeconds(), TimeUnit.SECONDS);
    }

    /** Whether the instance's fabric domain and fabric are closed (FabricTransport#nativeClosed). */
    private static boolean nativeClosed(Cqflux c) throws ReflectiveOperationException {
        Object t = c.transport();
        Method m = t.getClass().getDeclaredMethod("nativeClosed");
        m.setAccessible(true);
        return (Boolean) m.invoke(t);
    }
}
