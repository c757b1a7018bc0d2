package io.cqflux.reactor;

import io.cqflux.core.ResourceClosedException;
import io.cqflux.reactor.internal.connection.Lifecycle;
import io.cqflux.reactor.internal.pool.PoolCore;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/*
 * Design: the public face of a pool.
 *
 * What the pool is and does (its parts, its lock, its state machine, how it ends) is PoolCore's,
 * whose design block describes it; this class holds the pool's public contract, its logger and
 * the address check, and forwards the rest.
 */

/**
 * Connections to one peer that heal: the pool connects at once, reconnects with backoff when a
 * connection ends, learns the peer's regions again on each reconnect, and hands live connections
 * to operations. Made by {@link Cqflux#peerPool(InetSocketAddress, PeerPoolOptions)}; modelled on
 * reactor-pool and r2dbc-pool (acquire, validate, evict), except that a connection is shared:
 * RDMA connections multiplex, so many operations use one connection at once.
 *
 * <pre>{@code
 * PeerPool pool = cqflux.peerPool(new InetSocketAddress("10.0.0.2", 7471), PeerPoolOptions.defaults());
 * Mono<Void> put = pool.withConnection(conn ->
 *         conn.durableWrite(conn.remoteRegion(0), slot * 4096, staging, 0, 4096));
 * }</pre>
 *
 * <p><b>Regions.</b> Each connection carries the peer's hello, so its
 * {@link RdmaConnection#remoteRegions()} are the peer's regions as of that connection. Look them up
 * inside the callback ({@code conn.remoteRegion(0)}) every time: a {@link PeerRegion} of a
 * connection that ended is useless, and a restarted peer may expose other regions (other keys,
 * other sizes).
 *
 * <p><b>During a reconnect</b> (no connection live), an operation waits for one at most
 * {@link PeerPoolOptions#maxAcquireTime()} and then fails with a
 * {@link io.cqflux.core.ConnectionException} ({@code UNREACHABLE}) naming the address and how
 * long it waited, or fails at once ({@link PeerPoolOptions.WhenUnavailable#FAIL_FAST}).
 *
 * <p><b>How soon it heals.</b> The attempts of a reconnect start at most
 * {@code max(reconnectBackoffMax, minAttemptTime)} apart ({@link PeerPoolOptions#minAttemptTime()}
 * capped by the connect timeout), so once the network returns the pool is served within that and
 * one connect. A reconnect attempt runs at most the backoff delay before it, at least
 * {@code minAttemptTime}: a connect sent into a partition cannot see the link come back, so one
 * still running then is abandoned (its set-up released; {@link PeerPoolEvent.Kind#RETRYING} with a
 * zero delay) and the next starts at once. The pool's first connect keeps the full connect timeout.
 *
 * <p><b>Nothing is retried.</b> Operations in flight on a connection that ends fail as they do
 * without a pool ({@code ConnectionException} {@code LOST} or {@code CLOSED}): a write or a durable
 * write may or may not have reached the peer, and replaying it is not idempotent in general, so
 * the pool never does. Retry at the application level where you know it is safe, e.g.
 * {@code pool.withConnection(...).retryWhen(Retry.backoff(3, Duration.ofMillis(50)))}.
 *
 * <p><b>State</b> is {@link #state()}; every change of a connection is on {@link #events()}.
 * Logging (logger {@code io.cqflux.reactor.PeerPool}) is per outage of a connection slot: an
 * outage begins with a loss or a failed attempt and ends once a connection has stayed up
 * {@link PeerPoolOptions#backoffResetAfter()}. Within one, the first loss at WARN, one line with
 * the address and the cause (a connection that ended {@code LOST} has already said so on
 * {@code io.cqflux.reactor.internal.connection.ConnectionCore}, and the pool adds nothing at WARN then), the first
 * failed attempt at WARN (before the first connection) or INFO, the first reconnect at INFO, and
 * everything further (attempts, reconnects, losses of connections that did not stay up) at
 * DEBUG, so a peer that accepts and drops every connection costs one WARN line, not one per
 * connect.
 *
 * <p><b>Lifetime and thread safety.</b> Thread-safe. {@link #dispose()} (or {@link #close()}) is
 * idempotent and returns at once: it stops reconnecting, fails waiting operations with a
 * {@link ResourceClosedException}, and closes the pool's connections (what is in flight on them
 * fails {@code CLOSED}); {@link #onDispose()} completes once every connection the pool opened is
 * released, and {@link #disposeNow(Duration)} waits for it. Disposing the {@link Cqflux} disposes
 * the pool too.
 *
 * <p><b>A connect request that can no longer be sent.</b> A region the pool exposes
 * ({@link ConnectOptions#exposing(Region...)}) that is closed after the pool was made cannot be
 * described to the peer again: the next connect fails before sending anything, and so would
 * every later one. The pool then ends as a dispose ends it, but on its own: it stops
 * reconnecting, closes its live connections, fails waiting operations, and later ones, with a
 * {@link ResourceClosedException} whose message names the closed region, and emits
 * {@link PeerPoolEvent.Kind#CLOSED} with that exception as its {@link PeerPoolEvent#cause()}
 * ({@link #state()} {@code CLOSED}); it logs it once at WARN. Close such a region only after the
 * pool, or make a new pool.
 */
public final class PeerPool implements Disposable, AutoCloseable {
    /**
     * The pool's logger ({@code io.cqflux.reactor.PeerPool}); not final so that a test can watch
     * what is logged at which level (Reactor's logger factory is read once, at class load).
     */
    static volatile Logger log = Loggers.getLogger(PeerPool.class);

    /** How many of the most recent events {@link #events()} replays to a late subscriber. */
    public static final int EVENT_HISTORY = 64;

    /** The pool as a whole. */
    public enum State {
        /** No connection has been established yet; the first attempts are running. */
        CONNECTING,
        /** At least one connection is live ({@link #liveConnections()} says how many). */
        CONNECTED,
        /** Every connection ended; reconnecting with backoff. */
        RECONNECTING,
        /** Disposed, or ended on its own because its connect request can no longer be sent (an exposed region was closed). */
        CLOSED
    }

    /** Everything the pool is and does: this class is its public face. */
    private final PoolCore core;

    /** Made by its core ({@link PoolCore#start}), once. */
    PeerPool(PoolCore core) {
        this.core = core;
    }

    /**
     * Refuses an address a pool cannot keep reconnecting to: unresolved (the pool would resolve
     * nothing; rpma's connect refuses it too) or without a port. {@link Cqflux#peerPool} runs it;
     * code that keeps an address for a pool made later (the Spring starter's peers) may run it
     * first.
     *
     * @param address the peer's address
     * @throws IllegalArgumentException naming the address
     */
    public static void checkAddress(InetSocketAddress address) {
        if (address.isUnresolved() || address.getPort() == 0) {
            throw new IllegalArgumentException("peer address " + address + " needs a resolved host and a port in"
                    + " [1, 65535]" + (address.isUnresolved() ? " (resolve " + address.getHostString()
                    + " first, e.g. new InetSocketAddress(host, port))" : ""));
        }
    }

    /** {@return the peer's address} */
    public InetSocketAddress address() {
        return core.address();
    }

    /** {@return the options the pool was made with} */
    public PeerPoolOptions options() {
        return core.options();
    }

    /**
     * {@return the pool's state now}: {@link State#CONNECTED} only while a connection is live, so a
     * pool whose only connection's end has begun (a flushed completion, the keep-alive or the
     * operation deadline deciding) says {@link State#RECONNECTING} before that end is reported
     */
    public State state() {
        return core.state();
    }

    /** {@return how many connections are live now, 0..{@link PeerPoolOptions#size()}; for metrics} */
    public int liveConnections() {
        return core.liveConnections();
    }

    /**
     * {@return the state changes of the pool's connections, in order ({@link PeerPoolEvent}); hot,
     * replaying the {@value #EVENT_HISTORY} most recent to a late subscriber; it completes after
     * {@link PeerPoolEvent.Kind#CLOSED}. Signals come on the thread that made the change (an event
     * loop, a subscriber's or the disposing thread): don't block in them}
     */
    public Flux<PeerPoolEvent> events() {
        return core.events();
    }

    /**
     * Hands a live connection to {@code action} and returns what it returns: the way to use the
     * pool. The connection is the live one with the fewest operations in flight and waiting (ties
     * in turn); while none is live, the call waits for one (bounded) or fails fast, as
     * {@link PeerPoolOptions#whenUnavailable()} says. Look the peer's regions up on the connection
     * given ({@code conn.remoteRegion(0)}): they are re-learned on each reconnect. The connection
     * is shared: don't dispose it (a disposed one is replaced through a reconnect).
     *
     * <p>Nothing is retried: an operation that fails because its connection ended fails with the
     * connection's {@link io.cqflux.core.ConnectionException}, as without a pool (a write may or
     * may not have landed; replaying it is the caller's decision).
     *
     * @param action what to do with the connection; called once per subscription, on the thread
     *     that found the connection (often an event loop: don't block)
     * @param <T> the result type
     * @return a cold Mono of the action's result; it fails with a
     *     {@link io.cqflux.core.ConnectionException} ({@code UNREACHABLE}) when no connection
     *     became live in time (or at once with FAIL_FAST), with a
     *     {@link io.cqflux.core.QueueFullException} when {@link PeerPoolOptions#maxPendingAcquires()}
     *     operations wait already, with a {@link ResourceClosedException} once the pool is disposed
     *     or has ended because its connect request can no longer be sent (the message names why)
     */
    public <T> Mono<T> withConnection(Function<? super RdmaConnection, ? extends Mono<? extends T>> action) {
        Objects.requireNonNull(action, "action");
        return acquire().flatMap(c -> Objects.requireNonNull(action.apply(c),
                "withConnection's action returned null instead of a Mono"));
    }

    /**
     * Gets a live connection, as {@link #withConnection(Function)} does, for use with operators
     * that need the connection itself ({@code flatMapMany(conn -> conn.writeAll(...))}). The
     * connection is shared, not leased: there is nothing to release, and it must not be disposed.
     * Look regions up on it, and get a new one for later work: this one may end at any time.
     *
     * @return a cold Mono of a live connection, failing as {@link #withConnection(Function)} says
     */
    public Mono<RdmaConnection> acquire() {
        return core.acquire();
    }

    // ---------------------------------------------------------------- lifetime

    /**
     * Stops reconnecting, fails every waiting operation with a {@link ResourceClosedException},
     * cancels a connect in progress and closes the live connections in order (what is in flight on
     * them fails with {@link io.cqflux.core.ConnectionException} {@code CLOSED}), emits
     * {@link PeerPoolEvent.Kind#CLOSED} and completes {@link #events()}. Idempotent, non-blocking,
     * from any thread.
     */
    @Override
    public void dispose() {
        core.end(null);
    }

    /**
     * {@return whether {@link #dispose()} was called (or the {@link Cqflux} was disposed), or the
     * pool ended on its own because its connect request can no longer be sent}
     */
    @Override
    public boolean isDisposed() {
        return core.recordedState() == State.CLOSED;
    }

    /**
     * {@return a Mono that completes once the pool is disposed and every connection it opened is
     * released (native objects freed); it never fails; late subscribers complete at once}
     */
    public Mono<Void> onDispose() {
        return Mono.fromFuture(core.terminated(), true);
    }

    /**
     * Disposes the pool and blocks until every connection it opened is released.
     *
     * @param timeout how long to wait, at least zero
     * @throws IllegalStateException when not released within {@code timeout} (the message says
     *     what is left), or when called on a Reactor {@code NonBlocking} thread such as an event
     *     loop (nothing is disposed then)
     * @throws IllegalArgumentException when {@code timeout} is negative
     */
    public void disposeNow(Duration timeout) {
        Lifecycle.checkTimeout(timeout, "timeout");
        Lifecycle.checkMayBlock(this);
        dispose();
        Lifecycle.await(this, core.terminated(), timeout, core::pending);
    }

    /**
     * The same as {@link #dispose()}: starts closing and returns at once; for try-with-resources.
     * Use {@link #disposeNow(Duration)} to wait for the release.
     */
    @Override
    public void close() {
        dispose();
    }

    @Override
    public String toString() {
        return "PeerPool[" + core.address() + ", " + core.recordedState() + "]";
    }
}
