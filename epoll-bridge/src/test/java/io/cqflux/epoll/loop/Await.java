package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Test support: bounded waits for a condition. Every wait has a timeout and fails loudly. */
final class Await {

    static final Duration TIMEOUT = Duration.ofSeconds(20);

    private Await() {
    }

    static void until(BooleanSupplier condition, String what) {
        until(condition, TIMEOUT, what);
    }

    static void until(BooleanSupplier condition, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        int spins = 0;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out after " + timeout + " waiting for " + what);
            }
            if (++spins < 100) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(20_000);
            }
        }
    }

    static <T> T done(CompletableFuture<T> f, String what) {
        try {
            return f.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            return fail("timed out after " + TIMEOUT + " waiting for " + what);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return fail("interrupted waiting for " + what);
        } catch (java.util.concurrent.ExecutionException e) {
            return fail(what + " failed: " + e.getCause(), e.getCause());
        }
    }

    /** Runs an empty task through the loop and waits for it: everything queued before has run. */
    static void roundTrip(EventLoop loop) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        loop.execute(() -> f.complete(null));
        done(f, "a round trip through " + loop);
    }

    /** Blocks the loop thread in a task until the returned future is completed (bounded). */
    static CompletableFuture<Void> blockLoop(EventLoop loop) {
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> entered = new CompletableFuture<>();
        loop.execute(() -> {
            entered.complete(null);
            try {
                release.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("the blocking test task was never released", e);
            }
        });
        done(entered, "the loop entering the blocking task");
        return release;
    }
}
