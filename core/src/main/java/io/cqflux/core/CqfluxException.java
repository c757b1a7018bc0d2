package io.cqflux.core;

/**
 * The root of cqflux's own exceptions: a small sealed hierarchy so that callers can switch over
 * every failure the library reports. Invalid arguments are reported with the JDK's
 * {@link IllegalArgumentException} / {@link IllegalStateException} instead, before anything is
 * posted.
 */
public abstract sealed class CqfluxException extends RuntimeException
        permits NativeCallException, OperationFailedException, ConnectionException,
        TransportUnavailableException, ResourceClosedException, QueueFullException,
        UnsupportedCapabilityException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what went wrong, with the values involved
     * @param cause the underlying cause, or {@code null}
     */
    protected CqfluxException(String message, Throwable cause) {
        super(message, cause);
    }
}
