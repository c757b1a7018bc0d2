package io.cqflux.core;

/**
 * Connection lifecycle events, as librpma's {@code enum rpma_conn_event} names them; the fabric
 * transport maps its EQ events ({@code FI_CONNECTED}, {@code FI_SHUTDOWN}, rejected
 * connection requests) onto the same names.
 */
public enum ConnectionEvent {
    /** The connection is established and operations may be posted. */
    ESTABLISHED,
    /** The connection was closed in an orderly way (by either side). */
    CLOSED,
    /** The connection was lost: peer died, network failure, or a fatal transport error. */
    LOST,
    /** The peer rejected the connection request (for example: no listener on that port). */
    REJECTED,
    /** The peer could not be reached. */
    UNREACHABLE;

    /** {@return whether the connection can no longer carry operations after this event} */
    public boolean isTerminal() {
        return this != ESTABLISHED;
    }
}
