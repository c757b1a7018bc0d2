package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Many clients per server on fabric/tcp: {@value #CONNECTIONS} connections to one server, each
 * carrying a write and a read of its own 8 bytes, all closed, {@value #ROUNDS} times; after each
 * round both processes are back at the fds they had before it, and the last round leaves the
 * server's resident memory where the one before left it. The server runs in its own JVM
 * ({@link ManyClientsServer}): each fabric/tcp connection holds several fds per side, and both
 * sides of this many would not fit one process's fd limit.
 */
class ManyClientsTest {
    private static final int CONNECTIONS = 2_000;
    private static final int CONCURRENCY = 64;
    private static final long REGION = 1 << 16;
    /** Where in the client's region the reads land (the writes' sources are below it). */
    private static final long READ_BACK = REGION / 2;
    /** Rounds of {@value #CONNECTIONS} connections; the last one is the one measured for growth. */
    private static final int ROUNDS = 3;
    /** Native memory the last round may add to the server's resident size: 2 KiB per connection. */
    private static final long GROWTH_BOUND_KIB = CONNECTIONS * 2L;
    private static final Duration T = Duration.ofSeconds(60);

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void twoThousandClients_eachWritesAndReads_thenAllClose_leaveNoFdsAndNoMemoryBehind() {
        try (ManyClientsServer.Handle server = ManyClientsServer.start(REGION);
             Arena arena = Arena.ofShared();
             Cqflux client = Cqflux.builder().transport(TransportChoice.FABRIC)
                     .localAddress(InetAddress.getLoopbackAddress()).build()) {
            MemorySegment mem = arena.allocate(REGION, 4096);
            Region local = client.register(mem, RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
            // One connection first: what the first connection opens once per instance (the
            // transport's fabric and domain) is not what a connection costs.
            round(client, server, local, mem, 1, 0);
            awaitServerConnections(server, 0);
            long clientFds = ManyClientsServer.openFds();
            long[] before = server.stat();

            long[] after = null;
            long[] settled = null;
            for (int round = 1; round <= ROUNDS; round++) {
                round(client, server, local, mem, CONNECTIONS, round);
                awaitServerConnections(server, 0);
                after = awaitServerFds(server, before[0]);
                assertEquals(clientFds, awaitFds(ManyClientsServer::openFds, clientFds),
                        "client fds after round " + round + " of " + CONNECTIONS + " connections was closed");
                assertEquals(before[0], after[0], "server fds after round " + round + " was closed");
                assertEquals(1L + (long) round * CONNECTIONS, after[3], "connections the server accepted");
                System.out.printf("after round %d: client %d fds (before: %d); server %d fds (before: %d), rss %d KiB%n",
                        round, ManyClientsServer.openFds(), clientFds, after[0], before[0], after[1]);
                if (round == ROUNDS - 1) {
                    settled = after;
                }
            }
            // The first rounds grow the allocator's arenas to the peak (about 8 MiB more on the
            // second); from then on a round that leaks nothing adds nothing.
            long growth = after[1] - settled[1];
            assertTrue(growth < GROWTH_BOUND_KIB, "the server's resident size grew by " + growth
                    + " KiB over round " + ROUNDS + " of " + CONNECTIONS + " connections (bound " + GROWTH_BOUND_KIB
                    + " KiB): " + settled[1] + " -> " + after[1] + " KiB");
        }
    }

    /**
     * Opens {@code n} connections ({@value #CONCURRENCY} connects at a time); each writes a value of
     * its own to its own 8 bytes of the server's region and reads them back; checks the server's
     * count and memory with all of them open; closes them all and waits for their release.
     */
    private static void round(Cqflux client, ManyClientsServer.Handle server, Region local, MemorySegment mem, int n,
                              int round) {
        for (int i = 0; i < n; i++) {
            mem.set(ValueLayout.JAVA_LONG, i * 8L, value(round, i));
            mem.set(ValueLayout.JAVA_LONG, READ_BACK + i * 8L, 0);
        }
        List<RdmaConnection> open = Collections.synchronizedList(new ArrayList<>());
        try {
            Flux.range(0, n)
                    .flatMap(i -> client.connect(server.address())
                            .doOnNext(open::add)
                            .flatMap(c -> c.write(c.remoteRegion(0), i * 8L, local, i * 8L, 8)
                                    .then(c.read(local, READ_BACK + i * 8L, c.remoteRegion(0), i * 8L, 8))),
                            CONCURRENCY)
                    .then()
                    .block(T);
            assertEquals(n, open.size(), "connections established in round " + round);
            for (int i = 0; i < n; i++) {
                assertEquals(value(round, i), mem.get(ValueLayout.JAVA_LONG, READ_BACK + i * 8L),
                        "connection " + i + " of round " + round + " read back what it wrote");
            }
            assertEquals(value(round, n - 1), server.longAt((n - 1) * 8L), "the server's memory after round " + round);
            long[] peak = server.stat();
            assertEquals(n, peak[2], "connections the server holds open in round " + round);
            // The figures behind the fd budget, in the test's output: fds per connection per side.
            System.out.printf("round %d: %d connections open: client %d fds, server %d fds, server rss %d KiB%n",
                    round, n, ManyClientsServer.openFds(), peak[0], peak[1]);
        } finally {
            for (RdmaConnection c : open) {
                c.dispose();
            }
            Flux.fromIterable(new ArrayList<>(open)).flatMap(RdmaConnection::onDispose).then().block(T);
        }
    }

    private static long value(int round, int i) {
        return ((long) round << 32) | (i + 1);
    }

    private static void awaitServerConnections(ManyClientsServer.Handle server, long expected) {
        long end = System.nanoTime() + T.toNanos();
        long open;
        while ((open = server.stat()[2]) != expected && System.nanoTime() < end) {
            sleep();
        }
        assertEquals(expected, open, "connections the server still holds");
    }

    /** The server releases a connection shortly after the client: poll its fds until they are back. */
    private static long[] awaitServerFds(ManyClientsServer.Handle server, long expected) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        long[] s;
        while ((s = server.stat())[0] != expected && System.nanoTime() < end) {
            sleep();
        }
        return s;
    }

    private static long awaitFds(LongSupplier fds, long expected) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        long n;
        while ((n = fds.getAsLong()) != expected && System.nanoTime() < end) {
            sleep();
        }
        return n;
    }

    private static void sleep() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
