package io.cqflux.epoll;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Not a test: a rough one-off comparison of {@link TaskQueue} with {@link ConcurrentLinkedQueue}
 * (producers offering, one consumer polling). Run after a build with
 * {@code java -cp epoll-bridge/target/classes:epoll-bridge/target/test-classes:core/target/classes
 * io.cqflux.epoll.TaskQueueThroughput [producers]}.
 */
final class TaskQueueThroughput {

    private TaskQueueThroughput() {
    }

    public static void main(String[] args) throws Exception {
        int producers = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int each = 2_000_000;
        for (int round = 0; round < 5; round++) {
            TaskQueue own = new TaskQueue();
            long a = run(producers, each, own::offer, own::poll);
            ConcurrentLinkedQueue<Runnable> clq = new ConcurrentLinkedQueue<>();
            long b = run(producers, each, clq::offer, clq::poll);
            System.out.printf("round %d, %d producers: TaskQueue %.1f Mops/s, ConcurrentLinkedQueue %.1f Mops/s%n",
                    round, producers, producers * (double) each * 1e3 / a, producers * (double) each * 1e3 / b);
        }
    }

    private static long run(int producers, int each, Predicate<Runnable> offer, Supplier<Runnable> poll)
            throws Exception {
        Runnable task = () -> { };
        Thread[] ts = new Thread[producers];
        long t0 = System.nanoTime();
        for (int p = 0; p < producers; p++) {
            ts[p] = Thread.ofPlatform().start(() -> {
                for (int i = 0; i < each; i++) {
                    offer.test(task);
                }
            });
        }
        long taken = 0;
        long total = (long) producers * each;
        while (taken < total) {
            if (poll.get() != null) {
                taken++;
            } else {
                Thread.onSpinWait();
            }
        }
        for (Thread t : ts) {
            t.join();
        }
        return System.nanoTime() - t0;
    }
}
