package io.cqflux.reactor;

/**
 * Hooks for metrics and tracing: what a {@link Cqflux} tells a listener installed with
 * {@link Cqflux#addListener(CqfluxListener)} (the {@code cqflux-micrometer} module's binder is
 * one). Every method has a default that does nothing.
 *
 * <p><b>Threads and cost.</b> The methods run on the connection's event-loop thread (an
 * operation's outcome, a connection's end) or on the thread that cancels or subscribes; they must
 * be fast and must not block: the loop serves every connection on it. An exception they throw is
 * logged and dropped. With no listener installed nothing is measured: an operation costs one
 * null check (no clock read, no allocation).
 */
public interface CqfluxListener {

    /**
     * A connection was established (or was already open when the listener was added). May be
     * called twice for one connection when it opens while the listener is being added.
     *
     * @param connection the connection
     */
    default void connectionOpened(RdmaConnection connection) {
    }

    /**
     * A connection ended (closed by either side, lost, its {@link Cqflux} disposed); called once,
     * for connections that were reported opened, after {@link RdmaConnection#isDisposed()}
     * became true.
     *
     * @param connection the connection
     */
    default void connectionClosed(RdmaConnection connection) {
    }

    /**
     * An operation ended, once per subscription.
     *
     * @param connection the connection it was posted on
     * @param kind what it was
     * @param outcome how it ended
     * @param error {@code "none"} on success or cancel; for an error the
     *     {@link io.cqflux.core.CompletionStatus} name of an error completion (e.g.
     *     {@code REM_ACCESS_ERR}), else the simple class name of the exception (e.g.
     *     {@code ConnectionException}, {@code QueueFullException}, {@code IllegalArgumentException}):
     *     a small set, fit for a tag
     * @param nanos from the subscription to the outcome (the wait for a credit included, and for
     *     the {@code byte[]}/{@code ByteBuffer} forms the wait for a pooled buffer)
     */
    default void operationFinished(RdmaConnection connection, OperationKind kind, OperationOutcome outcome,
                                   String error, long nanos) {
    }
}
