package io.cqflux.reactor.internal.pool;

import io.cqflux.reactor.PeerPool;
import io.cqflux.reactor.RdmaConnection;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.Disposable;
import reactor.core.publisher.MonoSink;

/**
 * An operation of a {@link PeerPool} waiting for a connection: signalled once, by whichever comes
 * first of a connection, its expiry, the pool's end or its cancellation ({@link #claim()}).
 */
final class PoolWaiter {
    private final MonoSink<RdmaConnection> sink;
    private final long since = System.nanoTime();
    private final AtomicBoolean done = new AtomicBoolean();
    private volatile Disposable timer;

    PoolWaiter(MonoSink<RdmaConnection> sink) {
        this.sink = sink;
    }

    /** {@return when the operation began to wait ({@code System.nanoTime()})} */
    long since() {
        return since;
    }

    /** Sets the expiry timer; disposes it at once when the waiter is signalled already. */
    void expireWith(Disposable t) {
        timer = t;
        if (done.get()) {
            dispose();
        }
    }

    /** {@return whether this call claimed the waiter (nothing signalled it yet)}: the timer is disposed then */
    boolean claim() {
        if (done.compareAndSet(false, true)) {
            dispose();
            return true;
        }
        return false;
    }

    void succeed(RdmaConnection c) {
        if (claim()) {
            sink.success(c);
        }
    }

    void fail(Throwable t) {
        if (claim()) {
            sink.error(t);
        }
    }

    private void dispose() {
        Disposable t = timer;
        if (t != null) {
            t.dispose();
        }
    }
}
