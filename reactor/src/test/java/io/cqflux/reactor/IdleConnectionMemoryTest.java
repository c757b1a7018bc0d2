package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.TransportOptions;
import io.cqflux.epoll.WaitStrategy;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * What an idle fabric/tcp connection costs in native memory, through the public API, with the
 * loop's completion queues shared in groups of 32: many connections to one server, one loop per
 * side, both ends in this process, each having carried one write.
 *
 * <p>malloc's bytes in use (mallinfo2(3)) count libfabric's and the JVM's alike. What one side
 * of an idle connection holds there, by owner: libfabric's tcp endpoint, about 18.5 KiB of its
 * own whatever the sizes asked for (core/fabric/src/test/c/idle_ep_probe.c); a 32nd of its
 * group's queue, i.e. of the transfer entries the queue's first operation allocates (about
 * 452 KiB, cq_pool_probe.c) and of the queue's ring, which holds every member's entries (about
 * 48.8 bytes an entry, idle_ep_probe.c; malloc counts the ring whole, though its pages become
 * resident only as completions are written); the registration of the connection's control
 * words (about 255 bytes); and the project's arenas (the posting scratch and the control words,
 * under 1 KiB). The bounds are that model plus a margin: far below what a queue per connection
 * costs (its own 452 KiB of transfer entries, over 900 KiB per pair). With the test JVM run with
 * {@code -XX:NativeMemoryTracking=summary} ({@code -Dcqflux.test.argLine=...}), the JVM's share
 * ("Other" is the arenas') is printed and left out, and the margin is small.
 */
class IdleConnectionMemoryTest {

    static final int CONNECTIONS = Integer.getInteger("idlemem.conns", 512);
    static final int GROUP = 32;
    static final Duration T = Duration.ofSeconds(60);
    /** libfabric 1.17 tcp's own malloc per connected endpoint, the most idle_ep_probe.c saw. */
    static final double ENDPOINT_BYTES = 19_050;
    /** A queue's transfer entries, allocated by its first operation (cq_pool_probe.c). */
    static final double TRANSFER_ENTRIES_BYTES = 452 * 1024;
    /** A queue's ring per entry: 399,920 bytes for 8,192 entries (idle_ep_probe.c). */
    static final double RING_BYTES_PER_ENTRY = 399_920 / 8192.0;
    /** The main-queue entries of a member with the default ConnectionConfig (256 + 0). */
    static final int ENTRIES_PER_MEMBER = 256;
    /** The control words' registration (idle_ep_probe.c) and the arenas, at most. */
    static final double REGISTRATION_AND_ARENAS_BYTES = 255 + 1024;
    /**
     * The model above, per connection pair (both ends): 2 x (18.6 + 14.1 + 12.2 + 1.2) KiB, about
     * 92 KiB (what was measured against it: benchmarks/results/2026-11-29T231333Z-idle-memory/).
     */
    static final double MODEL_KIB_PER_PAIR = 2 * (ENDPOINT_BYTES + TRANSFER_ENTRIES_BYTES / GROUP
            + RING_BYTES_PER_ENTRY * ENTRIES_PER_MEMBER + REGISTRATION_AND_ARENAS_BYTES) / 1024;
    /** With NMT: malloc per pair outside the JVM's own, the model plus 10 KiB. */
    static final double MAX_NATIVE_KIB_PER_PAIR = MODEL_KIB_PER_PAIR + 10;
    /**
     * Without NMT: malloc per pair, the JVM's included, the model plus 64 KiB: the JVM's own
     * share moves from run to run (the compilers' memory among it) by tens of KiB per pair.
     */
    static final double MAX_MALLOC_KIB_PER_PAIR = MODEL_KIB_PER_PAIR + 64;

    @Test
    void idleConnectionsInGroupsOf32_holdTheirEndpointsAndAShareOfTheirQueues() {
        InetAddress lo = InetAddress.getLoopbackAddress();
        try (Arena arena = Arena.ofShared();
             Cqflux server = grouped(lo).build();
             Cqflux client = grouped(lo).build()) {
            long bytes = (long) CONNECTIONS * Long.BYTES;
            Region exposed = server.register(arena.allocate(bytes, 64), RegionAccess.WRITE_DST);
            Region local = client.register(arena.allocate(bytes, 64), RegionAccess.WRITE_SRC);
            RdmaServer listening = server.bind(new InetSocketAddress(lo, 0), RdmaConnection::onDispose, exposed)
                    .block(T);
            assertNotNull(listening);
            // A first connection, written over and closed, so that what is paid once per process
            // or loop (classes, the set-up thread, the loop's shared queues' code) is in the baseline.
            RdmaConnection warm = client.connect(listening.address()).block(T);
            assertNotNull(warm);
            warm.write(warm.remoteRegion(0), 0, local, 0, Long.BYTES).block(T);
            warm.dispose();
            warm.onDispose().block(T);
            Stage base = Stage.now();

            List<RdmaConnection> conns = Flux.range(0, CONNECTIONS)
                    .flatMap(i -> client.connect(listening.address()), 16)
                    .collectList().block(T);
            assertNotNull(conns);
            assertEquals(CONNECTIONS, conns.size());
            Stage connected = Stage.now();
            Flux.range(0, CONNECTIONS).flatMap(i -> {
                RdmaConnection c = conns.get(i);
                long at = (long) i * Long.BYTES;
                local.segment().set(ValueLayout.JAVA_LONG, at, 7000L + i);
                return c.write(c.remoteRegion(0), at, local, at, Long.BYTES);
            }, 32).then().block(T);
            for (int i = 0; i < CONNECTIONS; i++) {
                assertEquals(7000L + i, exposed.segment().getAtIndex(ValueLayout.JAVA_LONG, i), "server slot " + i);
            }
            Stage used = Stage.now();
            connected.print("connected", base);
            used.print("after one write each", base);
            double kibPerPair = (used.malloc - base.malloc) / 1024.0 / CONNECTIONS;
            boolean tracked = used.jvmMalloc >= 0 && base.jvmMalloc >= 0;
            double nativePerPair = tracked
                    ? (used.malloc - base.malloc - (used.jvmMalloc - base.jvmMalloc)) / 1024.0 / CONNECTIONS : kibPerPair;
            Flux.fromIterable(conns).flatMap(c -> {
                c.dispose();
                return c.onDispose();
            }).then().block(T);
            double bound = tracked ? MAX_NATIVE_KIB_PER_PAIR : MAX_MALLOC_KIB_PER_PAIR;
            assertTrue(nativePerPair <= bound, CONNECTIONS + " idle connection pairs in groups of " + GROUP + " hold "
                    + nativePerPair + " KiB of malloc each" + (tracked ? " outside the JVM's own" : "") + ", over " + bound);
        }
    }

    private static Cqflux.Builder grouped(InetAddress lo) {
        return Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(lo).loops(1)
                .waitStrategy(WaitStrategy.BLOCKING)
                .transportProperty(TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP, Integer.toString(GROUP));
    }

    /**
     * One reading, after the heap settled: malloc, the JVM's tracked malloc, its "Other" (the
     * arenas) in bytes and blocks (-1 without NMT), the heap.
     */
    private record Stage(long malloc, long jvmMalloc, long arenas, long arenaBlocks, long heap) {

        private static final Pattern TOTAL = Pattern.compile("malloc: (\\d+)KB");
        private static final Pattern OTHER = Pattern.compile("\\(malloc=(\\d+)KB tag=Other #(\\d+)");

        static Stage now() {
            for (int i = 0; i < 3; i++) {
                System.gc();
            }
            long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
            String nmt = nmt();
            Matcher other = OTHER.matcher(nmt);
            boolean tracked = other.find();
            return new Stage(SharedQueuesFdTest.mallocBytes(), kib(TOTAL.matcher(nmt)),
                    tracked ? Long.parseLong(other.group(1)) * 1024 : -1, tracked ? Long.parseLong(other.group(2)) : -1,
                    heap);
        }

        private static long kib(Matcher m) {
            return m.find() ? Long.parseLong(m.group(1)) * 1024 : -1;
        }

        /** Native Memory Tracking's summary when the JVM tracks, else "". */
        private static String nmt() {
            try {
                return String.valueOf(ManagementFactory.getPlatformMBeanServer().invoke(
                        new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"), "vmNativeMemory",
                        new Object[] {new String[] {"summary"}}, new String[] {String[].class.getName()}));
            } catch (Exception e) {
                return "";
            }
        }

        void print(String what, Stage base) {
            double n = CONNECTIONS;
            String jvm = jvmMalloc < 0 ? " (the JVM's share: run with -XX:NativeMemoryTracking=summary)"
                    : String.format(" of which the JVM's %.1f KiB, the arenas' %.0f bytes in %.1f blocks",
                    (jvmMalloc - base.jvmMalloc) / 1024.0 / n, (arenas - base.arenas) / n,
                    (arenaBlocks - base.arenaBlocks) / n);
            String outside = jvmMalloc < 0 ? "" : String.format(" (%.1f KiB outside the JVM's own)",
                    (malloc - base.malloc - (jvmMalloc - base.jvmMalloc)) / 1024.0 / n);
            System.out.printf("IdleConnectionMemoryTest %s: %d connections in groups of %d, per connection pair: malloc"
                            + " %.1f KiB%s%s; heap %.1f KiB%n", what, CONNECTIONS, GROUP,
                    (malloc - base.malloc) / 1024.0 / n, jvm, outside, (heap - base.heap) / 1024.0 / n);
        }
    }
}
