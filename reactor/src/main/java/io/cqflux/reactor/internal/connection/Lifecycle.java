package io.cqflux.reactor.internal.connection;

import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import reactor.core.scheduler.Schedulers;

/**
 * The blocking half of {@code disposeNow(Duration)} shared by {@link Cqflux}, {@link RdmaServer} and
 * {@link RdmaConnection}: argument checks, the refusal to block a Reactor {@code NonBlocking} thread,
 * and an {@link IllegalStateException} that says what was not released in time.
 */
public final class Lifecycle {
    private Lifecycle() {
    }

    /**
     * Checks a shutdown budget.
     *
     * @param timeout the budget
     * @param what the parameter's name for the message
     * @return {@code timeout}
     * @throws IllegalArgumentException when it is negative
     */
    public static Duration checkTimeout(Duration timeout, String what) {
        Objects.requireNonNull(timeout, what);
        if (timeout.isNegative()) {
            throw new IllegalArgumentException(what + " " + timeout + " is negative: it must be at least PT0S");
        }
        return timeout;
    }

    /**
     * Refuses to block the calling thread when Reactor marks it {@code NonBlocking} (an event-loop
     * thread, a parallel scheduler's): blocking there can deadlock the very loop that would
     * complete the release, and Reactor's own {@code block()} refuses it the same way.
     *
     * @param what the object whose {@code disposeNow} was called
     * @throws IllegalStateException on such a thread
     */
    public static void checkMayBlock(Object what) {
        if (Schedulers.isInNonBlockingThread()) {
            throw new IllegalStateException("disposeNow on " + what + " would block thread "
                    + Thread.currentThread().getName() + ", which is NonBlocking (an event loop or a parallel"
                    + " scheduler); call dispose() and compose with onDispose() instead");
        }
    }

    /**
     * Waits for a release.
     *
     * @param what the object being released
     * @param released completes once it is released
     * @param timeout how long to wait, at least zero
     * @param unfinished describes what has not been released yet (called on timeout only)
     * @throws IllegalStateException when it was not released in time, or the wait was interrupted
     *     (the interrupt status is kept)
     */
    public static void await(Object what, CompletableFuture<Void> released, Duration timeout, Supplier<String> unfinished) {
        try {
            // convert saturates: a budget of centuries does not overflow into a negative wait.
            released.get(TimeUnit.NANOSECONDS.convert(timeout), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new IllegalStateException(what + " was not released within " + timeout + ": " + unfinished.get());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + what + " to be released: "
                    + unfinished.get(), e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("releasing " + what + " failed", e.getCause());
        }
    }
}
