package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The lifecycle of {@link Cqflux}, {@link RdmaServer} and {@link RdmaConnection} in Reactor's
 * vocabulary (dispose, isDisposed, onDispose, disposeNow), the shutdown budget and the loop
 * threads' names, over libfabric's tcp provider on loopback.
 */
class LifecycleTest {
    static final Duration T = Duration.ofSeconds(15);
    static final InetAddress LO = InetAddress.getLoopbackAddress();

    final List<Cqflux> instances = new ArrayList<>();
    final CountDownLatch unblock = new CountDownLatch(1);
    Arena arena;

    @BeforeEach
    void setUp() {
        arena = Arena.ofShared();
    }

    @AfterEach
    void tearDown() {
        unblock.countDown();
        for (Cqflux c : instances) {
            c.disposeNow(T);
        }
        arena.close();
    }

    Cqflux.Builder builder() {
        return Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO);
    }

    Cqflux build(Cqflux.Builder b) {
        Cqflux c = b.build();
        instances.add(c);
        return c;
    }

    Region exposed(Cqflux cq) {
        return cq.register(arena.allocate(4096, 64), RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
    }

    /** Occupies the single loop thread of {@code cq} until the test lets go (a handler that blocks it). */
    /** {@return a connection of {@code client} to a server of {@code server} exposing one region} */
    RdmaConnection connected(Cqflux server, Cqflux client) {
        RdmaServer srv = server.bind(new InetSocketAddress(LO, 0), c -> c.onDispose(), exposed(server)).block(T);
        return client.connect(srv.address()).block(T);
    }

    void blockLoop(Cqflux cq) {
        CompletableFuture<Void> blocked = new CompletableFuture<>();
        cq.nextLoop().execute(() -> {
            blocked.complete(null);
            try {
                unblock.await(T.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        blocked.orTimeout(T.toMillis(), TimeUnit.MILLISECONDS).join();
    }

    static String loopThreadName(Cqflux cq) {
        CompletableFuture<String> name = new CompletableFuture<>();
        cq.nextLoop().execute(() -> name.complete(Thread.currentThread().getName()));
        return name.orTimeout(T.toMillis(), TimeUnit.MILLISECONDS).join();
    }

    // ------------------------------------------------------------------ Cqflux

    @Test
    void cqfluxDispose_isIdempotent_andOnDisposeCompletesOnceLoopsEndedAndRegionsDeregistered() {
        Cqflux cq = build(builder());
        Region r = exposed(cq);
        assertFalse(cq.isDisposed());
        cq.dispose();
        cq.dispose();
        assertTrue(cq.isDisposed());
        StepVerifier.create(cq.onDispose()).expectComplete().verify(T);
        assertTrue(cq.nextLoop().terminationFuture().isDone(), "the loop thread ended before onDispose");
        assertFalse(r.isOpen(), "the region was deregistered before onDispose");
        // Released already: a late subscriber and a late disposeNow return at once.
        StepVerifier.create(cq.onDispose()).expectComplete().verify(T);
        cq.disposeNow(Duration.ZERO);
        assertThrows(ResourceClosedException.class, () -> cq.register(arena.allocate(64), RegionAccess.WRITE_SRC));
        StepVerifier.create(cq.connect(new InetSocketAddress(LO, 1))).expectError(ResourceClosedException.class)
                .verify(T);
    }

    @Test
    void cqfluxDisposeNowWithNoBudget_failsWhatIsPendingClosed_notLost_andTheReceiverAsClosedHere() {
        Cqflux server = build(builder());
        Cqflux client = build(builder());
        RdmaConnection conn = connected(server, client);
        Region src = client.register(arena.allocate(1 << 20, 64), RegionAccess.WRITE_SRC);
        List<ConnectionEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        conn.events().subscribe(events::add);
        CompletableFuture<Throwable> received = new CompletableFuture<>();
        conn.receive().subscribe(m -> { }, received::complete, () -> received.complete(null));
        int n = 2000;
        List<Throwable> outcomes = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int i = 0; i < n; i++) {
            conn.write(conn.remoteRegion(0), 0, src, (i % 256) * 4096L, 4096)
                    .subscribe(null, outcomes::add, () -> outcomes.add(new Throwable("completed")));
        }
        try {
            client.disposeNow(Duration.ZERO);
        } catch (IllegalStateException budgetSpent) {
            // documented: the budget ended before everything was released
        }
        StepVerifier.create(client.onDispose()).expectComplete().verify(T);
        assertTrue(FaultRig.await(() -> outcomes.size() == n, T), outcomes.size() + " of " + n + " ended");
        // Subscribed before the dispose: pending at it, so CLOSED (or done before it), never
        // LOST and never the ResourceClosedException of an operation subscribed after it.
        for (Throwable t : outcomes) {
            if (t instanceof ConnectionException ce) {
                assertEquals(ConnectionEvent.CLOSED, ce.event(), ce.getMessage());
            } else if (!"completed".equals(t.getMessage())) {
                throw new AssertionError("unexpected outcome", t);
            }
        }
        assertInstanceOf(ResourceClosedException.class, received.orTimeout(15, TimeUnit.SECONDS).join());
        assertTrue(FaultRig.await(() -> events.stream().anyMatch(ConnectionEvent::isTerminal), T), events.toString());
        assertEquals(ConnectionEvent.CLOSED, events.stream().filter(ConnectionEvent::isTerminal).findFirst().orElseThrow(),
                events.toString());
    }

    @Test
    void cqfluxDisposeNow_closesItsConnectionsAndServers_beforeReturning() {
        Cqflux server = build(builder());
        Cqflux client = build(builder());
        RdmaServer srv = server.bind(new InetSocketAddress(LO, 0), c -> c.onDispose(), exposed(server)).block(T);
        RdmaConnection conn = client.connect(srv.address()).block(T);
        client.disposeNow(T);
        assertTrue(conn.isDisposed());
        assertTrue(conn.onDispose().toFuture().isDone(), "released before disposeNow returned");
        assertEquals(0, client.openConnections());
        server.disposeNow(T);
        assertTrue(srv.isDisposed());
        assertTrue(srv.onDispose().toFuture().isDone(), "released before disposeNow returned");
    }

    @Test
    void cqfluxDisposeNow_whileALoopIsBlocked_throwsNamingTheLoop_andReleasesOnceItIsFree() {
        Cqflux cq = build(builder());
        blockLoop(cq);
        String loopName = cq.nextLoop().name();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> cq.disposeNow(Duration.ofMillis(200)));
        assertTrue(e.getMessage().contains("was not released within PT0.2S"), e.getMessage());
        assertTrue(e.getMessage().contains("event loop " + loopName + " still running"), e.getMessage());
        assertTrue(e.getMessage().contains("transport"), e.getMessage());
        assertTrue(cq.isDisposed());
        unblock.countDown();
        StepVerifier.create(cq.onDispose()).expectComplete().verify(T);
    }

    @Test
    void cqfluxClose_usesTheBuildersShutdownTimeout() {
        Cqflux cq = build(builder().shutdownTimeout(Duration.ofMillis(300)));
        assertEquals(Duration.ofMillis(300), cq.shutdownTimeout());
        blockLoop(cq);
        IllegalStateException e = assertThrows(IllegalStateException.class, cq::close);
        assertTrue(e.getMessage().contains("within PT0.3S"), e.getMessage());
        unblock.countDown();
        StepVerifier.create(cq.onDispose()).expectComplete().verify(T);
    }

    @Test
    void cqfluxDisposeNow_onANonBlockingThread_isRefused_andDisposesNothing() {
        Cqflux cq = build(builder());
        StepVerifier.create(Mono.fromRunnable(() -> cq.disposeNow(T)).subscribeOn(Schedulers.parallel()))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(IllegalStateException.class, e);
                    assertTrue(e.getMessage().contains("NonBlocking"), e.getMessage());
                })
                .verify(T);
        assertFalse(cq.isDisposed());
    }

    @Test
    void cqfluxClose_onItsOwnLoopThread_onlyStartsTheShutdown() {
        Cqflux cq = build(builder());
        CompletableFuture<Boolean> returned = new CompletableFuture<>();
        cq.nextLoop().execute(() -> {
            cq.close();
            returned.complete(cq.isDisposed());
        });
        assertTrue(returned.orTimeout(T.toMillis(), TimeUnit.MILLISECONDS).join());
        StepVerifier.create(cq.onDispose()).expectComplete().verify(T);
    }

    @Test
    void register_racingDispose_everyRegionItReturnedIsClosedByTheShutdown_orItRefuses() throws Exception {
        // A register that passed its open check before dispose() began may add its region after
        // the shutdown looked at the regions: it closes it and refuses then.
        raceAgainstDispose(40, cq -> cq.register(arena.allocate(256, 64), RegionAccess.WRITE_DST),
                r -> !r.isOpen(), Cqflux::openRegions);
    }

    @Test
    void bind_racingDispose_everyServerItReturnedIsClosedByTheShutdown_orItRefuses() throws Exception {
        // As for register: a bind whose listen ran before the shutdown began may add its server
        // after the shutdown closed the servers it saw; it refuses then. The outcome checked here
        // holds even without that refusal (a started server also closes itself when its loop
        // shuts down), so this guards the outcome, not the refusal.
        raceAgainstDispose(20, cq -> cq.bind(new InetSocketAddress(LO, 0)).block(T), RdmaServer::isDisposed,
                Cqflux::openServers);
    }

    /**
     * Two threads make {@code make} in a loop while the instance is disposed, {@code rounds}
     * times: whatever they were given must be closed once {@code disposeNow} returned, the instance
     * must count none left ({@code open}), and a make that lost the race refuses as closed.
     */
    private <R> void raceAgainstDispose(int rounds, java.util.function.Function<Cqflux, R> make,
            java.util.function.Predicate<R> closed, java.util.function.ToIntFunction<Cqflux> open) throws Exception {
        for (int round = 0; round < rounds; round++) {
            Cqflux cq = build(builder());
            List<R> returned = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Throwable> unexpected = java.util.Collections.synchronizedList(new ArrayList<>());
            CountDownLatch started = new CountDownLatch(2);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                threads.add(Thread.ofPlatform().start(() -> {
                    started.countDown();
                    while (true) {
                        try {
                            returned.add(make.apply(cq));
                        } catch (ResourceClosedException refused) {
                            return;
                        } catch (Throwable e) {
                            unexpected.add(e);
                            return;
                        }
                    }
                }));
            }
            assertTrue(started.await(T.toMillis(), TimeUnit.MILLISECONDS));
            Thread.sleep(round % 3);
            cq.disposeNow(T);
            for (Thread t : threads) {
                t.join(T.toMillis());
                assertFalse(t.isAlive(), "a call never ended after the shutdown");
            }
            assertEquals(List.of(), unexpected);
            for (R r : List.copyOf(returned)) {
                assertTrue(closed.test(r), "round " + round + ": " + r + " outlived the shutdown");
            }
            assertEquals(0, open.applyAsInt(cq), "round " + round);
        }
    }

    @Test
    void disposeNow_withNegativeTimeout_isRejectedNamingTheValue() {
        Cqflux cq = build(builder());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> cq.disposeNow(Duration.ofSeconds(-1)));
        assertTrue(e.getMessage().contains("PT-1S"), e.getMessage());
        assertFalse(cq.isDisposed());
    }

    @Test
    void directWriteToPersistentMemory_onATransportThatCannotPersist_isRefusedAtBuild_notDropped() {
        io.cqflux.core.UnsupportedCapabilityException e = assertThrows(io.cqflux.core.UnsupportedCapabilityException.class,
                () -> builder().directWriteToPersistentMemory(true).build());
        assertEquals(io.cqflux.core.Capability.FLUSH_PERSISTENT, e.capability());
        assertTrue(e.getMessage().contains("directWriteToPersistentMemory") && e.getMessage().contains("fabric/tcp"),
                e.getMessage());
        // Nothing left behind: the same builder without the declaration builds and closes.
        build(builder()).disposeNow(T);
    }

    @Test
    void builder_rejectsNegativeShutdownTimeout_blankThreadPrefix_andAcceptBufferOutOfRange() {
        assertThrows(IllegalArgumentException.class, () -> Cqflux.builder().shutdownTimeout(Duration.ofMillis(-1)));
        assertThrows(IllegalArgumentException.class, () -> Cqflux.builder().threadNamePrefix(" "));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Cqflux.builder().acceptBufferSize(0));
        assertTrue(e.getMessage().contains("0") && e.getMessage().contains("65536"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> Cqflux.builder().acceptBufferSize(Cqflux.Builder.MAX_ACCEPT_BUFFER_SIZE + 1));
    }

    // ------------------------------------------------------------------ thread names

    @Test
    void twoInstances_byDefault_nameTheirLoopThreadsApart() {
        Cqflux a = build(builder());
        Cqflux b = build(builder());
        String na = loopThreadName(a);
        String nb = loopThreadName(b);
        Pattern p = Pattern.compile("cqflux-\\d+-loop-0");
        assertTrue(p.matcher(na).matches(), na);
        assertTrue(p.matcher(nb).matches(), nb);
        assertNotEquals(na, nb);
    }

    @Test
    void threadNamePrefix_namesEveryLoopThread() {
        Cqflux cq = build(builder().threadNamePrefix("orders").loops(2));
        List<String> names = List.of(loopThreadName(cq), loopThreadName(cq));
        assertTrue(names.containsAll(List.of("orders-loop-0", "orders-loop-1")), names.toString());
        assertTrue(cq.toString().contains("orders"), cq.toString());
    }

    // ------------------------------------------------------------------ RdmaServer

    @Test
    void serverDispose_isIdempotent_completesConnections_andOnDisposeCompletesOnceTheListenerIsFreed() {
        Cqflux server = build(builder());
        Cqflux client = build(builder());
        RdmaServer srv = server.bind(new InetSocketAddress(LO, 0), exposed(server)).block(T);
        assertFalse(srv.isDisposed());
        srv.dispose();
        srv.dispose();
        assertTrue(srv.isDisposed());
        StepVerifier.create(srv.onDispose()).expectComplete().verify(T);
        StepVerifier.create(srv.connections()).expectComplete().verify(T);
        // The listener is gone: nobody answers on its port any more.
        StepVerifier.create(client.connect(srv.address()))
                .expectErrorSatisfies(e -> assertInstanceOf(ConnectionException.class, e)).verify(T);
        srv.disposeNow(Duration.ZERO);
    }

    @Test
    void serverDispose_whoseConnectionsSubscriberThrowsFromOnComplete_stillFreesTheListener() {
        Cqflux server = build(builder());
        RdmaServer srv = server.bind(new InetSocketAddress(LO, 0), exposed(server)).block(T);
        CountDownLatch completed = new CountDownLatch(1);
        srv.connections().subscribe(RuleBreakingSubscribers.throwingOnComplete(completed::countDown));
        srv.dispose();
        assertTrue(await(completed), "the subscriber heard of the end");
        StepVerifier.create(srv.onDispose()).expectComplete().verify(T);
        assertEquals(0, server.openServers(), "the server is forgotten");
    }

    static boolean await(CountDownLatch l) {
        try {
            return l.await(T.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Test
    void serverDisposeNow_whileItsLoopIsBlocked_throwsNamingTheListener() {
        Cqflux server = build(builder());
        RdmaServer srv = server.bind(new InetSocketAddress(LO, 0), exposed(server)).block(T);
        blockLoop(server);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> srv.disposeNow(Duration.ofMillis(100)));
        assertTrue(e.getMessage().contains(srv.toString()) && e.getMessage().contains("listener is not freed"),
                e.getMessage());
        assertTrue(srv.isDisposed());
        unblock.countDown();
        StepVerifier.create(srv.onDispose()).expectComplete().verify(T);
    }

    @Test
    void serverDisposeNow_onANonBlockingThread_isRefused() {
        Cqflux server = build(builder());
        RdmaServer srv = server.bind(new InetSocketAddress(LO, 0), exposed(server)).block(T);
        StepVerifier.create(Mono.fromRunnable(() -> srv.disposeNow(T)).subscribeOn(Schedulers.parallel()))
                .expectError(IllegalStateException.class).verify(T);
        assertFalse(srv.isDisposed());
    }

    // ------------------------------------------------------------------ RdmaConnection

    @Test
    void connectionDispose_isIdempotent_failsLaterOperations_andThePeerSeesItClosed() {
        Cqflux server = build(builder());
        Cqflux client = build(builder());
        CompletableFuture<RdmaConnection> accepted = new CompletableFuture<>();
        RdmaServer srv = server.bind(new InetSocketAddress(LO, 0), c -> {
            accepted.complete(c);
            return c.onDispose();
        }, exposed(server)).block(T);
        RdmaConnection conn = client.connect(srv.address()).block(T);
        RdmaConnection peer = accepted.orTimeout(T.toMillis(), TimeUnit.MILLISECONDS).join();
        Region local = client.register(arena.allocate(64), RegionAccess.WRITE_SRC);
        assertFalse(conn.isDisposed());
        conn.dispose();
        conn.dispose();
        assertTrue(conn.isDisposed());
        StepVerifier.create(conn.onDispose()).expectComplete().verify(T);
        assertEquals(0, conn.inFlight());
        assertEquals(0, client.openConnections(), "released before onDispose completed");
        StepVerifier.create(conn.write(conn.remoteRegion(0), 0, local, 0, 8))
                .expectError(ResourceClosedException.class).verify(T);
        StepVerifier.create(peer.onDispose()).expectComplete().verify(T);
        assertTrue(peer.isDisposed());
        StepVerifier.create(peer.events().filter(ConnectionEvent::isTerminal)).expectNextCount(1)
                .expectComplete().verify(T);
        conn.disposeNow(Duration.ZERO);
    }

    @Test
    void connectionDispose_whoseEventsOrCompletionsSubscriberThrowsFromOnComplete_stillReleasesIt() {
        Cqflux server = build(builder());
        Cqflux client = build(builder());
        RdmaConnection conn = connected(server, client);
        RdmaConnection other = connected(server, client);
        CountDownLatch completed = new CountDownLatch(2);
        conn.events().subscribe(RuleBreakingSubscribers.throwingOnComplete(completed::countDown));
        other.completions().subscribe(RuleBreakingSubscribers.throwingOnComplete(completed::countDown));
        conn.dispose();
        other.dispose();
        assertTrue(await(completed), "the subscribers heard of the end");
        StepVerifier.create(conn.onDispose().then(other.onDispose())).expectComplete().verify(T);
        assertEquals(0, client.openConnections(), "both are forgotten");
    }

    @Test
    void connectionDispose_whoseEventsSubscriberThrowsFromOnNext_stillFailsEveryPendingOperation_andTheReceiver() {
        Cqflux server = build(builder());
        Cqflux client = build(builder());
        RdmaConnection conn = connected(server, client);
        Region local = client.register(arena.allocate(4096, 64), RegionAccess.WRITE_SRC, RegionAccess.RECV);
        CountDownLatch told = new CountDownLatch(1);
        conn.events().subscribe(RuleBreakingSubscribers.<ConnectionEvent>throwingOnNext(ConnectionEvent::isTerminal,
                told::countDown));
        int n = 2000;
        Tally ops = new Tally(n + 1);
        ops.subscribe(n, conn.receive().then());
        for (int i = 0; i < n; i++) {
            ops.subscribe(i, conn.write(conn.remoteRegion(0), 0, local, 0, 4096));
        }
        conn.dispose();
        assertTrue(await(told), "the subscriber heard of the end");
        assertTrue(ops.awaitAll(T), ops.toString());
        assertEquals(0, ops.twice(), ops.toString());
        assertInstanceOf(ResourceClosedException.class, ops.error(n), "the receiver: " + ops.error(n) + " " + ops.kinds());
        StepVerifier.create(conn.onDispose()).expectComplete().verify(T);
    }

    @Test
    void connectionDisposeNow_whileItsLoopIsBlocked_throws_andReleasesOnceItIsFree() {
        Cqflux server = build(builder());
        Cqflux client = build(builder());
        RdmaConnection conn = connected(server, client);
        blockLoop(client);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> conn.disposeNow(Duration.ofMillis(100)));
        assertTrue(e.getMessage().contains(conn.toString()) && e.getMessage().contains("not freed")
                && e.getMessage().contains("has not run the close task"), e.getMessage());
        assertTrue(conn.isDisposed());
        unblock.countDown();
        StepVerifier.create(conn.onDispose()).expectComplete().verify(T);
    }

    @Test
    void cqfluxDisposeNow_withAConnectionOnABlockedLoop_saysWhatTheConnectionWaitsFor() {
        Cqflux server = build(builder());
        Cqflux client = build(builder());
        RdmaConnection conn = connected(server, client);
        blockLoop(client);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> client.disposeNow(Duration.ofMillis(100)));
        String m = e.getMessage();
        assertTrue(m.contains("1 connection(s) open (") && m.contains("has not run the close task"), m);
        unblock.countDown();
        StepVerifier.create(conn.onDispose()).expectComplete().verify(T);
        StepVerifier.create(client.onDispose()).expectComplete().verify(T);
    }

    /**
     * An idle connection whose loop ran the close task but whose goodbye write has not completed
     * (the peer's loop is blocked, so fabric/tcp's delivery acknowledgement cannot come): a
     * disposeNow without budget says it waits for the goodbye, not that its loop is blocked.
     */
    @Test
    void connectionDisposeNow_afterTheCloseTaskRan_withTheGoodbyePending_namesTheGoodbye_notABlockedLoop() {
        Cqflux server = build(builder());
        Cqflux client = build(builder());
        RdmaConnection conn = connected(server, client);
        blockLoop(server);
        conn.dispose();
        FaultRig.drainLoop(conn); // the client's loop has run the close task, and posted the goodbye
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> conn.disposeNow(Duration.ZERO));
        String m = e.getMessage();
        assertTrue(m.contains(conn.toString()) && m.contains("close task ran") && m.contains("goodbye write")
                && m.contains("1000 ms") && !m.contains("has not run the close task"), m);
        unblock.countDown();
        StepVerifier.create(conn.onDispose()).expectComplete().verify(T);
    }

    @Test
    void connectionDisposeNow_onItsOwnLoopThread_isRefused() {
        Cqflux server = build(builder());
        Cqflux client = build(builder());
        RdmaConnection conn = connected(server, client);
        Region local = client.register(arena.allocate(64), RegionAccess.WRITE_SRC);
        // The write completes on the client's loop thread: the disposeNow after it runs there.
        StepVerifier.create(conn.write(conn.remoteRegion(0), 0, local, 0, 8)
                        .then(Mono.fromRunnable(() -> conn.disposeNow(T))))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(IllegalStateException.class, e);
                    assertTrue(e.getMessage().contains("NonBlocking"), e.getMessage());
                })
                .verify(T);
        assertFalse(conn.isDisposed());
    }
}
