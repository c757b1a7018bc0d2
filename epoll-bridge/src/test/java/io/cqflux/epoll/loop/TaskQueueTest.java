package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The closeable MPSC queue: per-producer FIFO, nothing lost or duplicated, close semantics. */
class TaskQueueTest {

    /** A task that only carries its producer and sequence number. */
    private record Tagged(int producer, int seq) implements Runnable {
        @Override
        public void run() {
        }
    }

    @Test
    void fourProducers_oneConsumer_everyTaskOnceInPerProducerOrder() throws Exception {
        TaskQueue q = new TaskQueue();
        int producers = 4;
        int each = 200_000;
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int id = p;
            threads.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < each; i++) {
                    assertTrue(q.offer(new Tagged(id, i)));
                }
            }));
        }
        int[] next = new int[producers];
        int taken = 0;
        long deadline = System.nanoTime() + Await.TIMEOUT.toNanos();
        while (taken < producers * each) {
            Runnable r = q.poll();
            if (r == null) {
                assertTrue(System.nanoTime() < deadline, "timed out after " + taken + " tasks");
                Thread.onSpinWait();
                continue;
            }
            Tagged t = (Tagged) r;
            assertEquals(next[t.producer()], t.seq(), "order of producer " + t.producer());
            next[t.producer()]++;
            taken++;
        }
        for (Thread t : threads) {
            t.join(Await.TIMEOUT.toMillis());
        }
        assertNull(q.poll());
        assertTrue(q.isEmpty());
    }

    @Test
    void close_rejectsLaterOffers_andKeepsEveryAcceptedTask() throws Exception {
        TaskQueue q = new TaskQueue();
        AtomicInteger accepted = new AtomicInteger();
        AtomicInteger rejected = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < 4; p++) {
            threads.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 50_000; i++) {
                    if (q.offer(() -> { })) {
                        accepted.incrementAndGet();
                    } else {
                        rejected.incrementAndGet();
                    }
                }
            }));
        }
        int taken = 0;
        while (taken < 1000) {
            if (q.poll() != null) {
                taken++;
            }
        }
        q.close(); // while the producers are still offering
        q.close();
        while (q.pollClosed() != null) {
            taken++;
        }
        for (Thread t : threads) {
            t.join(Await.TIMEOUT.toMillis());
        }
        assertEquals(accepted.get(), taken, "every accepted task is taken exactly once");
        assertEquals(200_000, accepted.get() + rejected.get());
        assertFalse(q.offer(() -> { }));
        assertTrue(q.isEmpty());
        assertNull(q.pollClosed());
    }

    @Test
    void isEmpty_seesAnOfferBeforeItIsLinked() {
        TaskQueue q = new TaskQueue();
        assertTrue(q.isEmpty());
        q.offer(() -> { });
        assertFalse(q.isEmpty());
        q.poll();
        assertTrue(q.isEmpty());
    }
}
