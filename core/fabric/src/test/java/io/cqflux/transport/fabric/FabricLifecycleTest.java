package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.Listener;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.testing.TransportFixture;
import io.cqflux.core.testing.TransportPump;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Closing fabric objects: fi_close results, close order, and a listener's unanswered requests. */
class FabricLifecycleTest extends TransportFixture {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    private static final Set<ConnectionEvent> REFUSED = Set.of(ConnectionEvent.REJECTED, ConnectionEvent.UNREACHABLE);

    @Override
    protected Transport openTransport() {
        return Fabric.open("tcp", LOOPBACK);
    }

    @Override
    protected InetSocketAddress listenAddress() {
        return new InetSocketAddress(LOOPBACK, 0);
    }

    private static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    @Test
    void closingConnectionsListenerRegionsAndTransport_noFiCloseFails() {
        long before = FabricLibrary.closeFailures();
        Transport t = Fabric.open("tcp", LOOPBACK);
        LocalRegion target = region(t, 4096, RegionAccess.WRITE_DST, RegionAccess.RECV);
        Listener l = t.listen(listenAddress(), config());
        Deque<ConnectionRequest> reqs = pump.add(l);
        Connection c = client.connect(l.address(), config(), bytes("hi"));
        TransportPump.Side cs = pump.add("client", c);
        pump.until("a request", DEADLINE, () -> !reqs.isEmpty());
        Connection s = reqs.poll().accept(target.descriptor());
        TransportPump.Side ss = pump.add("server", s);
        pump.until("both established", DEADLINE,
                () -> cs.events.contains(ConnectionEvent.ESTABLISHED) && ss.events.contains(ConnectionEvent.ESTABLISHED));
        pump.remove(cs);
        pump.remove(ss);
        pump.remove(l);
        // The transport first, while its children are open: its domain must wait for them
        // (fi_domain(3)); closing it at once would fail with -FI_EBUSY and leak it.
        t.close();
        assertThrows(ResourceClosedException.class, () -> t.listen(listenAddress(), config()));
        s.close();
        c.close();
        l.close();
        target.close();
        assertEquals(before, FabricLibrary.closeFailures(), "fi_close failures (see the WARNING log lines)");
    }

    /**
     * A flush reads back into memory of this side's: one 8-byte registration per domain, shared by
     * its connections (a connection, a refused client's too, registers nothing of its own), and
     * closed with the domain once the last connection is gone, the transport closed first.
     */
    @Test
    void flushSink_isOneRegistrationPerDomain_sharedByItsConnections_andClosedWithTheDomain() {
        long before = FabricLibrary.closeFailures();
        FabricTransport t = (FabricTransport) Fabric.open("tcp", LOOPBACK);
        LocalRegion target = region(t, 4096, RegionAccess.WRITE_DST);
        Listener l = t.listen(listenAddress(), config());
        Deque<ConnectionRequest> reqs = pump.add(l);
        List<Connection> clients = new ArrayList<>();
        List<Connection> servers = new ArrayList<>();
        List<TransportPump.Side> sides = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Connection c = client.connect(l.address(), config(), bytes("c" + i));
            clients.add(c);
            TransportPump.Side cs = pump.add("client " + i, c);
            sides.add(cs);
            pump.until("a request", DEADLINE, () -> !reqs.isEmpty());
            Connection s = reqs.poll().accept(target.descriptor());
            servers.add(s);
            TransportPump.Side ss = pump.add("server " + i, s);
            sides.add(ss);
            pump.until("both established", DEADLINE, () -> cs.events.contains(ConnectionEvent.ESTABLISHED)
                    && ss.events.contains(ConnectionEvent.ESTABLISHED));
        }
        sides.forEach(pump::remove);
        assertEquals(((FabricConnection) servers.get(0)).flushSinkSegment().address(),
                ((FabricConnection) servers.get(1)).flushSinkSegment().address(), "one sink per domain");
        pump.remove(l);
        t.close();
        l.close();
        target.close();
        servers.get(0).close();
        assertFalse(t.nativeClosed(), "a connection is still open: the domain must wait (fi_domain(3))");
        servers.get(1).close();
        assertTrue(t.nativeClosed(), "the last connection closed: the sink, then the domain, must close");
        clients.forEach(Connection::close);
        assertEquals(before, FabricLibrary.closeFailures(), "fi_close failures (see the WARNING log lines)");
    }

    @Test
    void listenerClosedBeforeAccepting_clientIsRefused_andNothingLeaks() throws IOException {
        long failuresBefore = FabricLibrary.closeFailures();
        // warm up: the first cycle loads provider state that stays (epoll fds, caches)
        closeListenerWithUnansweredRequest();
        long before = openFds();
        List<ConnectionEvent> outcomes = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            outcomes.add(closeListenerWithUnansweredRequest());
        }
        long after = openFds();
        System.out.println("FACT tcp listener closed with an unanswered request: client saw " + Set.copyOf(outcomes)
                + "; fds " + before + " -> " + after + " over 50 cycles");
        assertTrue(REFUSED.containsAll(outcomes), outcomes::toString);
        assertTrue(after - before <= 4, "fds " + before + " -> " + after + " over 50 cycles");
        assertEquals(failuresBefore, FabricLibrary.closeFailures());
    }

    /** One cycle: a request is handed out by nextRequest, never answered, and the listener closes. */
    private ConnectionEvent closeListenerWithUnansweredRequest() {
        Listener l = server.listen(listenAddress(), config());
        Deque<ConnectionRequest> reqs = pump.add(l);
        Connection c = client.connect(l.address(), config(), bytes("x"));
        TransportPump.Side cs = pump.add("client", c);
        try {
            pump.until("a request", DEADLINE, () -> !reqs.isEmpty());
            ConnectionRequest r = reqs.poll();
            pump.remove(l);
            l.close();
            assertEquals(0, ((FabricListener) l).pendingRequests());
            assertThrows(ResourceClosedException.class, () -> r.accept(new byte[0]));
            // within the connection timeout (5 s by default), not only at the test's deadline
            pump.until("the client's end", config().timeout().plusSeconds(1), () -> !cs.events.isEmpty());
            return cs.events.get(0);
        } finally {
            pump.remove(cs);
            c.close();
            l.close();
        }
    }

    @Test
    void listenerClosedWithRequestsStillQueued_rejectsThemAll() {
        Listener l = server.listen(listenAddress(), config());
        List<Connection> clients = new ArrayList<>();
        List<TransportPump.Side> sides = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Connection c = closeLater(client.connect(l.address(), config(), bytes("c" + i)));
            clients.add(c);
            sides.add(pump.add("client " + i, c));
        }
        // Take one request by hand; reading the EQ also moves the others along in the provider
        // (tcp has no progress thread), so some are queued in the EQ, some perhaps still in the
        // kernel's backlog when the listener closes.
        ConnectionRequest first = null;
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (first == null && System.nanoTime() < deadline) {
            pump.pollOnce();
            first = l.nextRequest();
        }
        assertTrue(first != null, "no request arrived");
        pump.drainFor(Duration.ofMillis(50));
        l.close();
        pump.until("every client's end", config().timeout().plusSeconds(1),
                () -> sides.stream().noneMatch(s -> s.events.isEmpty()));
        for (TransportPump.Side s : sides) {
            assertTrue(REFUSED.contains(s.events.get(0)), s::toString);
        }
    }
}
