package io.cqflux.test.network;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * {@link PartitionCycleLeakTest}'s check on librpma over Soft-RoCE: partition/heal cycles, each
 * cutting {@link #PER_CYCLE} fresh connections under a pending durable write (the client's side
 * ends {@code LOST} by the operation deadline, the server's, which only receives one-sided writes,
 * by its keep-alive), leave the process with as many open file descriptors as before and without
 * native-heap growth beyond the coarse bound of the host's check. Client and server are both in
 * this JVM (an {@link RxePair}), so both sides' releases are counted.
 *
 * <p>Why fewer cycles than the host's 100 of one connection each: under TCG one netem change (a
 * {@code tc} process) takes up to seconds and the server's side needs the keep-alive's bound to
 * end, so a cycle costs seconds whatever it carries, and a connect only a fraction of a second;
 * {@link #CYCLES} cycles of {@link #PER_CYCLE} connections end 64 connections on each side (128
 * ends, more than the host's 100) with a twenty-fifth of its partitions. The file-descriptor count
 * is exact, so one leaked descriptor per connection shows after any number of cycles; the native
 * bound per half is the host's, over 64 connection ends per half against its 50.
 *
 * <p>{@link Isolated}: the counts are the whole process's, and the lane runs its other classes
 * concurrently; beside them their own descriptors and allocations would be counted.
 */
@Tag("rpma")
@Isolated
class RpmaPartitionCycleLeakTest extends RxeRigTest {
    static final Duration OP_TIMEOUT = Duration.ofSeconds(1);
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(3);
    /** The server side's keep-alive, as in {@link RpmaKeepAliveTest} (TCG's late timers). */
    static final Duration INTERVAL = RpmaKeepAliveTest.INTERVAL;
    static final int MISSES = RpmaKeepAliveTest.MISSES;
    static final Duration SLACK = RxePartitionContract.SLACK;
    /** One warm-up cycle of this many connections: the first cycle loads and compiles the paths. */
    static final int WARM_UP_CONNECTIONS = 4;
    static final int CYCLES = 4;
    static final int PER_CYCLE = 16;
    /** Connections held open at once to measure what one costs. */
    static final int HELD = 8;
    static final long NATIVE_GROWTH_BOUND = PartitionCycleLeakTest.NATIVE_GROWTH_BOUND;

    RxePair pair;
    final long[] stepNanos = new long[5];
    final AtomicInteger healthy = new AtomicInteger();
    final AtomicInteger cut = new AtomicInteger();
    final ConcurrentHashMap<String, Integer> outcomes = new ConcurrentHashMap<>();

    @AfterEach
    void tearDown() {
        if (pair != null) {
            pair.close();
        }
    }

    /**
     * One cycle: {@code connections} fresh connections, a durable write on each, a partition under one
     * more write on each (the client's sides end LOST by the deadline, the server's by the
     * keep-alive), the heal.
     */
    private void cycle(Region local, int connections) {
        long s0 = System.nanoTime();
        List<RdmaConnection> clients = new ArrayList<>();
        List<RdmaConnection> servers = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            clients.add(pair.connectPatiently());
            servers.add(pair.accepted());
        }
        long s1 = System.nanoTime();
        for (RdmaConnection c : clients) {
            try {
                c.durableWrite(c.remoteRegion(0), 0, local, 0, Records.SIZE).block(RxePair.T);
                healthy.incrementAndGet();
            } catch (ConnectionException e) {
                // a deadline of 1 s may fire under TCG on a loaded host: still a connection made and ended
                assertEquals(ConnectionEvent.LOST, e.event(), e.toString());
            }
        }
        long s2 = System.nanoTime();
        rig.partition();
        long s3 = System.nanoTime();
        try {
            AtomicInteger ended = new AtomicInteger();
            for (RdmaConnection c : clients) {
                c.durableWrite(c.remoteRegion(0), Records.SIZE, local, Records.SIZE, Records.SIZE)
                        .subscribe(v -> {
                            outcomes.merge("ok", 1, Integer::sum);
                            ended.incrementAndGet();
                        }, e -> {
                            outcomes.merge(Records.outcome(e), 1, Integer::sum);
                            ended.incrementAndGet();
                        });
            }
            Duration keepAliveBound = INTERVAL.multipliedBy(2L * MISSES);
            assertTrue(PartitionTest.await(() -> ended.get() == connections
                            && clients.stream().allMatch(RdmaConnection::isDisposed)
                            && servers.stream().allMatch(RdmaConnection::isDisposed),
                    keepAliveBound.plus(OP_TIMEOUT).plus(SLACK)), "the partition did not end every connection within "
                    + keepAliveBound.plus(OP_TIMEOUT).plus(SLACK) + ": writes ended " + ended + " of " + connections
                    + ", client sides disposed " + clients.stream().filter(RdmaConnection::isDisposed).count()
                    + ", server sides " + servers.stream().filter(RdmaConnection::isDisposed).count());
            cut.addAndGet(connections);
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
    }

    @Test
    void partitionHealCycles_endingConnectionsOnBothSides_leaveNoFileDescriptor_andNoNativeGrowth() {
        pair = new RxePair(rig, 4 * Records.SIZE, b -> b.keepAlive(INTERVAL, MISSES),
                b -> b.operationTimeout(OP_TIMEOUT).connectionConfig(ConnectionConfig.DEFAULT.withTimeout(CONNECT_TIMEOUT)));
        MemorySegment mem = pair.arena.allocate(4 * Records.SIZE, 64);
        new Records(1, 4).fill(mem);
        Region local = pair.client.register(mem, RegionAccess.WRITE_SRC);
        long w0 = System.nanoTime();
        cycle(local, WARM_UP_CONNECTIONS);
        long warmUp = System.nanoTime() - w0;
        Arrays.fill(stepNanos, 0);
        // What one connection costs (both its sides), to judge the growth by: HELD open at once.
        long before = PartitionCycleLeakTest.settledNativeInUse();
        long fdBefore = PartitionCycleLeakTest.openFds();
        List<RdmaConnection> held = new ArrayList<>();
        for (int i = 0; i < HELD; i++) {
            held.add(pair.connectPatiently());
            held.add(pair.accepted());
        }
        long perConnection = (PartitionCycleLeakTest.settledNativeInUse() - before) / HELD;
        long fdsPerConnection = (PartitionCycleLeakTest.openFds() - fdBefore) / HELD;
        held.forEach(RdmaConnection::dispose);
        PartitionTest.await(() -> held.stream().allMatch(RdmaConnection::isDisposed), RxePair.T);
        PartitionTest.await(() -> PartitionCycleLeakTest.openFds() <= fdBefore, Duration.ofSeconds(5));
        System.gc();
        PartitionTest.sleep(Duration.ofMillis(300));
        long fd0 = PartitionCycleLeakTest.openFds();
        long mem0 = PartitionCycleLeakTest.settledNativeInUse();
        healthy.set(0);
        cut.set(0);
        outcomes.clear();
        long t0 = System.nanoTime();
        long memMid = 0;
        for (int i = 0; i < CYCLES; i++) {
            cycle(local, PER_CYCLE);
            if (i == CYCLES / 2 - 1) {
                memMid = PartitionCycleLeakTest.settledNativeInUse();
            }
        }
        long took = System.nanoTime() - t0;
        System.out.printf("FACT rpma per cycle of %d connections (ms, mean): connect %.0f, healthy writes %.0f, partition"
                        + " %.0f, until both sides ended %.0f, heal %.0f; the warm-up cycle of %d took %.0f ms%n", PER_CYCLE,
                stepNanos[0] / 1e6 / CYCLES, stepNanos[1] / 1e6 / CYCLES, stepNanos[2] / 1e6 / CYCLES,
                stepNanos[3] / 1e6 / CYCLES, stepNanos[4] / 1e6 / CYCLES, WARM_UP_CONNECTIONS, warmUp / 1e6);
        // Native closes are deferred to loop tasks: give the last cycle's a moment.
        PartitionTest.await(() -> PartitionCycleLeakTest.openFds() <= fd0, Duration.ofSeconds(5));
        System.gc();
        PartitionTest.sleep(Duration.ofMillis(300));
        long fd1 = PartitionCycleLeakTest.openFds();
        long mem1 = PartitionCycleLeakTest.settledNativeInUse();
        long first = memMid - mem0;
        long second = mem1 - memMid;
        System.out.printf("FACT rpma %d partition/heal cycles of %d connections (operationTimeout %d ms, server"
                        + " keep-alive %d ms x %d) in %.1f s, %d healthy writes completed, writes into the partition %s:"
                        + " file descriptors %d -> %d, native in use (mallinfo2) %d -> %d bytes (%+d; %+d over the first"
                        + " %d cycles, %+d over the last %d); one open connection (both sides) holds %d bytes and %d"
                        + " descriptors%n", CYCLES, PER_CYCLE, OP_TIMEOUT.toMillis(), INTERVAL.toMillis(), MISSES,
                took / 1e9, healthy.get(), outcomes, fd0, fd1, mem0, mem1, mem1 - mem0, first, CYCLES / 2, second,
                CYCLES - CYCLES / 2, perConnection, fdsPerConnection);
        assertEquals(CYCLES * PER_CYCLE, cut.get(), "not every cycle cut its connections");
        assertTrue(fd1 <= fd0, "file descriptors grew over " + CYCLES + " cycles of " + PER_CYCLE + " connections: "
                + fd0 + " -> " + fd1 + " (one open connection holds " + fdsPerConnection + ")");
        // As on the host: a one-off growth elsewhere lands in one half, a leak per connection in both.
        assertTrue(Math.min(first, second) < NATIVE_GROWTH_BOUND / 2, "native memory in use grew in both halves of "
                + CYCLES + " cycles (" + first + " and " + second + " bytes), each beyond " + NATIVE_GROWTH_BOUND / 2);
        assertTrue(healthy.get() >= CYCLES * PER_CYCLE / 2,
                "most healthy writes failed: the cycles did not test working connections");
        Integer lost = outcomes.get("ConnectionException(LOST)");
        assertTrue(lost != null && lost >= CYCLES * PER_CYCLE / 2, "most writes into the partition did not fail LOST,"
                + " so the cycles did not test a lost connection: " + outcomes);
    }
}
