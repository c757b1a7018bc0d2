package io.cqflux.test.network;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One hundred connections on fabric/tcp cut in short partition/heal cycles, {@link #PER_CYCLE} at a
 * time: each carries a durable write, is cut by a partition under a pending write (which fails
 * {@code ConnectionException(LOST)} by the operation deadline) and is replaced after the heal:
 * the test process ends with as many open file descriptors as it started with (counted in
 * {@code /proc/self/fd}) and without native-heap growth beyond a coarse bound (glibc's
 * mallinfo2(3): bytes in use from malloc, which libfabric, cqflux's arenas and the JVM itself use;
 * see {@link #NATIVE_GROWTH_BOUND} for what it can and cannot see).
 */
class PartitionCycleLeakTest {
    static final Duration T = Duration.ofSeconds(10);
    static final Duration OP_TIMEOUT = Duration.ofMillis(200);
    static final Duration SLACK = Duration.ofMillis(1500);
    /** Warm-up cycles before the counts: the first ones load and compile the paths. */
    static final int WARM_UP = 5;
    static final int CYCLES = 25;
    /**
     * Connections cut in each cycle, together: {@link #CYCLES} x this = 100 connections through the
     * fault, with one deadline's wait (most of a cycle) per cycle rather than per connection.
     */
    static final int PER_CYCLE = 4;
    /**
     * Native bytes in use that the 100 connections of the cycles may add. The reading moves by
     * several MB either way between runs without any cycle (the JVM's own mallocs: compiler arenas,
     * GC and thread structures), more than the about 40 KB an open connection holds times 100; so
     * each half of the run may add half of this bound, and only growth in both halves fails: that
     * catches a leak of about 170 KB or more per connection (8 MiB over the first half's 48: a
     * receive-buffer pool, a completion array per connection) and not a one-off growth in one
     * half; the file-descriptor count, exact, catches a leaked endpoint, queue or connection (each
     * holds descriptors).
     */
    static final long NATIVE_GROWTH_BOUND = 16L << 20;

    /** {@code struct mallinfo2}: ten {@code size_t} fields, mallinfo(3). */
    private static final MemoryLayout MALLINFO2 = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("arena"), ValueLayout.JAVA_LONG.withName("ordblks"),
            ValueLayout.JAVA_LONG.withName("smblks"), ValueLayout.JAVA_LONG.withName("hblks"),
            ValueLayout.JAVA_LONG.withName("hblkhd"), ValueLayout.JAVA_LONG.withName("usmblks"),
            ValueLayout.JAVA_LONG.withName("fsmblks"), ValueLayout.JAVA_LONG.withName("uordblks"),
            ValueLayout.JAVA_LONG.withName("fordblks"), ValueLayout.JAVA_LONG.withName("keepcost"));
    private static final MethodHandle MALLINFO2_CALL = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("mallinfo2")
                    .orElseThrow(() -> new AssertionError("no mallinfo2 in the C library (glibc >= 2.33 has it)")),
            FunctionDescriptor.of(MALLINFO2));

    NetworkRig rig;
    NetPeer.Handle peer;
    Arena arena;
    Cqflux client;

    @AfterEach
    void tearDown() {
        try {
            if (client != null) {
                client.dispose();
                client.onDispose().toFuture().completeOnTimeout(null, 20, TimeUnit.SECONDS).join();
            }
            if (arena != null) {
                arena.close();
            }
        } finally {
            if (rig != null) {
                rig.close();
            }
        }
    }

    /** {@return bytes in use from malloc: uordblks (arenas) plus hblkhd (mmapped chunks)} */
    static long nativeInUse() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment m = (MemorySegment) MALLINFO2_CALL.invokeExact((SegmentAllocator) a);
            return m.get(ValueLayout.JAVA_LONG, 7 * 8) + m.get(ValueLayout.JAVA_LONG, 4 * 8);
        } catch (Throwable e) {
            throw new AssertionError("mallinfo2 failed", e);
        }
    }

    /** {@return the least of five readings 100 ms apart: the JVM's own transient mallocs (the JIT's arenas) are noise} */
    static long settledNativeInUse() {
        long least = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            least = Math.min(least, nativeInUse());
            PartitionTest.sleep(Duration.ofMillis(100));
        }
        return least;
    }

    static long openFds() {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Per step, summed over the cycles: connect, healthy writes, partition, writes to LOST, heal. */
    final long[] stepNanos = new long[5];

    /**
     * One cycle: {@link #PER_CYCLE} connections, a durable write on each, a partition under one
     * more write on each (they fail LOST by the deadline, together), the heal.
     *
     * @return how many of the cycle's healthy writes completed
     */
    private int cycle(Region local) {
        long s0 = System.nanoTime();
        List<RdmaConnection> conns = new ArrayList<>();
        for (int i = 0; i < PER_CYCLE; i++) {
            conns.add(PartitionTest.connectPatiently(client, peer));
        }
        long s1 = System.nanoTime();
        List<RdmaConnection> healthy = new ArrayList<>();
        for (RdmaConnection conn : conns) {
            try {
                conn.durableWrite(conn.remoteRegion(0), 0, local, 0, Records.SIZE).block(T);
                healthy.add(conn);
            } catch (ConnectionException e) {
                // a deadline this short may fire on a loaded machine: still a connection made and ended
                assertEquals(ConnectionEvent.LOST, e.event(), e.toString());
            }
        }
        long s2 = System.nanoTime();
        rig.partition();
        long s3 = System.nanoTime();
        try {
            // The writes into the partition run at once, so that the cycle waits for one deadline.
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (RdmaConnection conn : conns) {
                writes.add(conn.durableWrite(conn.remoteRegion(0), Records.SIZE, local, Records.SIZE, Records.SIZE)
                        .toFuture());
            }
            for (int i = 0; i < conns.size(); i++) {
                Throwable error = null;
                try {
                    writes.get(i).get(OP_TIMEOUT.plus(SLACK).toMillis(), TimeUnit.MILLISECONDS);
                } catch (ExecutionException e) {
                    error = e.getCause();
                } catch (TimeoutException e) {
                    error = e;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError("interrupted waiting for a write into the partition", e);
                }
                if (healthy.contains(conns.get(i))) {
                    ConnectionException ce = assertInstanceOf(ConnectionException.class, error,
                            "a write across the partition did not fail with a ConnectionException: " + error);
                    assertEquals(ConnectionEvent.LOST, ce.event(), ce.toString());
                }
            }
            assertTrue(PartitionTest.await(() -> conns.stream().allMatch(RdmaConnection::isDisposed), SLACK),
                    "a lost connection is not disposed");
        } finally {
            long s4 = System.nanoTime();
            rig.heal();
            long s5 = System.nanoTime();
            stepNanos[0] += s1 - s0;
            stepNanos[1] += s2 - s1;
            stepNanos[2] += s3 - s2;
            stepNanos[3] += s4 - s3;
            stepNanos[4] += s5 - s4;
        }
        return healthy.size();
    }

    @Test
    void hundredConnectionsCutInPartitionHealCycles_leaveNoFileDescriptor_andNoNativeGrowth() {
        rig = NetworkRig.create();
        peer = rig.startPeer(4 * Records.SIZE);
        client = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(rig.rootAddress)
                .operationTimeout(OP_TIMEOUT).connectionConfig(ConnectionConfig.DEFAULT.withTimeout(Duration.ofSeconds(2)))
                .shutdownTimeout(Duration.ofSeconds(2)).build();
        arena = Arena.ofShared();
        MemorySegment mem = arena.allocate(4 * Records.SIZE, 64);
        new Records(1, 4).fill(mem);
        Region local = client.register(mem, RegionAccess.WRITE_SRC);
        PartitionTest.connectPatiently(client, peer).dispose();
        for (int i = 0; i < WARM_UP; i++) {
            cycle(local);
        }
        // What one connection costs, to judge the growth by: ten held open at once.
        long before = settledNativeInUse();
        List<RdmaConnection> held = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            held.add(client.connect(peer.address()).block(T));
        }
        long perConnection = (settledNativeInUse() - before) / 10;
        held.forEach(RdmaConnection::dispose);
        System.gc();
        PartitionTest.sleep(Duration.ofMillis(300));
        long fd0 = openFds();
        long mem0 = settledNativeInUse();
        long t0 = System.nanoTime();
        int healthy = 0;
        long memMid = 0;
        for (int i = 0; i < CYCLES; i++) {
            healthy += cycle(local);
            if (i == CYCLES / 2 - 1) {
                memMid = settledNativeInUse();
            }
        }
        long took = System.nanoTime() - t0;
        System.out.printf("FACT per cycle of %d connections (ms, mean): connect %.1f, healthy writes %.1f, partition %.1f,"
                + " writes to LOST %.1f, heal %.1f%n", PER_CYCLE, stepNanos[0] / 1e6 / (CYCLES + WARM_UP), stepNanos[1] / 1e6 / (CYCLES + WARM_UP),
                stepNanos[2] / 1e6 / (CYCLES + WARM_UP), stepNanos[3] / 1e6 / (CYCLES + WARM_UP),
                stepNanos[4] / 1e6 / (CYCLES + WARM_UP));
        // Native closes are deferred to loop tasks: give the last cycle's a moment.
        PartitionTest.await(() -> openFds() <= fd0, Duration.ofSeconds(5));
        System.gc();
        PartitionTest.sleep(Duration.ofMillis(300));
        long fd1 = openFds();
        long mem1 = settledNativeInUse();
        System.out.printf("FACT %d partition/heal cycles of %d connections (operationTimeout %d ms) in %.1f s, %d with"
                        + " the healthy write completing: file descriptors %d -> %d, native in use (mallinfo2) %d -> %d bytes (%+d); one open connection"
                        + " holds %d bytes%n", CYCLES, PER_CYCLE, OP_TIMEOUT.toMillis(), took / 1e9, healthy, fd0, fd1, mem0, mem1,
                mem1 - mem0, perConnection);
        assertTrue(fd1 <= fd0, "file descriptors grew over " + CYCLES + " cycles of " + PER_CYCLE + " connections: "
                + fd0 + " -> " + fd1);
        // mallinfo2 counts the whole process: a one-off growth elsewhere (the JIT's arenas, a
        // malloc arena for a new thread of another test's leftovers) lands in one half of the
        // run; a leak per connection grows both halves alike. So each half is held to half the bound.
        long first = memMid - mem0;
        long second = mem1 - memMid;
        System.out.printf("FACT native growth by half: %+d bytes over the first %d cycles, %+d over the last %d%n",
                first, CYCLES / 2, second, CYCLES - CYCLES / 2);
        assertTrue(Math.min(first, second) < NATIVE_GROWTH_BOUND / 2, "native memory in use grew in both halves of "
                + CYCLES + " cycles (" + first + " and " + second + " bytes), each beyond " + NATIVE_GROWTH_BOUND / 2);
        assertTrue(healthy >= CYCLES * PER_CYCLE / 2,
                "most healthy writes failed: the cycles did not test working connections");
    }
}
