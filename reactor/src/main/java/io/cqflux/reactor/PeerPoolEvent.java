package io.cqflux.reactor;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;

/**
 * A state change of one of a {@link PeerPool}'s connections, as {@link PeerPool#events()} reports
 * it. For each connection slot the order is: {@code CONNECTING}, then {@code CONNECTED} or
 * {@code RETRYING}; after {@code RETRYING} (its delay elapsed) {@code CONNECTING} again; after
 * {@code CONNECTED}, once the connection ends, {@code LOST} and {@code RETRYING}. {@code CLOSED}
 * (for the whole pool, {@link #slot()} -1) is the last event. The attempt after a {@code LOST} is
 * 1 when the connection stayed up {@link PeerPoolOptions#backoffResetAfter()}, and otherwise
 * continues the count (the backoff goes on doubling).
 *
 * <p>Immutable and thread-safe.
 */
public final class PeerPoolEvent {

    /** What happened. */
    public enum Kind {
        /** A connect attempt started ({@link #attempt()}: 1 for the first since the start or the loss of a connection that stayed up). */
        CONNECTING,
        /** The attempt succeeded: the connection is live and carries the peer's regions as of now. */
        CONNECTED,
        /** A live connection ended without the pool ending it ({@link #cause()}: why). */
        LOST,
        /**
         * The next attempt ({@link #attempt()}) starts after {@link #delay()}; {@link #cause()} is
         * the last failure or loss. The delay is zero when the attempt before was abandoned at the
         * end of its time ({@link PeerPoolOptions.Builder#minAttemptTime(java.time.Duration)}; the cause,
         * a {@link io.cqflux.core.ConnectionException} {@code UNREACHABLE}, says so) or ran as long
         * as the longest gap between attempts allows.
         */
        RETRYING,
        /**
         * The pool was disposed (or its {@link Cqflux} was), or it ended on its own because its
         * connect request can no longer be sent ({@link #cause()}: why, naming the closed region):
         * nothing more happens.
         */
        CLOSED
    }

    private final Kind kind;
    private final InetSocketAddress address;
    private final int slot;
    private final int attempt;
    private final Duration delay;
    private final Throwable cause;
    private final String connection;

    PeerPoolEvent(Kind kind, InetSocketAddress address, int slot, int attempt, Duration delay, Throwable cause,
                  String connection) {
        this.kind = Objects.requireNonNull(kind, "kind");
        this.address = address;
        this.slot = slot;
        this.attempt = attempt;
        this.delay = delay == null ? Duration.ZERO : delay;
        this.cause = cause;
        this.connection = connection;
    }

    /** {@return what happened} */
    public Kind kind() {
        return kind;
    }

    /** {@return the peer's address} */
    public InetSocketAddress address() {
        return address;
    }

    /** {@return which of the pool's connections, 0..size-1; -1 for {@link Kind#CLOSED}} */
    public int slot() {
        return slot;
    }

    /**
     * {@return the connect attempt, from 1 for the first since the pool started or the slot lost a
     * connection that had stayed up {@link PeerPoolOptions#backoffResetAfter()}: the one starting ({@code CONNECTING}), the one that succeeded ({@code CONNECTED}),
     * the one to come ({@code RETRYING}); 0 for {@code LOST} and {@code CLOSED}}
     */
    public int attempt() {
        return attempt;
    }

    /** {@return how long until the next attempt ({@code RETRYING}); zero otherwise} */
    public Duration delay() {
        return delay;
    }

    /**
     * {@return why: the end of the connection ({@code LOST}); for {@code RETRYING} the failure of
     * the last attempt, or the end of the connection just lost; for {@code CLOSED} a
     * {@link io.cqflux.core.ResourceClosedException} when the pool ended on its own (its connect
     * request can no longer be sent), {@code null} when it was disposed; {@code null} for the
     * other kinds}
     */
    public Throwable cause() {
        return cause;
    }

    /** {@return the connection's description ({@link RdmaConnection#description()}) for {@code CONNECTED} and {@code LOST}; {@code null} otherwise} */
    public String connection() {
        return connection;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("PeerPoolEvent[").append(kind).append(' ').append(address);
        if (slot >= 0) {
            b.append(" slot ").append(slot);
        }
        if (attempt > 0) {
            b.append(" attempt ").append(attempt);
        }
        if (kind == Kind.RETRYING) {
            b.append(" in ").append(delay.toMillis()).append(" ms");
        }
        if (connection != null) {
            b.append(" (").append(connection).append(')');
        }
        if (cause != null) {
            b.append(": ").append(cause);
        }
        return b.append(']').toString();
    }
}
