package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.*;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.spi.EventChannel;
import io.cqflux.core.spi.SharedSource;
import java.util.ArrayDeque;

/**
 * A fabric connection's event channel and connection state: the events its
 * {@link SharedEventQueue} routed to it (copied out of the queue, CM data and error included),
 * read in order, and the terminal event it reports itself. Loop-confined.
 *
 * <p>With the loop, a member of its shared queue ({@link #sharedBy()}): the loop reads the queue
 * once for all its connections and runs this channel's handler when something was routed here.
 * Used directly (tests, without a loop) with a queue of its own, {@link #nextEvent()} reads the
 * queue itself; with a loop's shared queue it only returns what that loop routed here.
 */
final class FabricEvents implements EventChannel, SharedEventQueue.Member {

    enum State { CONNECTING, ESTABLISHED, ENDED }

    /** One routed event. */
    private record Queued(int event, byte[] cmData, int error) {
    }

    private final FabricConnection conn;
    private final SharedEventQueue queue;
    private final boolean shutdownOnPeerEnd;
    // Sized for an idle connection (one per connection, thousands per server); it grows on use.
    private final ArrayDeque<Queued> routed = new ArrayDeque<>(4);
    private State state = State.CONNECTING;
    private ConnectionEvent pendingTerminal;
    private boolean disconnected;
    private int lastError;
    /** The loop's callback while it watches this member, else null. */
    private Runnable touched;

    FabricEvents(FabricConnection conn, SharedEventQueue queue, boolean shutdownOnPeerEnd) {
        this.conn = conn;
        this.queue = queue;
        this.shutdownOnPeerEnd = shutdownOnPeerEnd;
    }

    /** {@return where the connection is: connecting, established, or ended} */
    State state() {
        return state;
    }

    /** {@return whether this side has begun its disconnect} */
    boolean disconnected() {
        return disconnected;
    }

    /** This side begins its disconnect ({@link FabricConnection#disconnect()}). */
    void markDisconnected() {
        disconnected = true;
    }

    /** The connection is closed: nothing routed here is delivered any more. */
    void markEnded() {
        state = State.ENDED;
    }

    /**
     * Queues {@code e} as the connection's terminal event, one the provider will not report (a
     * refusal fi_connect returned at once; this side's own CLOSED after fi_shutdown), unless the
     * connection ended or another is queued. {@return whether it was queued}
     */
    boolean queueTerminal(ConnectionEvent e) {
        if (state == State.ENDED || pendingTerminal != null) {
            return false;
        }
        pendingTerminal = e;
        return true;
    }

    /** {@return the err of the last EQ error entry routed here} */
    int lastError() {
        return lastError;
    }

    @Override
    public void deliver(int event, byte[] cmData, int error) {
        if (state == State.ENDED || conn.isClosed()) {
            return; // after the terminal event (the FI_SHUTDOWN of our own fi_shutdown): dropped
        }
        routed.add(new Queued(event, cmData, error));
        tell();
    }

    /** The connection has something for the loop that the queue's fd will not signal: its own CLOSED. */
    void tell() {
        Runnable t = touched;
        if (t != null) {
            t.run();
        }
    }

    @Override
    public SharedSource sharedBy() {
        return queue;
    }

    @Override
    public int fd() {
        return queue.fd();
    }

    /** A member's yes (nothing routed, nothing of its own) stands until it calls {@code touched}. */
    @Override
    public boolean watchTouches(Runnable touched) {
        this.touched = touched;
        return true;
    }

    @Override
    public boolean prepareToSleep() {
        if (conn.isClosed()) {
            return true;
        }
        if (state == State.ENDED) {
            routed.clear();
        }
        return routed.isEmpty() && pendingTerminal == null && queue.prepareToSleep();
    }

    @Override
    public ConnectionEvent nextEvent() {
        if (conn.isClosed()) {
            return null;
        }
        if (state == State.ENDED) {
            routed.clear();
            return null;
        }
        if (routed.isEmpty() && touched == null && !queue.shared()) {
            // Not served by a loop, and the queue is this connection's own: read it ourselves. A
            // loop's shared queue is read by that loop alone (its entry buffer is not ours to
            // race); until the loop watches this member, what it routed here waits in `routed`.
            queue.dispatch();
        }
        while (!routed.isEmpty()) {
            Queued q = routed.poll();
            ConnectionEvent e = onEvent(q);
            if (e != null) {
                return e;
            }
        }
        if (pendingTerminal != null) {
            ConnectionEvent e = pendingTerminal;
            pendingTerminal = null;
            return end(e);
        }
        return null;
    }

    private ConnectionEvent onEvent(Queued q) {
        int ev = q.event();
        if (ev == FI_CONNECTED()) {
            if (state == State.CONNECTING && disconnected) {
                // disconnect() came first: the connection completes only to end at once
                // (fi_cm(3): shut down the now-connected endpoint); report CLOSED.
                state = State.ESTABLISHED;
                conn.shutdown();
                return end(ConnectionEvent.CLOSED);
            }
            if (state == State.CONNECTING) {
                state = State.ESTABLISHED;
                conn.connected(q.cmData());
                return ConnectionEvent.ESTABLISHED;
            }
        } else if (ev == FI_SHUTDOWN()) {
            // tcp reports an orderly fi_shutdown by the peer and a dropped socket alike
            // (fi_cm(3) FI_SHUTDOWN): the transport reports what the provider said; the
            // owner of the operations knows whether any failed before it.
            peerEnded();
            return end(ConnectionEvent.CLOSED);
        } else if (ev == FabricEventQueue.ERROR) {
            lastError = q.error();
            if (state == State.CONNECTING) {
                // fi_cm(3): a refused connect is an EQ error entry; tcp gives ECONNREFUSED
                // for a port with no listener as well as for fi_reject, whose data the entry
                // carries: the connection keeps it as the peer's private data.
                if (q.error() == FabricErrno.ECONNREFUSED.code()) {
                    conn.rejected(q.cmData());
                    return end(ConnectionEvent.REJECTED);
                }
                return end(ConnectionEvent.UNREACHABLE);
            }
            peerEnded();
            return end(ConnectionEvent.LOST);
        }
        return null;
    }

    /**
     * The peer ended an established connection. tcp then fails our posted receives itself
     * (ECANCELED entries). verbs does not: the DISCONNECTED event leaves our queue pair
     * working and its receives posted until the endpoint is closed, so they would never
     * complete. fi_shutdown (rdma_disconnect(3): moves the queue pair to the error state)
     * flushes them as FI_ECANCELED error entries, as ibv_modify_qp(3) documents for a QP in
     * error. Its return code is not checked: the connection is gone either way.
     */
    private void peerEnded() {
        if (shutdownOnPeerEnd && state == State.ESTABLISHED && !disconnected) {
            disconnected = true;
            conn.shutdown();
        }
    }

    private ConnectionEvent end(ConnectionEvent e) {
        state = State.ENDED;
        pendingTerminal = null;
        routed.clear();
        return e;
    }
}
