package io.cqflux.core;

import io.cqflux.core.internal.NativeErrors;

/**
 * A posted operation completed with an error status. It fails exactly the operation it belongs
 * to and carries the status name, the vendor error, the kind of operation that was posted (the
 * opcode of an error entry itself is undefined, see {@code ibv_poll_cq(3)}), the connection, and
 * the library's text.
 */
public final class OperationFailedException extends CqfluxException {
    private static final long serialVersionUID = 1L;

    private final transient CompletionRecord completion;
    private final Opcode opcode;
    private final String connection;

    /**
     * @param completion the error completion (a snapshot)
     * @param opcode the kind of operation that was posted
     * @param connection a description of the connection (peer address, transport)
     */
    public OperationFailedException(CompletionRecord completion, Opcode opcode, String connection) {
        super(opcode + " on " + connection + " failed with " + completion.status()
                + " (vendor error " + completion.vendorError()
                + (completion.errorNumber() != 0 ? ", " + NativeErrors.errnoName(completion.errorNumber()) : "")
                + ")" + (completion.errorText().isEmpty() ? "" : ": " + completion.errorText()), null);
        this.completion = completion;
        this.opcode = opcode;
        this.connection = connection;
    }

    /** {@return the status of the failed completion} */
    public CompletionStatus status() {
        return completion.status();
    }

    /** {@return the vendor error syndrome (provider errno on libfabric)} */
    public int vendorError() {
        return completion.vendorError();
    }

    /** {@return the kind of operation that failed} */
    public Opcode opcode() {
        return opcode;
    }

    /** {@return a description of the connection the operation was posted on} */
    public String connection() {
        return connection;
    }

    /** {@return the error completion} */
    public CompletionRecord completion() {
        return completion;
    }
}
