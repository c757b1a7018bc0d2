package io.cqflux.spring.boot;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaConnection;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * One connection, made at start and not made again: operations fail fast once it ended. The
 * stand-in until the library's reconnecting pool is wired in.
 */
final class SingleConnectionLink implements PeerLink {
    private static final Log LOG = LogFactory.getLog(SingleConnectionLink.class);

    private final String name;
    private final Cqflux cqflux;
    private final InetSocketAddress address;
    private final AtomicReference<RdmaConnection> connection = new AtomicReference<>();
    private final Sinks.Many<CqfluxPeer.State> states = Sinks.many().replay().latest();
    private volatile CqfluxPeer.State state = CqfluxPeer.State.CONNECTING;
    private volatile String lastError;

    SingleConnectionLink(String name, Cqflux cqflux, InetSocketAddress address) {
        this.name = name;
        this.cqflux = cqflux;
        this.address = address;
        states.emitNext(state, Sinks.EmitFailureHandler.busyLooping(java.time.Duration.ofSeconds(1)));
    }

    @Override
    public void start() {
        cqflux.connect(address).subscribe(c -> {
            connection.set(c);
            set(CqfluxPeer.State.UP);
            c.events().filter(ConnectionEvent::isTerminal).next().subscribe(e -> {
                if (state != CqfluxPeer.State.CLOSED) {
                    lastError = "connection " + e;
                    LOG.warn("cqflux peer '" + name + "' at " + address + ": connection " + e);
                    set(CqfluxPeer.State.DOWN);
                }
            });
        }, e -> {
            lastError = e.toString();
            LOG.warn("cqflux peer '" + name + "' at " + address + " could not be connected: " + e);
            set(CqfluxPeer.State.DOWN);
        });
    }

    private synchronized void set(CqfluxPeer.State s) {
        if (state == CqfluxPeer.State.CLOSED) {
            return;
        }
        state = s;
        states.emitNext(s, Sinks.EmitFailureHandler.busyLooping(java.time.Duration.ofSeconds(1)));
        if (s == CqfluxPeer.State.CLOSED) {
            states.emitComplete(Sinks.EmitFailureHandler.busyLooping(java.time.Duration.ofSeconds(1)));
        }
    }

    @Override
    public <T> Mono<T> withConnection(Function<? super RdmaConnection, ? extends Mono<T>> work) {
        return Mono.defer(() -> {
            RdmaConnection c = connection.get();
            if (c == null || c.isDisposed()) {
                return Mono.error(new ConnectionException(ConnectionEvent.LOST,
                        "cqflux peer '" + name + "' at " + address + " is " + state
                                + (lastError != null ? " (" + lastError + ")" : "")));
            }
            return work.apply(c);
        });
    }

    @Override
    public CqfluxPeer.State state() {
        return state;
    }

    @Override
    public Flux<CqfluxPeer.State> states() {
        return states.asFlux();
    }

    @Override
    public int inFlight() {
        RdmaConnection c = connection.get();
        return c == null ? 0 : c.inFlight() + c.waiting();
    }

    @Override
    public Map<String, Object> details() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("state", state.name());
        d.put("address", address.getHostString() + ":" + address.getPort());
        RdmaConnection c = connection.get();
        if (c != null && !c.isDisposed()) {
            d.put("connection", c.description());
            d.put("inFlight", c.inFlight());
            d.put("waiting", c.waiting());
            d.put("sendCredits", c.sendCredits());
        }
        if (state != CqfluxPeer.State.UP && lastError != null) {
            d.put("error", lastError);
        }
        return d;
    }

    @Override
    public Mono<Void> close() {
        set(CqfluxPeer.State.CLOSED);
        RdmaConnection c = connection.getAndSet(null);
        if (c == null) {
            return Mono.empty();
        }
        c.dispose();
        return c.onDispose();
    }
}
