package io.cqflux.spring.boot;

import io.cqflux.reactor.RdmaConnection;
import java.util.Map;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * How a {@link CqfluxPeer} reaches its server: the one seam between the starter's API and the
 * library's client-side connection handling.
 */
interface PeerLink {

    /** Starts connecting; returns at once. */
    void start();

    <T> Mono<T> withConnection(Function<? super RdmaConnection, ? extends Mono<T>> work);

    CqfluxPeer.State state();

    Flux<CqfluxPeer.State> states();

    Flux<io.cqflux.reactor.PeerPoolEvent> events();

    int inFlight();

    Map<String, Object> details();

    /** Closes the connections; the Mono completes once they are released. */
    Mono<Void> close();
}
