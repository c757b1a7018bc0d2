package io.cqflux.core;

/**
 * A connection could not be established or was lost; operations pending on it fail with this.
 * {@link #event()} says which: {@link ConnectionEvent#REJECTED}, {@link ConnectionEvent#UNREACHABLE},
 * {@link ConnectionEvent#LOST} or {@link ConnectionEvent#CLOSED}.
 */
public final class ConnectionException extends CqfluxException {
    private static final long serialVersionUID = 1L;

    private final ConnectionEvent event;

    /**
     * @param event what happened to the connection
     * @param message details: connection, peer, what was pending
     */
    public ConnectionException(ConnectionEvent event, String message) {
        super(message, null);
        this.event = event;
    }

    /**
     * @param event what happened to the connection
     * @param message details
     * @param cause the underlying cause
     */
    public ConnectionException(ConnectionEvent event, String message, Throwable cause) {
        super(message, cause);
        this.event = event;
    }

    /** {@return the event that ended (or prevented) the connection} */
    public ConnectionEvent event() {
        return event;
    }
}
