package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import java.lang.foreign.Arena;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * A connect's native set-up runs on the instance's set-up thread (fabric/tcp allows it), not on
 * the loop that serves the connection: a slow set-up does not hold up that loop's other
 * connections, a cancel during it leaks nothing, and the instance's shutdown ends every set-up.
 * The set-up is made slow through the credentials supplier, which a connect asks on that thread
 * after it registered the connection's control words and before the transport's connect.
 */
class SetupThreadTest {
    private static final InetAddress LO = InetAddress.getLoopbackAddress();
    private static final Duration T = Duration.ofSeconds(30);

    private static Cqflux fabric() {
        return Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO).loops(1).build();
    }

    /** Credentials that hold the set-up until {@code release}, telling {@code entered} and the thread's name. */
    static Supplier<byte[]> heldCredentials(CountDownLatch entered, CountDownLatch release,
                                                    AtomicReference<String> thread) {
        return () -> {
            thread.set(Thread.currentThread().getName());
            entered.countDown();
            try {
                if (!release.await(T.toSeconds(), TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never released the set-up");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            return new byte[] {1}; // credentials are 1 to 255 bytes
        };
    }

    @Test
    void connect_whoseSetupIsSlow_doesNotDelayABusyConnectionOnTheSameLoop() throws Exception {
        try (Arena arena = Arena.ofShared(); Cqflux server = fabric(); Cqflux client = fabric()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            RdmaServer s = server.bind(new InetSocketAddress(LO, 0), exposed).block(T);
            assertNotNull(s);
            RdmaConnection busy = client.connect(s.address()).block(T);
            assertNotNull(busy);
            assertTrue(server.factory.setups().started(), "the server accepted on its set-up thread");
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            AtomicReference<String> setupThread = new AtomicReference<>();
            CompletableFuture<RdmaConnection> slow = client.connect(s.address(),
                    ConnectOptions.defaults().credentials(heldCredentials(entered, release, setupThread))).toFuture();
            try {
                assertTrue(entered.await(T.toSeconds(), TimeUnit.SECONDS), "the slow connect's set-up began");
                // The set-up is held; the client's one loop serves the busy connection meanwhile:
                // each write completes before the next is posted.
                for (int i = 0; i < 200; i++) {
                    busy.write(busy.remoteRegion(0), 0, new byte[8]).block(T);
                }
                assertFalse(slow.isDone(), "the slow connect is still held in its set-up");
            } finally {
                release.countDown();
            }
            RdmaConnection c = slow.get(T.toSeconds(), TimeUnit.SECONDS);
            assertTrue(setupThread.get().endsWith("-setup"), "set-up ran on " + setupThread.get());
            assertNotNull(c.remoteRegion(0), "the connection made off the loop is served like any");
            c.write(c.remoteRegion(0), 0, new byte[8]).block(T);
            c.dispose();
            busy.dispose();
        }
    }

    @Test
    void connect_cancelledDuringSetup_leaksNoConnectionRegistrationOrFd() throws Exception {
        try (Arena arena = Arena.ofShared(); Cqflux server = fabric()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            RdmaServer s = server.bind(new InetSocketAddress(LO, 0), exposed).block(T);
            assertNotNull(s);
            int fdsBefore = FaultRig.openFds();
            Cqflux client = fabric();
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            AtomicReference<RdmaConnection> delivered = new AtomicReference<>();
            Disposable d = client.connect(s.address(), ConnectOptions.defaults()
                    .credentials(heldCredentials(entered, release, new AtomicReference<>())))
                    .subscribe(delivered::set, e -> { });
            assertTrue(entered.await(T.toSeconds(), TimeUnit.SECONDS), "the connect's set-up began");
            d.dispose(); // its control words are registered; its endpoint is not made yet
            release.countDown(); // the set-up goes on, connects and hands over a cancelled connect
            assertTrue(FaultRig.await(() -> client.openConnections() == 0 && s.stats().pendingHandshakes() == 0
                    && s.stats().connections() == 0 && s.stats().exposures() == 0, T),
                    "client connections " + client.openConnections() + ", server " + s.stats());
            assertNull(delivered.get(), "a cancelled connect delivers nothing");
            client.disposeNow(T);
            assertTrue(nativeClosed(client), "the client's domain was freed: no registration or endpoint kept it");
            assertTrue(FaultRig.await(() -> FaultRig.openFds() <= fdsBefore, T),
                    "fds " + FaultRig.openFds() + " after, " + fdsBefore + " before");
        }
    }

    @Test
    void instanceShutdown_duringSetups_endsThemAll() throws Exception {
        try (Arena arena = Arena.ofShared(); Cqflux server = fabric()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            RdmaServer s = server.bind(new InetSocketAddress(LO, 0), exposed).block(T);
            assertNotNull(s);
            int fdsBefore = FaultRig.openFds();
            Cqflux client = fabric();
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            AtomicReference<String> setupThread = new AtomicReference<>();
            List<CompletableFuture<RdmaConnection>> connects = new ArrayList<>();
            // The first holds the set-up thread; the others wait behind it.
            connects.add(client.connect(s.address(), ConnectOptions.defaults()
                    .credentials(heldCredentials(entered, release, setupThread))).toFuture());
            assertTrue(entered.await(T.toSeconds(), TimeUnit.SECONDS), "the first set-up began");
            for (int i = 0; i < 4; i++) {
                connects.add(client.connect(s.address()).toFuture());
            }
            client.dispose();
            CompletableFuture<Void> ended = client.onDispose().toFuture();
            assertFalse(ended.isDone(), "the shutdown waits for the set-up in progress");
            release.countDown();
            ended.get(T.toSeconds(), TimeUnit.SECONDS);
            for (CompletableFuture<RdmaConnection> c : connects) {
                ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                        () -> c.get(T.toSeconds(), TimeUnit.SECONDS), "a connect ended by the shutdown fails");
                assertInstanceOf(ResourceClosedException.class, e.getCause());
            }
            assertEquals(0, client.openConnections());
            assertTrue(nativeClosed(client), "the client's domain was freed after its last set-up");
            String name = setupThread.get();
            assertTrue(FaultRig.await(() -> Thread.getAllStackTraces().keySet().stream()
                    .noneMatch(t -> t.getName().equals(name)), T), name + " ended");
            assertTrue(FaultRig.await(() -> s.stats().connections() == 0 && s.stats().exposures() == 0, T),
                    "server " + s.stats());
            assertTrue(FaultRig.await(() -> FaultRig.openFds() <= fdsBefore, T),
                    "fds " + FaultRig.openFds() + " after, " + fdsBefore + " before");
        }
    }

    @Test
    void server_disposedWhileAnAcceptRunsOnTheSetupThread_takesNoConnectionAndFreesItsPool() throws Exception {
        try (Arena arena = Arena.ofShared(); Cqflux server = fabric(); Cqflux client = fabric()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            AtomicReference<RdmaConnection> handed = new AtomicReference<>();
            RdmaServer s = server.bind(new InetSocketAddress(LO, 0),
                    AcceptOptions.exposing(exposed).withSharedReceivePool(), c -> {
                        handed.set(c);
                        return reactor.core.publisher.Mono.never();
                    }).block(T);
            assertNotNull(s);
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            // A connect of the server's own instance holds its set-up thread.
            CompletableFuture<RdmaConnection> holder = server.connect(s.address(), ConnectOptions.defaults()
                    .credentials(heldCredentials(entered, release, new AtomicReference<>()))).toFuture();
            CompletableFuture<RdmaConnection> connect;
            try {
                assertTrue(entered.await(T.toSeconds(), TimeUnit.SECONDS), "the holding set-up began");
                connect = client.connect(s.address()).toFuture();
                // Admitted on the loop and queued behind the holder, in one task of that loop.
                assertTrue(FaultRig.await(() -> s.stats().pendingHandshakes() == 1, T), "server " + s.stats());
            } catch (Throwable t) {
                release.countDown();
                throw t;
            }
            CountDownLatch marker = new CountDownLatch(1);
            CompletableFuture<Void> disposedOnLoop = new CompletableFuture<>();
            server.firstLoop().execute(() -> {
                try {
                    // Behind the accept on the set-up thread: once it ran, the accept's outcome
                    // waits in this loop's queue, and the server is disposed before it runs.
                    server.factory.setups().execute(marker::countDown);
                    release.countDown();
                    if (!marker.await(T.toSeconds(), TimeUnit.SECONDS)) {
                        throw new IllegalStateException("the set-up thread never reached the marker");
                    }
                    s.dispose();
                    disposedOnLoop.complete(null);
                } catch (Throwable t) {
                    disposedOnLoop.completeExceptionally(t);
                }
            });
            disposedOnLoop.get(T.toSeconds(), TimeUnit.SECONDS);
            s.onDispose().block(T);
            assertTrue(FaultRig.await(() -> s.stats().pendingHandshakes() == 0, T), "server " + s.stats());
            assertNull(handed.get(), "a disposed server hands over no connection");
            // The accepted connection is closed in order once established (its client sees
            // CLOSED): then nothing of it is left, and the pool goes with the server's last hold.
            assertTrue(FaultRig.await(() -> s.stats().connections() == 0 && s.stats().exposures() == 0, T),
                    "server " + s.stats());
            assertTrue(FaultRig.await(() -> !s.core().sharedReceivePool().isOpen(), T),
                    "the shared pool is freed with the server's last hold");
            // The client's connect fails, or the connection it got ends in order: it does not hang.
            try {
                RdmaConnection c = connect.get(T.toSeconds(), TimeUnit.SECONDS);
                java.util.List<io.cqflux.core.ConnectionEvent> events = c.events().collectList().block(T);
                assertTrue(events != null && events.contains(io.cqflux.core.ConnectionEvent.CLOSED)
                        && !events.contains(io.cqflux.core.ConnectionEvent.LOST), "client events " + events);
                c.onDispose().block(T);
            } catch (ExecutionException expected) {
                // refused or closed before it was established
            }
            holder.handle((c, e) -> c).get(T.toSeconds(), TimeUnit.SECONDS);
        }
    }

    @Test
    void connect_failingInItsSetup_signalsItsSubscriberOnTheLoop() throws Exception {
        try (Arena arena = Arena.ofShared(); Cqflux server = fabric(); Cqflux client = fabric()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            RdmaServer s = server.bind(new InetSocketAddress(LO, 0), exposed).block(T);
            assertNotNull(s);
            CompletableFuture<String> signalledOn = new CompletableFuture<>();
            client.connect(s.address(), ConnectOptions.defaults().credentials(() -> {
                throw new IllegalStateException("no credentials today");
            })).subscribe(c -> signalledOn.completeExceptionally(new AssertionError("connected: " + c)),
                    e -> signalledOn.complete(Thread.currentThread().getName() + " " + e.getMessage()));
            String on = signalledOn.get(T.toSeconds(), TimeUnit.SECONDS);
            assertTrue(on.contains("no credentials today"), on);
            assertTrue(on.contains("-loop-"), "the failed connect is signalled on its loop, not the set-up thread: "
                    + on);
            assertTrue(client.factory.setups().started(), "the connect's set-up ran on the set-up thread");
        }
    }

    @Test
    void request_whoseHandshakeTimeoutPassedInTheSetupQueue_isRejectedAndCountedAsTimedOut() throws Exception {
        try (Arena arena = Arena.ofShared(); Cqflux server = fabric(); Cqflux client = fabric()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            RdmaServer s = server.bind(new InetSocketAddress(LO, 0),
                    AcceptOptions.exposing(exposed).withHandshakeTimeout(Duration.ofMillis(300))).block(T);
            assertNotNull(s);
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CompletableFuture<RdmaConnection> holder;
            CompletableFuture<RdmaConnection> late;
            try {
                // A connect of the server's own instance holds its set-up thread past the request's timeout.
                holder = server.connect(s.address(), ConnectOptions.defaults()
                        .credentials(heldCredentials(entered, release, new AtomicReference<>()))).toFuture();
                assertTrue(entered.await(T.toSeconds(), TimeUnit.SECONDS), "the holding set-up began");
                late = client.connect(s.address()).toFuture();
                assertTrue(FaultRig.await(() -> s.stats().pendingHandshakes() == 1, T), "server " + s.stats());
                Thread.sleep(600); // twice its handshake timeout, waiting behind the holder
            } finally {
                release.countDown();
            }
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> late.get(T.toSeconds(), TimeUnit.SECONDS), "the late request is not served");
            assertInstanceOf(io.cqflux.core.ConnectionException.class, e.getCause(), e.getCause().toString());
            assertEquals(io.cqflux.core.ConnectionEvent.REJECTED,
                    ((io.cqflux.core.ConnectionException) e.getCause()).event(),
                    "rejected before anything was accepted for it: " + e.getCause());
            // Counted on the server's loop, after the reject the client saw.
            assertTrue(FaultRig.await(() -> s.stats().handshakeTimeouts() == 1, T), "server " + s.stats());
            holder.handle((c, x) -> c).get(T.toSeconds(), TimeUnit.SECONDS);
            assertTrue(FaultRig.await(() -> s.stats().pendingHandshakes() == 0, T), "server " + s.stats());
        }
    }

    /** Whether the instance's fabric domain and fabric are closed (FabricTransport#nativeClosed). */
    private static boolean nativeClosed(Cqflux c) throws ReflectiveOperationException {
        Object t = c.transport();
        Method m = t.getClass().getDeclaredMethod("nativeClosed");
        m.setAccessible(true);
        return (Boolean) m.invoke(t);
    }
}
