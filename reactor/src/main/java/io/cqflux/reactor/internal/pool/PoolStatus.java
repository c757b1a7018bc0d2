package io.cqflux.reactor.internal.pool;

import io.cqflux.reactor.PeerPool;

/**
 * What a {@link PeerPool} reports of itself: its state as last recorded, whether and why it
 * closed, and its last failure. Written only through these methods, by {@link PoolSlots} under the
 * pool's lock; {@link #closed()} and {@link #closedFor()} are read under it too. The recorded state
 * is volatile, read without the lock ({@link PeerPool#isDisposed()}, messages); the last failure
 * is read without it for messages, where a stale one does no harm.
 */
final class PoolStatus {
    private volatile PeerPool.State state = PeerPool.State.CONNECTING;
    private boolean closed;
    /** Why the pool ended on its own (its connect request can no longer be sent); null when disposed or open. */
    private String closedFor;
    private Throwable lastFailure;

    /** {@return the state as last recorded (not checked against the connections)} */
    PeerPool.State recorded() {
        return state;
    }

    /** Records the state {@code s} of an open pool (a connection came or went); call under the lock. */
    void record(PeerPool.State s) {
        state = s;
    }

    /** {@return whether the pool is closed}; call under the lock */
    boolean closed() {
        return closed;
    }

    /** {@return why the pool ended on its own, or null when disposed or open}; call under the lock */
    String closedFor() {
        return closedFor;
    }

    /**
     * Records that the pool closed, once; call under the lock.
     *
     * @param reason null for a dispose, else why the pool ends on its own
     * @return false when closed already
     */
    boolean close(String reason) {
        if (closed) {
            return false;
        }
        closed = true;
        closedFor = reason;
        state = PeerPool.State.CLOSED;
        return true;
    }

    /** {@return the last failed attempt's or loss's cause, or null} */
    Throwable lastFailure() {
        return lastFailure;
    }

    /** Records the cause of a failed attempt or a loss; call under the lock. */
    void failed(Throwable cause) {
        lastFailure = cause;
    }

    /** {@return the last failure as a clause for a message ("; last failure: ..."), or empty} */
    String lastFailureText() {
        Throwable f = lastFailure;
        return f == null ? "" : "; last failure: " + f.getMessage();
    }
}
