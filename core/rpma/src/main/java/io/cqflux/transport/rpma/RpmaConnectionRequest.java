package io.cqflux.transport.rpma;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.transport.rpma.ffm.librpma_h;
import io.cqflux.core.internal.Checks;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.LocalRegion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * An incoming request ({@code struct rpma_conn_req}); accepted or rejected once, on the loop
 * thread. If its listener closes first, the listener rejects and frees it
 * ({@code rpma_conn_req_delete(3)}) and answering it afterwards throws
 * {@link ResourceClosedException}.
 */
final class RpmaConnectionRequest implements ConnectionRequest {

    private static final System.Logger LOG = System.getLogger(RpmaConnectionRequest.class.getName());

    private final RpmaTransport transport;
    private final byte[] privateData;
    private final ConnectionConfig config;
    private final String description;
    private final RpmaListener listener;
    private MemorySegment req;

    RpmaConnectionRequest(RpmaListener listener, RpmaTransport transport, MemorySegment req, byte[] privateData,
                          ConnectionConfig config, String description) {
        this.listener = listener;
        this.transport = transport;
        this.req = req;
        this.privateData = privateData;
        this.config = config;
        this.description = description;
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    /**
     * {@return always {@code null}: librpma 1.2's request is opaque and its API has no getter for
     * the requester's address (the {@code rdma_cm_id} it wraps, whose {@code route.addr.dst_addr}
     * holds it, is not reachable through {@code librpma.h}; only the private data is,
     * {@code rpma_conn_req_get_private_data(3)})}
     */
    @Override
    public java.net.InetSocketAddress peerAddress() {
        return null;
    }

    private MemorySegment take() {
        synchronized (listener) {
            MemorySegment r = req;
            if (r == null) {
                if (listener.isClosed()) {
                    throw new ResourceClosedException(listener + " is closed: request " + description + " was rejected");
                }
                throw new IllegalStateException("connection request " + description + " was already accepted or rejected");
            }
            req = null;
            listener.answered(this);
            return r;
        }
    }

    /** The listener closes with this request unanswered: reject and free it (called with the listener's lock held). */
    void rejectOnClose() {
        MemorySegment r = req;
        if (r != null) {
            req = null;
            deleteQuietly(r);
        }
    }

    /**
     * Posts a receive on the request's queue pair ({@code rpma_conn_req_recv(3)}: "works as
     * rpma_recv(), but it may be used before the connection is established"). Loop thread, before
     * {@link #accept}.
     */
    @Override
    public boolean receiveBeforeAccept(LocalRegion dst, long offset, long length, long context) {
        Checks.receive(transport, dst, offset, length);
        if (!(dst instanceof RpmaLocalRegion l)) {
            throw new IllegalArgumentException("region " + dst + " was not registered by the rpma transport");
        }
        synchronized (listener) {
            MemorySegment r = req;
            if (r == null) {
                throw new IllegalStateException("connection request " + description
                        + " was already accepted or rejected: no receive can be posted before accepting it");
            }
            RpmaNative.check("rpma_conn_req_recv", librpma_h.rpma_conn_req_recv(r, l.mr(), offset, length,
                    MemorySegment.ofAddress(context)), description + ", context 0x" + Long.toHexString(context));
            return true;
        }
    }

    /** Accepts with {@code rpma_conn_req_connect(3)}, which consumes the request even when it fails. */
    @Override
    public Connection accept(byte[] privateData) {
        Checks.privateData(privateData, transport.maxAcceptPrivateData(), "accept");
        MemorySegment r = take();
        MemorySegment conn = transport.connectRequest(r, privateData, description);
        return RpmaConnection.create(transport, conn, config, description, true, this.privateData);
    }

    /**
     * Rejects and frees the request ({@code rpma_conn_req_delete(3)} rejects a passive-side
     * request). It carries no data: librpma 1.2 destroys the request's QP and CQs and calls
     * {@code rdma_reject(3)} with no private data, and has no call that passes any, so the
     * transport's {@link RpmaTransport#maxRejectPrivateData()} stays 0 and the client reads a bare
     * {@code RPMA_CONN_REJECTED}.
     */
    @Override
    public void reject() {
        MemorySegment r = take();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ValueLayout.ADDRESS);
            p.set(ValueLayout.ADDRESS, 0, r);
            RpmaNative.check("rpma_conn_req_delete", librpma_h.rpma_conn_req_delete(p), description);
        }
    }

    static void deleteQuietly(MemorySegment r) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ValueLayout.ADDRESS);
            p.set(ValueLayout.ADDRESS, 0, r);
            RpmaNative.logged(LOG, System.Logger.Level.WARNING, "rpma_conn_req_delete", librpma_h.rpma_conn_req_delete(p),
                    "");
        }
    }
}
