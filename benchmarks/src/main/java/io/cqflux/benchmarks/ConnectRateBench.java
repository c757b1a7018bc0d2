package io.cqflux.benchmarks;

import io.cqflux.core.RegionAccess;
import io.cqflux.epoll.WaitStrategy;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import reactor.core.publisher.Flux;

/**
 * How many connections a server sets up per second ({@code ./cqflux bench scale -R N}): one
 * server and one client {@link Cqflux} (one loop each, {@code ScaleBench}'s builder: its {@code -s},
 * {@code -G}, {@code -K} and {@code -B}), fabric/tcp on 127.0.0.1, nothing else running in them.
 * Each round connects N clients, {@code -p} in flight, each establishment counted when the
 * client's connect completes (the server's side is established by then or a moment after), then
 * closes them all, {@code 64} at a time, and waits until the server holds none before the next
 * round. The first {@link #WARMUP} rounds are the JVM's warm-up (linking the bindings, the JIT,
 * which goes on for several rounds: the rate still rose over the first four in trial runs): they
 * are printed, and left out of the median of the {@link #ROUNDS} after them. Both ends share the
 * machine's CPUs: a server with clients elsewhere has them to itself.
 */
final class ConnectRateBench {
    /** Rounds printed but not in the median: the JVM's warm-up. */
    static final int WARMUP = 6;
    /** Measured rounds (odd: the median is one of them). */
    static final int ROUNDS = 5;
    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    private ConnectRateBench() {
    }

    static void run(WaitStrategy strategy, int connects, int inFlight) throws InterruptedException {
        try (Arena arena = Arena.ofShared();
             Cqflux server = ScaleBench.builder(strategy).build();
             Cqflux client = ScaleBench.builder(strategy).build()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
            // Connections arrive faster than a subscriber of connections() could be asked for
            // them: a handler keeps each until it closes; the handshakes in progress may reach the
            // client's in-flight count.
            AcceptOptions options = ScaleBench.exposing(exposed).withMaxPendingHandshakes(Math.max(inFlight,
                    AcceptOptions.DEFAULT_MAX_PENDING_HANDSHAKES));
            RdmaServer s = server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), options,
                    c -> c.onDispose()).block(TIMEOUT);
            System.out.println("# keys scoped to their connection: " + s.keysScopedToConnection());
            System.out.printf(Locale.ROOT, "%-9s %8s %10s %12s %10s %12s%n", "round", "connects", "ms", "connects/s",
                    "close_ms", "closes/s");
            double[] rates = new double[ROUNDS];
            for (int round = 0; round < WARMUP + ROUNDS; round++) {
                long t0 = System.nanoTime();
                List<RdmaConnection> cs = Flux.range(0, connects).flatMap(i -> client.connect(s.address()), inFlight)
                        .collectList().block(TIMEOUT);
                long t1 = System.nanoTime();
                Flux.fromIterable(cs).flatMap(c -> {
                    c.dispose();
                    return c.onDispose();
                }, 64).blockLast(TIMEOUT);
                long t2 = System.nanoTime();
                // The next round starts once the server's sides of these are gone too.
                long drain = System.nanoTime() + TIMEOUT.toNanos();
                while ((s.stats().connections() > 0 || s.stats().pendingHandshakes() > 0) && System.nanoTime() < drain) {
                    Thread.sleep(1);
                }
                if (s.stats().connections() > 0 || s.stats().pendingHandshakes() > 0) {
                    System.out.printf(Locale.ROOT, "# the server still holds connections after %s: %s%n", TIMEOUT,
                            s.stats());
                }
                double rate = connects / ((t1 - t0) / 1e9);
                if (round >= WARMUP) {
                    rates[round - WARMUP] = rate;
                }
                System.out.printf(Locale.ROOT, "%-9s %8d %10.0f %12.0f %10.0f %12.0f%n",
                        round < WARMUP ? "warm-up " + (round + 1) : Integer.toString(round - WARMUP + 1), connects,
                        (t1 - t0) / 1e6,
                        rate, (t2 - t1) / 1e6, connects / ((t2 - t1) / 1e9));
            }
            Arrays.sort(rates);
            System.out.printf(Locale.ROOT, "# connects/s over the %d measured rounds: median %.0f, min %.0f, max %.0f;"
                    + " server %s%n", ROUNDS, rates[ROUNDS / 2], rates[0], rates[ROUNDS - 1], s.stats());
            s.disposeNow(TIMEOUT);
        }
    }
}
