package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.Disposable;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * Races of cancellation and closing against establishment and completion, on fabric/tcp over
 * 127.0.0.1: no connection, file descriptor or region reference leaks, in-flight counts return to
 * zero, and every operation's Mono terminates exactly once whatever is closed under load.
 */
class CancelAndLeakTest {
    FaultRig rig;

    @AfterEach
    void tearDown() {
        if (rig != null) {
            rig.close();
        }
    }

    /**
     * 1,500 {@code connect()} subscriptions cancelled at random moments between half and one and a
     * half times what a connect takes, so that many land right at establishment. A connection delivered to
     * the subscriber is closed by it; none may be left open (a connection handed to a subscriber
     * that had already cancelled is closed by the connect Mono's hand-over, with no global hook),
     * and the process's open file descriptors come back to where they were.
     */
    @Test
    void connect_cancelledAtRandomMoments_leavesNoConnectionAndNoFileDescriptor() {
        cancelConnectsAtRandomMoments(1_500);
    }

    /**
     * The same races after the application reset Reactor's global drop hooks: the library keeps
     * no global hook, so a reset changes nothing and no connection leaks.
     */
    @Test
    void connect_cancelledAtRandomMoments_afterTheApplicationResetsDropHooks_leavesNoConnection() {
        Hooks.onNextDropped(dropped -> { });
        Hooks.resetOnNextDropped();
        cancelConnectsAtRandomMoments(1_500);
    }

    /**
     * The same races with {@code map} between the connect Mono and the lambda subscriber: a
     * dispose that wins Reactor's swap drops the mapped value inside the lambda subscriber, and
     * the hand-over still sees through the map that the connection was dropped.
     */
    @Test
    void connect_mapThenSubscribe_cancelledAtRandomMoments_leavesNoConnection() {
        cancelConnectsAtRandomMoments(800, m -> m.map(c -> c));
    }

    /**
     * The same races under {@code Hooks.enableAutomaticContextPropagation()} (Spring Boot's
     * {@code spring.reactor.context-propagation=auto}), which wraps the subscriber of every
     * non-internal publisher in a context-restoring one.
     */
    @Test
    void connect_underAutomaticContextPropagation_cancelledAtRandomMoments_leavesNoConnection() {
        Hooks.enableAutomaticContextPropagation();
        try {
            cancelConnectsAtRandomMoments(800, m -> m.map(c -> c));
        } finally {
            Hooks.disableAutomaticContextPropagation();
        }
    }

    /**
     * A connection that the application's own code drops (outside the library's Monos) is the
     * application's: the library installs no global {@code onNextDropped} hook that would close
     * it, and the application's hook sees it.
     */
    @Test
    void connectionDroppedByTheApplication_isLeftToTheApplicationsHook() {
        rig = new FaultRig();
        List<Object> seen = new CopyOnWriteArrayList<>();
        Hooks.onNextDropped(seen::add);
        try {
            Operators.onNextDropped(rig.conn, Context.empty());
        } finally {
            Hooks.resetOnNextDropped();
        }
        assertEquals(List.of(rig.conn), seen);
        assertFalse(rig.conn.isDisposed(), "a hook of the library's closed the application's connection");
        rig.conn.write(rig.remote(), 0, rig.local, 0, 64).block(FaultRig.T);
    }

    private void cancelConnectsAtRandomMoments(int cycles) {
        cancelConnectsAtRandomMoments(cycles, m -> m);
    }

    private void cancelConnectsAtRandomMoments(int cycles,
            java.util.function.Function<Mono<RdmaConnection>, Mono<RdmaConnection>> chain) {
        rig = new FaultRig();
        InetSocketAddress addr = rig.srv.address();
        // Warm up (class loading, first-use allocations) and time a connect.
        long t0 = System.nanoTime();
        for (int i = 0; i < 10; i++) {
            rig.client.connect(addr).block(FaultRig.T).close();
        }
        long connectNanos = (System.nanoTime() - t0) / 10;
        assertTrue(FaultRig.await(() -> rig.client.openConnections() == 1 && rig.server.openConnections() == 1,
                FaultRig.T), "warm-up connections did not close");
        int fdsBefore = FaultRig.openFds();

        AtomicInteger delivered = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        SplittableRandom rnd = new SplittableRandom(42);
        for (int i = 0; i < cycles; i++) {
            Disposable d = chain.apply(rig.client.connect(addr)).subscribe(c -> {
                delivered.incrementAndGet();
                c.close();
            }, e -> failed.incrementAndGet());
            LockSupport.parkNanos(connectNanos / 2 + rnd.nextLong(connectNanos + 1));
            d.dispose();
        }
        // Only the rig's own connection may remain, on both sides.
        boolean settled = FaultRig.await(() -> rig.client.openConnections() == 1 && rig.server.openConnections() == 1,
                Duration.ofSeconds(10));
        boolean fdsBack = FaultRig.await(() -> FaultRig.openFds() <= fdsBefore, Duration.ofSeconds(5));
        int fdsAfter = FaultRig.openFds();
        System.out.printf("FACT connect cancelled at random moments (connect takes %.0f us): %d cycles, %d delivered,"
                        + " %d failed; open connections client %d server %d (expected 1 each); fds %d -> %d%n",
                connectNanos / 1e3, cycles, delivered.get(), failed.get(), rig.client.openConnections() - 1,
                rig.server.openConnections() - 1, fdsBefore, fdsAfter);
        assertTrue(settled, (rig.client.openConnections() - 1) + " client and " + (rig.server.openConnections() - 1)
                + " server connections leaked by " + cycles + " cancelled connects (" + delivered.get()
                + " delivered and closed by the subscriber)");
        assertTrue(fdsBack, "open file descriptors went from " + fdsBefore + " to " + fdsAfter + " over " + cycles
                + " cancelled connects");
        // The rig's connection still works.
        rig.conn.write(rig.remote(), 0, rig.local, 0, 64).block(FaultRig.T);
    }

    /**
     * Whole lifecycles repeated: build an entry point, bind, connect, write, then close the
     * connection, the server and the entry point (alternating close() and disposeLater()): open
     * file descriptors return to where they were.
     */
    @Test
    void lifecycle_buildConnectCloseDispose_repeated_leavesNoFileDescriptor() {
        Runnable cycle = new Runnable() {
            int n;

            @Override
            public void run() {
                try (FaultRig r = new FaultRig()) {
                    r.conn.durableWrite(r.remote(), 0, r.local, 0, 4096).block(FaultRig.T);
                    if (n++ % 2 == 0) {
                        r.conn.close();
                        r.srv.close();
                    } else {
                        Mono.fromRunnable(r.conn::dispose).then(r.conn.onDispose()).block(FaultRig.T);
                        Mono.fromRunnable(r.srv::dispose).then(r.srv.onDispose()).block(FaultRig.T);
                        Mono.fromRunnable(r.client::dispose).then(r.client.onDispose()).block(FaultRig.T);
                    }
                }
            }
        };
        for (int i = 0; i < 3; i++) {
            cycle.run();
        }
        int fdsBefore = FaultRig.openFds();
        int cycles = 40;
        for (int i = 0; i < cycles; i++) {
            cycle.run();
        }
        boolean back = FaultRig.await(() -> FaultRig.openFds() <= fdsBefore, Duration.ofSeconds(5));
        System.out.printf("FACT %d full lifecycles: fds %d -> %d%n", cycles, fdsBefore, FaultRig.openFds());
        assertTrue(back, "open file descriptors went from " + fdsBefore + " to " + FaultRig.openFds() + " over "
                + cycles + " lifecycles");
    }

    /**
     * Thousands of operations subscribed and cancelled at random points (at once, while queued,
     * while in flight): afterwards the connection's in-flight count and every region's in-flight
     * count return to 0, all send credits are free, and the connection still moves data correctly.
     */
    @Test
    void cancelStorm_inFlightCountsReturnToZero_andConnectionStillWorks() throws Exception {
        rig = new FaultRig(b -> b, b -> b.pendingLimit(1 << 16));
        int ops = 20_000;
        Tally t = new Tally(ops);
        PeerRegion dst = rig.remote();
        AtomicInteger next = new AtomicInteger();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int w = 0; w < 2; w++) {
            workers.add(CompletableFuture.runAsync(() -> {
                ThreadLocalRandom r = ThreadLocalRandom.current();
                int i;
                while ((i = next.getAndIncrement()) < ops) {
                    long off = (long) r.nextInt(256) * 4096;
                    int len = 1 + r.nextInt(4096);
                    t.subscribe(i, switch (r.nextInt(3)) {
                        case 0 -> rig.conn.durableWrite(dst, off, rig.local, off, len);
                        case 1 -> rig.conn.read(rig.local, off, dst, off, len);
                        default -> rig.conn.write(dst, off, rig.local, off, len);
                    });
                    int cancelAt = r.nextInt(4);
                    if (cancelAt == 0) {
                        t.cancel(i);
                    } else if (cancelAt == 1 && i > 16) {
                        t.cancel(i - 1 - r.nextInt(16));
                    } else if (cancelAt == 2) {
                        LockSupport.parkNanos(r.nextInt(20_000));
                        t.cancel(i);
                    }
                }
            }));
        }
        CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        boolean zero = FaultRig.await(() -> rig.conn.inFlight() == 0 && rig.local.inFlight() == 0
                && rig.serverRegion.inFlight() == 0, FaultRig.T);
        System.out.printf("FACT cancel storm of %d operations: in flight %d, local region in flight %d, max in flight"
                        + " %d of %d credits; %s%n", ops, rig.conn.inFlight(), rig.local.inFlight(),
                rig.conn.maxInFlight(), rig.conn.sendCredits(), t);
        assertTrue(zero, "after the storm: connection in flight " + rig.conn.inFlight() + ", local region in flight "
                + rig.local.inFlight() + ", server region in flight " + rig.serverRegion.inFlight());
        assertTrue(rig.conn.maxInFlight() <= rig.conn.sendCredits());
        assertEquals(0, t.twice(), t.toString());

        // Every credit is free: a full window of writes all complete, and data still arrives intact.
        Tally window = new Tally(rig.conn.sendCredits());
        for (int i = 0; i < rig.conn.sendCredits(); i++) {
            window.subscribe(i, rig.conn.write(dst, (long) i * 64, rig.local, 0, 64));
        }
        assertTrue(window.awaitAll(FaultRig.T), "a full window after the storm did not complete: " + window);
        assertEquals(Integer.valueOf(rig.conn.sendCredits()), window.kinds().get("complete"), window.toString());
        for (long i = 0; i < 4096; i += 8) {
            rig.local.segment().set(ValueLayout.JAVA_LONG, i, i * 31 + 7);
        }
        rig.conn.durableWrite(dst, 8192, rig.local, 0, 4096).block(FaultRig.T);
        for (long i = 0; i < 4096; i += 8) {
            assertEquals(i * 31 + 7, rig.serverRegion.segment().get(ValueLayout.JAVA_LONG, 8192 + i));
        }
        assertEquals(0, rig.conn.inFlight());
        assertEquals(0, rig.local.inFlight());
    }

    /** What is closed while operations are being subscribed. */
    enum Closer {
        CONNECTION_CLOSE, CONNECTION_DISPOSE_LATER, PEER_CONNECTION_CLOSE, SERVER_CLOSE, ENTRY_POINT_CLOSE,
        ENTRY_POINT_DISPOSE_LATER, PEER_ENTRY_POINT_CLOSE
    }

    /**
     * Two threads keep subscribing mixed operations while something is closed, and go on for a
     * while after: every Mono terminates (onComplete or onError) exactly once, within a bound.
     */
    @ParameterizedTest
    @EnumSource(Closer.class)
    void closeUnderLoad_everyMonoTerminatesExactlyOnce(Closer closer) throws Exception {
        rig = new FaultRig(b -> b, b -> b.pendingLimit(1 << 16));
        int cap = 400_000;
        Tally t = new Tally(cap);
        PeerRegion dst = rig.remote();
        AtomicInteger next = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int w = 0; w < 2; w++) {
            workers.add(CompletableFuture.runAsync(() -> {
                ThreadLocalRandom r = ThreadLocalRandom.current();
                int i;
                while (!stop.get() && (i = next.getAndIncrement()) < cap) {
                    long off = (long) r.nextInt(256) * 4096;
                    Mono<Void> m = switch (r.nextInt(3)) {
                        case 0 -> rig.conn.durableWrite(dst, off, rig.local, off, 4096);
                        case 1 -> rig.conn.read(rig.local, off, dst, off, 4096);
                        default -> rig.conn.write(dst, off, rig.local, off, 4096);
                    };
                    t.subscribe(i, m);
                    if ((i & 1023) == 0) {
                        LockSupport.parkNanos(200_000); // let the loop breathe: a load, not only a backlog
                    }
                }
            }));
        }
        FaultRig.await(() -> t.terminated() > 2_000, FaultRig.T);
        switch (closer) {
            case CONNECTION_CLOSE -> rig.conn.close();
            case CONNECTION_DISPOSE_LATER -> Mono.fromRunnable(rig.conn::dispose).then(rig.conn.onDispose()).block(FaultRig.T);
            case PEER_CONNECTION_CLOSE -> rig.serverConn.close();
            case SERVER_CLOSE -> rig.srv.close();
            case ENTRY_POINT_CLOSE -> rig.client.close();
            case ENTRY_POINT_DISPOSE_LATER -> Mono.fromRunnable(rig.client::dispose).then(rig.client.onDispose()).block(Duration.ofSeconds(30));
            case PEER_ENTRY_POINT_CLOSE -> rig.server.close();
        }
        FaultRig.await(() -> false, Duration.ofMillis(closer == Closer.SERVER_CLOSE ? 300 : 100));
        stop.set(true);
        CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        boolean all = t.awaitAll(Duration.ofSeconds(closer == Closer.SERVER_CLOSE ? 30 : 10));
        System.out.printf("FACT %s under load: %s%n", closer, t);
        assertTrue(all, t.unterminated() + " Monos never terminated after " + closer + ": " + t);
        assertEquals(0, t.twice(), "Monos terminated twice after " + closer + ": " + t);
    }
}
