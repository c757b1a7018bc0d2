package io.cqflux.core;

/** A bounded queue (operations waiting for a credit, tasks waiting for the loop) is full. */
public final class QueueFullException extends CqfluxException {
    private static final long serialVersionUID = 1L;

    private final int limit;

    /**
     * @param message which queue, and what the caller can change
     * @param limit the configured bound
     */
    public QueueFullException(String message, int limit) {
        super(message, null);
        this.limit = limit;
    }

    /** {@return the configured bound that was reached} */
    public int limit() {
        return limit;
    }
}
