package io.cqflux.spring.boot;

import io.cqflux.reactor.PeerPoolEvent;
import io.cqflux.reactor.RdmaConnection;
import java.util.Map;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A peer link whose state the test sets, for the starter's own decisions (readiness, health) that
 * depend only on a peer's state; it carries no operations. Transport behaviour is tested against
 * real loopback peers elsewhere.
 */
final class ScriptedLink implements PeerLink {
    private final Sinks.Many<CqfluxPeer.State> states = Sinks.many().replay().latest();
    private volatile CqfluxPeer.State state;

    ScriptedLink(CqfluxPeer.State initial) {
        set(initial);
    }

    /** Moves the peer to {@code s}, emitting it on the calling thread. */
    synchronized void set(CqfluxPeer.State s) {
        state = s;
        states.emitNext(s, Sinks.EmitFailureHandler.FAIL_FAST);
    }

    @Override
    public void start() {
    }

    @Override
    public <T> Mono<T> withConnection(Function<? super RdmaConnection, ? extends Mono<T>> work) {
        return Mono.error(new IllegalStateException("scripted link carries no operations"));
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
    public Flux<PeerPoolEvent> events() {
        return Flux.empty();
    }

    @Override
    public int inFlight() {
        return 0;
    }

    @Override
    public Map<String, Object> details() {
        return Map.of("state", state.name());
    }

    @Override
    public synchronized Mono<Void> close() {
        return Mono.fromRunnable(() -> {
            synchronized (this) {
                state = CqfluxPeer.State.CLOSED;
                states.emitNext(CqfluxPeer.State.CLOSED, Sinks.EmitFailureHandler.FAIL_FAST);
                states.emitComplete(Sinks.EmitFailureHandler.FAIL_FAST);
            }
        });
    }
}
