package io.cqflux.test.network;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * {@link PartitionCycleLeakTest}'s check on librpma over Soft-RoCE: {@link #CYCLES} partition/heal
 * cycles, as on the host, each cutting {@link #PER_CYCLE} fresh connections under a pending durable
 * write (the client's side ends {@code LOST} by the operation deadline, the server's, which only
 * receives one-sided writes, by its keep-alive), leave the process with as many open file
 * descriptors as before and without native-heap growth beyond the host's bound per half of the
 * run. Client and server are both in this JVM (an {@link RxePair}), so both sides' releases are
 * counted.
 *
 * <p>Why these numbers: as many connections through the fault as on the host, 100, cut in as
 * many cycles of as many connections (every connection costs connect and end work of the
 * emulated CPU, however they are grouped). A cycle's time is mostly its partition, which must last
 * until both sides of each of its connections ended, so the connections of a cycle share one
 * wait: the longer of the operation deadline and the keep-alive's detection (within
 * (misses + 1) x interval of the last sign of life). Both bounds are this class's own, far below
 * {@link RpmaKeepAliveTest}'s, which asserts detection within its bound beside busy classes. They
 * must not end a healthy connection, and here a connection is healthy only from its connect
 * through one durable write, normally shorter than the keep-alive needs to end a connection at
 * all, and even a longer one ends only when its probe (answered by the peer's rxe device, not its
 * process) stays unanswered through {@link #MISSES} ticks in a row, each an interval after the one
 * before; a deadline that fires
 * early under TCG fails the healthy write {@code LOST}, which the healthy step tolerates and
 * counts. The wait for the cut connections keeps the rig's slack
 * ({@link RxePartitionContract#SLACK}). The netem changes cost next to nothing (one long-lived
 * {@code tc}, see {@link RxeLinkRig}). The file-descriptor count is exact, so one leaked
 * descriptor per connection shows; the native bound per half is the host's, over as many
 * connections per half, each ending on both sides here.
 *
 * <p>{@link Isolated}: the counts are the whole process's, and the lane runs its other classes
 * concurrently; beside them their own descriptors and allocations would be counted.
 */
@Tag("rpma")
@Isolated
class RpmaPartitionCycleLeakTest extends RxeRigTest {
    /** The client's operation deadline: what ends the client's side of a cut connection. */
    static final Duration OP_TIMEOUT = Duration.ofMillis(150);
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(3);
    /** The server side's keep-alive: what ends the server's side of a cut connection. */
    static final Duration INTERVAL = Duration.ofMillis(40);
    static final int MISSES = 3;
    static final Duration SLACK = RxePartitionContract.SLACK;
    /** Warm-up cycles before the counts: the first cycle loads and compiles the paths. */
    static final int WARM_UP_CYCLES = 1;
    static final int CYCLES = PartitionCycleLeakTest.CYCLES;
    static final int PER_CYCLE = PartitionCycleLeakTest.PER_CYCLE;
    /** Connections held open at once to measure what one costs. */
    static final int HELD = 8;
    static final long NATIVE_GROWTH_BOUND = PartitionCycleLeakTest.NATIVE_GROWTH_BOUND;

    RxePair pair;
    /** Per step, summed over the counted cycles: connect, healthy writes, partition, both sides ended, heal. */
    final long[] stepNanos = new long[5];
    /** Summed over the counted cycles: from the partition until the client's sides ended, until the server's. */
    final long[] sideNanos = new long[2];
    final AtomicInteger healthy = new AtomicInteger();
    final AtomicInteger cut = new AtomicInteger();
    /** Server sides beyond one per connection: connects retried after their timeout, accepted too. */
    final AtomicInteger extraAccepted = new AtomicInteger();
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
        acceptExtra(servers);
        long s1 = System.nanoTime();
        for (RdmaConnection c : clients) {
            try {
                c.durableWrite(c.remoteRegion(0), 0, local, 0, Records.SIZE).block(RxePair.T);
                healthy.incrementAndGet();
            } catch (ConnectionException e) {
                // a short deadline may fire under TCG on a loaded host: still a connection made and ended
                assertEquals(ConnectionEvent.LOST, e.event(), e.toString());
            }
        }
        long s2 = System.nanoTime();
        rig.partition();
        long s3 = System.nanoTime();
        // Each side's end is a future, and its moment is taken where it completes: no polling.
        CompletableFuture<Long> clientsEnded = new CompletableFuture<>();
        CompletableFuture<Long> serversEnded = new CompletableFuture<>();
        try {
            List<CompletableFuture<?>> clientEnds = new ArrayList<>();
            for (RdmaConnection c : clients) {
                CompletableFuture<Void> written = new CompletableFuture<>();
                c.durableWrite(c.remoteRegion(0), Records.SIZE, local, Records.SIZE, Records.SIZE)
                        .subscribe(v -> { }, e -> {
                            outcomes.merge(Records.outcome(e), 1, Integer::sum);
                            written.complete(null);
                        }, () -> {
                            outcomes.merge("ok", 1, Integer::sum);
                            written.complete(null);
                        });
                clientEnds.add(written);
                clientEnds.add(c.onDispose().toFuture());
            }
            CompletableFuture.allOf(clientEnds.toArray(CompletableFuture[]::new))
                    .thenRun(() -> clientsEnded.complete(System.nanoTime()));
            CompletableFuture.allOf(servers.stream().map(c -> c.onDispose().toFuture()).toArray(CompletableFuture[]::new))
                    .thenRun(() -> serversEnded.complete(System.nanoTime()));
            Duration bound = INTERVAL.multipliedBy(2L * MISSES).plus(OP_TIMEOUT).plus(SLACK);
            try {
                CompletableFuture.allOf(clientsEnded, serversEnded).get(bound.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException | ExecutionException e) {
                throw new AssertionError("the partition did not end every connection within " + bound + ": writes"
                        + " and client sides ended " + clientEnds.stream().filter(CompletableFuture::isDone).count() + " of "
                        + clientEnds.size() + ", server sides " + servers.stream().filter(RdmaConnection::isDisposed).count()
                        + " of " + servers.size(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            // A side accepted after the drain above was made before the partition: it is cut as well.
            List<RdmaConnection> late = new ArrayList<>();
            acceptExtra(late);
            assertTrue(PartitionTest.await(() -> late.stream().allMatch(RdmaConnection::isDisposed), bound),
                    "a server side accepted late did not end within " + bound);
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
            sideNanos[0] += clientsEnded.getNow(s3) - s3;
            sideNanos[1] += serversEnded.getNow(s3) - s3;
        }
    }

    /** Adds to {@code servers} the sides accepted beyond one per connection (see {@link RxePair#acceptedSoFar()}). */
    private void acceptExtra(List<RdmaConnection> servers) {
        List<RdmaConnection> extra = pair.acceptedSoFar();
        extraAccepted.addAndGet(extra.size());
        servers.addAll(extra);
    }

    /** {@return the guest's CPU time so far, all CPUs, in clock ticks (/proc/stat: all but idle and iowait)} */
    static long busyTicks() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long busy = 0;
            for (int i = 1; i < f.length; i++) {
                busy += i == 4 || i == 5 ? 0 : Long.parseLong(f[i]);
            }
            return busy;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void partitionHealCycles_endingConnectionsOnBothSides_leaveNoFileDescriptor_andNoNativeGrowth() {
        long c0 = System.nanoTime();
        pair = new RxePair(rig, 4 * Records.SIZE, b -> b.keepAlive(INTERVAL, MISSES),
                b -> b.operationTimeout(OP_TIMEOUT).connectionConfig(ConnectionConfig.DEFAULT.withTimeout(CONNECT_TIMEOUT)));
        MemorySegment mem = pair.arena.allocate(4 * Records.SIZE, 64);
        new Records(1, 4).fill(mem);
        Region local = pair.client.register(mem, RegionAccess.WRITE_SRC);
        long w0 = System.nanoTime();
        for (int i = 0; i < WARM_UP_CYCLES; i++) {
            cycle(local, PER_CYCLE);
        }
        long warmUp = System.nanoTime() - w0;
        Arrays.fill(stepNanos, 0);
        Arrays.fill(sideNanos, 0);
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
        held.addAll(pair.acceptedSoFar());
        held.forEach(RdmaConnection::dispose);
        PartitionTest.await(() -> held.stream().allMatch(RdmaConnection::isDisposed), RxePair.T);
        PartitionTest.await(() -> PartitionCycleLeakTest.openFds() <= fdBefore, Duration.ofSeconds(5));
        System.gc();
        PartitionTest.sleep(Duration.ofMillis(300));
        long fd0 = PartitionCycleLeakTest.openFds();
        long mem0 = PartitionCycleLeakTest.settledNativeInUse();
        healthy.set(0);
        cut.set(0);
        extraAccepted.set(0);
        outcomes.clear();
        long busy0 = busyTicks();
        long t0 = System.nanoTime();
        long memMid = 0;
        for (int i = 0; i < CYCLES; i++) {
            cycle(local, PER_CYCLE);
            if (i == CYCLES / 2 - 1) {
                memMid = PartitionCycleLeakTest.settledNativeInUse();
            }
        }
        long took = System.nanoTime() - t0;
        long busy = busyTicks() - busy0;
        System.out.printf("FACT rpma per cycle of %d connection(s) (ms, mean): connect %.0f, healthy writes %.0f,"
                        + " partition %.0f, until both sides ended %.0f (the client's %.0f, the server's %.0f), heal %.0f;"
                        + " the %d warm-up cycle(s) took %.0f ms, the class until then %.0f ms%n", PER_CYCLE,
                stepNanos[0] / 1e6 / CYCLES, stepNanos[1] / 1e6 / CYCLES, stepNanos[2] / 1e6 / CYCLES,
                stepNanos[3] / 1e6 / CYCLES, sideNanos[0] / 1e6 / CYCLES, sideNanos[1] / 1e6 / CYCLES,
                stepNanos[4] / 1e6 / CYCLES, WARM_UP_CYCLES, warmUp / 1e6, (w0 - c0) / 1e6);
        // Native closes are deferred to loop tasks: give the last cycle's a moment.
        PartitionTest.await(() -> PartitionCycleLeakTest.openFds() <= fd0, Duration.ofSeconds(5));
        System.gc();
        PartitionTest.sleep(Duration.ofMillis(300));
        long fd1 = PartitionCycleLeakTest.openFds();
        long mem1 = PartitionCycleLeakTest.settledNativeInUse();
        long first = memMid - mem0;
        long second = mem1 - memMid;
        System.out.printf("FACT rpma %d partition/heal cycles of %d connection(s) (operationTimeout %d ms, server"
                        + " keep-alive %d ms x %d) in %.1f s (guest CPU %.1f s), %d healthy writes completed, writes into the"
                        + " partition %s, %d connect(s) retried and accepted twice: file descriptors %d -> %d, native in use"
                        + " (mallinfo2) %d -> %d bytes (%+d; %+d over the first %d cycles, %+d over the last %d); one open"
                        + " connection (both sides) holds %d bytes and %d descriptors%n", CYCLES, PER_CYCLE,
                OP_TIMEOUT.toMillis(), INTERVAL.toMillis(), MISSES, took / 1e9, busy / 100.0, healthy.get(), outcomes,
                extraAccepted.get(), fd0, fd1, mem0, mem1, mem1 - mem0, first, CYCLES / 2, second, CYCLES - CYCLES / 2,
                perConnection, fdsPerConnection);
        assertEquals(CYCLES * PER_CYCLE, cut.get(), "not every cycle cut its connections");
        assertTrue(fd1 <= fd0, "file descriptors grew over " + CYCLES + " cycles of " + PER_CYCLE + " connection(s): "
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
