package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.FI_THREAD_SAFE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.Listener;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * What the reactive layer's set-up thread relies on (FabricTransport#connectsOffLoop): the domain
 * is FI_THREAD_SAFE as granted, and a connect built on one thread, while another thread reads the
 * loop's shared event queue it is bound to, is established and served by that other thread; and
 * what its close thread relies on (FabricTransport#closesOffLoop): a connection closed on another
 * thread leaves the loop's shared queue, and its other connections, to the loop.
 * Transports are opened through {@link Fabric#open}, never FabricTransport.open directly: the
 * former loads libfabric with its signal guard (IPATH_NO_BACKTRACE; docs/troubleshooting.md), and
 * a JVM that loaded it without dies of SIGSEGV at a later safepoint where libinfinipath is present.
 */
class FabricThreadingTest {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    @Test
    void tcpDomain_isGrantedThreadSafe_soConnectsAndAcceptsMayLeaveTheLoop() {
        try (FabricTransport t = (FabricTransport) Fabric.open("tcp", LOOPBACK)) {
            assertEquals(FI_THREAD_SAFE(), t.threading(), "fi_domain(3) threading level the tcp provider granted");
            assertTrue(t.connectsOffLoop());
            assertTrue(t.acceptsOffLoop());
            assertTrue(t.closesOffLoop());
        }
    }

    @Test
    void connectionClosedOnAnotherThread_leavesTheSharedQueueToTheLoop_whichServesItsOtherConnection()
            throws Exception {
        ConnectionConfig cfg = ConnectionConfig.DEFAULT;
        Object loop = new Object();
        ExecutorService loopThread = Executors.newSingleThreadExecutor();
        ExecutorService closeThread = Executors.newSingleThreadExecutor();
        try (FabricTransport server = (FabricTransport) Fabric.open("tcp", LOOPBACK);
             FabricTransport client = (FabricTransport) Fabric.open("tcp", LOOPBACK);
             Listener l = server.listen(new InetSocketAddress(LOOPBACK, 0), cfg)) {
            Connection first = loopThread.submit(() -> client.connect(l.address(), cfg, new byte[0], loop)).get();
            Connection a1 = awaitRequest(l, loopThread, first).accept(new byte[0]);
            assertEquals(ConnectionEvent.ESTABLISHED, awaitEvent(loopThread, first, a1));
            Connection second = loopThread.submit(() -> client.connect(l.address(), cfg, new byte[0], loop)).get();
            Connection a2 = awaitRequest(l, loopThread, second).accept(new byte[0]);
            assertEquals(ConnectionEvent.ESTABLISHED, awaitEvent(loopThread, second, a2));
            SharedEventQueue q = ((FabricConnection) second).sharedEventQueue();
            assertSame(q, ((FabricConnection) first).sharedEventQueue(), "one event queue for the loop's connections");
            assertEquals(2, q.routes());
            // The loop watches the queue and holds a standing fi_trywait answer, as before a sleep.
            Set<String> toldOn = ConcurrentHashMap.newKeySet();
            boolean standing = loopThread.submit(() -> {
                assertTrue(q.watchTouches(() -> toldOn.add(Thread.currentThread().getName())), "tcp's answers stand");
                for (int i = 0; i < 100; i++) {
                    q.dispatch();
                    if (q.prepareToSleep() && q.eq().trywaitAnswer().untouched()) {
                        return true;
                    }
                }
                return false;
            }).get();
            assertTrue(standing, "the loop got a standing FI_SUCCESS for its queue");
            toldOn.clear();
            // The close thread closes the second (fi_shutdown, fi_close of endpoint and CQs): the
            // loop's answer for the shared queue is not its to touch.
            closeThread.submit(second::close).get();
            assertEquals(Set.of(), toldOn, "threads that touched the loop's trywait answer");
            assertTrue(q.eq().trywaitAnswer().untouched(), "the standing answer was left to the loop");
            assertEquals(1, q.routes(), "the closed endpoint's route went with it");
            // The loop goes on serving its queue: a new connection of the loop is established through it.
            Connection third = loopThread.submit(() -> client.connect(l.address(), cfg, new byte[0], loop)).get();
            Connection a3 = awaitRequest(l, loopThread, third).accept(new byte[0]);
            assertEquals(ConnectionEvent.ESTABLISHED, awaitEvent(loopThread, third, a3));
            assertSame(q, ((FabricConnection) third).sharedEventQueue(), "the loop's queue stayed open");
            loopThread.submit(() -> {
                third.close();
                first.close();
            }).get();
            a3.close();
            a2.close();
            a1.close();
        } finally {
            loopThread.shutdownNow();
            closeThread.shutdownNow();
        }
    }

    @Test
    void connectBuiltOnAnotherThread_whileTheLoopThreadReadsItsSharedQueue_isEstablishedThere() throws Exception {
        ConnectionConfig cfg = ConnectionConfig.DEFAULT;
        Object loop = new Object(); // an affinity: the connects of one "loop" share its event queue
        ExecutorService loopThread = Executors.newSingleThreadExecutor();
        ExecutorService setupThread = Executors.newSingleThreadExecutor();
        try (FabricTransport server = (FabricTransport) Fabric.open("tcp", LOOPBACK);
             FabricTransport client = (FabricTransport) Fabric.open("tcp", LOOPBACK);
             Listener l = server.listen(new InetSocketAddress(LOOPBACK, 0), cfg)) {
            // A first connection of the loop, made and read on the loop thread: the shared queue exists.
            Connection first = loopThread.submit(() -> client.connect(l.address(), cfg, new byte[0], loop)).get();
            ConnectionRequest r1 = awaitRequest(l, loopThread, first);
            Connection a1 = r1.accept(new byte[0]);
            assertEquals(ConnectionEvent.ESTABLISHED, awaitEvent(loopThread, first, a1));
            // The second is made on another thread while the loop thread keeps reading the queue:
            // the reads begin before the connect is given and go on until it returned, so the
            // whole connect (its fi_ep_bind to this queue included) overlaps them.
            CountDownLatch readsBegan = new CountDownLatch(1);
            AtomicBoolean connectReturned = new AtomicBoolean();
            CompletableFuture<Integer> reading = CompletableFuture.supplyAsync(() -> {
                int reads = 0;
                do {
                    first.events().sharedBy().dispatch(); // the loop reads its shared queue
                    assertNull(first.events().nextEvent(), "the first connection has no further event");
                    reads++;
                    readsBegan.countDown();
                } while (!connectReturned.get());
                return reads;
            }, loopThread);
            assertTrue(readsBegan.await(10, TimeUnit.SECONDS), "the loop thread began reading");
            Connection second;
            try {
                second = setupThread.submit(() -> client.connect(l.address(), cfg, new byte[0], loop)).get();
            } finally {
                connectReturned.set(true);
            }
            assertTrue(reading.get(30, TimeUnit.SECONDS) >= 2, "the loop thread read during the connect");
            ConnectionRequest r2 = awaitRequest(l, loopThread, second);
            // Accepted off the thread that reads the listener, too (acceptsOffLoop).
            Connection a2 = setupThread.submit(() -> r2.accept(new byte[0])).get();
            // Handed over: from here only the loop thread uses it.
            assertEquals(ConnectionEvent.ESTABLISHED, awaitEvent(loopThread, second, a2));
            loopThread.submit(() -> {
                second.close();
                first.close();
            }).get();
            a2.close();
            a1.close();
        } finally {
            loopThread.shutdownNow();
            setupThread.shutdownNow();
        }
    }

    @Test
    void acceptHeldInItsNativeCalls_blocksNeitherNextRequestNorAReject_andCloseWaitsForIt() throws Exception {
        ConnectionConfig cfg = ConnectionConfig.DEFAULT;
        Object loop = new Object();
        ExecutorService loopThread = Executors.newSingleThreadExecutor();
        ExecutorService setupThread = Executors.newSingleThreadExecutor();
        ExecutorService other = Executors.newSingleThreadExecutor();
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (FabricTransport server = (FabricTransport) Fabric.open("tcp", LOOPBACK);
             FabricTransport client = (FabricTransport) Fabric.open("tcp", LOOPBACK);
             FabricListener l = (FabricListener) server.listen(new InetSocketAddress(LOOPBACK, 0), cfg)) {
            Connection c1 = loopThread.submit(() -> client.connect(l.address(), cfg, new byte[0], loop)).get();
            ConnectionRequest r1 = awaitRequest(l, loopThread, c1);
            Connection c2 = loopThread.submit(() -> client.connect(l.address(), cfg, new byte[0], loop)).get();
            ConnectionRequest r2 = awaitRequest(l, loopThread, c2);
            AtomicBoolean first = new AtomicBoolean(true);
            l.duringAnswer = () -> {
                if (first.getAndSet(false)) { // the accept of r1 only
                    held.countDown();
                    try {
                        release.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            };
            Future<Connection> accepted = setupThread.submit(() -> r1.accept(new byte[0]));
            assertTrue(held.await(10, TimeUnit.SECONDS), "the accept reached its native calls");
            // Another thread reads the listener and answers another request meanwhile.
            Future<?> beside = other.submit(() -> {
                l.nextRequest();
                r2.reject();
                return null;
            });
            beside.get(10, TimeUnit.SECONDS); // a TimeoutException: the listener's reads wait for the accept
            Future<?> closing = other.submit(l::close);
            Thread.sleep(200);
            assertFalse(closing.isDone(), "the close waits for the accept in progress");
            release.countDown();
            Connection a1 = accepted.get(10, TimeUnit.SECONDS);
            closing.get(10, TimeUnit.SECONDS);
            assertEquals(0, l.pendingRequests());
            a1.close();
            loopThread.submit(() -> {
                c2.close();
                c1.close();
            }).get();
        } finally {
            release.countDown();
            loopThread.shutdownNow();
            setupThread.shutdownNow();
            other.shutdownNow();
        }
    }

    /** tcp has no progress thread: the client's loop reads its shared queue meanwhile. */
    private static ConnectionRequest awaitRequest(Listener l, ExecutorService loopThread, Connection client)
            throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < end) {
            loopThread.submit(() -> client.events().sharedBy().dispatch()).get();
            ConnectionRequest r = l.nextRequest();
            if (r != null) {
                return r;
            }
            Thread.sleep(1);
        }
        throw new AssertionError("no connection request within 10 s");
    }

    /** Reads {@code c}'s events on its loop thread, the server side's here, until one comes. */
    private static ConnectionEvent awaitEvent(ExecutorService loopThread, Connection c, Connection server)
            throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < end) {
            server.events().nextEvent(); // its own queue: read by itself (no loop serves it)
            ConnectionEvent e = loopThread.submit(() -> {
                c.events().sharedBy().dispatch(); // what a loop does when the queue's fd is readable
                return c.events().nextEvent();
            }).get();
            if (e != null) {
                return e;
            }
            Thread.sleep(1);
        }
        return null;
    }
}
