package io.cqflux.reactor;

import reactor.util.context.ContextView;

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
 *
 * <p><b>One operation, start to end.</b> {@link #operationStarted} runs on the subscribing thread
 * at the subscription and returns who hears of that operation's end: the listener itself (the
 * default, no allocation), an object for this one operation (a tracing span, an
 * {@code Observation}), or {@code null} to skip its end. The subscriber's Reactor context is
 * passed to it, so that a parent span or observation put there (Micrometer's
 * {@code ObservationThreadLocalAccessor.KEY}, as WebFlux does for a request) is found at
 * subscription time, whatever thread the end arrives on.
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
     * An operation was subscribed to; called once per subscription, before anything else of it
     * (the wait for a credit or a pooled buffer included), on the subscribing thread.
     *
     * @param connection the connection it is posted on
     * @param kind what it is
     * @param bytes the length of its data (8 for an atomic write; a flush's range; 0 for a
     *     lease form refused at its subscription)
     * @param context the subscriber's Reactor context
     * @return the listener whose {@link #operationFinished} hears of this operation's end: this
     *     one (the default), one made for this operation, or {@code null} for none
     */
    default CqfluxListener operationStarted(RdmaConnection connection, OperationKind kind, long bytes,
                                            ContextView context) {
        return this;
    }

    /**
     * An operation ended, once per subscription; called on the listener that
     * {@link #operationStarted} returned for it.
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
