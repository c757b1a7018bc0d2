package io.cqflux.spring.boot;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.function.Function;
import io.cqflux.reactor.RdmaConnection;
import reactor.core.publisher.Mono;

/**
 * The application's named peers ({@code cqflux.peers.<name>.*}), as a bean: look one up by name
 * and run operations on it.
 *
 * <pre>{@code
 * Mono<Void> put = peers.get("store").withConnection(c -> c.durableWrite(c.remoteRegion(0), off, src, 0, n));
 * }</pre>
 *
 * <p><b>Thread safety.</b> Immutable after construction; the peers themselves are thread-safe.
 */
public final class CqfluxPeers {
    private final Map<String, CqfluxPeer> peers;

    /**
     * The peers of an application's own {@code CqfluxPeers} bean (the starter's backs off then).
     *
     * @param peers the peers, each made with {@link CqfluxPeer#pooled}; their names must differ
     * @return them, looked up by name
     * @throws IllegalArgumentException when two share a name
     */
    public static CqfluxPeers of(CqfluxPeer... peers) {
        Map<String, CqfluxPeer> m = new LinkedHashMap<>();
        for (CqfluxPeer p : peers) {
            if (m.put(Objects.requireNonNull(p, "peer").name(), p) != null) {
                throw new IllegalArgumentException("two peers are named '" + p.name() + "'");
            }
        }
        return new CqfluxPeers(m);
    }

    CqfluxPeers(Map<String, CqfluxPeer> peers) {
        this.peers = Collections.unmodifiableMap(new LinkedHashMap<>(peers));
    }

    /**
     * Looks a peer up by name.
     *
     * @param name the key under {@code cqflux.peers}
     * @return the peer
     * @throws NoSuchElementException when no peer has that name; the message lists the configured ones
     */
    public CqfluxPeer get(String name) {
        Objects.requireNonNull(name, "name");
        CqfluxPeer p = peers.get(name);
        if (p == null) {
            throw new NoSuchElementException("no cqflux peer named '" + name + "' (configured: "
                    + (peers.isEmpty() ? "none; set cqflux.peers." + name + ".address" : String.join(", ", peers.keySet()))
                    + ")");
        }
        return p;
    }

    /**
     * Runs work on a connection to the named peer: {@code get(name).withConnection(work)}.
     *
     * @param name the peer's name
     * @param work the operations to run
     * @param <T> the work's value
     * @return a cold Mono of the work's outcome
     * @throws NoSuchElementException when no peer has that name
     */
    public <T> Mono<T> withConnection(String name, Function<? super RdmaConnection, ? extends Mono<T>> work) {
        return get(name).withConnection(work);
    }

    /** {@return every peer, in configuration order} */
    public Collection<CqfluxPeer> all() {
        return peers.values();
    }

    /** {@return the peers by name, in configuration order} */
    public Map<String, CqfluxPeer> asMap() {
        return peers;
    }

    /** {@return whether every peer marked required is up} */
    public boolean requiredAvailable() {
        for (CqfluxPeer p : peers.values()) {
            if (p.required() && !p.isAvailable()) {
                return false;
            }
        }
        return true;
    }

    /** {@return operations in flight on every peer, waiting ones included} */
    public int inFlight() {
        int n = 0;
        for (CqfluxPeer p : peers.values()) {
            n += p.inFlight();
        }
        return n;
    }

    @Override
    public String toString() {
        return "CqfluxPeers" + peers.values();
    }
}
