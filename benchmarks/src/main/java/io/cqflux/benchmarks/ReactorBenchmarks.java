package io.cqflux.benchmarks;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import io.cqflux.reactor.WriteRequest;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * The reactive API over the fabric transport, in the shapes of {@link FabricSpiBenchmarks} so
 * that the ratio reactor/SPI is the cost of the Reactor layer (operators, credits, the pending
 * table, Mono signalling):
 *
 * <ul>
 *   <li>{@code writeLatency} / {@code durableWriteLatency}: one operation in flight, the next one
 *       subscribed from the previous one's completion ({@code concatMap}), on the loop thread;
 *       {@value FabricSpiBenchmarks#CHAIN} per invocation.</li>
 *   <li>{@code writeBlockLatency}: what a caller on another thread sees: {@code write(...).block()}
 *       per operation, hand-off to the loop and back included.</li>
 *   <li>{@code writeAllThroughput}: {@code writeAll} of {@value FabricSpiBenchmarks#TOTAL} requests;
 *       the connection has 64 send credits, so {@code writeAll} keeps 32 in flight, like the SPI
 *       and C throughput runs.</li>
 * </ul>
 */
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-XX:+UseParallelGC"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class ReactorBenchmarks {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** A server and a client instance, each with one loop of the given strategy. */
    @State(Scope.Benchmark)
    public static class Pair {
        /** Bytes per write. */
        @Param({"8", "4096"})
        public int size;

        /** The wait strategy of both instances' loops. */
        @Param({"BLOCKING", "BUSY_POLL", "ADAPTIVE"})
        public String strategy;

        /**
         * The client's {@code Cqflux.Builder.blockSpin} in microseconds, or {@code default} (the
         * builder's choice): {@code -p blockSpin=0,default} compares the park-at-once
         * {@code block()} with the spinning one in one run.
         */
        @Param({"default"})
        public String blockSpin;

        Arena arena;
        Cqflux server;
        Cqflux client;
        RdmaServer listening;
        RdmaConnection connection;
        PeerRegion remote;
        Region local;
        Flux<Integer> chain;
        Flux<WriteRequest> bulk;

        /** Builds both instances and connects. */
        @Setup(Level.Trial)
        public void setUp() {
            InetAddress lo = InetAddress.getLoopbackAddress();
            // 64 credits: writeAll keeps half of them in flight (32, the C and SPI window).
            ConnectionConfig config = ConnectionConfig.DEFAULT.withSendQueueSize(2 * window());
            arena = Arena.ofShared();
            server = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(lo)
                    .waitStrategy(Strategies.of(strategy)).connectionConfig(config).build();
            Cqflux.Builder cb = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(lo)
                    .waitStrategy(Strategies.of(strategy)).connectionConfig(config);
            if (!blockSpin.equals("default")) {
                cb.blockSpin(Duration.ofNanos(Math.round(Double.parseDouble(blockSpin) * 1000)));
            }
            client = cb.build();
            Region exposed = server.register(arena.allocate(FabricPair.REGION_BYTES, 4096),
                    RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                    RegionAccess.FLUSH_TYPE_VISIBILITY); // fabric delivers no PERSISTENT: it would be refused
            listening = server.bind(new InetSocketAddress(lo, 0), c -> c.onDispose(), exposed).block(TIMEOUT);
            connection = client.connect(listening.address()).block(TIMEOUT);
            remote = connection.remoteRegion(0);
            if (Math.max(1, connection.sendCredits() / 2) != window()) {
                throw new IllegalStateException("writeAll would keep " + connection.sendCredits() / 2
                        + " writes in flight, not " + window() + " (send credits " + connection.sendCredits() + ")");
            }
            local = client.register(arena.allocate(FabricPair.REGION_BYTES, 4096),
                    RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
            chain = Flux.range(0, FabricSpiBenchmarks.CHAIN);
            bulk = Flux.range(0, FabricSpiBenchmarks.TOTAL).map(i -> {
                long off = (long) (i % window()) * size;
                return new WriteRequest(remote, off, local, off, size, false);
            });
        }

        /** {@return the writes {@code writeAll} keeps in flight: half the connection's send credits} */
        int window() {
            return FabricSpiBenchmarks.WINDOW;
        }

        /** Closes everything. */
        @TearDown(Level.Trial)
        public void tearDown() {
            if (client != null) {
                client.close();
            }
            if (server != null) {
                server.close();
            }
            if (arena != null) {
                arena.close();
            }
        }
    }

    /**
     * Chained writes, one in flight.
     *
     * @param s the pair
     */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    @OperationsPerInvocation(FabricSpiBenchmarks.CHAIN)
    public void writeLatency(Pair s) {
        s.chain.concatMap(i -> s.connection.write(s.remote, 0, s.local, 0, s.size), 1)
                .then().block(TIMEOUT);
    }

    /**
     * Chained durable writes (write + flush, or a commit-level write), one in flight.
     *
     * @param s the pair
     */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    @OperationsPerInvocation(FabricSpiBenchmarks.CHAIN)
    public void durableWriteLatency(Pair s) {
        s.chain.concatMap(i -> s.connection.durableWrite(s.remote, 0, s.local, 0, s.size), 1)
                .then().block(TIMEOUT);
    }

    /**
     * Chained reads, one in flight: the reactive read against C's and JUCX's.
     *
     * @param s the pair
     */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    @OperationsPerInvocation(FabricSpiBenchmarks.CHAIN)
    public void readLatency(Pair s) {
        s.chain.concatMap(i -> s.connection.read(s.local, 0, s.remote, 0, s.size), 1)
                .then().block(TIMEOUT);
    }

    /**
     * One write, blocked on from the benchmark thread.
     *
     * @param s the pair
     */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void writeBlockLatency(Pair s) {
        s.connection.write(s.remote, 0, s.local, 0, s.size).block(TIMEOUT);
    }

    /**
     * Bulk writes with 32 in flight.
     *
     * @param s the pair
     * @return the last result's sequence
     */
    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(FabricSpiBenchmarks.TOTAL)
    public Long writeAllThroughput(Pair s) {
        return s.connection.writeAll(s.bulk).map(r -> r.sequence()).last(-1L).block(TIMEOUT);
    }

    /**
     * The pair of {@link Pair} with 128 send credits on both sides, so that {@code writeAll} keeps
     * {@value FabricSpiBenchmarks#WIDE_WINDOW} writes in flight (the throughput goal).
     */
    @State(Scope.Benchmark)
    public static class WidePair extends Pair {
        @Override
        int window() {
            return FabricSpiBenchmarks.WIDE_WINDOW;
        }
    }

    /**
     * Bulk writes with {@value FabricSpiBenchmarks#WIDE_WINDOW} in flight, against C's
     * {@code tput.w64} (all signaled, and one signaled write in 16).
     *
     * @param s the pair with 128 send credits
     * @return the last result's sequence
     */
    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(FabricSpiBenchmarks.TOTAL)
    public Long writeAllThroughput64(WidePair s) {
        return s.connection.writeAll(s.bulk).map(r -> r.sequence()).last(-1L).block(TIMEOUT);
    }

    /**
     * {@link #writeAllThroughput64} with a producer on another thread: the requests are emitted on
     * Reactor's single scheduler ({@code subscribeOn(single, true)}: every request for more runs
     * there), as when a service feeds {@code writeAll} from request threads or a sink. Each write
     * then arrives off the loop, which writeAll hands over in bursts.
     *
     * @param s the pair with 128 send credits
     * @return the last result's sequence
     */
    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(FabricSpiBenchmarks.TOTAL)
    public Long writeAllThroughput64OffLoop(WidePair s) {
        return s.connection.writeAll(s.bulk.subscribeOn(Schedulers.single(), true)).map(r -> r.sequence()).last(-1L)
                .block(TIMEOUT);
    }
}
