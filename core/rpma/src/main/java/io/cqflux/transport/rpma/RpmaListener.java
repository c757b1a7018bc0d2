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

/**
 * A listening endpoint ({@code rpma_ep_listen(3)}). Loop-confined after creation; {@link #close()}
 * shuts it down ({@code rpma_ep_shutdown(3)}) and frees its connection configuration, once.
 * Requests already taken and connections already accepted live on.
 *
 * <p>librpma binds the exact port it is given and has no call that reports a bound port, so
 * port 0 ("any") is refused: pick a free port.
 */
final class RpmaListener implements Listener {

    private final RpmaTransport transport;
    private final InetSocketAddress address;
    private final ConnectionConfig config;
    private final Arena arena;
    private final MemorySegment cfg;
    private final MemorySegment reqOut;
    private final MemorySegment pollfd;
    private final MemorySegment pdata;
    private final int fd;
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
            if (RpmaNative.rc(r) != 0) {
                throw RpmaNative.failure("rpma_ep_listen", RpmaNative.rc(r), RpmaNative.errno(r), host + ":" + address.getPort());
            }
            MemorySegment ep = epOut.get(ValueLayout.ADDRESS, 0);
            MemorySegment fdOut = arena.allocate(ValueLayout.JAVA_INT);
            int rc = librpma_h.rpma_ep_get_fd(ep, fdOut);
            if (rc != 0) {
                epOut.set(ValueLayout.ADDRESS, 0, ep);
                librpma_h.rpma_ep_shutdown(epOut);
                RpmaNative.check("rpma_ep_get_fd", rc, "");
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
    public ConnectionRequest nextRequest() {
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
        MemorySegment req = reqOut.get(ValueLayout.ADDRESS, 0);
        byte[] data;
        try {
            RpmaNative.check("rpma_conn_req_get_private_data", librpma_h.rpma_conn_req_get_private_data(req, pdata), "");
            data = PrivateData.unframe(RpmaNative.copyBytes(rpma_conn_private_data.ptr(pdata),
                    Byte.toUnsignedInt(rpma_conn_private_data.len(pdata))));
        } catch (RuntimeException ex) {
            RpmaConnectionRequest.deleteQuietly(req);
            throw ex;
        }
        return new RpmaConnectionRequest(transport, req, data, config, "rpma " + address + " <- client");
    }

    @Override
    public synchronized void close() {
        MemorySegment e = ep;
        if (e == null) {
            return;
        }
        ep = null;
        try {
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
