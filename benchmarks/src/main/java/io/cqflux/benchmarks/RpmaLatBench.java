package io.cqflux.benchmarks;

import io.cqflux.core.RegionAccess;
import io.cqflux.epoll.WaitStrategy;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import java.lang.foreign.Arena;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Locale;

/**
 * cqflux's side of the rpma anchor ({@code ./cqflux bench rpma}): the reactive API on
 * the rpma transport, in the shape of {@code benchmarks/c/rpma_lat_bench.c}, so that each figure
 * has a C twin posting the same work requests:
 *
 * <ul>
 *   <li>{@code read}: {@link RdmaConnection#read(Region, long, PeerRegion, long, long)};</li>
 *   <li>{@code write}: {@link RdmaConnection#write(PeerRegion, long, Region, long, long)};</li>
 *   <li>{@code dwrite}: {@link RdmaConnection#durableWrite(PeerRegion, long, Region, long, long)}
 *       (an unsignaled write and a signaled VISIBILITY flush: the server's region is plain
 *       memory).</li>
 * </ul>
 *
 * <p>One operation in flight: each is subscribed from the previous one's completion on the
 * client's loop thread ({@code concatMap(..., 1)}, as {@code ReactorBenchmarks.writeLatency}).
 * A sample is the time between two consecutive completions, which holds everything from one
 * completion to the next: the chain's hand-over, the argument checks, the post, the wait. Wait
 * modes: {@code busy} = the client loop {@link WaitStrategy#BUSY_POLL}, {@code epoll} =
 * {@link WaitStrategy#BLOCKING}; the server instance is {@code BLOCKING} in both, as the C
 * program's server sleeps: one-sided operations need nothing from its CPU, and a spinning
 * server loop would take one of the lane's two vCPUs.
 *
 * <p>Throughput (the performance goal: 8-byte writes with 64 in flight; {@code -t} writes, 0 = none):
 * after the latency figures of a wait mode, {@link RdmaConnection#writeAll} of that many 8-byte
 * writes (after as many unmeasured: the JIT's warm-up under TCG), request i to offset (i mod 64) × 8 on both sides as
 * {@code rpma_lat_bench.c} posts them; the default configuration's 128 send credits make
 * {@code writeAll} keep 64 in flight (checked), each a signaled write as in C. Printed as
 * {@code cqflux.write.8.busy.tput.w64 30123 ops/s}.
 *
 * <p>Prints the C baselines' format ({@code cqflux.read.8.busy.lat.p50 41.20 us}; mean, p50,
 * p99), which {@link CBaselines} parses. Runs only where {@code CQFLUX_RPMA_ADDRESS} names an
 * address with an RDMA device (the Soft-RoCE lane). Usage:
 * {@code RpmaLatBench [-T rpma|synthetic] [-n iterations] [-w warmup] [-g global warm-up] [-t writes]
 * [-m busy|epoll|both] [-p port]}.
 *
 * <p>{@code -T synthetic}: the same harness, operations and counts over the {@code synthetic}
 * transport ({@link SyntheticTransport}: every post completes at once, no NIC, no native call per
 * operation) on the loopback address, busy mode only, printed as {@code javapath.<op>.<size>.busy...}.
 * What it measures is cqflux's own Java path per operation on this machine. {@code run-rpma.sh}
 * runs it inside the lane's guest at the end of each round ({@code javapath-R.txt}) and on the host
 * before the boot, so that the report can set the guest's cqflux − C gap beside the Java path's
 * cost under the same emulation.
 */
public final class RpmaLatBench {

    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private static final long REGION = 64 * 1024;
    private static final int[] SIZES = {8, 4096};
    private static final String[] OPS = {"read", "write", "dwrite"};
    /** No compilation for this long counts as a settled JIT ({@link #awaitJitQuiet}). */
    private static final long JIT_QUIET_MS = 300;
    /** The longest {@link #awaitJitQuiet} waits. */
    private static final long JIT_SETTLE_MAX_MS = 20_000;
    /** Writes in flight in the throughput figure (C's {@code TPUT_WINDOW}). */
    private static final int TPUT_WINDOW = 64;
    private static final int TPUT_SIZE = 8;
    /** Writes per throughput run ({@code -t}); 0 skips the figure. */
    private static int tput;
    /** {@code -T synthetic}: the Java path alone (see the class comment). */
    private static boolean synthetic;

    private RpmaLatBench() {
    }

    /**
     * @param args {@code -n} measured operations per figure (default 5000), {@code -w} warm-up
     *     operations per figure (default 3000), {@code -g} warm-up operations of every operation
     *     and size before the first figure of each wait mode (default 0), {@code -m} wait modes,
     *     {@code -p} base port
     * @throws Exception when the lane or a run fails
     */
    public static void main(String[] args) throws Exception {
        int iters = 5000;
        int warmup = 3000;
        String modes = "both";
        int port = 7320;
        int global = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "-n" -> iters = Integer.parseInt(args[++i]);
                case "-w" -> warmup = Integer.parseInt(args[++i]);
                case "-m" -> modes = args[++i];
                case "-p" -> port = Integer.parseInt(args[++i]);
                case "-g" -> global = Integer.parseInt(args[++i]);
                case "-t" -> tput = Integer.parseInt(args[++i]);
                case "-T" -> {
                    String t = args[++i];
                    if (!t.equals("rpma") && !t.equals(SyntheticTransportProvider.NAME)) {
                        throw new IllegalArgumentException("-T " + t + " is not one of rpma, "
                                + SyntheticTransportProvider.NAME);
                    }
                    synthetic = t.equals(SyntheticTransportProvider.NAME);
                }
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + " (-T rpma|synthetic, -n iterations, -w warmup, -g global warm-up, -t writes,"
                        + " -m busy|epoll|both, -p port)");
            }
        }
        if (synthetic) {
            // The synthetic queues' eventfds are not written for the loop's own posts (as a
            // libfabric wait fd is not), so only the busy-polling figure is the Java path alone.
            if (!modes.equals("busy")) {
                throw new IllegalArgumentException("-T " + SyntheticTransportProvider.NAME + " runs -m busy only, not -m "
                        + modes);
            }
        }
        if (iters < 100) {
            throw new IllegalArgumentException("-n " + iters + " is below 100: no p99 from fewer operations");
        }
        if (tput < 0) {
            throw new IllegalArgumentException("-t " + tput + " is negative");
        }
        if (!modes.equals("busy") && !modes.equals("epoll") && !modes.equals("both")) {
            throw new IllegalArgumentException("-m " + modes + " is not one of busy, epoll, both");
        }
        InetAddress address = synthetic ? InetAddress.getLoopbackAddress() : address();
        System.out.printf(Locale.ROOT, prefix() + ".info address=%s iterations=%d warmup=%d global=%d java=%s%n",
                address.getHostAddress(), iters, warmup, global, Runtime.version());
        if (!modes.equals("epoll")) {
            run("busy", WaitStrategy.BUSY_POLL, address, port, iters, warmup, global);
        }
        if (!modes.equals("busy")) {
            run("epoll", WaitStrategy.BLOCKING, address, port + 1, iters, warmup, global);
        }
    }

    private static InetAddress address() throws UnknownHostException {
        String a = System.getenv("CQFLUX_RPMA_ADDRESS");
        if (a == null || a.isBlank()) {
            throw new IllegalStateException("CQFLUX_RPMA_ADDRESS is not set: RpmaLatBench runs in the Soft-RoCE lane"
                    + " (./cqflux bench rpma)");
        }
        return InetAddress.getByName(a);
    }

    private static void run(String mode, WaitStrategy clientWait, InetAddress address, int port, int iters,
                            int warmup, int global) {
        try (Arena arena = Arena.ofShared();
             Cqflux server = builder().localAddress(address).waitStrategy(WaitStrategy.BLOCKING).build();
             Cqflux client = builder().localAddress(address).waitStrategy(clientWait).build()) {
            Region exposed = server.register(arena.allocate(REGION, 4096),
                    RegionAccess.WRITE_DST, RegionAccess.READ_SRC, RegionAccess.FLUSH_TYPE_VISIBILITY);
            RdmaServer listening = server.bind(new InetSocketAddress(address, port), c -> c.onDispose(), exposed)
                    .block(TIMEOUT);
            RdmaConnection connection = client.connect(listening.address()).block(TIMEOUT);
            PeerRegion remote = connection.remoteRegion(0);
            Region local = client.register(arena.allocate(REGION, 4096),
                    RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
            // A warm-up of every operation before the first figure: under TCG the JIT's compiler
            // threads are still at work after one figure's warm-up, on the same two vCPUs, and
            // the first figure measured would carry them.
            for (int g = 0; g < 2 && global > 0; g++) {
                for (String op : OPS) {
                    ChainedLatency.chain(connection, op, remote, local, SIZES[g], global, TIMEOUT);
                }
            }
            for (String op : OPS) {
                for (int size : SIZES) {
                    ChainedLatency.chain(connection, op, remote, local, size, warmup, TIMEOUT);
                    long settled = awaitJitQuiet();
                    long jit = jitMillis();
                    long[] stamps = ChainedLatency.chain(connection, op, remote, local, size, iters, TIMEOUT);
                    jit = jitMillis() - jit;
                    print(op, size, mode, stamps);
                    System.err.printf(Locale.ROOT, "%s.%s.%d.%s jit %d ms during the measurement, after %d ms waiting"
                            + " for it to settle%n", prefix(), op, size, mode, jit, settled);
                }
            }
            if (tput > 0) {
                throughput(connection, remote, local, mode);
            }
            connection.close();
        }
    }

    /**
     * Waits until the JIT has compiled nothing for {@value #JIT_QUIET_MS} ms (at most
     * {@value #JIT_SETTLE_MAX_MS} ms). Under TCG the compiler threads take the lane's two vCPUs
     * for hundreds of milliseconds after a warm-up (benchmarks/results/README.md has the figures),
     * so a figure measured at once carries the compiler's
     * work and its code half compiled; the C program has no such phase.
     *
     * @return how long it waited, in ms
     */
    private static long awaitJitQuiet() {
        long start = System.nanoTime();
        long last = jitMillis();
        long quietSince = start;
        while (true) {
            long now = System.nanoTime();
            if (now - quietSince >= JIT_QUIET_MS * 1_000_000L || now - start >= JIT_SETTLE_MAX_MS * 1_000_000L) {
                return (now - start) / 1_000_000L;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(20_000_000L);
            long j = jitMillis();
            if (j != last) {
                last = j;
                quietSince = System.nanoTime();
            }
        }
    }

    /** {@return the JIT's compilation time so far, in ms (all compiler threads), or 0 where the JVM does not tell} */
    private static long jitMillis() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
    }

    /** {@return the figures' prefix: {@code cqflux} on rpma, {@code javapath} on the synthetic transport} */
    private static String prefix() {
        return synthetic ? "javapath" : "cqflux";
    }

    private static Cqflux.Builder builder() {
        return synthetic ? Cqflux.builder().transport(SyntheticTransportProvider.NAME)
                : Cqflux.builder().transport(TransportChoice.RPMA);
    }

    /** {@code writeAll} with {@value #TPUT_WINDOW} in flight: {@link #tput} writes after as many unmeasured. */
    private static void throughput(RdmaConnection c, PeerRegion remote, Region local, String mode) {
        // Warm-up as long as the measurement (C needs a tenth): under TCG the first writeAll runs
        // interpreted and the JIT's threads share the two vCPUs; a --quick run with a tenth
        // measured 2,143 ops/s against C's 21,866, with the loop reported "blocked for 123 ms by a
        // batch of 32 completions" meanwhile.
        ChainedLatency.writeAll(c, remote, local, TPUT_WINDOW, TPUT_SIZE, tput, TIMEOUT); // warm-up
        long settled = awaitJitQuiet();
        long jit = jitMillis();
        double ops = ChainedLatency.writeAllThroughput(c, remote, local, TPUT_WINDOW, TPUT_SIZE, 0, tput, TIMEOUT);
        System.err.printf(Locale.ROOT, "%s.write.%d.%s.tput jit %d ms during the measurement, after %d ms waiting for it"
                + " to settle%n", prefix(), TPUT_SIZE, mode, jitMillis() - jit, settled);
        System.out.printf(Locale.ROOT, prefix() + ".write.%d.%s.tput.w%d %.0f ops/s%n", TPUT_SIZE, mode, TPUT_WINDOW,
                ops);
        System.out.flush();
    }

    private static void print(String op, int size, String mode, long[] stamps) {
        ChainedLatency.Stats st = ChainedLatency.stats(stamps);
        String name = prefix() + "." + op + "." + size + "." + mode + ".lat.";
        System.out.printf(Locale.ROOT, "%smean %.2f us%n", name, st.mean());
        System.out.printf(Locale.ROOT, "%sp50 %.2f us%n", name, st.p50());
        System.out.printf(Locale.ROOT, "%sp99 %.2f us%n", name, st.p99());
        System.out.flush();
    }
}
