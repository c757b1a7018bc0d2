package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.internal.connection.ConnectionCore;
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
import reactor.core.publisher.Mono;

/**
 * A connection's native close runs on the instance's close thread (fabric/tcp allows it,
 * {@code Transport.closesOffLoop()}), not on its loop: the loop lets go of it first, its release
 * waits for the native close, a close does not wait behind a held set-up, and the instance's
 * shutdown waits for the queued closes before it frees the transport.
 */
class CloseThreadTest {
    private static final InetAddress LO = InetAddress.getLoopbackAddress();
    private static final Duration T = Duration.ofSeconds(30);

    private static Cqflux fabric() {
        return Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO).loops(1).build();
    }

    @Test
    void dispose_runsTheNativeCloseOnTheCloseThread_andReleasesAfterIt() throws Exception {
        try (Arena arena = Arena.ofShared(); Cqflux server = fabric(); Cqflux client = fabric()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            RdmaServer s = server.bind(new InetSocketAddress(LO, 0), exposed).block(T);
            assertNotNull(s);
            assertTrue(client.transport().closesOffLoop(), "fabric/tcp's domain is FI_THREAD_SAFE");
            RdmaConnection c = client.connect(s.address()).block(T);
            assertNotNull(c);
            c.write(c.remoteRegion(0), 0, new byte[8]).block(T);
            ConnectionCore core = c.core();
            assertNull(core.nativeCloseThread(), "not closed yet");
            c.dispose();
            c.onDispose().block(T);
            // closed completes in the hand-back, after the native close returned: its thread is known.
            Thread t = core.nativeCloseThread();
            assertNotNull(t, "the native close returned before onDispose() completed");
            assertTrue(t.getName().endsWith("-close"), "the native close ran on " + t.getName());
            assertEquals(0, client.openConnections());
            assertTrue(FaultRig.await(() -> s.stats().connections() == 0, T), "server " + s.stats());
        }
    }

    @Test
    void close_whileTheSetupThreadIsHeld_completes() throws Exception {
        try (Arena arena = Arena.ofShared(); Cqflux server = fabric(); Cqflux client = fabric()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            RdmaServer s = server.bind(new InetSocketAddress(LO, 0), exposed).block(T);
            assertNotNull(s);
            RdmaConnection c = client.connect(s.address()).block(T);
            assertNotNull(c);
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CompletableFuture<RdmaConnection> held = client.connect(s.address(), ConnectOptions.defaults()
                    .credentials(SetupThreadTest.heldCredentials(entered, release, new AtomicReference<>()))).toFuture();
            try {
                assertTrue(entered.await(T.toSeconds(), TimeUnit.SECONDS), "the holding set-up began");
                c.dispose();
                // Closes have a thread of their own: this one does not wait for the held connect.
                c.onDispose().block(T);
                assertFalse(held.isDone(), "the connect is still held in its set-up");
                assertTrue(c.core().nativeCloseThread().getName().endsWith("-close"),
                        "closed on " + c.core().nativeCloseThread());
            } finally {
                release.countDown();
            }
            held.get(T.toSeconds(), TimeUnit.SECONDS).dispose();
        }
    }

    @Test
    void manyCloses_bringTheFdsBackToTheirCount() throws Exception {
        try (Arena arena = Arena.ofShared(); Cqflux server = fabric()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            RdmaServer s = server.bind(new InetSocketAddress(LO, 0), exposed).block(T);
            assertNotNull(s);
            try (Cqflux client = fabric()) {
                // One connection first: the loop's shared event queue and the instance's threads exist.
                RdmaConnection first = client.connect(s.address()).block(T);
                assertNotNull(first);
                int fdsBefore = FaultRig.openFds();
                for (int round = 0; round < 3; round++) {
                    List<RdmaConnection> cs = new ArrayList<>();
                    for (int i = 0; i < 20; i++) {
                        cs.add(client.connect(s.address()).block(T));
                    }
                    for (RdmaConnection c : cs) {
                        c.dispose(); // closes queued on the close thread while the loop goes on
                    }
                    for (RdmaConnection c : cs) {
                        c.onDispose().block(T);
                        assertTrue(c.core().nativeCloseThread().getName().endsWith("-close"),
                                "closed on " + c.core().nativeCloseThread());
                    }
                }
                assertTrue(FaultRig.await(() -> FaultRig.openFds() <= fdsBefore
                                && s.stats().connections() == 1, T),
                        "fds " + FaultRig.openFds() + " after 60 closes, " + fdsBefore + " before; server " + s.stats());
                first.write(first.remoteRegion(0), 0, new byte[8]).block(T); // its loop serves it still
            }
        }
    }

    @Test
    void instanceShutdown_withClosesQueued_releasesEverythingBeforeTheTransport() throws Exception {
        try (Arena arena = Arena.ofShared(); Cqflux server = fabric()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            RdmaServer s = server.bind(new InetSocketAddress(LO, 0), exposed).block(T);
            assertNotNull(s);
            int fdsBefore = FaultRig.openFds();
            Cqflux client = fabric();
            List<RdmaConnection> cs = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                cs.add(client.connect(s.address()).block(T));
            }
            AtomicReference<Throwable> failed = new AtomicReference<>();
            // Operations in flight at the close, so that something is released after the native close.
            for (RdmaConnection c : cs) {
                c.write(c.remoteRegion(0), 0, new byte[8]).subscribe(v -> { }, e -> { });
            }
            // Half are closed on their own just before the instance: their closes are queued when
            // the shutdown begins; the shutdown closes the other half itself.
            for (int i = 0; i < cs.size(); i += 2) {
                cs.get(i).dispose();
            }
            client.disposeNow(T);
            for (RdmaConnection c : cs) {
                assertTrue(c.onDispose().then(Mono.just(true)).onErrorResume(e -> {
                    failed.set(e);
                    return Mono.just(false);
                }).block(T), "released: " + failed.get());
                assertNotNull(c.core().nativeCloseThread(), "closed natively: " + c);
            }
            assertEquals(0, client.openConnections());
            assertTrue(nativeClosed(client), "the client's domain was freed after every queued close");
            assertTrue(FaultRig.await(() -> s.stats().connections() == 0, T), "server " + s.stats());
            assertTrue(FaultRig.await(() -> FaultRig.openFds() <= fdsBefore, T),
                    "fds " + FaultRig.openFds() + " after, " + fdsBefore + " before");
        }
    }

    /**
     * The close thread held while the instance shuts down: the budget runs out and the loops end
     * with native closes still queued, and the transport stays open until those ran; then every
     * connection is released, closed natively on the close thread, and the close thread ends with
     * the instance.
     */
    @Test
    void instanceShutdown_withTheCloseThreadHeld_freesTheTransportOnlyAfterTheQueuedCloses() throws Exception {
        try (Arena arena = Arena.ofShared(); Cqflux server = fabric()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            RdmaServer s = server.bind(new InetSocketAddress(LO, 0), exposed).block(T);
            assertNotNull(s);
            String prefix = "cqflux-closeheld";
            Cqflux client = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO).loops(1)
                    .threadNamePrefix(prefix).shutdownTimeout(Duration.ofMillis(200)).build();
            List<RdmaConnection> cs = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                cs.add(client.connect(s.address()).block(T));
            }
            CountDownLatch release = new CountDownLatch(1);
            hold(client, release);
            try {
                cs.get(0).dispose(); // its native close queues behind the held task
                client.dispose();    // the budget runs out with closes queued; the loops end
                assertTrue(FaultRig.await(() -> !threadAlive(prefix + "-loop-0"), T), "the loop did not end");
                assertFalse(nativeClosed(client), "the transport was freed with native closes still queued");
                for (RdmaConnection c : cs) {
                    assertNull(c.core().nativeCloseThread(), "closed natively while the close thread was held: " + c);
                }
            } finally {
                release.countDown();
            }
            client.onDispose().block(T);
            for (RdmaConnection c : cs) {
                c.onDispose().block(T);
                assertNotNull(c.core().nativeCloseThread(), "closed natively: " + c);
            }
            assertTrue(cs.get(0).core().nativeCloseThread().getName().endsWith("-close"),
                    "the queued close ran on " + cs.get(0).core().nativeCloseThread());
            assertTrue(nativeClosed(client), "the client's domain was not freed after the queued closes");
            assertTrue(FaultRig.await(() -> !threadAlive(prefix + "-close"), T), "the close thread outlived its instance");
            assertTrue(FaultRig.await(() -> s.stats().connections() == 0, T), "server " + s.stats());
        }
    }

    /** Occupies {@code c}'s close thread until {@code release}; returns once the holding task runs. */
    private static void hold(Cqflux c, CountDownLatch release) throws InterruptedException {
        CountDownLatch entered = new CountDownLatch(1);
        c.factory.closes().execute(() -> {
            entered.countDown();
            try {
                release.await(T.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(entered.await(T.toSeconds(), TimeUnit.SECONDS), "the close thread did not take the holding task");
    }

    private static boolean threadAlive(String name) {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.isAlive() && t.getName().equals(name));
    }

    /** Whether the instance's fabric domain and fabric are closed (FabricTransport#nativeClosed). */
    private static boolean nativeClosed(Cqflux c) throws ReflectiveOperationException {
        Object t = c.transport();
        Method m = t.getClass().getDeclaredMethod("nativeClosed");
        m.setAccessible(true);
        return (Boolean) m.invoke(t);
    }
}
