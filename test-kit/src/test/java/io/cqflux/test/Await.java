package io.cqflux.test;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Test support: a bounded wait for a condition, polled every millisecond, and a fixed pause. */
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

    /**
     * Waits {@code d}: a sleep, not {@code LockSupport.parkNanos}, which returns at once when the
     * thread holds a permit, as a test thread may after a future completed while it waited
     * (LockSupport's class comment), and would skip the wait.
     *
     * @param d how long
     */
    static void pause(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted in a pause of " + d, e);
        }
    }
}
