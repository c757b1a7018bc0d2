package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import io.cqflux.epoll.WaitStrategy;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What a fabric/tcp connection costs in file descriptors when its loop shares the queues: many
 * connections to one server, one loop per side, both ends in this process. The loop's shared
 * queues are opened with its first connection and closed after its last one, so the count
 * returns to the baseline exactly.
 */
class SharedQueuesFdTest {

    static final int CONNECTIONS = Integer.getInteger("sq.conns", 200);
    /**
     * What one connection may add per side: its TCP socket and its CQ (an epoll fd plus a
     * socketpair, FabricCompletionQueue); its events come through the loop's shared EQ.
     */
    static final int MAX_FDS_PER_SIDE = 4;
    /** What each side's loop opens once, with its first connection: the shared EQ (epoll fd + socketpair). */
    static final int SHARED_FDS_PER_LOOP = 3;
    static final Duration T = Duration.ofSeconds(60);

    /**
     * BLOCKING and BUSY_POLL: a spinning loop finds the connections whose events the shared EQ
     * routed through the loop's askAgain list, a sleeping one through the EQ's fd and touches.
     */
    @ParameterizedTest
    @ValueSource(strings = {"BLOCKING", "BUSY_POLL"})
    void manyConnections_oneLoopEachSide_addAtMostTheirOwnFdsPerSide_andGiveEveryOneBack(String strategy) {
        InetAddress lo = InetAddress.getLoopbackAddress();
        WaitStrategy wait = strategy.equals("BUSY_POLL") ? WaitStrategy.BUSY_POLL : WaitStrategy.BLOCKING;
        try (Arena arena = Arena.ofShared();
             Cqflux server = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(lo).loops(1)
                     .waitStrategy(wait).build();
             Cqflux client = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(lo).loops(1)
                     .waitStrategy(wait).build()) {
            long bytes = (long) CONNECTIONS * Long.BYTES;
            Region exposed = server.register(arena.allocate(bytes, 64), RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
            Region local = client.register(arena.allocate(bytes, 64), RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
            RdmaServer listening = server.bind(new InetSocketAddress(lo, 0), RdmaConnection::onDispose, exposed)
                    .block(T);
            assertNotNull(listening);
            int baseline = FaultRig.openFds();

            List<RdmaConnection> conns = Flux.range(0, CONNECTIONS)
                    .flatMap(i -> client.connect(listening.address()), 16)
                    .collectList().block(T);
            assertNotNull(conns);
            assertEquals(CONNECTIONS, conns.size());
            int open = FaultRig.openFds();
            double perSide = (open - baseline) / 2.0 / CONNECTIONS;

            // Every connection carries work: it writes its own slot and reads it back.
            for (int i = 0; i < CONNECTIONS; i++) {
                local.segment().setAtIndex(ValueLayout.JAVA_LONG, i, 1000L + i);
            }
            Flux.range(0, CONNECTIONS).flatMap(i -> {
                RdmaConnection c = conns.get(i);
                long at = (long) i * Long.BYTES;
                return c.write(c.remoteRegion(0), at, local, at, Long.BYTES)
                        .then(Mono.fromRunnable(() -> local.segment().set(ValueLayout.JAVA_LONG, at, 0L)))
                        .then(c.read(local, at, c.remoteRegion(0), at, Long.BYTES));
            }, 32).then().block(T);
            for (int i = 0; i < CONNECTIONS; i++) {
                assertEquals(1000L + i, exposed.segment().getAtIndex(ValueLayout.JAVA_LONG, i), "server slot " + i);
                assertEquals(1000L + i, local.segment().getAtIndex(ValueLayout.JAVA_LONG, i), "read-back " + i);
            }
            System.out.printf("SharedQueuesFdTest " + strategy + ": %d connections, %d fds before, %d open, %.3f fds per connection"
                    + " per side%n", CONNECTIONS, baseline, open, perSide);
            int bound = 2 * (CONNECTIONS * MAX_FDS_PER_SIDE + SHARED_FDS_PER_LOOP);
            assertTrue(open - baseline <= bound, CONNECTIONS + " connections added " + (open - baseline)
                    + " fds (" + perSide + " per connection per side), over " + bound + ": " + MAX_FDS_PER_SIDE
                    + " per connection per side and " + SHARED_FDS_PER_LOOP + " per loop");

            Flux.fromIterable(conns).flatMap(c -> {
                c.dispose();
                return c.onDispose();
            }).then().block(T);
            // The server's ends follow the clients' (their CLOSED); the last one closes its loop's queues.
            boolean back = FaultRig.await(() -> FaultRig.openFds() == baseline, Duration.ofSeconds(20));
            assertTrue(back, "after closing every connection the process holds " + FaultRig.openFds()
                    + " fds, against " + baseline + " before the first connect");
        }
    }
}
