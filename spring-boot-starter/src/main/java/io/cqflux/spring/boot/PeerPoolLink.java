package io.cqflux.spring.boot;

import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerPool;
import io.cqflux.reactor.PeerPoolEvent;
import io.cqflux.reactor.PeerPoolOptions;
import io.cqflux.reactor.RdmaConnection;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A peer reached through the library's {@link PeerPool}: connections that heal (reconnect with
 * backoff, regions re-learned), operations that wait (bounded) or fail fast during a gap.
 */
final class PeerPoolLink implements PeerLink {
    private final Cqflux cqflux;
    private final InetSocketAddress address;
    private final PeerPoolOptions options;
    private volatile PeerPool pool;
    /** The pool once {@link #start()} made it: what {@link #states()} waits for before the start. */
    private final Sinks.One<PeerPool> started = Sinks.one();
    /** Ends the wait of {@link #states()} when the instance ends before any start; disposed by {@link #close()}. */
    private final reactor.core.Disposable onDisposed;
    private volatile PeerPoolEvent last;
    /**
     * The last event with a cause (a failed attempt, a lost connection), until a connection is made
     * again: the health's {@code error} while the peer is not up. Not {@link #last}: the pool's
     * next attempt (CONNECTING, no cause) comes right after a failure, and the error would vanish
     * from the health for as long as each retry lasts.
     */
    private volatile PeerPoolEvent lastFailure;
    /** An attempt failed before any connection was made: the pool still says CONNECTING, the peer is down. */
    private volatile boolean failedOnce;
    /** The connections operations were given: what the drain waits on (in flight at the NIC, cancelled ones too). */
    private final Set<RdmaConnection> used = ConcurrentHashMap.newKeySet();

    PeerPoolLink(Cqflux cqflux, InetSocketAddress address, PeerPoolOptions options) {
        this.cqflux = cqflux;
        this.address = address;
        this.options = options;
        // An instance disposed before the start (a context that failed its refresh, closed
        // without starting): a states() stream waiting for the start ends, CLOSED.
        this.onDisposed = cqflux.onDispose().subscribe(null, null, started::tryEmitEmpty);
    }

    @Override
    public void start() {
        PeerPool made;
        synchronized (this) {
            if (pool != null) {
                return;
            }
            try {
                made = cqflux.peerPool(address, options);
            } catch (RuntimeException e) {
                started.tryEmitError(e);
                throw e;
            }
            pool = made;
            made.events().subscribe(this::seen);
        }
        // Outside the monitor: the waiting states() subscribers' code runs in this emission.
        started.tryEmitValue(made);
    }

    /** Every event passes here first, on every path that reads the state after it. */
    private PeerPoolEvent seen(PeerPoolEvent e) {
        if (e.kind() == PeerPoolEvent.Kind.RETRYING) {
            failedOnce = true;
        }
        if (e.cause() != null) {
            lastFailure = e;
        } else if (e.kind() == PeerPoolEvent.Kind.CONNECTED) {
            lastFailure = null;
        }
        last = e;
        return e;
    }

    private PeerPool pool() {
        PeerPool p = pool;
        if (p == null) {
            throw new IllegalStateException("the peer at " + address + " is not started (the application context is not running)");
        }
        return p;
    }

    @Override
    public <T> Mono<T> withConnection(Function<? super RdmaConnection, ? extends Mono<T>> work) {
        return Mono.defer(() -> pool().withConnection(c -> {
            if (used.add(c)) {
                forgetEnded(); // a new connection (a reconnect): the ended ones need not be kept
            }
            return work.apply(c);
        }));
    }

    /** Drops the used connections that ended with nothing left in flight: the drain has nothing to wait for there. */
    private void forgetEnded() {
        used.removeIf(c -> c.isDisposed() && c.inFlight() == 0);
    }

    /** {@return how many connections the drain keeps for {@link #inFlight()}, as they are (tests)} */
    int usedConnections() {
        return used.size();
    }

    @Override
    public CqfluxPeer.State state() {
        PeerPool p = pool;
        if (p == null) {
            return cqflux.isDisposed() ? CqfluxPeer.State.CLOSED : CqfluxPeer.State.CONNECTING;
        }
        PeerPool.State s = p.state();
        // The pool says CONNECTING until its first connection; once an attempt failed, the peer is down.
        if (s == PeerPool.State.CONNECTING && failedOnce) {
            return CqfluxPeer.State.DOWN;
        }
        return map(s);
    }

    private static CqfluxPeer.State map(PeerPool.State s) {
        return switch (s) {
            case CONNECTING -> CqfluxPeer.State.CONNECTING;
            case CONNECTED -> CqfluxPeer.State.UP;
            case RECONNECTING -> CqfluxPeer.State.DOWN;
            case CLOSED -> CqfluxPeer.State.CLOSED;
        };
    }

    @Override
    public Flux<CqfluxPeer.State> states() {
        return Flux.defer(() -> {
            PeerPool p = pool;
            // Before the start, CONNECTING, then the pool's states once the context starts it:
            // the stream does not end early (an awaitAvailable before the start waits).
            Flux<CqfluxPeer.State> live = (p != null ? Mono.just(p) : started.asMono())
                    .flatMapMany(pp -> Flux.concat(Mono.fromSupplier(this::state), pp.events().map(e -> {
                        seen(e);
                        return state();
                    })))
                    .switchIfEmpty(Mono.just(CqfluxPeer.State.CLOSED)); // disposed before the start
            return (p != null ? live : Flux.concat(Mono.just(CqfluxPeer.State.CONNECTING), live))
                    .distinctUntilChanged()
                    .takeUntil(s -> s == CqfluxPeer.State.CLOSED);
        });
    }

    @Override
    public Flux<PeerPoolEvent> events() {
        return Flux.defer(() -> pool().events());
    }

    @Override
    public int inFlight() {
        forgetEnded();
        int n = 0;
        for (RdmaConnection c : used) {
            n += c.inFlight() + c.waiting();
        }
        return n;
    }

    @Override
    public Map<String, Object> details() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("state", state().name());
        d.put("address", address.getHostString() + ":" + address.getPort());
        PeerPool p = pool;
        if (p != null) {
            d.put("pool", p.state().name());
            d.put("liveConnections", p.liveConnections());
            d.put("connections", options.size());
        }
        d.put("inFlight", inFlight());
        PeerPoolEvent e = last;
        if (e != null) {
            d.put("lastEvent", e.kind().name());
        }
        PeerPoolEvent f = lastFailure;
        if (f != null && state() != CqfluxPeer.State.UP) {
            d.put("error", f.cause().toString());
        }
        return d;
    }

    @Override
    public Mono<Void> close() {
        onDisposed.dispose();
        started.tryEmitEmpty(); // a states() stream still waiting for a start: closed instead
        PeerPool p = pool;
        if (p == null) {
            return Mono.empty();
        }
        p.dispose();
        return p.onDispose();
    }
}
