package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A server disposed while connects arrive: every connection a client was handed either lives on
 * (the server's handler took it) or is closed in order by the server, whose accept was under way
 * (its client sees {@code CLOSED}); none ends {@code LOST}, as for a peer that vanished. Real
 * library, fabric/tcp on 127.0.0.1, both sides in this process, several dispose timings.
 */
class ServerDisposeRaceTest {

    private static final Duration T = Duration.ofSeconds(10);
    private static final InetAddress LO = InetAddress.getLoopbackAddress();

    @Test
    void connectionsHandedOutWhileTheServerIsDisposed_liveOnOrCloseInOrder_neverLost() throws Exception {
        Map<String, Integer> outcomes = new TreeMap<>();
        try (Arena a = Arena.ofShared();
             // Two loops: an accepted connection may be established on another loop than the server's.
             Cqflux server = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO).loops(2).build();
             // A connect whose request the closing listener never answers waits out its timeout
             // (RdmaServer's javadoc): kept short here.
             Cqflux client = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO).loops(1)
                     .connectionConfig(io.cqflux.core.ConnectionConfig.DEFAULT.withTimeout(Duration.ofSeconds(1)))
                     .build()) {
            Region r = server.register(a.allocate(4096, 64), RegionAccess.WRITE_DST);
            for (int round = 0; round < 8; round++) {
                RdmaServer srv = server.bind(new InetSocketAddress(LO, 0), c -> c.onDispose(), r).block(T);
                assertNotNull(srv);
                List<RdmaConnection> got = Collections.synchronizedList(new ArrayList<>());
                CountDownLatch ended = new CountDownLatch(40);
                for (int i = 0; i < 40; i++) {
                    client.connect(srv.address()).doFinally(s -> ended.countDown()).subscribe(got::add, e -> { });
                }
                Thread.sleep(round * 3L);
                srv.disposeNow(T);
                assertTrue(ended.await(15, TimeUnit.SECONDS), "round " + round + ": connects still pending");
                for (RdmaConnection c : got) {
                    String outcome;
                    try {
                        c.write(c.remoteRegion(0), 0, new byte[8]).block(T);
                        outcome = "lives on";
                    } catch (ConnectionException e) {
                        outcome = e.event().toString();
                    } catch (io.cqflux.core.CqfluxException e) {
                        outcome = e.getClass().getSimpleName();
                    }
                    outcomes.merge(outcome, 1, Integer::sum);
                    c.dispose();
                }
                for (RdmaConnection c : got) {
                    c.onDispose().block(T);
                }
            }
        }
        assertEquals(null, outcomes.get(ConnectionEvent.LOST.toString()), "handed-out connections lost: " + outcomes);
    }
}
