package io.cqflux.reactor.internal.resources;

import io.cqflux.reactor.ConnectOptions;
import io.cqflux.reactor.RdmaConnection;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import reactor.core.publisher.Mono;

/**
 * How a {@link io.cqflux.reactor.PeerPool} connects: as {@code Cqflux.connect} does, and it also
 * learns the release of every connection an attempt starts, one whose attempt was cancelled
 * included, so that the pool's {@code onDispose()} can wait for all of them.
 */
@FunctionalInterface
public interface Connector {
    /**
     * {@return a cold Mono of a connection, as {@code Cqflux.connect(address, options)}}
     *
     * @param address the peer
     * @param options what the request carries
     * @param releases told, on the connection's loop, of each new connection's release future
     *     before the connection can be handed to anyone or closed
     */
    Mono<RdmaConnection> connect(InetSocketAddress address, ConnectOptions options,
                                 Consumer<CompletableFuture<Void>> releases);
}
