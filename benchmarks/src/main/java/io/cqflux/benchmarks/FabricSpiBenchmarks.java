package io.cqflux.benchmarks;

import io.cqflux.core.Completion;
import io.cqflux.core.ConnectionConfig;
import java.util.concurrent.CompletableFuture;
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

/**
 * The fabric transport through the SPI and the event loop, in the shapes of
 * {@code c/fabric_rma_bench.c}: the client's loop posts the next operation from the completion
 * of the previous one (one in flight: latency), or keeps {@value #WINDOW} in flight
 * (throughput). Writes complete at {@code FI_DELIVERY_COMPLETE} (the default
 * {@link io.cqflux.core.CompletionLevel#DELIVERY}), like the C program's.
 *
 * <p>The benchmark thread only starts a chain on the client loop and waits for its end, so one
 * cross-thread hand-off is spread over {@value #CHAIN} (latency) or {@value #TOTAL}
 * (throughput) operations: the figures are the loop's and the transport's, as in C.
 */
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-XX:+UseParallelGC"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class FabricSpiBenchmarks {

    /** Operations per latency invocation. */
    static final int CHAIN = 200;
    /** Operations per throughput invocation. */
    static final int TOTAL = 2048;
    /** Operations in flight in the throughput benchmarks (as in the C baseline). */
    static final int WINDOW = 32;
    /** Operations in flight in {@link #writeThroughput64}: the throughput goal, C's {@code tput.w64}. */
    static final int WIDE_WINDOW = 64;

    /** A connected pair per size and strategy. */
    @State(Scope.Benchmark)
    public static class Pair {
        /** Bytes per operation. */
        @Param({"8", "4096"})
        public int size;

        /** The wait strategy of both loops. */
        @Param({"BLOCKING", "BUSY_POLL", "ADAPTIVE"})
        public String strategy;

        FabricPair pair;
        Driver driver;

        /** Connects. */
        @Setup(Level.Trial)
        public void setUp() {
            pair = new FabricPair(Strategies.of(strategy), ConnectionConfig.DEFAULT);
            driver = new Driver(pair, size);
            FabricPair.onLoop(pair.clientLoop, () -> {
                pair.clientSink = driver::onCompletion;
                return null;
            });
        }

        /** Disconnects and frees. */
        @TearDown(Level.Trial)
        public void tearDown() {
            pair.close();
        }
    }

    /**
     * Posts operations on the client loop and counts their completions; one run at a time.
     * Loop-confined except {@link #run}, which hands the start over and waits.
     */
    static final class Driver {
        private final FabricPair p;
        private final int size;
        private boolean read;
        private int toPost;
        private int outstanding;
        private long slot;
        private CompletableFuture<Void> done;
        private final Runnable start = this::start;
        private int window;

        Driver(FabricPair p, int size) {
            this.p = p;
            this.size = size;
        }

        /** Runs {@code total} operations with up to {@code window} in flight; returns when all completed. */
        void run(boolean read, int total, int window) {
            this.read = read;
            this.toPost = total;
            this.window = window;
            CompletableFuture<Void> f = new CompletableFuture<>();
            done = f;
            p.clientLoop.execute(start);
            FabricPair.wait(f, (read ? "reads" : "writes") + " of " + size + " B");
        }

        private void start() {
            try {
                fill();
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        }

        private void fill() {
            while (outstanding < window && toPost > 0) {
                if (!post()) {
                    if (outstanding == 0) {
                        p.clientLoop.execute(start); // queue momentarily full with nothing to drain: retry
                    }
                    return;
                }
                toPost--;
                outstanding++;
            }
        }

        private boolean post() {
            long s = slot++ % window; // a slot per write in flight, as the C program's
            long off = s * size;
            return read
                    ? p.client.read(p.clientRegion, off, p.remote, off, size, s, true)
                    : p.client.write(p.remote, off, p.clientRegion, off, size, s, true);
        }

        void onCompletion(Completion c) {
            if (!c.isSuccess()) {
                done.completeExceptionally(new IllegalStateException("operation failed: " + c));
                return;
            }
            outstanding--;
            if (toPost > 0) {
                start();
            } else if (outstanding == 0) {
                done.complete(null);
            }
        }
    }

    /**
     * One write in flight, posted from the previous one's completion.
     *
     * @param s the pair
     */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    @OperationsPerInvocation(CHAIN)
    public void writeLatency(Pair s) {
        s.driver.run(false, CHAIN, 1);
    }

    /**
     * One read in flight.
     *
     * @param s the pair
     */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    @OperationsPerInvocation(CHAIN)
    public void readLatency(Pair s) {
        s.driver.run(true, CHAIN, 1);
    }

    /**
     * {@value #WINDOW} writes in flight.
     *
     * @param s the pair
     */
    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(TOTAL)
    public void writeThroughput(Pair s) {
        s.driver.run(false, TOTAL, WINDOW);
    }

    /**
     * {@value #WIDE_WINDOW} writes in flight: the throughput goal (≥ 0.95 × C's
     * {@code fabric.write.<size>.<mode>.tput.w64}); the connection's 128 send credits
     * ({@code ConnectionConfig.DEFAULT}) leave room for them.
     *
     * @param s the pair
     */
    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(TOTAL)
    public void writeThroughput64(Pair s) {
        s.driver.run(false, TOTAL, WIDE_WINDOW);
    }
}
