package io.cqflux.reactor.internal.pool;

import io.cqflux.reactor.PeerPool;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a {@link PeerPool}'s {@code onDispose} waits for: the release of every connection the pool
 * started, a cancelled connect's too (the Connector hands the pool each new connection's release
 * future), and the end of every connect subscription. The pool is terminated once it is closed
 * and both are done.
 */
final class PoolReleases {
    /** Release futures of the connections the pool started and that are not released yet. */
    private final Set<CompletableFuture<Void>> releases = ConcurrentHashMap.newKeySet();
    /** Connect subscriptions that have not terminated (or been cancelled) yet. */
    private final AtomicInteger connectsInProgress = new AtomicInteger();
    private final CompletableFuture<Void> terminated = new CompletableFuture<>();
    private volatile boolean closed;

    /**
     * Counts a connect subscription about to start; call under the pool's lock while it is open,
     * so that no connect starts after {@link #close()}.
     *
     * @return what ends the count, once however often it runs (the attempt's outcome handled, or
     *     the attempt disposed)
     */
    Runnable connectStarted() {
        connectsInProgress.incrementAndGet();
        AtomicBoolean counted = new AtomicBoolean(true);
        return () -> {
            if (counted.compareAndSet(true, false)) {
                connectsInProgress.decrementAndGet();
                checkTerminated();
            }
        };
    }

    /** Keeps a connection's release future until it completes. */
    void track(CompletableFuture<Void> release) {
        releases.add(release);
        release.whenComplete((v, t) -> {
            releases.remove(release);
            checkTerminated();
        });
    }

    /** The pool closed: it terminates once what it started is released; call under its lock. */
    void close() {
        closed = true;
    }

    /** Completes {@link #terminated()} when the pool is closed and nothing it started is left. */
    void checkTerminated() {
        if (closed && connectsInProgress.get() == 0 && releases.isEmpty()) {
            terminated.complete(null);
        }
    }

    /** {@return the future that completes once the pool is closed and everything released; it never fails} */
    CompletableFuture<Void> terminated() {
        return terminated;
    }

    /** {@return what is left to release, for a timeout's message} */
    String pending() {
        return releases.size() + " connection(s) not released yet, " + connectsInProgress.get() + " connect(s) not ended";
    }
}
