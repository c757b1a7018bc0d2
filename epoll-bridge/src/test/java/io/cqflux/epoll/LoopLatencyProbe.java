package io.cqflux.epoll;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Not a test: a rough one-off measurement of completion latency through the loop (a thread adds
 * a completion to an eventfd-backed test queue and signals it; the time until the sink sees it),
 * per wait strategy. Run after a build with
 * {@code java --enable-native-access=ALL-UNNAMED -cp epoll-bridge/target/classes:epoll-bridge/target/test-classes:core/target/classes
 * io.cqflux.epoll.LoopLatencyProbe}.
 */
final class LoopLatencyProbe {

    private LoopLatencyProbe() {
    }

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        for (WaitStrategy w : new WaitStrategy[] {WaitStrategy.BLOCKING, WaitStrategy.adaptive(1000), WaitStrategy.BUSY_POLL}) {
            try (EventLoop loop = EventLoop.start(new LoopConfig("latency", w, 32, null));
                    EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("latency")) {
                AtomicLong seen = new AtomicLong(-1);
                loop.register(q, c -> seen.set(c.context()));
                Await.roundTrip(loop);
                long[] ns = new long[n];
                for (int i = -2000; i < n; i++) { // the first 2000 warm up
                    long t0 = System.nanoTime();
                    q.add(i + 2000);
                    while (seen.get() != i + 2000) {
                        Thread.onSpinWait();
                    }
                    if (i >= 0) {
                        ns[i] = System.nanoTime() - t0;
                    }
                }
                Arrays.sort(ns);
                System.out.printf("%-14s n=%d  p50 %6.1f us  p90 %6.1f us  p99 %6.1f us  %s%n", w, n, ns[n / 2] / 1e3,
                        ns[n * 9 / 10] / 1e3, ns[n * 99 / 100] / 1e3, loop.stats());
            }
        }
    }
}
