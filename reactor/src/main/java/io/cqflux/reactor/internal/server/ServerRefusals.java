package io.cqflux.reactor.internal.server;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import io.cqflux.reactor.internal.connection.PeerControl;
import io.cqflux.reactor.internal.connection.PeerHello;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * How one server says no to a connection request: plainly, with a reason its client reads in the
 * transport's reject where that carries data, or, where it does not (rpma), with the reason in
 * place of a hello on a connection accepted only to carry it and closed again. The server's
 * reads of its listener (with the admission's verdict), its authenticator and its accepts all
 * refuse through here. {@link #refuse} runs on the server's loop; the rejects run on whichever
 * thread answers the request (the loop, or the set-up thread for an accept), and read only
 * final fields.
 */
final class ServerRefusals {
    /** The server's logger: what it refuses is the server's to say. */
    private static final Logger LOG = Loggers.getLogger(RdmaServer.class);

    private final ServerHost host;
    private final EventLoop loop;
    private final ConnectionConfig config;
    private final InetSocketAddress address;
    private final Duration handshakeTimeout;
    /** Whether the server takes raw private data: its clients are no cqflux peers, and read no reason. */
    private final boolean raw;
    /** Whether the server is closing ({@link ServerCore#closing()}); its loop's thread. */
    private final BooleanSupplier closing;

    /** Refusals that accepted a connection to carry their reason (loop thread writes; tests read). */
    private volatile long refusedByAccept;

    ServerRefusals(ServerHost host, EventLoop loop, InetSocketAddress address, Duration handshakeTimeout, boolean raw,
                   BooleanSupplier closing) {
        this.host = host;
        this.loop = loop;
        this.config = host.config();
        this.address = address;
        this.handshakeTimeout = handshakeTimeout;
        this.raw = raw;
        this.closing = closing;
    }

    /** {@return how many refusals accepted a connection to carry their reason, i.e. opened an endpoint} (tests) */
    public long refusedByAccept() {
        return refusedByAccept;
    }

    /**
     * Refuses an authenticated request with a reason the client reads. Where the transport's
     * reject carries private data to the client (fabric, tcp and verbs: {@code fi_reject(3)}), the refusal
     * ({@link PeerHello#encodeRefusal}) is the reject's data: nothing is opened for the request,
     * and it costs this loop what a refusal at admission does. Elsewhere (rpma: librpma rejects
     * with no data, {@code rpma_conn_req_delete(3)}) it is accepted with the refusal in place of a
     * hello and closed once established, so that the client still reads why; neither control
     * words nor exposures are registered for it, it receives nothing (prefetch 0), and it counts
     * as a pending handshake until closed, bounded by the timeout. Loop thread
     * ({@link ServerAuthentication}).
     */
    void refuse(ServerAdmission.Handshake h, String reason) {
        if (closing.getAsBoolean()) {
            rejectQuietly(h.req);
            h.done();
            return;
        }
        if (host.transport().maxRejectPrivateData() >= PeerHello.MIN_REFUSAL) {
            rejectWithReason(h.req, reason);
            h.done();
            return;
        }
        refusedByAccept++; // NOSONAR: written by the loop thread only
        byte[] data;
        try {
            data = PeerHello.encodeRefusal(reason, host.transport().maxAcceptPrivateData());
        } catch (RuntimeException e) {
            rejectQuietly(h.req);
            h.done();
            return;
        }
        Connection spi;
        try {
            spi = h.req.accept(data, loop);
        } catch (RuntimeException e) {
            LOG.warn("refusing a connection on " + address + " failed", e);
            h.done();
            return;
        }
        ConnectionCore core;
        try {
            core = host.factory().adopt(loop, spi, config, PeerControl.none(), true);
        } catch (RuntimeException e) {
            // Nothing else would end the handshake (nor give its address's slot back).
            LOG.warn("refusing a connection on " + address + " failed", e);
            try {
                spi.close();
            } catch (RuntimeException ce) {
                LOG.warn("closing a connection whose refusal failed on " + address + " failed", ce);
            } finally {
                h.done();
            }
            return;
        }
        core.receiver.prefetch(0, true);
        core.closed.whenComplete((v, t) -> h.done());
        // The handshake's time runs from the request's arrival (docs/security.md), a refusal's too.
        Duration left = handshakeTimeout.minusNanos(System.nanoTime() - h.arrived);
        h.timeout(loop.schedule(left.isNegative() ? Duration.ZERO : left, core::closeAsync));
        core.start(RdmaConnection::dispose, e -> { });
    }

    /**
     * Rejects a request with a reason its client reads where the transport's reject carries data
     * ({@code fi_reject(3)} on fabric, tcp and verbs), else without one (rpma: {@code rpma_conn_req_delete(3)}
     * has none; a refusal that must be read there is {@link #refuse}'s accept). Nothing is opened
     * for the request either way.
     */
    void rejectWithReason(ConnectionRequest req, String reason) {
        int max = host.transport().maxRejectPrivateData();
        if (max < PeerHello.MIN_REFUSAL) {
            rejectQuietly(req);
            return;
        }
        try {
            req.reject(PeerHello.encodeRefusal(reason, max));
        } catch (RuntimeException e) {
            // Not answered with the reason: answer it without one, so that neither the request
            // nor the client's connect waits for the listener's close.
            LOG.warn("refusing a connection request on " + address + " with its reason failed", e);
            rejectQuietly(req);
        }
    }

    /**
     * Rejects a request nothing was opened for: with {@code reason} where this server speaks the
     * cqflux hello ({@link #rejectWithReason}), plainly where it takes raw private data, whose
     * clients are no cqflux peers. Any thread that answers the request (the loop, the set-up thread).
     */
    void rejectBeforeAccept(ConnectionRequest req, String reason) {
        if (!raw) {
            rejectWithReason(req, reason);
        } else {
            rejectQuietly(req);
        }
    }

    /** Rejects a request with nothing sent back (the transport's plain reject). Any thread that answers it. */
    void rejectQuietly(ConnectionRequest req) {
        try {
            req.reject();
        } catch (RuntimeException re) {
            LOG.warn("rejecting a connection request on " + address + " failed", re);
        }
    }
}
