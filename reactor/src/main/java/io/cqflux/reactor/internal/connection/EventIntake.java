package io.cqflux.reactor.internal.connection;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.Transport;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.internal.connection.ConnectionCore.State;
import io.cqflux.reactor.internal.resources.Instrumentation;
import java.util.function.Consumer;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The intake of one connection's connection-management events (the transport's
 * {@link Connection#events()} channel): ESTABLISHED with the peer's private data and its hello,
 * the terminal events (CLOSED, LOST, REJECTED, UNREACHABLE), and the peer configuration a raw
 * connection applies. It turns them into the lifecycle's transitions through the core's narrow
 * methods ({@link ConnectionCore#establish}, {@link ConnectionCore#end}) and holds what the
 * handshake yields: the peer's private data and the callbacks of whoever waits for the
 * connection. Loop thread, except the accessors so marked.
 */
public final class EventIntake {
    private static final Logger LOG = Loggers.getLogger(ConnectionCore.class);
    private final ConnectionCore core;
    private final EventLoop loop;
    private final Transport transport;
    private final Connection conn;
    private final PeerControl control;
    private final Admission admission;
    private final ConnectionMonitor monitor;
    private final Instrumentation instrumentation;
    private final String description;
    private final boolean raw;
    /** The peer's private data as delivered, once established. */
    private volatile byte[] peerData = new byte[0];
    private Consumer<RdmaConnection> onEstablished;
    private Consumer<Throwable> onFailed;

    EventIntake(ConnectionCore core, PeerControl control, ConnectionMonitor monitor) {
        this.core = core;
        this.loop = core.loop;
        this.transport = core.transport;
        this.conn = core.conn;
        this.control = control;
        this.admission = core.admission;
        this.monitor = monitor;
        this.instrumentation = core.instrumentation;
        this.description = core.description;
        this.raw = core.raw;
    }

    /** Loop thread: whoever waits for the connection, told once it is established or failed. */
    void await(Consumer<RdmaConnection> established, Consumer<Throwable> failed) {
        assert loop.inEventLoop();
        this.onEstablished = established;
        this.onFailed = failed;
    }

    /**
     * Loop thread: the connection ended; {@return the callback of whoever waits for it, if it
     * was not established yet, or null} Neither callback runs after this.
     */
    Consumer<Throwable> takeFailed() {
        Consumer<Throwable> failed = onFailed;
        onFailed = null;
        onEstablished = null;
        return failed;
    }

    /**
     * The event channel's readiness handler: the library's own work (the handshake, the hello),
     * so a slow one is not a blocked-loop WARN; subscriber code it runs (the established
     * callback, the end's failures) is named before it runs and reported again.
     */
    void onReadable() {
        loop.noteSetup("cqflux.connectionEvent");
        poll();
    }

    /**
     * Loop thread: takes the events waiting on the channel, until there are none or the
     * connection ended; after the end, while its goodbye is pending, it still reads them for the
     * peer's disconnect (pollWhileGoodbyePending).
     */
    void poll() {
        ConnectionEvent e;
        while (core.state().compareTo(State.ENDED) < 0) {
            try {
                e = conn.events().nextEvent();
            } catch (RuntimeException ex) {
                core.end(new ConnectionException(ConnectionEvent.LOST, description + ": event channel failed", ex),
                        ConnectionEvent.LOST);
                return;
            }
            if (e == null) {
                return;
            }
            onEvent(e);
        }
        pollWhileGoodbyePending();
    }

    /**
     * Loop thread, after the end: while this side's close waits for its goodbye write, the
     * peer's disconnect still matters. A peer that closed at the same moment may have finished
     * its own close first: rdma_disconnect(3) moves its queue pair to the error state (and its
     * close then destroys it), and a queue pair in the error state, or one that is gone, answers
     * nothing, so the goodbye write is neither acknowledged nor failed before its retries run
     * out (the retry count and the local ACK timeout of ibv_modify_qp(3), far beyond the
     * goodbye's bound). The peer's disconnect says exactly that: the goodbye is given up at once
     * and the teardown goes on. The end's verdict stays what it was (this side closed in order).
     */
    private void pollWhileGoodbyePending() {
        while (core.state() == State.ENDED && core.teardown.goodbyePending()) {
            ConnectionEvent e;
            try {
                e = conn.events().nextEvent();
            } catch (RuntimeException ex) {
                LOG.debug("connection " + description + ": reading its events while its goodbye is pending"
                        + " failed; the goodbye's bound ends the wait", ex);
                return;
            }
            if (e == null) {
                return;
            }
            if (e.isTerminal()) {
                core.teardown.goodbyeUnanswerable();
                return;
            }
        }
    }

    private void onEvent(ConnectionEvent e) {
        if (e == ConnectionEvent.ESTABLISHED) {
            onEstablished();
            return;
        }
        if (e == ConnectionEvent.CLOSED && core.violations.checkControlWords()) {
            return; // a forged goodbye word: ended LOST, naming it
        }
        if (e == ConnectionEvent.CLOSED && control.enabled() && !control.peerSaidGoodbye()) {
            // The transport reports a peer process that died like an orderly close (its kernel
            // closes the socket or the RDMA CM id): a cqflux peer that closes in order says
            // goodbye first (PeerControl), so one that did not is lost.
            core.end(new ConnectionException(ConnectionEvent.LOST, "connection " + description + " lost: the peer"
                    + " ended it without an orderly close (its process died or stopped serving it)"),
                    ConnectionEvent.LOST);
            return;
        }
        if (e == ConnectionEvent.REJECTED && refusedWithReason()) {
            return;
        }
        String what = switch (e) {
            case CLOSED -> "closed by the peer";
            case LOST -> "lost";
            case REJECTED -> "refused: nothing listens at that address, or the server rejected the request";
            case UNREACHABLE -> "peer unreachable";
            default -> e.name();
        };
        core.end(new ConnectionException(e, "connection " + description + " " + what), e);
    }

    /**
     * REJECTED: a server that refused this client with a reason sent it as its reject's private
     * data where the transport delivers that (fabric/tcp); {@return whether it did, and the
     * connection ended REJECTED naming the reason} Anything else there (nothing, a transport's
     * padding, not a refusal) leaves the plain REJECTED to the caller. A raw-private-data client
     * reads it too: a cqflux server refuses its malformed hello, or any request past its limits,
     * so, and only a refusal's exact framing counts as one.
     */
    private boolean refusedWithReason() {
        byte[] data;
        try {
            data = conn.peerPrivateData();
        } catch (RuntimeException ex) {
            return false;
        }
        if (data.length == 0) {
            return false;
        }
        try {
            PeerHello.decode(data);
        } catch (PeerHello.Refused ex) {
            core.end(new ConnectionException(ConnectionEvent.REJECTED, "connection " + description + ": "
                    + ex.getMessage(), ex), ConnectionEvent.REJECTED);
            return true;
        } catch (RuntimeException ex) {
            return false;
        }
        return false;
    }

    /**
     * ESTABLISHED: reads the peer's private data and, unless raw, accepts its hello; then the
     * lifecycle is established, the listeners and events() are told, and whoever waits for the
     * connection gets it. A hello that is refused or unusable ends the connection instead.
     */
    private void onEstablished() {
        if (core.state() != State.CONNECTING) {
            return;
        }
        try {
            peerData = conn.peerPrivateData();
        } catch (RuntimeException ex) {
            core.end(new ConnectionException(ConnectionEvent.LOST, "connection " + description
                    + ": reading the peer's private data failed", ex), ConnectionEvent.LOST);
            return;
        }
        if (!raw) {
            try {
                PeerHello.Accepted hello = PeerHello.accept(transport, conn, control);
                admission.peerHello(hello);
            } catch (PeerHello.Refused ex) {
                // The server's authenticator refused this client and said why.
                core.end(new ConnectionException(ConnectionEvent.REJECTED, "connection " + description + ": "
                        + ex.getMessage(), ex), ConnectionEvent.REJECTED);
                return;
            } catch (RuntimeException ex) {
                core.end(new ConnectionException(ConnectionEvent.LOST, "connection " + description
                        + ": the peer's private data is not a usable cqflux hello, so the connection is closed: "
                        + ex.getMessage(), ex), ConnectionEvent.LOST);
                return;
            }
        }
        if (!core.establish()) {
            return; // starting a part failed and ended the connection: nothing to announce
        }
        monitor.announce(); // before the listeners hear of it (Instrumentation.add reads it)
        instrumentation.opened(core);
        monitor.emit(ConnectionEvent.ESTABLISHED);
        Consumer<RdmaConnection> cb = onEstablished;
        onEstablished = null;
        onFailed = null;
        if (cb != null) {
            loop.noteOperation("cqflux.established"); // subscriber code: reported if it blocks
            ConnectionCore.safely(() -> cb.accept(core.api));
        }
    }

    /** Loop thread: applies a peer configuration descriptor ({@link Connection#applyPeerHandshake(byte[])}). */
    public void applyPeerConfiguration(byte[] descriptor) {
        assert loop.inEventLoop();
        admission.checkOpen();
        if (core.state() == State.CONNECTING) {
            throw new IllegalStateException("connection " + description + " is not established");
        }
        conn.applyPeerHandshake(descriptor);
    }

    /** {@return a copy of the peer's private data as delivered, empty before it is established} Any thread. */
    public byte[] peerPrivateData() {
        return peerData.clone();
    }
}
