package io.cqflux.transport.rpma;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.transport.rpma.ffm.librpma_h;
import io.cqflux.transport.rpma.ffm.rpma_conn_private_data;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.Listener;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A listening endpoint ({@code rpma_ep_listen(3)}). Loop-confined after creation; {@link #close()}
 * shuts it down ({@code rpma_ep_shutdown(3)}) and frees its connection configuration, once.
 * Connections already accepted live on.
 *
 * <p><b>Unanswered requests on close.</b> A request taken with {@code rpma_ep_next_conn_req}
 * owns a queue pair, CQs and a CM id until {@code rpma_conn_req_connect} or
 * {@code rpma_conn_req_delete} (which rejects it, {@code rpma_conn_req_delete(3)}). So
 * {@link #close()} first deletes every request it handed out that nobody answered, then shuts
 * the endpoint down. Requests still queued in the CM event channel, never read, are not ours to
 * free: {@code rpma_ep_shutdown} destroys the listening CM id, and the kernel destroys the CM ids
 * of its unreported connect requests with it (the RDMA CM then rejects them), so those clients
 * see {@code REJECTED} too.
 *
 * <p>librpma binds the exact port it is given and has no call that reports a bound port, so
 * port 0 ("any") is refused: pick a free port.
 */
final class RpmaListener implements Listener {

    private static final System.Logger LOG = System.getLogger(RpmaListener.class.getName());

    private final RpmaTransport transport;
    private final InetSocketAddress address;
    private final ConnectionConfig config;
    private final Arena arena;
    private final MemorySegment cfg;
    private final MemorySegment reqOut;
    private final MemorySegment pollfd;
    private final MemorySegment pdata;
    private final int fd;
    /** Requests handed out and not answered yet (guarded by this). */
    private final Set<RpmaConnectionRequest> pending = new LinkedHashSet<>();
    private MemorySegment ep;

    private RpmaListener(RpmaTransport transport, InetSocketAddress address, ConnectionConfig config, Arena arena,
                         MemorySegment cfg, MemorySegment ep, int fd) {
        this.transport = transport;
        this.address = address;
        this.config = config;
        this.arena = arena;
        this.cfg = cfg;
        this.ep = ep;
        this.fd = fd;
        this.reqOut = arena.allocate(ValueLayout.ADDRESS);
        this.pollfd = arena.allocate(8, 8);
        this.pdata = rpma_conn_private_data.allocate(arena);
    }

    static RpmaListener listen(RpmaTransport t, InetSocketAddress address, ConnectionConfig config) {
        if (address.getPort() == 0) {
            throw new IllegalArgumentException("port 0: librpma binds the exact port given and cannot report a"
                    + " chosen one (rpma_ep_listen(3)); pick a free port in [1, 65535]");
        }
        if (address.isUnresolved()) {
            throw new IllegalArgumentException("address " + address + " is unresolved");
        }
        MemorySegment peer = t.retain();
        Arena arena = Arena.ofShared();
        MemorySegment cfg = MemorySegment.NULL;
        try {
            cfg = RpmaTransport.newConnCfg(config, arena);
            MemorySegment epOut = arena.allocate(ValueLayout.ADDRESS);
            String host = address.getAddress().getHostAddress();
            long r = RpmaTransport.Calls.EP_LISTEN.call(arena, peer, RpmaNative.cString(arena, host),
                    RpmaNative.cString(arena, Integer.toString(address.getPort())), epOut);
            if (RpmaNative.rc(r) != 0) { // ErrnoCall: the failure carries the errno captured with the call
                throw RpmaNative.failure("rpma_ep_listen", RpmaNative.rc(r), RpmaNative.errno(r), host + ":" + address.getPort());
            }
            MemorySegment ep = epOut.get(ValueLayout.ADDRESS, 0);
            MemorySegment fdOut = arena.allocate(ValueLayout.JAVA_INT);
            try {
                RpmaNative.check("rpma_ep_get_fd", librpma_h.rpma_ep_get_fd(ep, fdOut), host + ":" + address.getPort());
            } catch (RuntimeException e) {
                epOut.set(ValueLayout.ADDRESS, 0, ep);
                RpmaNative.logged(LOG, System.Logger.Level.WARNING, "rpma_ep_shutdown", librpma_h.rpma_ep_shutdown(epOut),
                        "after a failed rpma_ep_get_fd");
                throw e;
            }
            return new RpmaListener(t, address, config, arena, cfg, ep, fdOut.get(ValueLayout.JAVA_INT, 0));
        } catch (RuntimeException | Error e) {
            RpmaTransport.deleteConnCfg(cfg, arena);
            arena.close();
            t.release();
            throw e;
        }
    }

    @Override
    public int fd() {
        return fd;
    }

    @Override
    public InetSocketAddress address() {
        return address;
    }

    /**
     * Takes the next request ({@code rpma_ep_next_conn_req(3)}), creating its QP and CQs from the
     * listener's configuration. Reads the CM channel only when {@code poll} says it is readable
     * (see {@link RpmaNative#readable}).
     */
    @Override
    public synchronized ConnectionRequest nextRequest() {
        MemorySegment e = ep;
        if (e == null) {
            return null;
        }
        if (!RpmaNative.readable(fd, pollfd)) {
            return null;
        }
        int rc = librpma_h.rpma_ep_next_conn_req(e, cfg, reqOut);
        if (!RpmaNative.result("rpma_ep_next_conn_req", rc, "listener " + address)) {
            return null;
        }
        MemorySegment req = reqOut.get(librpma_h.C_POINTER, 0);
        String description = "rpma " + address + " <- client";
        // Read before anything can free the request; librpma leaves the id of a request it rejects.
        MemorySegment cmId = MemorySegment.NULL;
        RpmaConnectionRequest r;
        try {
            cmId = RpmaConnectionRequest.cmIdOf(req, transport.device());
            java.net.InetSocketAddress peer = RpmaConnectionRequest.peerOf(cmId);
            if (peer != null) {
                description = "rpma " + address + " <- " + peer.getAddress().getHostAddress() + ":" + peer.getPort();
            }
            RpmaNative.check("rpma_conn_req_get_private_data", librpma_h.rpma_conn_req_get_private_data(req, pdata), "");
            // verbatim, padded by RDMA CM (PrivateData)
            byte[] data = RpmaNative.copyBytes(rpma_conn_private_data.ptr(pdata),
                    Byte.toUnsignedInt(rpma_conn_private_data.len(pdata)));
            r = new RpmaConnectionRequest(this, transport, req, cmId, data, config, description);
        } catch (RuntimeException ex) {
            RpmaConnectionRequest.deleteQuietly(req, cmId, description);
            throw ex;
        }
        pending.add(r);
        return r;
    }

    /** A request was accepted or rejected (called with this lock held). */
    void answered(RpmaConnectionRequest r) {
        pending.remove(r);
    }

    synchronized boolean isClosed() {
        return ep == null;
    }

    /** {@return how many requests were handed out and not yet answered (tests)} */
    synchronized int pendingRequests() {
        return pending.size();
    }

    @Override
    public synchronized void close() {
        MemorySegment e = ep;
        if (e == null) {
            return;
        }
        ep = null;
        try {
            List<RpmaConnectionRequest> unanswered = new ArrayList<>(pending);
            pending.clear();
            for (RpmaConnectionRequest r : unanswered) {
                r.rejectOnClose();
            }
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            p.set(ValueLayout.ADDRESS, 0, e);
            RpmaNative.check("rpma_ep_shutdown", librpma_h.rpma_ep_shutdown(p), address.toString());
        } finally {
            RpmaTransport.deleteConnCfg(cfg, arena);
            arena.close();
            transport.release();
        }
    }

    @Override
    public String toString() {
        return "rpma listener " + address;
    }
}
