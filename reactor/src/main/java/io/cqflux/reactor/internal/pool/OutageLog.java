package io.cqflux.reactor.internal.pool;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.reactor.PeerPool;
import io.cqflux.reactor.PeerPoolOptions;
import io.cqflux.reactor.internal.resources.ApiAccess;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import reactor.util.Logger;

/*
 * Design: one outage, a few lines.
 *
 * An outage of a slot begins with its first failed attempt or loss and ends when a connection
 * that stayed up backoffResetAfter ends (the loss that follows begins a new one). Within one
 * outage the first failed attempt is logged at WARN while the pool has never connected (INFO
 * once it has), the first loss at WARN (unless ConnectionCore has written it already: a LOST
 * end), the first reconnect and the first "reconnecting in" at INFO; every further one of these
 * goes to DEBUG, so a peer that flaps for minutes does not flood the log.
 */

/**
 * The per-outage logging of one slot of a {@link PeerPool}. What an outage has logged so far is
 * guarded by the pool's lock: the methods that record a step ({@link #attemptFailed},
 * {@link #reconnected}, {@link #lost}) are called under it and return what the line to write
 * needs; the {@code log...} methods write it and are called after the lock is released (a
 * logger's appenders are not the pool's to run under its lock).
 */
final class OutageLog {
    private static final ApiAccess API = ApiAccess.get();

    private final String name;
    private final int slot;
    private final PeerPoolOptions options;
    /** When the current outage began ({@code System.nanoTime()}), or 0 when none. */
    private long since;
    /** The outage's first failed connect attempt is logged (WARN or INFO). */
    private boolean attemptLogged;
    /** The outage's first loss is logged (WARN): further ones within it go to DEBUG. */
    private boolean lossLogged;
    /** The outage's first reconnect is logged (INFO): further ones within it go to DEBUG. */
    private boolean reconnectLogged;

    /**
     * @param name the pool's name, which begins each line
     * @param slot the slot's index
     * @param options the pool's options
     */
    OutageLog(String name, int slot, PeerPoolOptions options) {
        this.name = name;
        this.slot = slot;
        this.options = options;
    }

    private static Logger log() {
        return API.peerPoolLog();
    }

    /**
     * An attempt failed or was abandoned at {@code now} (call under the pool's lock): the outage
     * begins if none has; {@return whether this is the outage's first, to log at WARN or INFO}
     */
    boolean attemptFailed(long now) {
        boolean first = !attemptLogged;
        attemptLogged = true;
        if (since == 0) {
            since = now;
        }
        return first;
    }

    /**
     * A connection was established (call under the pool's lock); the outage, if any, goes on until
     * it has proved stable. {@return whether this is the outage's first reconnect, to log at INFO}
     */
    boolean reconnected() {
        boolean first = since != 0 && !reconnectLogged;
        if (since != 0) {
            reconnectLogged = true;
        }
        return first;
    }

    /** {@return when the current outage began ({@code System.nanoTime()}), or 0 when none}; call under the pool's lock */
    long since() {
        return since;
    }

    /**
     * The live connection was lost at {@code now} (call under the pool's lock).
     *
     * @param stable whether it stayed up long enough to end the outage: this loss begins a new one
     * @return whether this is the outage's first loss, to log at WARN and INFO
     */
    boolean lost(long now, boolean stable) {
        if (stable) {
            since = 0;
            attemptLogged = false;
            lossLogged = false;
            reconnectLogged = false;
        }
        if (since == 0) {
            since = now;
        }
        boolean first = !lossLogged;
        lossLogged = true;
        return first;
    }

    /**
     * Logs a failed (or abandoned) attempt: the outage's first at WARN while the pool has never
     * connected, else at INFO, further ones at DEBUG.
     *
     * @param first what {@link #attemptFailed} returned
     * @param neverConnected whether the pool is still in its first {@code CONNECTING}
     * @param next the wait before the next attempt
     */
    void logFailedAttempt(Throwable e, boolean first, boolean neverConnected, Duration next) {
        Logger log = log();
        String msg = name + ": connect attempt for connection " + slot + " failed (" + e.getMessage()
                + "); next attempt in " + next.toMillis() + " ms";
        if (first && neverConnected) {
            log.warn(msg + ", backing off up to " + options.reconnectBackoffMax());
        } else if (first) {
            log.info(msg + ", backing off up to " + options.reconnectBackoffMax());
        } else if (log.isDebugEnabled()) {
            log.debug(msg);
        }
    }

    /**
     * Logs an established connection: a reconnect with how long its outage lasted (the outage's
     * first at INFO), a connection that ended no outage at DEBUG.
     *
     * @param attempts the attempt that established it
     * @param outageSince what {@link #since()} returned, 0 when there was no outage
     * @param first what {@link #reconnected()} returned
     * @param conn the connection's description
     */
    void logConnected(int attempts, long outageSince, boolean first, String conn) {
        Logger log = log();
        if (outageSince != 0) {
            String msg = name + ": connection " + slot + " re-established at attempt " + attempts + ", "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - outageSince) + " ms after the outage began ("
                    + conn + ")";
            if (first) {
                log.info(msg);
            } else if (log.isDebugEnabled()) {
                log.debug(msg);
            }
        } else if (log.isDebugEnabled()) {
            log.debug(name + ": connection " + slot + " established (" + conn + ")");
        }
    }

    /**
     * Logs a loss: one WARN line per outage (none when ConnectionCore has written it already, for a
     * LOST end), the further losses of one outage (connections that did not stay up) at DEBUG.
     *
     * @param first what {@link #lost} returned
     * @param livedNanos how long the connection was up
     */
    void logLost(Throwable cause, boolean first, long livedNanos) {
        Logger log = log();
        boolean saidAlready = cause instanceof ConnectionException ce && ce.event() == ConnectionEvent.LOST;
        if (first && !saidAlready) {
            log.warn(name + ": connection " + slot + " ended: " + cause.getMessage());
        } else if (!first && log.isDebugEnabled()) {
            log.debug(name + ": connection " + slot + " ended again after " + TimeUnit.NANOSECONDS.toMillis(livedNanos)
                    + " ms, before it proved stable (" + options.backoffResetAfter() + "): " + cause.getMessage());
        }
    }

    /** Logs the wait before reconnecting after a loss: the outage's first at INFO, further ones at DEBUG. */
    void logReconnecting(boolean first, Duration next) {
        Logger log = log();
        String msg = name + ": reconnecting connection " + slot + " in " + next.toMillis() + " ms";
        if (first) {
            log.info(msg);
        } else if (log.isDebugEnabled()) {
            log.debug(msg);
        }
    }
}
