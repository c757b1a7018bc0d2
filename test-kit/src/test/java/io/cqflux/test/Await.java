package io.cqflux.test;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Test support: a bounded wait for a condition, polled every millisecond. */
final class Await {

    private Await() {
    }

    /**
     * @param condition what to wait for
     * @param max the longest wait
     * @return whether the condition held within {@code max} (false also when interrupted, the flag kept)
     */
    static boolean until(BooleanSupplier condition, Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline || Thread.currentThread().isInterrupted()) {
                return false;
            }
            LockSupport.parkNanos(1_000_000);
        }
        return true;
    }
}
