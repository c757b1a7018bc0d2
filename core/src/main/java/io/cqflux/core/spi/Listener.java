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

    /**
     * {@return whether {@link #close()} may wait (for a thread of the listener's own, say), so that
     * the server calls it off its event loop, on the instance's close thread} Otherwise it is
     * called on the loop (or, in the instance's last steps, on the thread that runs the shutdown).
     * The close may then run while requests handed out are answered on the loop or the set-up
     * thread: it must wait for answers in progress, as it must anyway where answers run off the
     * loop ({@link Transport#acceptsOffLoop()}). Any thread; a constant.
     */
    default boolean closesOffLoop() {
        return false;
    }
}
