package io.cqflux.reactor.internal.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import io.cqflux.epoll.WaitStrategy;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import io.cqflux.reactor.internal.resources.ApiAccess;
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
 * A burst of connects larger than what one readiness call of the listener takes
 * (ServerCore.ACCEPTS_PER_CALL): the requests left queued after a call are taken in later turns
 * (the listener stays ready while its event queue holds requests), on a sleeping loop and on
 * spinning ones, so none waits for its connect timeout.
 */
class AcceptBurstTest {

    /** Many requests queued at once, and more than ten calls' share whatever the cap. */
    private static final int BURST = Math.max(41, 10 * ServerCore.ACCEPTS_PER_CALL + 1);

    @ParameterizedTest
    @ValueSource(strings = {"BLOCKING", "BUSY_POLL", "ADAPTIVE"})
    void burstBeyondOneCallsShare_everyConnectEstablishes(String strategy) throws Exception {
        WaitStrategy w = switch (strategy) {
            case "BLOCKING" -> WaitStrategy.BLOCKING;
            case "BUSY_POLL" -> WaitStrategy.BUSY_POLL;
            default -> WaitStrategy.adaptive(1000);
        };
        InetAddress lo = InetAddress.getLoopbackAddress();
        try (Arena arena = Arena.ofShared();
             Cqflux server = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(lo).waitStrategy(w)
                     .loops(1).build();
             Cqflux client = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(lo)
                     .loops(1).build()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            RdmaServer s = server.bind(new InetSocketAddress(lo, 0), exposed).block(Duration.ofSeconds(10));
            assertNotNull(s);
            CompletableFuture<List<RdmaConnection>> accepted = s.connections().take(BURST).collectList().toFuture();
            // All in flight at once: the server's listener finds many requests queued per wake-up.
            List<RdmaConnection> connected = Flux.range(0, BURST)
                    .flatMap(i -> client.connect(s.address()), BURST)
                    .collectList().block(Duration.ofSeconds(60));
            assertNotNull(connected);
            assertEquals(BURST, connected.size());
            List<RdmaConnection> served = accepted.get(30, TimeUnit.SECONDS);
            assertEquals(BURST, served.size());
            assertEquals(BURST, s.stats().connections());
            assertTrue(connected.stream().allMatch(c -> c.remoteRegion(0) != null));
            long capped = ApiAccess.get().core(s).callsAtTheCap();
            System.out.printf("FACT %s: %d connects in one burst, %d readiness calls stopped at %d accepts%n",
                    strategy, BURST, capped, ServerCore.ACCEPTS_PER_CALL);
            if (w == WaitStrategy.BLOCKING) {
                // A sleeping loop wakes to a queue of requests: the cap must have cut a call short,
                // or this test proves nothing about the requests left queued after one.
                assertTrue(capped > 0, "no readiness call reached the cap of " + ServerCore.ACCEPTS_PER_CALL);
            }
            connected.forEach(RdmaConnection::dispose);
        }
    }
}
