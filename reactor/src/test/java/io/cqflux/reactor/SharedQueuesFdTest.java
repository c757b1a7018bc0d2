package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.TransportOptions;
import io.cqflux.epoll.WaitStrategy;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
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
     * What one connection may add per side with a CQ of its own (K = 1): its TCP socket and its CQ
     * (an epoll fd plus a socketpair, FabricCompletionQueue); its events come through the loop's
     * shared EQ.
     */
    static final int MAX_FDS_PER_SIDE = 4;
    /** What one connection may add per side by default: its socket and a share of its group's CQ. */
    static final int MAX_DEFAULT_FDS_PER_SIDE = 2;
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
            int bound = 2 * (CONNECTIONS * MAX_DEFAULT_FDS_PER_SIDE + SHARED_FDS_PER_LOOP);
            assertTrue(open - baseline <= bound, CONNECTIONS + " connections added " + (open - baseline)
                    + " fds (" + perSide + " per connection per side), over " + bound + ": "
                    + MAX_DEFAULT_FDS_PER_SIDE + " per connection per side and " + SHARED_FDS_PER_LOOP + " per loop");

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

    /** Connections per completion queue in the grouped case: this machine's 20,000 fds then hold 10,000 connections. */
    static final int GROUP = 32;

    /**
     * With {@link TransportOptions#FABRIC_COMPLETION_QUEUE_GROUP} a loop's connections share a
     * completion queue in groups: per side, a connection adds its socket and a group's share of
     * the queue's wait object (3 fds per group), and the provider's transfer entries, allocated
     * per queue by its first operation (core/fabric/src/test/c/cq_pool_probe.c), are paid once
     * per group. Every connection here carried traffic, so each queue has its entries. K = 1 (a
     * queue per connection) is measured beside it; the bound is checked for K.
     * BUSY_POLL: a spinning loop finds the group's members through the group's hub alone (no
     * member is in its table of queues).
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"1, BLOCKING", GROUP + ", BLOCKING", GROUP + ", BUSY_POLL"})
    void connectionsThatCarriedTraffic_inCompletionQueueGroups_costASocketAndAShareOfTheQueue(int k, String strategy) {
        InetAddress lo = InetAddress.getLoopbackAddress();
        WaitStrategy wait = strategy.equals("BUSY_POLL") ? WaitStrategy.BUSY_POLL : WaitStrategy.BLOCKING;
        try (Arena arena = Arena.ofShared();
             Cqflux server = grouped(lo, k, wait).build();
             Cqflux client = grouped(lo, k, wait).build()) {
            long bytes = (long) CONNECTIONS * Long.BYTES;
            Region exposed = server.register(arena.allocate(bytes, 64), RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
            Region local = client.register(arena.allocate(bytes, 64), RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
            RdmaServer listening = server.bind(new InetSocketAddress(lo, 0), RdmaConnection::onDispose, exposed)
                    .block(T);
            assertNotNull(listening);
            int baseline = FaultRig.openFds();
            long mallocBefore = mallocBytes();
            List<RdmaConnection> conns = Flux.range(0, CONNECTIONS)
                    .flatMap(i -> client.connect(listening.address()), 16)
                    .collectList().block(T);
            assertNotNull(conns);
            Flux.range(0, CONNECTIONS).flatMap(i -> {
                RdmaConnection c = conns.get(i);
                long at = (long) i * Long.BYTES;
                local.segment().set(ValueLayout.JAVA_LONG, at, 5000L + i);
                return c.write(c.remoteRegion(0), at, local, at, Long.BYTES)
                        .then(c.read(local, at, c.remoteRegion(0), at, Long.BYTES));
            }, 32).then().block(T);
            for (int i = 0; i < CONNECTIONS; i++) {
                assertEquals(5000L + i, exposed.segment().getAtIndex(ValueLayout.JAVA_LONG, i), "server slot " + i);
            }
            int open = FaultRig.openFds();
            long malloc = mallocBytes() - mallocBefore;
            double perSide = (open - baseline) / 2.0 / CONNECTIONS;
            double kibPerPair = malloc / 1024.0 / CONNECTIONS;
            System.out.printf("SharedQueuesFdTest group %d " + strategy + ": %d connections that carried traffic, %.3f fds per connection"
                    + " per side, %.1f KiB malloc per connection pair (both ends in this process)%n", k, CONNECTIONS,
                    perSide, kibPerPair);
            int groups = (CONNECTIONS + k - 1) / k;
            int bound = k == 1 ? 2 * (CONNECTIONS * MAX_FDS_PER_SIDE + SHARED_FDS_PER_LOOP)
                    : 2 * (CONNECTIONS + groups * SHARED_FDS_PER_LOOP + SHARED_FDS_PER_LOOP);
            assertTrue(open - baseline <= bound, CONNECTIONS + " connections in groups of " + k + " added "
                    + (open - baseline) + " fds, over " + bound);
            if (k > 1) {
                // A queue's transfer entries (about 452 KiB on tcp 1.17) per group, not per connection:
                // a pair of ends with a queue each would hold over 900 KiB.
                assertTrue(kibPerPair < 300, kibPerPair + " KiB of malloc per connection pair in groups of " + k);
            }
            Flux.fromIterable(conns).flatMap(c -> {
                c.dispose();
                return c.onDispose();
            }).then().block(T);
            boolean back = FaultRig.await(() -> FaultRig.openFds() == baseline, Duration.ofSeconds(20));
            assertTrue(back, "after closing every connection the process holds " + FaultRig.openFds()
                    + " fds, against " + baseline + " before the first connect: the last member closes its group");
        }
    }

    private static Cqflux.Builder grouped(InetAddress lo, int k, WaitStrategy wait) {
        Cqflux.Builder b = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(lo).loops(1)
                .waitStrategy(wait);
        return b.transportProperty(TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP, Integer.toString(k));
    }

    /** {@code struct mallinfo2}: ten {@code size_t} fields, in the order of {@code malloc.h}. */
    private static final StructLayout MALLINFO2 = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("arena"), ValueLayout.JAVA_LONG.withName("ordblks"),
            ValueLayout.JAVA_LONG.withName("smblks"), ValueLayout.JAVA_LONG.withName("hblks"),
            ValueLayout.JAVA_LONG.withName("hblkhd"), ValueLayout.JAVA_LONG.withName("usmblks"),
            ValueLayout.JAVA_LONG.withName("fsmblks"), ValueLayout.JAVA_LONG.withName("uordblks"),
            ValueLayout.JAVA_LONG.withName("fordblks"), ValueLayout.JAVA_LONG.withName("keepcost"));

    /** {@return malloc's bytes in use over every arena: {@code mallinfo2(3)} uordblks + hblkhd} */
    static long mallocBytes() {
        try (Arena a = Arena.ofConfined()) {
            MethodHandle h = Linker.nativeLinker().downcallHandle(
                    Linker.nativeLinker().defaultLookup().find("mallinfo2").orElseThrow(), FunctionDescriptor.of(MALLINFO2));
            MemorySegment m = (MemorySegment) h.invokeExact((SegmentAllocator) a);
            return m.get(ValueLayout.JAVA_LONG, MALLINFO2.byteOffset(MemoryLayout.PathElement.groupElement("uordblks")))
                    + m.get(ValueLayout.JAVA_LONG, MALLINFO2.byteOffset(MemoryLayout.PathElement.groupElement("hblkhd")));
        } catch (Throwable t) {
            throw new IllegalStateException("mallinfo2 failed", t);
        }
    }
}
