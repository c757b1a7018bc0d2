package io.cqflux.benchmarks;

import io.cqflux.core.CompletionLevel;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.WriteRequest;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
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
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;

/**
 * The Java path of one reactive operation with no NIC: the reactive API over the
 * {@code synthetic} transport ({@link SyntheticTransport}), whose every post completes at once.
 * What remains is the library's own cost per operation: the Mono, the subscription, the argument
 * checks, the in-flight table and credits, the loop's drain and the subscriber's signal.
 *
 * <ul>
 *   <li>{@code chainedWrite}: {@value #CHAIN} 8-byte {@code write()} Monos chained with {@code concatMap(..., 1)},
 *       each subscribed from the previous one's completion on the loop thread; ns per operation.</li>
 *   <li>{@code drain}: {@value #IN_FLIGHT} writes posted while the synthetic queues hold their
 *       completions back (set up, not timed), then released: the time for the loop to drain them
 *       through the reactive layer to their subscribers, per completion (1e9 / that = completions
 *       per second of one loop thread; the goal is 10 M).</li>
 *   <li>{@code blockedWrite}: {@code write(...).block()} from the benchmark thread: hand-off to the
 *       loop and back.</li>
 *   <li>{@code writeAll}: {@code writeAll} of {@value FabricSpiBenchmarks#TOTAL} requests with 64
 *       credits (32 in flight), ops/s.</li>
 * </ul>
 */
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-XX:+UseParallelGC"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class JavaPathBenchmarks {

    /** Operations in flight in {@code drain}. */
    static final int IN_FLIGHT = 1024;
    /**
     * Chained operations per invocation of {@code chainedWrite}: long enough that the benchmark
     * thread's hand-off to the loop and back at each end (tens of microseconds on a loaded
     * 2-core machine) is well under 1 % of the figure.
     */
    static final int CHAIN = 10_000;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** A server and a client instance over the synthetic transport, each with one loop. */
    @State(Scope.Benchmark)
    public static class Pair {
        /** The wait strategy of both instances' loops. */
        @Param({"BUSY_POLL"})
        public String strategy;

        Arena arena;
        Cqflux server;
        Cqflux client;
        RdmaServer listening;
        RdmaConnection connection;
        PeerRegion remote;
        Region local;
        Flux<Integer> chain;
        Flux<WriteRequest> bulk;

        /**
         * Builds both instances and connects. The one {@code @Setup} of the hierarchy: JMH runs
         * every {@code @Setup} method it finds in a state's classes, so a subclass that declared
         * its own would have this one run twice (through the override), leaving a second pair of
         * spinning loops on the machine's cores for the whole trial. Subclasses override
         * {@link #config()} instead.
         */
        @Setup(Level.Trial)
        public void setUp() {
            if (client != null) {
                throw new IllegalStateException("Pair.setUp ran twice: a second pair of loops would spin beside this one");
            }
            InetAddress lo = InetAddress.getLoopbackAddress();
            ConnectionConfig config = config();
            arena = Arena.ofShared();
            server = Cqflux.builder().transport(SyntheticTransportProvider.NAME).localAddress(lo)
                    .waitStrategy(Strategies.of(strategy)).connectionConfig(config).build();
            client = Cqflux.builder().transport(SyntheticTransportProvider.NAME).localAddress(lo)
                    .waitStrategy(Strategies.of(strategy)).connectionConfig(config).build();
            Region exposed = server.register(arena.allocate(FabricPair.REGION_BYTES, 4096),
                    RegionAccess.WRITE_DST, RegionAccess.READ_SRC, RegionAccess.FLUSH_TYPE_VISIBILITY);
            listening = server.bind(new InetSocketAddress(lo, 0), c -> c.onDispose(), exposed).block(TIMEOUT);
            connection = client.connect(listening.address()).block(TIMEOUT);
            remote = connection.remoteRegion(0);
            local = client.register(arena.allocate(FabricPair.REGION_BYTES, 4096),
                    RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
            // Boxed once: Flux.range would allocate an Integer per index above 127, which is the
            // benchmark's own allocation, not the library's.
            Integer[] indices = new Integer[CHAIN];
            for (int i = 0; i < CHAIN; i++) {
                indices[i] = i;
            }
            chain = Flux.fromArray(indices);
            bulk = Flux.range(0, FabricSpiBenchmarks.TOTAL).map(i -> {
                long off = (long) (i % FabricSpiBenchmarks.WINDOW) * 8;
                return new WriteRequest(remote, off, local, off, 8, false);
            });
        }

        /**
         * {@return the connections' configuration} {@value #IN_FLIGHT} credits for the drain;
         * writeAll keeps half its credits in flight, so writeAll runs on a connection of its own
         * with 64 ({@link ThroughputPair}).
         */
        ConnectionConfig config() {
            return new ConnectionConfig(IN_FLIGHT, 128, 2 * IN_FLIGHT, 128,
                    Duration.ofSeconds(5), false, CompletionLevel.DELIVERY);
        }

        /** Closes everything. */
        @TearDown(Level.Trial)
        public void tearDown() {
            SyntheticTransport.hold(false);
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

    /** {@link Pair} with 64 send credits, as {@link ReactorBenchmarks#writeAllThroughput}. */
    @State(Scope.Benchmark)
    public static class ThroughputPair extends Pair {
        @Override
        ConnectionConfig config() {
            return ConnectionConfig.DEFAULT.withSendQueueSize(64);
        }
    }

    /** The drain's subscribers, made once; they count completions on the loop thread. */
    @State(Scope.Benchmark)
    public static class Drain {
        final Counter[] subscribers = new Counter[IN_FLIGHT];
        /** Completions seen in this round; the last one sets {@link #done}. */
        int completed;
        volatile boolean done;
        /** {@code System.nanoTime()} on the loop when the last subscriber had its signal. */
        long finishedAt;
        /** Per round of this iteration: from the loop's first poll after the release to its last signal. */
        private long[] spans = new long[1 << 16];
        private int rounds;

        /** Makes the subscribers. */
        @Setup(Level.Trial)
        public void setUp() {
            for (int i = 0; i < IN_FLIGHT; i++) {
                subscribers[i] = new Counter(this);
            }
        }

        /**
         * Posts {@value #IN_FLIGHT} writes from the loop thread while the queues hold their
         * completions, so that all of them are ready when the benchmark releases them. Not timed.
         *
         * @param p the pair
         * @throws InterruptedException when interrupted
         */
        @Setup(Level.Invocation)
        public void post(Pair p) throws InterruptedException {
            long start = SyntheticTransport.firstPollAfterRelease;
            if (done && start != 0 && rounds < spans.length) {
                spans[rounds++] = finishedAt - start;
            }
            completed = 0;
            done = false;
            CountDownLatch posted = new CountDownLatch(1);
            // The trigger's completion runs on the loop: hold there, then post them all.
            p.connection.write(p.remote, 0, p.local, 0, 8).doOnSuccess(v -> {
                SyntheticTransport.hold(true);
                for (Counter c : subscribers) {
                    p.connection.write(p.remote, 0, p.local, 0, 8).subscribe(c);
                }
                posted.countDown();
            }).subscribe();
            if (!posted.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the drain's writes were not posted within 30 s");
            }
        }

    /**
     * Prints the median and the fastest round of this iteration as the loop measured it, from its
     * first poll after the release to the last subscriber's signal (the benchmark thread's
     * wake-up excluded), per completion; the median holds on a loaded machine where JMH's mean
     * does not.
     */
    @TearDown(Level.Iteration)
    public void report() {
        if (rounds == 0) {
            return;
        }
        long[] s = java.util.Arrays.copyOf(spans, rounds);
        java.util.Arrays.sort(s);
        System.out.printf("%n  loop-side drain: p50 %.1f ns/completion (%.2f M/s), min %.1f ns, %d rounds%n",
                (double) s[rounds / 2] / IN_FLIGHT, IN_FLIGHT * 1e3 / s[rounds / 2],
                (double) s[0] / IN_FLIGHT, rounds);
        rounds = 0;
    }
    }

    /** A subscriber that counts completions for {@link Drain}. */
    static final class Counter implements CoreSubscriber<Void> {
        private final Drain drain;

        Counter(Drain drain) {
            this.drain = drain;
        }

        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Void v) {
        }

        @Override
        public void onError(Throwable t) {
            t.printStackTrace();
            onComplete();
        }

        @Override
        public void onComplete() {
            if (++drain.completed == IN_FLIGHT) {
                drain.finishedAt = System.nanoTime();
                drain.done = true;
            }
        }
    }

    /**
     * Chained 8-byte writes, one in flight, on the loop thread.
     *
     * @param s the pair
     */
    @Benchmark
    @BenchmarkMode({Mode.AverageTime, Mode.SampleTime})
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    @OperationsPerInvocation(CHAIN)
    public void chainedWrite(Pair s) {
        s.chain.concatMap(i -> s.connection.write(s.remote, 0, s.local, 0, 8), 1).then().block(TIMEOUT);
    }

    /**
     * Releases {@value #IN_FLIGHT} ready completions and waits until every subscriber has its
     * signal.
     *
     * @param s the pair
     * @param d the posted writes
     */
    @Benchmark
    @BenchmarkMode({Mode.AverageTime, Mode.SampleTime})
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    @OperationsPerInvocation(IN_FLIGHT)
    public void drain(Pair s, Drain d) {
        SyntheticTransport.hold(false);
        // Parks rather than spins: on two cores a spinning benchmark thread takes the core the
        // loop needs (the loop-side figure, from the loop's first poll to its last signal, is the
        // drain itself; JMH's time adds this thread's wake-up).
        while (!d.done) {
            java.util.concurrent.locks.LockSupport.parkNanos(20_000);
        }
    }

    /**
     * One 8-byte write, blocked on from the benchmark thread.
     *
     * @param s the pair
     */
    @Benchmark
    @BenchmarkMode({Mode.AverageTime, Mode.SampleTime})
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public void blockedWrite(Pair s) {
        s.connection.write(s.remote, 0, s.local, 0, 8).block(TIMEOUT);
    }

    /**
     * {@code writeAll} of {@value FabricSpiBenchmarks#TOTAL} 8-byte writes, 32 in flight.
     *
     * @param s the pair
     * @return the last result's sequence
     */
    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(FabricSpiBenchmarks.TOTAL)
    public Long writeAll(ThroughputPair s) {
        return s.connection.writeAll(s.bulk).map(r -> r.sequence()).last(-1L).block(TIMEOUT);
    }
}
