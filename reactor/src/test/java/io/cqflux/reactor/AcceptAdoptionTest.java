package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.cqflux.core.RegionAccess;
import io.cqflux.epoll.loop.EventLoop;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;

/**
 * What an accepted connection leaves on the server's loops once it is established: no handshake
 * timer (one that its start did not need, or one cancelled at the establishment), so that a storm
 * of accepts does not fill the loop's timer heap with timers that would each fire for nothing a
 * handshake timeout later; and the connections so adopted carry work as before.
 */
class AcceptAdoptionTest {
    private static final InetAddress LO = InetAddress.getLoopbackAddress();
    private static final Duration T = Duration.ofSeconds(30);
    private static final int CONNECTIONS = 20;

    private static Cqflux fabric(int loops) {
        // No keep-alive: its per-connection timer would be counted with the handshakes'.
        return Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO).loops(loops).noKeepAlive().build();
    }

    /** {@return the timers pending on every loop of {@code c}} (its loops, taken round-robin) */
    private static int pendingTimers(Cqflux c, int loops) throws Exception {
        java.util.Set<EventLoop> all = new java.util.HashSet<>();
        for (int i = 0; i < loops; i++) {
            all.add(c.nextLoop());
        }
        assertEquals(loops, all.size());
        int n = 0;
        for (EventLoop l : all) {
            n += pendingTimers(l);
        }
        return n;
    }

    private static int pendingTimers(EventLoop loop) throws Exception {
        CompletableFuture<Integer> n = new CompletableFuture<>();
        loop.execute(() -> n.complete(loop.pendingTimers()));
        return n.get(T.toSeconds(), TimeUnit.SECONDS);
    }

    /** With two loops, half the connections are started, timed and established on the other loop. */
    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void acceptedConnections_onceEstablished_leaveNoHandshakeTimerOnAnyLoop(int loops) throws Exception {
        try (Arena arena = Arena.ofShared(); Cqflux server = fabric(loops); Cqflux client = fabric(1)) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            RdmaServer s = server.bind(new InetSocketAddress(LO, 0),
                    AcceptOptions.exposing(exposed).withHandshakeTimeout(Duration.ofMinutes(5))).block(T);
            assertNotNull(s);
            int before = pendingTimers(server, loops);
            CompletableFuture<List<RdmaConnection>> accepted =
                    s.connections().take(CONNECTIONS).collectList().toFuture();
            List<RdmaConnection> connected = Flux.range(0, CONNECTIONS)
                    .flatMap(i -> client.connect(s.address()), 8)
                    .collectList().block(T);
            assertNotNull(connected);
            assertEquals(CONNECTIONS, connected.size());
            List<RdmaConnection> served = accepted.get(T.toSeconds(), TimeUnit.SECONDS);
            assertEquals(CONNECTIONS, served.size());
            assertEquals(0, s.stats().pendingHandshakes(), "every handshake ended established");
            // Every connection is established: none of their handshake timers may be pending
            // (they would fire, for nothing, five minutes from now).
            assertEquals(before, pendingTimers(server, loops), "timers pending on the server's " + loops
                    + " loop(s) after " + CONNECTIONS + " accepts, established");
            // And the connections so adopted carry work: each client writes into the exposed region.
            for (RdmaConnection c : connected) {
                c.write(c.remoteRegion(0), 0, new byte[8]).block(T);
            }
            assertEquals(0, s.stats().handshakeTimeouts());
            connected.forEach(RdmaConnection::dispose);
        }
    }
}
