package io.cqflux.reactor;

/**
 * How an operation ended, as {@link CqfluxListener#operationFinished} reports it and the
 * {@code outcome} tag of the {@code cqflux.operation} timer names it.
 */
public enum OperationOutcome {
    /** The operation completed. */
    SUCCESS("success"),
    /**
     * The operation failed: an error completion, the connection's end, a refused argument, a full
     * pending queue; the listener's {@code error} names which.
     */
    ERROR("error"),
    /** The subscriber cancelled before the outcome (the NIC may still complete the operation). */
    CANCELLED("cancelled");

    private final String tag;

    OperationOutcome(String tag) {
        this.tag = tag;
    }

    /** {@return the value of the {@code outcome} tag, e.g. {@code success}} */
    public String tagValue() {
        return tag;
    }
}
