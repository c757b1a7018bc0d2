package io.cqflux.reactor.internal.connection;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.reactor.RefusalKind;
import java.util.function.Consumer;

/**
 * Judges whether the peer keeps the protocol of the control words and of receive credits, and
 * ends its connection LOST, naming what is wrong, when it does not: as a TLS endpoint ends a
 * session on a record that cannot be right. Only this connection ends; the words are its own.
 * The checks run on the connection's loop thread; the listener is set before the connection
 * starts and read through a volatile field.
 */
final class PeerViolations {
    private final ConnectionCore core;
    private final PeerControl control;
    /** Told when the peer broke the control-word or credit protocol (a server's counters); null: nobody. */
    private volatile Consumer<RefusalKind> listener;

    PeerViolations(ConnectionCore core, PeerControl control) {
        this.core = core;
        this.control = control;
    }

    /**
     * Sets who is told of a violation; before the connection starts.
     *
     * @param l run on the loop, once, before the connection ends
     */
    void listener(Consumer<RefusalKind> l) {
        this.listener = l;
    }

    /**
     * Loop thread, per message received (a receive completed with success): ends the connection
     * LOST when the peer sent more messages than this side had granted it credits for
     * ({@link PeerControl#receivedBeyondGrant()}).
     *
     * @return whether it ended the connection
     */
    boolean checkReceiveCredit() {
        return !ended() && violated(RefusalKind.BEYOND_CREDITS, control.receivedBeyondGrant(),
                "the peer sent beyond its credits: ", "a peer that sends messages it was granted no receive for");
    }

    /**
     * Loop thread: ends the connection LOST, naming what is wrong, when the peer wrote values into
     * this side's control words that no cqflux peer can write ({@link PeerControl#violation()}).
     *
     * @return whether it ended the connection
     */
    boolean checkControlWords() {
        return !ended() && violated(RefusalKind.CONTROL_WORD, control.violation(),
                "the peer broke the control-word protocol: ",
                "a peer that writes what no cqflux peer can into its connection's control words");
    }

    private boolean ended() {
        return core.state().compareTo(ConnectionCore.State.ENDED) >= 0;
    }

    /**
     * Ends the connection LOST when {@code violation} names one, telling the listener first.
     *
     * @param violation what is wrong, or null: nothing
     * @param what the kind of breach, before the violation
     * @param who the peer it disconnects
     * @return whether it ended the connection
     */
    private boolean violated(RefusalKind kind, String violation, String what, String who) {
        if (violation == null) {
            return false;
        }
        Consumer<RefusalKind> l = listener;
        if (l != null) {
            ConnectionCore.safely(() -> l.accept(kind));
        }
        core.end(new ConnectionException(ConnectionEvent.LOST, "connection " + core.description + " ended: " + what
                + violation + "; " + who + " is disconnected (docs/security.md)"), ConnectionEvent.LOST);
        return true;
    }
}
