package io.cqflux.transport.rpma;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.transport.rpma.ffm.librpma_h;
import io.cqflux.core.internal.Checks;
import io.cqflux.core.internal.RdmaCmIds;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.LocalRegion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An incoming request ({@code struct rpma_conn_req}); accepted or rejected once, on the loop
 * thread. If its listener closes first, the listener rejects and frees it
 * ({@code rpma_conn_req_delete(3)}) and answering it afterwards throws
 * {@link ResourceClosedException}.
 *
 * <p><b>Fact: librpma never destroys the {@code rdma_cm_id} of an incoming request it rejects.</b>
 * {@code rpma_conn_req_delete(3)} of an incoming request destroys its QP and CQs, calls
 * {@code rdma_reject(3)} and frees the request, and that is all: the id that RDMA CM created for
 * the request stays, which {@code rdma_cm(7)} leaves to the application to destroy
 * ({@code rdma_destroy_id(3)}); so does the id of a request whose {@code rpma_conn_req_connect(3)}
 * fails (in 1.2's code and in librpma's last source: the oldest releases deleted the new
 * connection, its id with it, when storing the private data failed). Measured in the Soft-RoCE lane with librpma 1.2 ({@code core/rpma/src/test/c/reject_cm_id_probe.c},
 * and {@code RpmaLaneTest}): each rejected request left one more cm_id in
 * {@code rdma resource show cm_id} and 736 bytes of malloc, until {@code rpma_ep_shutdown(3)}
 * closed the listener's event channel (the kernel's part; the malloc stays). A client that keeps
 * connecting with requests the server refuses (malformed hellos, a full server) would grow both
 * without bound. librpma's last source (its repository is archived) still rejects that way, so the
 * transport destroys the id itself after the delete. The same id tells the requester's address
 * ({@link #peerAddress()}), which librpma has no getter for. librpma's request is opaque: the id is read
 * from it before the delete, from its second word (every librpma version's
 * {@code struct rpma_conn_req} keeps it there; 1.2's {@code rpma_conn_req_delete} passes that word
 * to {@code rdma_destroy_qp} and {@code rdma_reject}), and used only when that word points at an
 * {@code rdma_cm_id} of this transport's device (the id's first member, {@code verbs}, is the
 * {@code ibv_context} the transport opened); otherwise the transport says once that it cannot, and
 * the id stays until the listener closes.
 */
final class RpmaConnectionRequest implements ConnectionRequest {

    private static final System.Logger LOG = System.getLogger(RpmaConnectionRequest.class.getName());

    private static final RpmaNative.ErrnoCall DESTROY_ID = new RpmaNative.ErrnoCall("rdma_destroy_id",
            librpma_h.rdma_destroy_id$address(), librpma_h.rdma_destroy_id$descriptor());

    /** Whether the warning that a request's id could not be found was given (once per JVM). */
    private static final AtomicBoolean UNRECOGNISED = new AtomicBoolean();

    private final RpmaTransport transport;
    private final byte[] privateData;
    private final ConnectionConfig config;
    private final String description;
    private final RpmaListener listener;
    private MemorySegment req;
    /** The request's {@code rdma_cm_id} ({@link #cmIdOf}), or {@code NULL} where it could not be recognised. */
    private final MemorySegment cmId;
    /** The requester's address, from {@link #cmId}; null without it. */
    private final java.net.InetSocketAddress peer;

    RpmaConnectionRequest(RpmaListener listener, RpmaTransport transport, MemorySegment req, MemorySegment cmId,
                          byte[] privateData, ConnectionConfig config, String description) {
        this.listener = listener;
        this.transport = transport;
        this.req = req;
        this.cmId = cmId;
        this.peer = peerOf(cmId);
        this.privateData = privateData;
        this.config = config;
        this.description = description;
    }

    /**
     * {@return the {@code rdma_cm_id} of an incoming request, or {@code NULL} when the request's
     * second word is no id of {@code device}} Before the request is answered: answering frees it.
     * The segments are read with {@code C_POINTER}, whose target is an unbounded byte sequence: no
     * {@code reinterpret} (whose caller check walks the stack) for each request on the loop.
     *
     * @param req a request from {@code rpma_ep_next_conn_req(3)}, read with {@code C_POINTER}
     * @param device the transport's {@code ibv_context}
     */
    static MemorySegment cmIdOf(MemorySegment req, MemorySegment device) {
        long word = librpma_h.C_POINTER.byteSize();
        // librpma.so.0 is every librpma release (0.x and 1.x: the layout above); a later soname
        // might lay its request out otherwise, and its word is then not read at all.
        if ("librpma.so.0".equals(librpma_h.loadedLibrary()) && req.byteSize() >= 2 * word) {
            MemorySegment id = req.get(librpma_h.C_POINTER, word);
            if (!id.equals(MemorySegment.NULL) && id.get(librpma_h.C_POINTER, RdmaCmIds.VERBS).address() == device.address()) {
                return id;
            }
        }
        if (UNRECOGNISED.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.WARNING, "this librpma's connection request does not hold its rdma_cm_id where"
                    + " librpma 1.x does: the id of each request the server rejects stays until its listener closes"
                    + " (librpma does not destroy it, rpma_conn_req_delete(3))");
        }
        return MemorySegment.NULL;
    }

    /** {@return the requester's address an id of {@link #cmIdOf} tells, or null ({@code NULL} id, or no IP address)} */
    static java.net.InetSocketAddress peerOf(MemorySegment cmId) {
        return cmId.equals(MemorySegment.NULL) ? null : RdmaCmIds.destination(cmId);
    }

    /** Destroys the id librpma left of a request it rejected or failed to accept ({@code rdma_destroy_id(3)}). */
    static void destroyCmId(MemorySegment cmId, String description) {
        if (cmId.equals(MemorySegment.NULL)) {
            return;
        }
        try (Arena a = Arena.ofConfined()) {
            long r = DESTROY_ID.call(a, cmId);
            if (RpmaNative.rc(r) != 0) {
                LOG.log(System.Logger.Level.WARNING, "rdma_destroy_id of a rejected request (" + description
                        + ") failed: errno " + RpmaNative.errno(r));
            }
        }
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    /**
     * {@return the requester's address, or {@code null} where the request's id was not recognised}
     * librpma has no getter for it; the {@code rdma_cm_id} the request wraps holds it
     * ({@code route.addr.dst_addr}, what {@code rdma_get_peer_addr(3)} reads), read once the
     * request arrived ({@link #cmIdOf}).
     */
    @Override
    public java.net.InetSocketAddress peerAddress() {
        return peer;
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
            deleteQuietly(r, cmId, description);
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

    /**
     * Accepts with {@code rpma_conn_req_connect(3)}, which consumes the request even when it fails
     * (and then leaves its id, destroyed here).
     */
    @Override
    public Connection accept(byte[] privateData) {
        Checks.privateData(privateData, transport.maxAcceptPrivateData(), "accept");
        MemorySegment r = take();
        MemorySegment conn;
        try {
            conn = transport.connectRequest(r, privateData, description);
        } catch (RuntimeException e) {
            destroyCmId(cmId, description);
            throw e;
        }
        return RpmaConnection.create(transport, conn, config, description, true, this.privateData);
    }

    /**
     * Rejects and frees the request ({@code rpma_conn_req_delete(3)} rejects a passive-side
     * request). It carries no data: librpma 1.2 destroys the request's QP and CQs and calls
     * {@code rdma_reject(3)} with no private data, and has no call that passes any, so the
     * transport's {@link RpmaTransport#maxRejectPrivateData()} stays 0 and the client reads a bare
     * {@code RPMA_CONN_REJECTED}. The request's id, which librpma leaves, is destroyed afterwards
     * (the fact above).
     */
    @Override
    public void reject() {
        MemorySegment r = take();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ValueLayout.ADDRESS);
            p.set(ValueLayout.ADDRESS, 0, r);
            RpmaNative.check("rpma_conn_req_delete", librpma_h.rpma_conn_req_delete(p), description);
        } finally {
            // The delete frees the request on failure too ("sets *req_ptr value to NULL on success
            // and on failure"), and never the id.
            destroyCmId(cmId, description);
        }
    }

    /** Rejects and frees a request, and destroys its id ({@code cmId}, may be {@code NULL}), logging a failure. */
    static void deleteQuietly(MemorySegment r, MemorySegment cmId, String description) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ValueLayout.ADDRESS);
            p.set(ValueLayout.ADDRESS, 0, r);
            RpmaNative.logged(LOG, System.Logger.Level.WARNING, "rpma_conn_req_delete", librpma_h.rpma_conn_req_delete(p),
                    description);
        } finally {
            destroyCmId(cmId, description);
        }
    }
}
