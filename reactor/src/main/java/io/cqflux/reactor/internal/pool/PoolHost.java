package io.cqflux.reactor.internal.pool;

import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.reactor.ConnectOptions;
import io.cqflux.reactor.PeerPool;
import io.cqflux.reactor.internal.resources.Connector;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * What a peer pool uses of the {@link io.cqflux.reactor.Cqflux} instance it belongs to, handed to
 * it once at its creation (by {@code Cqflux.peerPool}, from the instance's own state): the pool's
 * objects keep these and never reach into the instance.
 *
 * @param connector how the pool connects: the instance's connect, which also hands over each
 *     connection's release
 * @param timerLoop the loop that runs the pool's timer tasks (the instance's first loop)
 * @param connectTimeout the instance's connect timeout, which bounds each attempt's window
 * @param closing whether the instance's shutdown began (the pool only asks)
 * @param checkConnectRequest refuses a connect request that cannot be sent (over the private
 *     data limit, or naming a region of another instance)
 * @param forget tells the instance that the pool ended: nothing is left for its shutdown to dispose
 */
public record PoolHost(Connector connector, EventLoop timerLoop, Duration connectTimeout, BooleanSupplier closing,
                       Consumer<ConnectOptions> checkConnectRequest, Consumer<PeerPool> forget) {
}
