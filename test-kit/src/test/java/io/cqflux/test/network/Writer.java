package io.cqflux.test.network;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;
import reactor.core.publisher.Mono;

/**
 * Keeps durable writes of consecutive records running: at most {@code window} in flight, one
 * started every {@code paceNanos} at most, until stopped, until one has failed (nothing after the
 * connection's end is worth starting), or until the records run out. Runs on its own virtual
 * thread; it only subscribes, it never blocks on a write.
 */
final class Writer implements AutoCloseable {
    private final AtomicBoolean stop = new AtomicBoolean();
    private final Thread thread;

    /**
     * @param records the tally each write is counted in
     * @param capacity records available
     * @param window writes in flight at most
     * @param paceNanos the least time between two starts
     * @param write record {@code i}'s durable write (cold)
     */
    Writer(Records records, int capacity, int window, long paceNanos, IntFunction<Mono<Void>> write) {
        Semaphore inFlight = new Semaphore(window);
        thread = Thread.ofVirtual().name("net-writer").start(() -> {
            for (int i = 0; i < capacity && !stop.get(); i++) {
                try {
                    while (!inFlight.tryAcquire(10, TimeUnit.MILLISECONDS)) {
                        if (stop.get()) {
                            return;
                        }
                    }
                } catch (InterruptedException e) {
                    return;
                }
                if (stop.get()) {
                    return;
                }
                int rec = i;
                records.track(rec, write.apply(rec)).doFinally(s -> inFlight.release()).subscribe(v -> { }, e -> stop.set(true));
                LockSupport.parkNanos(paceNanos);
            }
        });
    }

    /** Stops starting writes and waits (bounded) for the thread to end; those started run on. */
    @Override
    public void close() {
        stop.set(true);
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
