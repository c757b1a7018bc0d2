package io.cqflux.core;

/**
 * A transport cannot be used here: its library is not installed, too old, or there is no device
 * for it. The message says what to install or configure.
 */
public final class TransportUnavailableException extends CqfluxException {
    private static final long serialVersionUID = 1L;

    private final String transport;

    /**
     * @param transport {@code rpma} or {@code fabric}
     * @param message what is missing and what to do about it
     * @param cause the underlying failure, or {@code null}
     */
    public TransportUnavailableException(String transport, String message, Throwable cause) {
        super(transport + " transport unavailable: " + message, cause);
        this.transport = transport;
    }

    /** {@return the transport's name} */
    public String transport() {
        return transport;
    }
}
