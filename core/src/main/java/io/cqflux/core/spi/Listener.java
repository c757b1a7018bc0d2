package io.cqflux.core.spi;

import java.net.InetSocketAddress;

/**
 * A listening endpoint. Its fd becomes readable when connection requests arrive; drain them
 * with {@link #nextRequest()} on the loop thread. Closing it stops listening; connections
 * accepted from it live on.
 */
public interface Listener extends Pollable, AutoCloseable {

    /** {@return the address it listens on, with the port actually bound where the transport can tell} */
    InetSocketAddress address();

    /**
     * Takes the next pending connection request, without blocking.
     *
     * @return the request, or {@code null} when none is pending
     */
    ConnectionRequest nextRequest();

    /** Stops listening and frees the endpoint; idempotent. */
    @Override
    void close();
}
