package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.Listener;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.testing.TransportFixture;
import io.cqflux.core.testing.TransportPump;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The event queue a tcp domain shares among the connections of one loop (LoopQueues,
 * SharedEventQueue): one EQ for all of them, each event routed to the endpoint its fid names, a
 * close of the EQ while endpoints are bound refused with {@code -FI_EBUSY} without harm, and the
 * EQ closed after its last endpoint. Driven without a loop: the pump dispatches the shared queue
 * as the loop would; a connection's {@code nextEvent()} never reads a loop's queue itself.
 */
class SharedEventQueueTest extends TransportFixture {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    @Override
    protected Transport openTransport() {
        return Fabric.open("tcp", LOOPBACK);
    }

    @Override
    protected InetSocketAddress listenAddress() {
        return new InetSocketAddress(LOOPBACK, 0);
    }

    @Test
    void connectionsOfOneLoop_shareOneEventQueue_andEachGetsTheEventsItsFidNames() throws IOException {
        Object clientLoop = new Object();
        Object serverLoop = new Object();
        FabricTransport ct = (FabricTransport) client;
        FabricTransport st = (FabricTransport) server;
        Listener l = closeLater(server.listen(listenAddress(), config()));
        Deque<ConnectionRequest> reqs = pump.add(l);
        FabricConnection a = (FabricConnection) ct.connect(l.address(), config(), bytes("a"), clientLoop);
        FabricConnection b = (FabricConnection) ct.connect(l.address(), config(), bytes("b"), clientLoop);
        FabricConnection own = (FabricConnection) ct.connect(l.address(), config(), bytes("c"), null);
        assertSame(a.sharedEventQueue(), b.sharedEventQueue());
        assertNotSame(a.sharedEventQueue(), own.sharedEventQueue(), "a connection without a loop has its own EQ");
        assertEquals(2, a.sharedEventQueue().routes());
        TransportPump.Side sa = pump.add("a", a);
        TransportPump.Side sb = pump.add("b", b);
        TransportPump.Side so = pump.add("own", own);
        pump.until("three requests", DEADLINE, () -> reqs.size() == 3);
        FabricConnection[] accepted = new FabricConnection[3];
        TransportPump.Side[] serverSides = new TransportPump.Side[3];
        for (int i = 0; i < 3; i++) {
            ConnectionRequest r = reqs.poll();
            byte[] asked = r.privateData();
            // Each accept answers with its request's own byte in upper case: each client must get its own.
            byte[] answer = {(byte) Character.toUpperCase((char) asked[0])};
            accepted[i] = (FabricConnection) r.accept(answer, serverLoop);
            serverSides[i] = pump.add("server " + (char) asked[0], accepted[i]);
        }
        assertSame(accepted[0].sharedEventQueue(), accepted[2].sharedEventQueue());
        assertEquals(1, st.loopQueues().sharedEventQueues());
        pump.until("all established", DEADLINE, () -> Stream.of(sa, sb, so).allMatch(
                s -> s.events.contains(ConnectionEvent.ESTABLISHED)));
        assertArrayEquals(bytes("A"), Arrays.copyOf(a.peerPrivateData(), 1));
        assertArrayEquals(bytes("B"), Arrays.copyOf(b.peerPrivateData(), 1));
        assertArrayEquals(bytes("C"), Arrays.copyOf(own.peerPrivateData(), 1));

        // b's peer ends: b alone hears of it.
        TransportPump.Side bServer = Stream.of(serverSides).filter(s -> s.connection().peerPrivateData()[0] == 'b')
                .findFirst().orElseThrow();
        bServer.connection().disconnect();
        pump.until("b closed", DEADLINE, () -> sb.events.contains(ConnectionEvent.CLOSED));
        pump.drainFor(java.time.Duration.ofMillis(100));
        assertFalse(sa.events.contains(ConnectionEvent.CLOSED), "a got b's FI_SHUTDOWN: " + sa.events);

        for (TransportPump.Side s : new TransportPump.Side[] {sa, sb, so, serverSides[0], serverSides[1], serverSides[2]}) {
            pump.remove(s);
            s.connection().close();
        }
        assertEquals(0, ct.loopQueues().sharedEventQueues(), "the client loop's EQ after its last endpoint");
        assertEquals(0, st.loopQueues().sharedEventQueues(), "the server loop's EQ after its last endpoint");
    }

    @Test
    void aSecondConnectionOfTheLoop_addsItsSocketAndItsCompletionQueue_andNoEventQueue() throws IOException {
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, LOOPBACK)) {
            port = free.getLocalPort(); // closed again: nothing listens there, nothing in this process accepts
        }
        InetSocketAddress nowhere = new InetSocketAddress(LOOPBACK, port);
        Object loop = new Object();
        long before = openFds();
        FabricConnection a = closeLater((FabricConnection) ((FabricTransport) client).connect(nowhere, config(),
                new byte[0], loop));
        long afterFirst = openFds();
        FabricConnection b = closeLater((FabricConnection) ((FabricTransport) client).connect(nowhere, config(),
                new byte[0], loop));
        long afterSecond = openFds();
        // The first also opens the loop's EQ (an epoll fd and a socketpair, 3 fds).
        assertEquals(7, afterFirst - before, "fds of the loop's first connection");
        assertEquals(4, afterSecond - afterFirst, "fds of the second: its socket and its CQ (3 fds), no EQ");
        assertSame(a.sharedEventQueue(), b.sharedEventQueue());
        // The refusals are error entries (fi_eq_err_entry.fid names the endpoint): each gets its own.
        TransportPump.Side sa = pump.add("a", a);
        TransportPump.Side sb = pump.add("b", b);
        pump.until("both refused", DEADLINE, () -> sa.events.size() == 1 && sb.events.size() == 1);
        assertEquals(List.of(ConnectionEvent.REJECTED), sa.events);
        assertEquals(List.of(ConnectionEvent.REJECTED), sb.events);
    }

    /**
     * Pins the fact LoopQueues rests on: {@code fi_close} of an EQ with an endpoint still bound
     * answers {@code -FI_EBUSY}, closes nothing and harms nothing (its events still come); the
     * close after the endpoint's succeeds.
     */
    @Test
    void closingAnEventQueueWithAnEndpointBound_isRefusedWithEbusy_andTheQueueKeepsServing() {
        Listener l = closeLater(server.listen(listenAddress(), config()));
        Deque<ConnectionRequest> reqs = pump.add(l);
        FabricConnection c = (FabricConnection) ((FabricTransport) client).connect(l.address(), config(), bytes("x"),
                new Object());
        long failures = FabricLibrary.closeFailures();
        assertFalse(FabricLibrary.close(c.eventQueue().eq(), "eq", "a shared EQ with an endpoint bound"));
        assertEquals(failures + 1, FabricLibrary.closeFailures());
        TransportPump.Side cs = pump.add("client", c);
        pump.until("a request", DEADLINE, () -> !reqs.isEmpty());
        TransportPump.Side ss = pump.add("server", reqs.poll().accept(new byte[0]));
        pump.until("established after the refused close", DEADLINE,
                () -> cs.events.contains(ConnectionEvent.ESTABLISHED) && ss.events.contains(ConnectionEvent.ESTABLISHED));
        pump.remove(cs);
        pump.remove(ss);
        c.close();
        ss.connection().close();
        assertEquals(failures + 1, FabricLibrary.closeFailures(), "the close after the endpoint's failed");
        assertTrue(c.eventQueue().trywait(), "the closed queue answers as closed");
    }

    /**
     * A connection of a loop whose loop is not watching it yet (or another thread that calls it)
     * must not read the loop's shared queue: the loop alone reads its entry buffer and routes.
     */
    @Test
    void nextEventOfALoopsConnection_doesNotReadTheSharedQueue_theLoopRoutesTheEventToIt() throws Throwable {
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, LOOPBACK)) {
            port = free.getLocalPort(); // closed again: the connect is refused
        }
        FabricConnection a = closeLater((FabricConnection) ((FabricTransport) client).connect(
                new InetSocketAddress(LOOPBACK, port), config(), new byte[0], new Object()));
        SharedEventQueue q = a.sharedEventQueue();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pfd = arena.allocate(8, 4);
            pfd.set(ValueLayout.JAVA_INT, 0, q.fd());
            pfd.set(ValueLayout.JAVA_SHORT, 4, (short) 1); // POLLIN
            int ready = (int) POLL.invokeExact(pfd, 1L, (int) DEADLINE.toMillis());
            assertEquals(1, ready, "the refusal in the shared queue");
        }
        assertNull(a.events().nextEvent(), "nextEvent read the loop's shared queue itself");
        q.dispatch(); // the loop's part
        assertEquals(ConnectionEvent.REJECTED, a.events().nextEvent());
    }

    /**
     * A close off the loop (a failed fi_accept on the listener's loop) waits while the loop is
     * between a read and its route lookup: otherwise the endpoint could be closed and unrouted,
     * a new one routed at its address, and the lookup hand the new one the old one's event.
     */
    @Test
    void aCloseOffTheLoop_waitsForTheLoopsReadAndLookup_thenUnroutes() throws Exception {
        FabricConnection a = connectingToAClosedPort();
        SharedEventQueue q = a.sharedEventQueue();
        // The lock held here: the loop, between fi_eq_read and the lookup.
        runBehindTheReadLock(q, "closer", a::close, "the close did not wait for the read and lookup",
                () -> assertEquals(1, q.routes(), "routes while the loop reads"));
        assertEquals(0, q.routes(), "routes after the close");
    }

    /**
     * A route waits while another thread closes an endpoint of the queue, between its fi_close and
     * its unroute: fi_close frees the endpoint, and malloc hands its block to the next endpoint at
     * once (on any thread), so a new endpoint routed in that window at the same address would lose
     * its route to the old one's unroute, and its connection every event of its own.
     */
    @Test
    void aRoute_waitsForAnEndpointsCloseAndUnroute_soItCannotBeTheOneRemoved() throws Exception {
        FabricConnection a = connectingToAClosedPort();
        SharedEventQueue q = a.sharedEventQueue();
        MemorySegment reused = MemorySegment.ofAddress(0x5eed_0000L); // stands for a reused address
        // The lock held here: another thread's close, between fi_close and the unroute.
        runBehindTheReadLock(q, "router", () -> q.route(reused, (ev, data, err) -> { }),
                "the route did not wait for the close's unroute",
                () -> assertEquals(1, q.routes(), "routes while the close runs: the closing endpoint's only"));
        assertEquals(2, q.routes(), "the new route, taken after the close's unroute, stays");
        a.close();
        assertEquals(1, q.routes(), "the closed connection's route went, the other stays");
    }

    /** {@return a connection of the client's loop queues, connecting to a port nothing listens on} */
    private FabricConnection connectingToAClosedPort() throws IOException {
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, LOOPBACK)) {
            port = free.getLocalPort();
        }
        return (FabricConnection) ((FabricTransport) client).connect(
                new InetSocketAddress(LOOPBACK, port), config(), new byte[0], new Object());
    }

    /**
     * Holds {@code q}'s read lock while {@code task} starts on a thread of its own, asserts that
     * the thread blocks on the lock and runs {@code whileHeld}, then lets it go and waits for it.
     */
    private static void runBehindTheReadLock(SharedEventQueue q, String name, Runnable task, String notBlocked,
                                             Runnable whileHeld) throws InterruptedException {
        Thread t;
        synchronized (q.readLock()) {
            t = Thread.ofPlatform().name(name).start(task);
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (t.getState() != Thread.State.BLOCKED && t.isAlive() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(Thread.State.BLOCKED, t.getState(), notBlocked);
            whileHeld.run();
        }
        t.join(DEADLINE.toMillis());
        assertFalse(t.isAlive(), name + " after the lock was let go");
    }

    /**
     * A connect on a transport that another thread has closed fails at its first step, before
     * fi_getinfo: that call's hints point at the fabric's and domain's names in the transport's
     * arena, which the close freed (no child held the transport).
     */
    @Test
    void aConnectToAClosedTransport_failsBeforeAnyNativeCall() {
        FabricTransport t = (FabricTransport) Fabric.open("tcp", LOOPBACK);
        t.close();
        assertTrue(t.nativeClosed(), "nothing held the transport: its arena is freed");
        io.cqflux.core.ResourceClosedException e = org.junit.jupiter.api.Assertions.assertThrows(
                io.cqflux.core.ResourceClosedException.class, () -> FabricConnection.connect(t,
                        new InetSocketAddress(LOOPBACK, 9), config(), hs -> hs, true, null));
        // Thrown by the connect's own hold of the transport, not by the connection's constructor,
        // which runs after fi_getinfo.
        boolean fromTheConstructor = Arrays.stream(e.getStackTrace()).anyMatch(
                f -> f.getClassName().equals(FabricConnection.class.getName()) && f.getMethodName().equals("<init>"));
        assertFalse(fromTheConstructor,
                () -> "thrown after fi_getinfo: " + Arrays.toString(Arrays.copyOf(e.getStackTrace(), 4)));
    }

    private static final MethodHandle POLL = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("poll").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));

    private static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }
}
