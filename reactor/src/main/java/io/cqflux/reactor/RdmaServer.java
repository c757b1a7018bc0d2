package io.cqflux.reactor;

import io.cqflux.core.spi.Listener;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.reactor.internal.connection.Lifecycle;
import io.cqflux.reactor.internal.server.ServerCore;
import io.cqflux.reactor.internal.server.ServerHost;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A listening endpoint created by {@link Cqflux#bind}: accepts connections and hands each peer
 * the descriptors of the exposed regions in the accept's private data.
 *
 * <p><b>Isolation between clients.</b> Each accepted connection is given registrations of its
 * own of the exposed regions (its own keys), revoked once the connection's native side is gone
 * or the region is closed: a key outlives neither. With
 * {@link AcceptOptions#authenticatedBy(Authenticator)} nothing is registered for a request
 * before its authenticator allowed it. {@link AcceptOptions#withMaxConnections(int)},
 * {@link AcceptOptions#withMaxConnectionsPerAddress(int)},
 * {@link AcceptOptions#withMaxPendingHandshakes(int)} and
 * {@link AcceptOptions#withHandshakeTimeout(Duration)} bound what clients can hold; what they
 * refused is in {@link #stats()}. See {@code docs/security.md}.
 *
 * <p><b>Where connections go.</b> A server bound with a handler
 * ({@link Cqflux#bind(InetSocketAddress, Function, Region...)}) hands each one to it. Otherwise
 * {@link #connections()} streams them to one subscriber through a bounded buffer
 * ({@link Cqflux.Builder#acceptBufferSize(int)}): a connection that arrives while the buffer is
 * full, or after that subscriber cancelled, is closed and logged at WARN, never kept.
 *
 * <p><b>Lifetime and thread safety.</b> Thread-safe. {@link #dispose()} (or {@link #close()}, the
 * same for try-with-resources) stops listening: idempotent and non-blocking; {@link #onDispose()}
 * completes once the native listener is freed, {@link #disposeNow(Duration)} waits for it.
 * Connections already accepted live on; one whose accept was under way is closed in order once
 * established (its client sees {@code CLOSED}). On fabric/tcp (libfabric 1.17) a request the
 * provider had taken but not yet reported when the listener closes gets no answer: its client's
 * connect fails {@code UNREACHABLE} after its timeout, and the provider keeps that request's
 * socket. Disposing the {@link Cqflux} disposes the server too.
 */
public final class RdmaServer implements Disposable, AutoCloseable {
    /** The listener and each request's way from it to a connection (io.cqflux.reactor.internal.server). */
    private final ServerCore core;

    /**
     * A server over a bound listener, which it owns from now on; it watches nothing before
     * {@link ServerCore#start()}. Its internals get what they use of {@code owner} here, once.
     */
    RdmaServer(Cqflux owner, EventLoop loop, Listener listener, List<Region> exposed,
               Function<? super RdmaConnection, ? extends Publisher<Void>> handler,
               Function<byte[], AcceptDecision> rawAccept, AcceptOptions options) {
        ServerHost host = new ServerHost(owner.transport, owner.config, owner.limits().receiveBufferSize(),
                owner.factory, owner::nextLoop, owner::isDisposed, owner.refusalCounts);
        this.core = new ServerCore(host, loop, listener, exposed, handler, rawAccept, owner.acceptBufferSize,
                options != null ? options : AcceptOptions.defaults(exposed), () -> owner.forget(this));
    }

    /**
     * {@return whether each connection this server accepts gets keys that work on it only
     * ({@link AcceptOptions#keyScoping()}: by default where the transport can, fabric on tcp and
     * verbs; never with raw private data: nothing is registered for such a connection)}
     */
    public boolean keysScopedToConnection() {
        return core.keysScopedToConnection();
    }

    /** {@return the address it listens on, with the port actually bound} */
    public InetSocketAddress address() {
        return core.address();
    }

    /**
     * {@return the established incoming connections, for one subscriber; completes when the server
     * is disposed. Up to {@link Cqflux.Builder#acceptBufferSize(int)} connections wait for that
     * subscriber or its demand; one arriving beyond that, or after the subscriber cancelled, is
     * closed (WARN). Connections still buffered when the subscriber cancels are closed too; those
     * buffered when the server is disposed stay claimable until the {@link Cqflux} is disposed.
     * On a server bound with a handler, it fails with an {@link IllegalStateException}: the
     * handler receives every connection}
     */
    public Flux<RdmaConnection> connections() {
        return core.connections();
    }

    /**
     * Stops listening; idempotent, non-blocking, any thread. Accepted connections live on. The
     * port is free once {@link #onDispose()} completed ({@link #disposeNow(Duration)} waits for
     * it): a bind of the same port right after this call may still find it taken (on fabric/tcp
     * the listener is closed on the instance's close thread).
     */
    @Override
    public void dispose() {
        core.closeAsync();
    }

    /** {@return whether {@link #dispose()} was called or the listener ended (failed, its loop shut down)} */
    @Override
    public boolean isDisposed() {
        return core.isDisposed();
    }

    /**
     * {@return a Mono that completes once the server is released: the native listener freed and
     * {@link #connections()} completed. It never fails; late subscribers complete at once}
     */
    public Mono<Void> onDispose() {
        return Mono.fromFuture(core.closed(), true);
    }

    /**
     * Disposes the server and blocks until its listener is freed.
     *
     * @param timeout how long to wait, at least zero
     * @throws IllegalStateException when the listener was not freed within {@code timeout}, or when
     *     called on a Reactor {@code NonBlocking} thread such as an event loop (nothing is disposed
     *     then)
     * @throws IllegalArgumentException when {@code timeout} is negative
     */
    public void disposeNow(Duration timeout) {
        Lifecycle.checkTimeout(timeout, "timeout");
        Lifecycle.checkMayBlock(this);
        dispose();
        Lifecycle.await(this, core.closed(), timeout, core::unreleased);
    }

    /** Stops listening ({@link Cqflux}'s shutdown); {@return completed once the listener is freed} */
    CompletableFuture<Void> closeAsync() {
        return core.closeAsync();
    }

    /**
     * The same as {@link #dispose()}: stops listening and returns at once; for try-with-resources.
     * Use {@link #disposeNow(Duration)} to wait for the release.
     */
    @Override
    public void close() {
        dispose();
    }

    /**
     * {@return what the server's limits and authenticator did so far, and what it holds now: for
     * an operator's gauges and alerts. Any thread; the values are read one after another, not as
     * one snapshot}
     */
    public Stats stats() {
        return core.stats();
    }

    /**
     * A server's counters ({@link RdmaServer#stats()}).
     *
     * @param connections established connections not yet released
     * @param pendingHandshakes requests between their arrival and their establishment or end
     * @param exposures live per-connection registrations of the exposed regions (each exposed
     *     region once per connection that was accepted and whose native side is not gone yet)
     * @param refusedOverMaxConnections requests rejected by {@link AcceptOptions#withMaxConnections}
     * @param refusedOverMaxPending requests rejected by {@link AcceptOptions#withMaxPendingHandshakes}
     * @param refusedByAuthenticator requests the authenticator refused, answered with no decision or
     *     failed on (one it did not decide on in time counts in {@code handshakeTimeouts})
     * @param handshakeTimeouts handshakes ended by {@link AcceptOptions#withHandshakeTimeout}
     * @param malformedHellos requests rejected because their private data was not a well-formed hello
     * @param controlWordViolations connections ended because their peer wrote into its control
     *     words (credits, goodbye) what no cqflux peer can
     * @param beyondCredits connections ended because their peer sent a message it was granted no
     *     receive for
     * @param refusedOverMaxPerAddress requests rejected by
     *     {@link AcceptOptions#withMaxConnectionsPerAddress}
     */
    public record Stats(int connections, int pendingHandshakes, int exposures, long refusedOverMaxConnections,
                        long refusedOverMaxPending, long refusedByAuthenticator, long handshakeTimeouts,
                        long malformedHellos, long controlWordViolations, long beyondCredits,
                        long refusedOverMaxPerAddress) {

        /**
         * The counters without {@code refusedOverMaxPerAddress} (0), as they were before that
         * bound existed.
         *
         * @param connections established connections not yet released
         * @param pendingHandshakes requests between their arrival and their establishment or end
         * @param exposures live per-connection registrations of the exposed regions
         * @param refusedOverMaxConnections requests rejected by {@link AcceptOptions#withMaxConnections}
         * @param refusedOverMaxPending requests rejected by {@link AcceptOptions#withMaxPendingHandshakes}
         * @param refusedByAuthenticator requests the authenticator refused
         * @param handshakeTimeouts handshakes ended by {@link AcceptOptions#withHandshakeTimeout}
         * @param malformedHellos requests whose private data was not a well-formed hello
         * @param controlWordViolations connections ended for their peer's control words
         * @param beyondCredits connections ended for messages beyond their credits
         */
        public Stats(int connections, int pendingHandshakes, int exposures, long refusedOverMaxConnections,
                     long refusedOverMaxPending, long refusedByAuthenticator, long handshakeTimeouts,
                     long malformedHellos, long controlWordViolations, long beyondCredits) {
            this(connections, pendingHandshakes, exposures, refusedOverMaxConnections, refusedOverMaxPending,
                    refusedByAuthenticator, handshakeTimeouts, malformedHellos, controlWordViolations, beyondCredits, 0);
        }

        /**
         * {@return the counter of {@code kind}}
         *
         * @param kind the kind
         */
        public long count(RefusalKind kind) {
            return switch (kind) {
                case MAX_CONNECTIONS -> refusedOverMaxConnections;
                case MAX_PENDING -> refusedOverMaxPending;
                case MAX_PER_ADDRESS -> refusedOverMaxPerAddress;
                case AUTHENTICATOR -> refusedByAuthenticator;
                case MALFORMED_HELLO -> malformedHellos;
                case HANDSHAKE_TIMEOUT -> handshakeTimeouts;
                case CONTROL_WORD -> controlWordViolations;
                case BEYOND_CREDITS -> beyondCredits;
            };
        }
    }

    /** {@return what this server holds now (connections, handshakes, exposures), for the instance's sum} */
    int[] live() {
        return core.live();
    }

    /** {@return what this server is behind its public methods (InternalAccess; tests)} */
    ServerCore core() {
        return core;
    }

    @Override
    public String toString() {
        return core.toString();
    }
}
