package io.cqflux.spring.boot;

import io.cqflux.reactor.RdmaConnection;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One named peer of the application ({@code cqflux.peers.<name>.*}): a cqflux server it connects
 * to, looked up through {@link CqfluxPeers}. Behind it is the library's
 * {@link io.cqflux.reactor.PeerPool}: {@code cqflux.peers.<name>.connections} connections that
 * reconnect with backoff ({@code min-backoff} doubling to {@code max-backoff}) and learn the peer's
 * regions again each time. Operations go through {@link #withConnection(Function)}, which lends a
 * live connection for the work of one operation (or a chain of them); while none is live it waits
 * up to {@code max-wait}, or fails at once when that is zero (the default), with a
 * {@link io.cqflux.core.ConnectionException}, so that a web layer can answer {@code 503}. Nothing
 * is retried: an operation in flight on a connection that ends fails.
 *
 * <p><b>Lifetime and thread safety.</b> Thread-safe. Connected when the application context
 * starts ({@link CqfluxLifecycle}) and closed, after its operations drained, when it stops; the
 * application never closes it itself.
 */
public final class CqfluxPeer {

    /** What the peer's connection is doing. */
    public enum State {
        /** Not connected yet: the first attempt runs. */
        CONNECTING,
        /** At least one connection is live: operations go through. */
        UP,
        /** Not reachable (the first attempt failed, or every connection ended): reconnecting with backoff. */
        DOWN,
        /** Closed with the application. */
        CLOSED
    }

    private final String name;
    private final InetSocketAddress address;
    private final boolean required;
    private final PeerLink link;

    /**
     * A peer reached through a {@link io.cqflux.reactor.PeerPool} of {@code cqflux}, for an
     * application that declares its own {@link CqfluxPeers} bean (the starter's backs off then):
     * connected by {@link CqfluxLifecycle} at start and drained and closed by it at stop, as the
     * peers of {@code cqflux.peers.*} are.
     *
     * @param name the name it is looked up by
     * @param cqflux the instance it connects through
     * @param address the peer's address
     * @param required whether readiness waits for it
     * @param options the pool's size, backoff and waiting
     * @return the peer, not yet connected
     */
    public static CqfluxPeer pooled(String name, io.cqflux.reactor.Cqflux cqflux, InetSocketAddress address,
                                    boolean required, io.cqflux.reactor.PeerPoolOptions options) {
        Objects.requireNonNull(cqflux, "cqflux");
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(address, "address");
        try {
            // The pool's own check, now rather than at the context's start where the lifecycle
            // would meet it.
            io.cqflux.reactor.PeerPool.checkAddress(address);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("peer '" + name + "': " + e.getMessage(), e);
        }
        return new CqfluxPeer(name, address, required, new PeerPoolLink(cqflux, address, options));
    }

    CqfluxPeer(String name, InetSocketAddress address, boolean required, PeerLink link) {
        this.name = Objects.requireNonNull(name, "name");
        this.address = Objects.requireNonNull(address, "address");
        this.required = required;
        this.link = Objects.requireNonNull(link, "link");
    }

    /** {@return the peer's name, the key under {@code cqflux.peers}} */
    public String name() {
        return name;
    }

    /** {@return the peer's address} */
    public InetSocketAddress address() {
        return address;
    }

    /** {@return whether the application's readiness follows this peer ({@code required})} */
    public boolean required() {
        return required;
    }

    /**
     * Runs work on a connection to this peer. The connection is lent for the lifetime of the
     * returned Mono; don't keep it beyond that.
     *
     * @param work the operations to run, e.g. {@code c -> c.durableWrite(c.remoteRegion(0), ...)}
     * @param <T> the work's value
     * @return a cold Mono of the work's outcome; fails with a
     *     {@link io.cqflux.core.ConnectionException} when the peer is not reachable, and with an
     *     {@link IllegalStateException} before the application context started the peer
     */
    public <T> Mono<T> withConnection(Function<? super RdmaConnection, ? extends Mono<T>> work) {
        Objects.requireNonNull(work, "work");
        return link.withConnection(work);
    }

    /** {@return the current state} */
    public State state() {
        return link.state();
    }

    /**
     * {@return the states from now on, the current one first; completes when the peer is closed.
     * Before the application context starts the peer it is {@code CONNECTING}, then the states of
     * the start (signalled on the thread that starts the context); a peer whose {@code Cqflux}
     * ended before any start ends with {@code CLOSED} (when its shutdown completed; {@link #state()}
     * says {@code CLOSED} from the shutdown's beginning), and one whose start failed ends with
     * that failure}
     */
    public Flux<State> states() {
        return link.states();
    }

    /**
     * {@return the library's events of this peer's connections (connecting, connected, lost,
     * retrying with its delay and cause, closed), the most recent replayed first; see
     * {@link io.cqflux.reactor.PeerPool#events()}}
     */
    public Flux<io.cqflux.reactor.PeerPoolEvent> events() {
        return link.events();
    }

    /** {@return whether operations go through now} */
    public boolean isAvailable() {
        return link.state() == State.UP;
    }

    /**
     * Waits for the peer to be {@link State#UP}, e.g. before the first request of a test.
     *
     * @param timeout how long to wait
     * @return a Mono that completes once the peer is up, or fails with a
     *     {@link java.util.concurrent.TimeoutException} after {@code timeout}, or with an
     *     {@link IllegalStateException} when the peer is closed first
     */
    public Mono<Void> awaitAvailable(Duration timeout) {
        return states().filter(s -> s == State.UP).next()
                .switchIfEmpty(Mono.error(() -> new IllegalStateException("peer '" + name + "' at " + address
                        + " was closed before it was up")))
                .then().timeout(timeout);
    }

    /** {@return operations posted to the peer and not yet completed, waiting ones included} */
    public int inFlight() {
        return link.inFlight();
    }

    /** {@return what the health endpoint shows of this peer: state, address, connection, credits} */
    public Map<String, Object> details() {
        return link.details();
    }

    PeerLink link() {
        return link;
    }

    @Override
    public String toString() {
        return "CqfluxPeer[" + name + " " + address + " " + state() + "]";
    }
}
