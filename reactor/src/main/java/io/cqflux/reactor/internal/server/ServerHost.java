package io.cqflux.reactor.internal.server;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.spi.Transport;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.reactor.internal.resources.ConnectionFactory;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * What a server uses of the {@link io.cqflux.reactor.Cqflux} instance that bound it, handed to it
 * once at its construction (by {@code RdmaServer}'s constructor, which reads the instance's
 * package-private members): the server's objects keep these and never reach into the instance.
 *
 * @param transport the instance's transport (accepts, rejects, registrations, receive pools)
 * @param config its connection configuration (the accepted connections', the receive queue's size)
 * @param receiveBufferSize its receive buffers' size, for the receives a server posts itself
 * @param factory where accepted connections are built, adopted and counted, and their hello encoded
 * @param nextLoop the loop for the next accepted connection (round-robin)
 * @param closing whether the instance's shutdown began (read only here)
 * @param instanceCounts the instance's refusal counts, which outlive its servers
 */
public record ServerHost(Transport transport, ConnectionConfig config, int receiveBufferSize,
                         ConnectionFactory factory, Supplier<EventLoop> nextLoop, BooleanSupplier closing,
                         ServerAdmission.Counts instanceCounts) {
}
