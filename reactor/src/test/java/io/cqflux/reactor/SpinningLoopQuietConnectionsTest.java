package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import io.cqflux.epoll.LoopStats;
import io.cqflux.epoll.WaitStrategy;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Spinning loops over several fabric/tcp connections leave an idle connection's queue unpolled
 * once its {@code fi_trywait} said its fd will signal what comes, and watch the fds with one
 * {@code epoll_wait(0)} per round (EventLoop, "Busy rounds and quiet queues"). What must not
 * change: an operation on a connection that sat idle long enough for both of its queues to go
 * quiet (the initiator's, and the target's, which gets no completion for a write or a read and
 * only sees bytes on its socket) completes; so does one after a pause longer than the 1 ms an
 * answer stands; a transfer far larger than a socket buffer completes each way; a message
 * reaches a receiver that has waited on a quiet queue; a peer's close of a quiet connection is
 * noticed. And with BUSY_POLL and a queue per connection the idle spells were skipped
 * ({@code LoopStats.quietSkips}).
 * Real library, real loops, both sides in this process.
 */
class SpinningLoopQuietConnectionsTest {

    private static final int CONNECTIONS = 6;
    private static final int ROUNDS = 4;
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    /** The large transfers' region: 4 MiB written and 4 MiB read, many times a socket buffer. */
    private static final long BIG = 8L << 20;

    /**
     * @param group the completion-queue group size: 2 (the connections share queues, which a
     *     spinning loop reads only when epoll says they are readable) or 1 (a queue per
     *     connection, whose standing fi_trywait answers let a spinning loop skip it while quiet);
     *     the default gives the first 16 connections of a loop, all six here, queues of their own
     */
    @ParameterizedTest
    @CsvSource({"BUSY_POLL, 1", "ADAPTIVE, 1", "BUSY_POLL, 2", "ADAPTIVE, 2"})
    void operationsOnConnectionsThatSatIdle_complete_inBothDirections(String strategy, String group) throws Exception {
        WaitStrategy wait = strategy.equals("BUSY_POLL") ? WaitStrategy.BUSY_POLL : WaitStrategy.adaptive(1000);
        InetAddress lo = InetAddress.getLoopbackAddress();
        try (Arena arena = Arena.ofShared();
             Cqflux a = builder(lo, wait, group).build();
             Cqflux b = builder(lo, wait, group).build()) {
            long slot = 64;
            // Per connection: a slot written b -> a, one read back into b, and 8 bytes written a -> b.
            MemorySegment aSeg = arena.allocate(CONNECTIONS * slot * 3, 64);
            MemorySegment bSeg = arena.allocate(CONNECTIONS * slot * 3, 64);
            Region aMem = a.register(aSeg, RegionAccess.WRITE_DST, RegionAccess.READ_SRC, RegionAccess.WRITE_SRC,
                    RegionAccess.READ_DST);
            Region bMem = b.register(bSeg, RegionAccess.WRITE_DST, RegionAccess.READ_SRC, RegionAccess.WRITE_SRC,
                    RegionAccess.READ_DST);
            MemorySegment aBig = arena.allocate(BIG, 4096);
            MemorySegment bBig = arena.allocate(BIG, 4096);
            Region aBigRegion = a.register(aBig, RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
            Region bBigRegion = b.register(bBig, RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
            RdmaServer server = a.bind(new InetSocketAddress(lo, 0), aMem, aBigRegion).block(TIMEOUT);
            assertNotNull(server);
            CompletableFuture<List<RdmaConnection>> accepted =
                    server.connections().take(CONNECTIONS).collectList().toFuture();
            List<RdmaConnection> bSide = Flux.range(0, CONNECTIONS).concatMap(i -> b.connect(server.address(), bMem))
                    .collectList().block(TIMEOUT);
            assertNotNull(bSide);
            List<RdmaConnection> aSide = accepted.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            // The accepting side's order is its own: pair them by what a write carries, below.
            for (int round = 0; round < ROUNDS; round++) {
                // Idle long enough for every queue on both loops to have turned quiet, and, from
                // the second round on, for their answers to have outlived the 1 ms they stand.
                Thread.sleep(Duration.ofMillis(round == 0 ? 20 : 3)); // a sleep: parkNanos returns at once on a held permit
                for (int i = 0; i < CONNECTIONS; i++) {
                    RdmaConnection c = bSide.get(i);
                    long mark = (long) round << 32 | i;
                    long off = i * slot;
                    // b -> a: a write, then a read of it back, each after the other connections
                    // and this one sat idle.
                    bSeg.set(ValueLayout.JAVA_LONG, off, mark);
                    c.write(c.remoteRegion(0), off, bMem, off, 8).block(TIMEOUT);
                    assertEquals(mark, aSeg.get(ValueLayout.JAVA_LONG, off), strategy + ": write " + mark);
                    c.read(bMem, off + CONNECTIONS * slot, c.remoteRegion(0), off, 8).block(TIMEOUT);
                    assertEquals(mark, bSeg.get(ValueLayout.JAVA_LONG, off + CONNECTIONS * slot),
                            strategy + ": read back " + mark);
                }
                // a -> b on every accepted connection, each to a slot of its own: the accepting
                // loop's queues sat idle through all of the above.
                for (int i = 0; i < CONNECTIONS; i++) {
                    RdmaConnection c = aSide.get(i);
                    long mark = ~((long) round << 32 | i);
                    long off = 2 * CONNECTIONS * slot + i * 8L;
                    aSeg.set(ValueLayout.JAVA_LONG, off, mark);
                    c.write(c.remoteRegion(0), off, aMem, off, 8).block(TIMEOUT);
                    assertEquals(mark, bSeg.get(ValueLayout.JAVA_LONG, off), strategy + ": a -> b on accepted connection " + i);
                }
            }
            if (wait == WaitStrategy.BUSY_POLL && group.equals("1")) {
                // The idle spells above were skipped, on both sides (an adaptive loop sleeps
                // through them instead, and may or may not spin long enough to skip). Only
                // libfabric 1.17's tcp queues can be quiet (TrywaitAnswer), the version the
                // project installs (./cqflux: Debian bookworm's libfabric1).
                assertTrue(quietSkips(a) > 0, "no poll of a quiet queue skipped on the accepting side");
                assertTrue(quietSkips(b) > 0, "no poll of a quiet queue skipped on the connecting side");
            }
            // A transfer far larger than the sockets' buffers, each way, after a pause: the
            // target of the read pushes 4 MiB out through a full socket buffer, progressed by
            // polls its loop makes only while the queue is not quiet or its fd is readable.
            Thread.sleep(Duration.ofMillis(5));
            RdmaConnection big = bSide.get(1);
            long half = BIG / 2;
            for (long k = 0; k < half; k += 8) {
                bBig.set(ValueLayout.JAVA_LONG, k, k * 31 + 7);
                aBig.set(ValueLayout.JAVA_LONG, half + k, k * 17 + 3);
            }
            big.write(big.remoteRegion(1), 0, bBigRegion, 0, half).block(TIMEOUT);
            big.read(bBigRegion, half, big.remoteRegion(1), half, half).block(TIMEOUT);
            for (long k = 0; k < half; k += 8) {
                assertEquals(k * 31 + 7, aBig.get(ValueLayout.JAVA_LONG, k), strategy + ": large write at " + k);
                assertEquals(k * 17 + 3, bBig.get(ValueLayout.JAVA_LONG, half + k), strategy + ": large read at " + k);
            }
            // A receiver that waits on a quiet queue gets the message sent after the pause: every
            // accepted connection receives, one of them is the sender's peer.
            CompletableFuture<byte[]> got = Flux.merge(aSide.stream().map(RdmaConnection::receive).toList())
                    .next().map(Message::data).toFuture();
            Thread.sleep(Duration.ofMillis(5));
            byte[] payload = {1, 2, 3, 4, 5, 6, 7, 8, 9};
            bSide.get(CONNECTIONS - 1).send(payload).block(TIMEOUT);
            assertArrayEquals(payload, got.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS), strategy + ": message");
            // A peer's close of a quiet connection reaches the other side's quiet loop.
            Thread.sleep(Duration.ofMillis(5));
            RdmaConnection first = bSide.get(0);
            first.close();
            first.onDispose().block(TIMEOUT);
            Mono.firstWithSignal(aSide.stream().map(RdmaConnection::onDispose).toList()).block(TIMEOUT);
        }
    }

    private static long quietSkips(Cqflux cq) {
        return cq.loopStats().stream().mapToLong(LoopStats::quietSkips).sum();
    }

    private static Cqflux.Builder builder(InetAddress lo, WaitStrategy wait, String group) {
        return Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(lo).waitStrategy(wait)
                .transportProperty(io.cqflux.core.spi.TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP, group);
    }
}
