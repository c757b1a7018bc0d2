package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.*;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.transport.fabric.ffm.fi_eq_cm_entry;
import io.cqflux.transport.fabric.ffm.fi_info;
import io.cqflux.transport.fabric.ffm.fi_ops_cm;
import io.cqflux.transport.fabric.ffm.fi_ops_fabric;
import io.cqflux.transport.fabric.ffm.fid_pep;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.Listener;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * A passive endpoint ({@code fi_endpoint(3)} {@code fi_passive_ep}) listening with its own event
 * queue. Loop-confined after construction; {@link #close()} is idempotent and leaves accepted
 * connections alive.
 */
@SuppressWarnings("restricted") // FFM: this package is the native-access boundary of the fabric transport
final class FabricListener implements Listener {

    private static final System.Logger LOG = System.getLogger(FabricListener.class.getName());

    private final FabricTransport transport;
    private final ConnectionConfig config;
    private final FabricEventQueue eq;
    private final MemorySegment pep;
    private final MemorySegment rejectFp;
    private final InetSocketAddress bound;
    private boolean closed;

    private FabricListener(FabricTransport transport, ConnectionConfig config, FabricEventQueue eq, MemorySegment pep,
                           InetSocketAddress bound) {
        this.transport = transport;
        this.config = config;
        this.eq = eq;
        this.pep = pep;
        this.rejectFp = fi_ops_cm.reject(fid_pep.cm(pep));
        this.bound = bound;
    }

    static FabricListener open(FabricTransport transport, InetSocketAddress address, ConnectionConfig config) {
        String host = address.getAddress() == null ? address.getHostString() : address.getAddress().getHostAddress();
        FabricEventQueue eq = null;
        MemorySegment pep = MemorySegment.NULL;
        try (Arena tmp = Arena.ofConfined()) {
            MemorySegment info = FabricTransport.getinfo(tmp, transport.provider(), null, null, host,
                    Integer.toString(address.getPort()), FI_SOURCE());
            if (info.equals(MemorySegment.NULL)) {
                throw new IllegalArgumentException("provider " + transport.provider() + " cannot listen on " + address);
            }
            MemorySegment out = tmp.allocate(C_POINTER);
            try {
                MemorySegment fops = io.cqflux.transport.fabric.ffm.fid_fabric.ops(transport.fabric());
                FabricLibrary.check("fi_passive_ep", fi_ops_fabric.passive_ep.invoke(fi_ops_fabric.passive_ep(fops),
                        transport.fabric(), info, out, MemorySegment.NULL), address.toString());
            } finally {
                fi_freeinfo(info);
            }
            pep = out.get(C_POINTER, 0);
            eq = new FabricEventQueue(transport);
            FabricLibrary.check("fi_pep_bind", FabricLibrary.bind(pep, eq.eq(), 0), address.toString());
            MemorySegment cm = fid_pep.cm(pep);
            FabricLibrary.check("fi_listen", fi_ops_cm.listen.invoke(fi_ops_cm.listen(cm), pep), address.toString());
            // fi_cm(3) fi_getname on a passive endpoint: the bound address, so port 0 reports the real port.
            MemorySegment addr = tmp.allocate(128, 8);
            MemorySegment len = tmp.allocate(ValueLayout.JAVA_LONG);
            len.set(ValueLayout.JAVA_LONG, 0, addr.byteSize());
            FabricLibrary.check("fi_getname", fi_ops_cm.getname.invoke(fi_ops_cm.getname(cm), pep, addr, len),
                    address.toString());
            InetSocketAddress bound = sockaddr(addr, address);
            return new FabricListener(transport, config, eq, pep, bound);
        } catch (RuntimeException e) {
            if (!pep.equals(MemorySegment.NULL)) {
                FabricLibrary.close(pep);
            }
            if (eq != null) {
                eq.close();
            }
            throw e;
        }
    }

    /** Decodes a sockaddr_in / sockaddr_in6 (family, big-endian port, address). */
    static InetSocketAddress sockaddr(MemorySegment sa, InetSocketAddress fallback) {
        int family = sa.get(ValueLayout.JAVA_SHORT, 0);
        int port = Short.toUnsignedInt(sa.get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), 2));
        try {
            if (family == 2) { // AF_INET
                return new InetSocketAddress(InetAddress.getByAddress(sa.asSlice(4, 4).toArray(ValueLayout.JAVA_BYTE)), port);
            }
            if (family == 10) { // AF_INET6
                return new InetSocketAddress(InetAddress.getByAddress(sa.asSlice(8, 16).toArray(ValueLayout.JAVA_BYTE)), port);
            }
        } catch (UnknownHostException e) {
            // fall through
        }
        return new InetSocketAddress(fallback.getAddress(), port);
    }

    /** {@return the largest private data the provider carries, fi_getopt FI_OPT_CM_DATA_SIZE} */
    long cmDataSize() {
        return FabricTransport.cmDataSize(pep);
    }

    @Override
    public int fd() {
        return eq.fd();
    }

    @Override
    public boolean prepareToSleep() {
        return eq.trywait();
    }

    @Override
    public InetSocketAddress address() {
        return bound;
    }

    @Override
    public ConnectionRequest nextRequest() {
        if (closed) {
            throw new ResourceClosedException("listener on " + bound + " is closed");
        }
        while (true) {
            int ev = eq.read();
            if (ev == FabricEventQueue.NONE) {
                return null;
            }
            if (ev == FI_CONNREQ()) {
                MemorySegment info = fi_eq_cm_entry.info(eq.entry());
                return new Request(info, eq.cmData());
            }
            if (ev == FabricEventQueue.ERROR) {
                LOG.log(System.Logger.Level.DEBUG, "listener {0}: event queue error {1}", new Object[] {bound, eq.lastError()});
            } else {
                LOG.log(System.Logger.Level.DEBUG, "listener {0}: ignoring event {1}", new Object[] {bound, ev});
            }
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        FabricLibrary.close(pep);
        eq.close();
    }

    /** A pending FI_CONNREQ: owns the request's fi_info until accepted or rejected. */
    private final class Request implements ConnectionRequest {
        private final MemorySegment info;
        private final byte[] data;
        private boolean done;

        Request(MemorySegment info, byte[] data) {
            this.info = info;
            this.data = data;
        }

        @Override
        public byte[] privateData() {
            return data.clone();
        }

        @Override
        public io.cqflux.core.spi.Connection accept(byte[] privateData) {
            io.cqflux.core.internal.Checks.privateData(privateData, transport.maxAcceptPrivateData(), "accept");
            once();
            try {
                return FabricConnection.accept(transport, info, data, config,
                        privateData == null ? new byte[0] : privateData);
            } catch (RuntimeException e) {
                // do not leave the client waiting for an answer until its timeout
                fi_ops_cm.reject.invoke(rejectFp, pep, fi_info.handle(info), MemorySegment.NULL, 0L);
                throw e;
            } finally {
                fi_freeinfo(info);
            }
        }

        @Override
        public void reject() {
            once();
            try {
                // fi_cm(3): fi_reject(pep, info->handle, param, paramlen).
                FabricLibrary.check("fi_reject", fi_ops_cm.reject.invoke(rejectFp, pep, fi_info.handle(info),
                        MemorySegment.NULL, 0L), bound.toString());
            } finally {
                fi_freeinfo(info);
            }
        }

        private void once() {
            if (done) {
                throw new IllegalStateException("connection request already accepted or rejected");
            }
            done = true;
        }
    }
}
