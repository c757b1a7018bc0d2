package io.cqflux.benchmarks;

import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.epoll.loop.LoopConfig;
import io.cqflux.epoll.loop.Registration;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
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
 * The event loop alone, without a transport.
 *
 * <ul>
 *   <li>{@link Wakeup#executeRoundTrip}: the caller hands a task to the loop with
 *       {@code execute} and spins until it has run. With BLOCKING the loop sleeps in epoll
 *       between calls, so this is one eventfd wake-up per operation; compare with
 *       {@code eventfd.spin.rtt} from {@code c/eventfd_loop_bench.c} (same shape).</li>
 *   <li>{@link Drain#drainBurst}: a synthetic queue signals a burst of {@value Drain#BURST}
 *       completions; the loop drains them in batches of {@code batch} and the caller spins
 *       until the sink saw them all. Reported per completion (ops/s): the batch-size effect.</li>
 * </ul>
 */
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-XX:+UseParallelGC"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class LoopBenchmarks {

    /** One loop per wait strategy; a preallocated task that bumps a counter. */
    @State(Scope.Benchmark)
    public static class Wakeup {
        private static final VarHandle DONE;

        static {
            try {
                DONE = MethodHandles.lookup().findVarHandle(Wakeup.class, "done", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /** The loop's wait strategy. */
        @Param({"BLOCKING", "BUSY_POLL", "ADAPTIVE"})
        public String strategy;

        EventLoop loop;
        @SuppressWarnings("unused") // through DONE
        private volatile long done;
        private final Runnable task = () -> DONE.getAndAdd(this, 1L);

        /** Starts the loop. */
        @Setup(Level.Trial)
        public void start() {
            loop = EventLoop.start(new LoopConfig("bench-wakeup", Strategies.of(strategy), 32, null));
        }

        /** Stops it. */
        @TearDown(Level.Trial)
        public void stop() {
            loop.shutdownGracefully(Duration.ofSeconds(5)).orTimeout(10, TimeUnit.SECONDS).join();
        }
    }

    /**
     * Cross-thread {@code execute} round trip.
     *
     * @param s the loop
     * @return the counter, so that nothing is dead code
     */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public long executeRoundTrip(Wakeup s) {
        long before = (long) Wakeup.DONE.getAcquire(s);
        s.loop.execute(s.task);
        long now;
        long spins = 0;
        while ((now = (long) Wakeup.DONE.getAcquire(s)) == before) {
            Thread.onSpinWait();
            spins = bounded(spins, "the execute()d task");
        }
        return now;
    }

    /** A loop with one synthetic queue registered, drained in batches of {@code batch}. */
    @State(Scope.Benchmark)
    public static class Drain {
        /** Completions signalled per invocation. */
        public static final int BURST = 1024;
        private static final VarHandle DELIVERED;

        static {
            try {
                DELIVERED = MethodHandles.lookup().findVarHandle(Drain.class, "delivered", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /** Completions read per native drain call ({@link LoopConfig#batchSize()}). */
        @Param({"1", "16", "64"})
        public int batch;

        /** The loop's wait strategy. */
        @Param({"BLOCKING", "BUSY_POLL"})
        public String strategy;

        EventLoop loop;
        SyntheticQueue queue;
        Registration registration;
        @SuppressWarnings("unused") // through DELIVERED
        private volatile long delivered;
        private long contexts;

        /** Starts the loop and registers the queue on it. */
        @Setup(Level.Trial)
        public void start() {
            loop = EventLoop.start(new LoopConfig("bench-drain", Strategies.of(strategy), batch, null));
            queue = new SyntheticQueue();
            CompletableFuture<Registration> reg = new CompletableFuture<>();
            loop.execute(() -> {
                try {
                    reg.complete(loop.register(queue, c -> {
                        contexts += c.context(); // read the entry, like a real sink would
                        DELIVERED.setRelease(this, (long) DELIVERED.getOpaque(this) + 1);
                    }));
                } catch (RuntimeException e) {
                    reg.completeExceptionally(e);
                }
            });
            registration = reg.orTimeout(10, TimeUnit.SECONDS).join();
        }

        /** Unregisters, stops the loop, frees the queue. */
        @TearDown(Level.Trial)
        public void stop() {
            registration.close();
            loop.shutdownGracefully(Duration.ofSeconds(5)).orTimeout(10, TimeUnit.SECONDS).join();
            queue.close();
        }
    }

    /**
     * Signals a burst and waits until all of it was delivered.
     *
     * @param s the loop and queue
     * @return the delivered count
     */
    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(Drain.BURST)
    public long drainBurst(Drain s) {
        long target = (long) Drain.DELIVERED.getAcquire(s) + Drain.BURST;
        s.queue.produce(Drain.BURST);
        long now;
        long spins = 0;
        while ((now = (long) Drain.DELIVERED.getAcquire(s)) < target) {
            Thread.onSpinWait();
            spins = bounded(spins, "the burst's completions");
        }
        return now;
    }

    /** Most time a spin wait may take before the benchmark fails (a dead loop must not hang JMH). */
    private static final long SPIN_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(60);

    /**
     * Counts a spin. After 2^20 spins (far beyond any normal wait) it starts watching the clock:
     * the value returned is then the negated start time (minus one), and every further call
     * fails once {@link #SPIN_LIMIT_NANOS} have passed. The fast path is one add and one test.
     *
     * @param spins the count so far, or the negated start time
     * @param what what is awaited, for the message
     * @return the new count, or the negated start time
     */
    private static long bounded(long spins, String what) {
        if (spins >= 0) {
            return (spins + 1 & 0xF_FFFF) == 0 ? -System.nanoTime() - 1 : spins + 1;
        }
        long start = -spins - 1;
        if (System.nanoTime() - start > SPIN_LIMIT_NANOS) {
            throw new IllegalStateException(what + " did not arrive within 60 s: is the event loop alive?");
        }
        return spins;
    }
}
