package io.cqflux.benchmarks;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import java.lang.foreign.Arena;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Load-independent counts per operation: runs a fixed number of reactive 8-byte writes over
 * fabric/tcp on loopback and prints the bytes allocated by every thread of the JVM per operation
 * ({@code com.sun.management.ThreadMXBean#getTotalThreadAllocatedBytes}). Run twice with two
 * counts under the kernel's syscall tracepoints and subtracted, it gives system calls per
 * operation with the set-up cancelled out ({@code benchmarks/opcount.sh} does that with
 * {@code perf stat}; strace would slow every call and change what a time-bounded loop does).
 *
 * <p>Usage: {@code OpCount STRATEGY MODE COUNT [SIZE [IDLE]]}, MODE one of {@code chain} (a
 * {@code concatMap} of fresh {@code write()} Monos, the JMH {@code writeLatency} shape),
 * {@code readchain} (the same with {@code read()} Monos),
 * {@code reuse} (one {@code write()} Mono subscribed again per operation: what is left from
 * subscribe to completion), {@code block} ({@code write().block()} from the main thread) and
 * {@code writeall} ({@code writeAll} with 64 in flight on a connection with the default 128 send
 * credits, the shape of the paired bench's {@code tput.w64} figure). IDLE (default 0) more
 * connections between the same two instances, on the same loops, stay idle beside the measured
 * one: what a loop's sleeps cost per connection it serves.
 */
public final class OpCount {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    /** {@code writeAll}'s window on the default 128 send credits (half of them, as it keeps). */
    private static final int WRITE_ALL_WINDOW = 64;
    private static final int WARM_UP = Integer.getInteger("opcount.warmup", 20_000);

    private OpCount() {
    }

    /**
     * @param args STRATEGY MODE COUNT [SIZE [IDLE]]
     */
    public static void main(String[] args) {
        String strategy = args[0];
        String mode = args[1];
        int count = Integer.parseInt(args[2]);
        int size = args.length > 3 ? Integer.parseInt(args[3]) : 8;
        int idle = args.length > 4 ? Integer.parseInt(args[4]) : 0;
        if (idle < 0) {
            throw new IllegalArgumentException("IDLE " + idle + " is negative");
        }
        InetAddress lo = InetAddress.getLoopbackAddress();
        ConnectionConfig config = mode.equals("writeall") ? ConnectionConfig.DEFAULT
                : ConnectionConfig.DEFAULT.withSendQueueSize(64);
        try (Arena arena = Arena.ofShared();
             Cqflux server = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(lo)
                     .waitStrategy(Strategies.of(strategy)).connectionConfig(config).build();
             Cqflux client = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(lo)
                     .waitStrategy(Strategies.of(strategy)).connectionConfig(config).build()) {
            Region exposed = server.register(arena.allocate(FabricPair.REGION_BYTES, 4096),
                    RegionAccess.WRITE_DST, RegionAccess.READ_SRC, RegionAccess.FLUSH_TYPE_VISIBILITY);
            RdmaServer listening = server.bind(new InetSocketAddress(lo, 0), c -> c.onDispose(), exposed)
                    .block(TIMEOUT);
            RdmaConnection connection = client.connect(listening.address()).block(TIMEOUT);
            for (int i = 0; i < idle; i++) {
                client.connect(listening.address()).block(TIMEOUT); // closed with the instances
            }
            PeerRegion remote = connection.remoteRegion(0);
            Region local = client.register(arena.allocate(FabricPair.REGION_BYTES, 4096),
                    RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
            // Pre-boxed indices: Flux.range would box every index above 127 (the harness's cost).
            Integer[] warmIdx = new Integer[WARM_UP];
            Integer[] idx = new Integer[Math.max(count, 1)];
            Integer zero = 0;
            java.util.Arrays.fill(warmIdx, zero);
            java.util.Arrays.fill(idx, zero);
            Flux<Integer> warm = Flux.fromArray(warmIdx);
            Flux<Integer> run = Flux.fromArray(idx).take(count);
            Mono<Void> reused = connection.write(remote, 0, local, 0, size);
            run(mode, warm, reused, connection, remote, local, size, WARM_UP);
            com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long bytes0 = mx.getTotalThreadAllocatedBytes();
            long t0 = System.nanoTime();
            run(mode, run, reused, connection, remote, local, size, count);
            long t1 = System.nanoTime();
            long bytes1 = mx.getTotalThreadAllocatedBytes();
            System.out.printf("opcount strategy=%s mode=%s size=%d idle=%d count=%d us/op=%.2f bytes/op=%.1f load=%s%n",
                    strategy, mode, size, idle, count, count == 0 ? 0.0 : (t1 - t0) / 1e3 / count,
                    count == 0 ? 0.0 : (double) (bytes1 - bytes0) / count, loadAverage());
            listening.close();
        }
    }

    private static void run(String mode, Flux<Integer> indices, Mono<Void> reused, RdmaConnection connection,
                            PeerRegion remote, Region local, int size, int count) {
        switch (mode) {
            case "chain" -> indices.concatMap(i -> connection.write(remote, 0, local, 0, size), 1).then().block(TIMEOUT);
            case "readchain" -> indices.concatMap(i -> connection.read(local, 0, remote, 0, size), 1).then()
                    .block(TIMEOUT);
            case "reuse" -> indices.concatMap(i -> reused, 1).then().block(TIMEOUT);
            case "block" -> {
                for (int i = 0; i < count; i++) {
                    connection.write(remote, 0, local, 0, size).block(TIMEOUT);
                }
            }
            case "writeall" -> ChainedLatency.writeAll(connection, remote, local, WRITE_ALL_WINDOW, size, count, TIMEOUT);
            default -> throw new IllegalArgumentException("mode " + mode
                    + " is not chain, readchain, reuse, block or writeall");
        }
    }

    private static String loadAverage() {
        String l = LoadAverage.read(1, "");
        return l == null ? "?" : l;
    }
}
