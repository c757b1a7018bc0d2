package io.cqflux.transport.rpma;

import io.cqflux.core.Capability;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.TransportUnavailableException;
import io.cqflux.transport.rpma.ffm.librpma_h;
import io.cqflux.transport.rpma.ffm.rpma_conn_private_data;
import io.cqflux.core.internal.Checks;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.internal.NativeErrors;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The rpma transport on one RDMA device: a {@code struct rpma_peer} from the device that serves a
 * local address ({@code rpma_utils_get_ibv_context(3)}, {@code rpma_peer_new(3)}).
 *
 * <p>Thread-safe as {@link Transport} requires; {@link #close()} deletes the peer once
 * ({@code rpma_peer_delete(3)}); close connections, listeners and regions first.
 */
final class RpmaTransport implements Transport {

    /** librpma calls whose {@code RPMA_E_PROVIDER} reason is read from errno. */
    static final class Calls {
        static final RpmaNative.ErrnoCall GET_IBV_CONTEXT = new RpmaNative.ErrnoCall("rpma_utils_get_ibv_context",
                librpma_h.rpma_utils_get_ibv_context$address(), librpma_h.rpma_utils_get_ibv_context$descriptor());
        static final RpmaNative.ErrnoCall PEER_NEW = new RpmaNative.ErrnoCall("rpma_peer_new",
                librpma_h.rpma_peer_new$address(), librpma_h.rpma_peer_new$descriptor());
        static final RpmaNative.ErrnoCall EP_LISTEN = new RpmaNative.ErrnoCall("rpma_ep_listen",
                librpma_h.rpma_ep_listen$address(), librpma_h.rpma_ep_listen$descriptor());
        static final RpmaNative.ErrnoCall CONN_REQ_NEW = new RpmaNative.ErrnoCall("rpma_conn_req_new",
                librpma_h.rpma_conn_req_new$address(), librpma_h.rpma_conn_req_new$descriptor());
        static final RpmaNative.ErrnoCall CONN_REQ_CONNECT = new RpmaNative.ErrnoCall("rpma_conn_req_connect",
                librpma_h.rpma_conn_req_connect$address(), librpma_h.rpma_conn_req_connect$descriptor());
        static final RpmaNative.ErrnoCall MR_REG = new RpmaNative.ErrnoCall("rpma_mr_reg",
                librpma_h.rpma_mr_reg$address(), librpma_h.rpma_mr_reg$descriptor());

        private Calls() {
        }
    }

    static final RpmaNative.ErrnoCall MR_REG = Calls.MR_REG;

    private static final System.Logger LOG = System.getLogger(RpmaTransport.class.getName());
    private static final int ENODEV = 19;
    private static final int ENOSYS = 38;

    private final InetAddress address;
    /** This side's declaration ({@code TransportOptions#directWriteToPersistentMemory}). */
    private final boolean directWriteToPmem;
    private final Set<Capability> capabilities;
    private final int nativeDescriptorSize;
    /** This side's peer configuration descriptor: the handshake every connection carries. */
    private final byte[] handshake;
    /** The device's {@code struct ibv_context} that {@code rpma_utils_get_ibv_context(3)} gave the peer. */
    private final MemorySegment device;
    private volatile MemorySegment peer;
    /** Open listeners, regions and connections: they keep using the peer (guarded by this). */
    private int children;
    /** close() was called; the peer goes when the last child does (guarded by this). */
    private volatile boolean closeRequested;

    private RpmaTransport(InetAddress address, MemorySegment device, MemorySegment peer, Set<Capability> capabilities,
                          int nativeDescriptorSize, boolean directWriteToPmem, byte[] handshake) {
        this.address = address;
        this.device = device;
        this.directWriteToPmem = directWriteToPmem;
        this.handshake = handshake;
        this.peer = peer;
        this.capabilities = capabilities;
        this.nativeDescriptorSize = nativeDescriptorSize;
    }

    static RpmaTransport open(InetAddress address, boolean directWriteToPmem) {
        RpmaLog.install();
        String host = address.getHostAddress();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ctxOut = a.allocate(ValueLayout.ADDRESS);
            MemorySegment hostString = RpmaNative.cString(a, host);
            long r = ScopedValue.where(RpmaLog.PROBING, Boolean.TRUE).call(() -> Calls.GET_IBV_CONTEXT.call(a, hostString,
                    librpma_h.RPMA_UTIL_IBV_CONTEXT_LOCAL(), ctxOut));
            if (RpmaNative.rc(r) != 0) {
                throw unavailable(host, RpmaNative.rc(r), RpmaNative.errno(r));
            }
            MemorySegment ctx = ctxOut.get(ValueLayout.ADDRESS, 0);
            if (ctx.equals(MemorySegment.NULL)) {
                // Seen over Soft-RoCE with 127.0.0.1: rpma_utils_get_ibv_context returns 0 but
                // leaves a NULL context (rdma_cm binds loopback to no device; rxe does not attach
                // to lo), which every later call would reject with RPMA_E_INVAL.
                throw new TransportUnavailableException("rpma", "address " + host + " is not on an RDMA interface"
                        + " (rpma_utils_get_ibv_context found no device for it; RDMA devices here: " + rdmaDevices()
                        + "; see `rdma link show` for the interfaces they serve)", null);
            }
            MemorySegment odp = a.allocate(ValueLayout.JAVA_INT);
            RpmaNative.check("rpma_utils_ibv_context_is_odp_capable",
                    librpma_h.rpma_utils_ibv_context_is_odp_capable(ctx, odp), host);
            MemorySegment peerOut = a.allocate(ValueLayout.ADDRESS);
            long p = Calls.PEER_NEW.call(a, ctx, peerOut);
            if (RpmaNative.rc(p) != 0) {
                throw new TransportUnavailableException("rpma", "cannot create a peer on the RDMA device of " + host,
                        RpmaNative.failure("rpma_peer_new", RpmaNative.rc(p), RpmaNative.errno(p), host));
            }
            MemorySegment peer = peerOut.get(ValueLayout.ADDRESS, 0);
            try {
                Set<Capability> caps = EnumSet.of(Capability.RMA, Capability.WRITE_WITH_IMMEDIATE, Capability.MESSAGES,
                        Capability.SEND_WITH_IMMEDIATE, Capability.ATOMIC_WRITE, Capability.FLUSH_VISIBILITY,
                        Capability.FLUSH_PERSISTENT);
                if (odp.get(ValueLayout.JAVA_INT, 0) != 0) {
                    caps.add(Capability.ON_DEMAND_PAGING);
                }
                if (RpmaNative.hasSharedChannel()) {
                    caps.add(Capability.SHARED_COMPLETION_CHANNEL);
                }
                int descSize = probeDescriptorSize(peer);
                return new RpmaTransport(address, ctx, peer, Set.copyOf(caps), descSize, directWriteToPmem,
                        RpmaPeerConfig.descriptor(directWriteToPmem));
            } catch (RuntimeException | Error e) {
                peerOut.set(ValueLayout.ADDRESS, 0, peer);
                RpmaNative.logged(LOG, System.Logger.Level.WARNING, "rpma_peer_delete", librpma_h.rpma_peer_delete(peerOut), "");
                throw e;
            }
        }
    }

    /**
     * Registers 8 bytes once to learn {@code rpma_mr_get_descriptor_size}: the size every
     * descriptor from a peer running the same library has, checked before parsing.
     */
    private static int probeDescriptorSize(MemorySegment peer) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment mem = a.allocate(8, 8);
            MemorySegment mrOut = a.allocate(ValueLayout.ADDRESS);
            long r = Calls.MR_REG.call(a, peer, mem, 8L, librpma_h.RPMA_MR_USAGE_READ_SRC(), mrOut);
            if (RpmaNative.rc(r) != 0) {
                throw RpmaNative.failure("rpma_mr_reg", RpmaNative.rc(r), RpmaNative.errno(r), "8-byte descriptor probe");
            }
            MemorySegment mr = mrOut.get(ValueLayout.ADDRESS, 0);
            try {
                MemorySegment size = a.allocate(ValueLayout.JAVA_LONG);
                RpmaNative.check("rpma_mr_get_descriptor_size", librpma_h.rpma_mr_get_descriptor_size(mr, size), "");
                return (int) size.get(ValueLayout.JAVA_LONG, 0);
            } finally {
                mrOut.set(ValueLayout.ADDRESS, 0, mr);
                RpmaNative.logged(LOG, System.Logger.Level.WARNING, "rpma_mr_dereg", librpma_h.rpma_mr_dereg(mrOut), "8-byte descriptor probe");
            }
        }
    }

    /**
     * The exception for a failed {@code rpma_utils_get_ibv_context}. With {@code RPMA_E_PROVIDER}
     * and no RDMA device in {@code /sys/class/infiniband} (or errno {@code ENODEV}/{@code ENOSYS}:
     * librdmacm finds no device, e.g. a kernel without {@code CONFIG_INFINIBAND}), it names the
     * missing device, Soft-RoCE and the fabric transport; with devices present, the address is
     * simply not on an RDMA interface.
     */
    static TransportUnavailableException unavailable(String host, int rc, int errno) {
        List<String> devices = rdmaDevices();
        Exception cause = RpmaNative.failure("rpma_utils_get_ibv_context", rc, errno, host);
        if (rc == librpma_h.RPMA_E_PROVIDER() && (devices.isEmpty() || errno == ENOSYS)) {
            return new TransportUnavailableException("rpma", "no RDMA device: the kernel exposes none"
                    + " (/sys/class/infiniband is empty or missing; errno " + NativeErrors.errnoName(errno) + ")."
                    + " Without RDMA hardware, create a Soft-RoCE device on a kernel with rdma_rxe"
                    + " (modprobe rdma_rxe; rdma link add rxe0 type rxe netdev <if>), or use the fabric transport"
                    + " (libfabric's tcp provider), which needs no RDMA device", cause);
        }
        if (rc == librpma_h.RPMA_E_PROVIDER() || errno == ENODEV) {
            return new TransportUnavailableException("rpma", "address " + host + " is not on an RDMA interface"
                    + " (RDMA devices here: " + devices + "; see `rdma link show` for the interfaces they serve)", cause);
        }
        return new TransportUnavailableException("rpma", "cannot find the RDMA device of " + host, cause);
    }

    static List<String> rdmaDevices() {
        Path dir = Path.of("/sys/class/infiniband");
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    /** {@return the device's {@code struct ibv_context}: what every {@code rdma_cm_id} of this transport's requests points at} */
    MemorySegment device() {
        return device;
    }

    MemorySegment peer() {
        MemorySegment p = peer;
        if (p == null || closeRequested) {
            throw new ResourceClosedException("rpma transport on " + address.getHostAddress() + " is closed");
        }
        return p;
    }

    /**
     * Pins the peer for a child (listener, region, connection) being created: rpma_peer_delete(3)
     * frees the peer even when its protection domain is still in use, and a listener's
     * rpma_ep_next_conn_req would then build queue pairs from freed memory. Pair with
     * {@link #release()} when the child closes (or its construction fails).
     *
     * @return the peer
     */
    synchronized MemorySegment retain() {
        MemorySegment p = peer();
        children++;
        return p;
    }

    /** A child closed; the last one completes a close() that was asked for meanwhile. */
    synchronized void release() {
        if (--children == 0 && closeRequested) {
            // Runs inside the last child's close(), possibly on an event loop: a failure here is
            // logged, never thrown into that unrelated close.
            deletePeer(false);
        }
    }

    int nativeDescriptorSize() {
        return nativeDescriptorSize;
    }

    @Override
    public String name() {
        return "rpma";
    }

    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    @Override
    public long maxMessageSize() {
        return RpmaConnection.MAX_MESSAGE;
    }

    /**
     * librpma's emulated flush reads 8 bytes at the flushed offset whatever the length; it is
     * applied whether or not the NIC flushes natively, so that a range is refused or taken alike
     * on every device.
     */
    @Override
    public int flushReadBytes() {
        return FlushSpan.READ_BYTES;
    }

    /** RDMA CM connect private data on IB/RoCE: 56 bytes, passed verbatim ({@link PrivateData}). */
    @Override
    public int maxConnectPrivateData() {
        return PrivateData.CONNECT_CAPACITY;
    }

    /** RDMA CM accept private data on IB/RoCE: 196 bytes, passed verbatim ({@link PrivateData}). */
    @Override
    public int maxAcceptPrivateData() {
        return PrivateData.ACCEPT_CAPACITY;
    }

    /**
     * 0: {@code rpma_conn_req_delete(3)} rejects with no private data ({@code rdma_reject(3)}
     * with none; librpma 1.2 has no call that passes any), so a client reads no reason from a
     * reject (RpmaConnectionRequest#reject).
     */
    @Override
    public int maxRejectPrivateData() {
        return 0;
    }

    /**
     * librpma 1.2 creates each incoming request's queue pair in the listening peer's protection
     * domain when it hands the request out ({@code rpma_ep_next_conn_req(3)}), and registers
     * memory only in a peer's ({@code rpma_mr_reg(3)}): a request cannot be given a protection
     * domain of its own, so every key of the peer works on each of its queue pairs.
     */
    @Override
    public String connectionScopedKeysRefusal() {
        return "librpma creates each request's queue pair in the listening peer's protection domain"
                + " (rpma_ep_next_conn_req(3)), so a key works on every connection of the instance: use a separate"
                + " Cqflux instance (a separate peer) per trust group instead";
    }

    /**
     * The peer configuration descriptor ({@code rpma_peer_cfg_get_descriptor(3)}) with direct
     * write to persistent memory as this side declared it: the peer applies it to its connection
     * ({@link RpmaConnection#applyPeerHandshake}) so that its {@code rpma_flush} may use
     * {@code RPMA_FLUSH_TYPE_PERSISTENT} on this side's regions.
     */
    @Override
    public byte[] handshake() {
        return handshake.clone();
    }

    /**
     * Empty (a peer that sent none keeps librpma's default configuration) or a peer configuration
     * descriptor of this library's size, as RpmaPeerConfig#apply takes it once established.
     */
    @Override
    public void checkPeerHandshake(byte[] peer) {
        if (peer == null || (peer.length != 0 && peer.length != handshake.length)) {
            throw new IllegalArgumentException("peer configuration descriptor of "
                    + (peer == null ? "null" : peer.length + " bytes") + ", expected 0 or exactly " + handshake.length);
        }
    }

    /**
     * Registers memory ({@code rpma_mr_reg(3)}). {@link RegionAccess#FLUSH_TYPE_PERSISTENT} only
     * where this side declared direct write to persistent memory: librpma trusts the declaration
     * (its peer configuration is all a peer's {@code rpma_flush} checks), so without it a
     * "persistent" region would make a peer's durable write stop at the volatile cache.
     *
     * <p>Keys: the region's rkey is the NIC driver's, not ours, and it is only as hard to guess
     * as the driver makes it. Facts (kernel sources): Soft-RoCE ({@code rxe_mr.c},
     * {@code rxe_mr_init}) makes it {@code index << 8 | rxe_get_next_key(-1)}, a random low byte
     * over the MR's slot in the device pool, which {@code xa_alloc_cyclic} hands out in turn: 8
     * bits of entropy; the responder ({@code lookup_mr}) also checks the protection domain, so
     * only peers of the same {@code rpma_peer} can try. mlx5 ({@code mr.c},
     * {@code assign_mkey_variant}) takes the low byte from a per-device counter. A peer of the
     * same instance that knows one key can therefore find a neighbour's with a few hundred
     * connections; isolate untrusted peers by instance (docs/security.md).
     */
    @Override
    public LocalRegion register(MemorySegment memory, Set<RegionAccess> access) {
        Checks.registration(memory, access);
        Checks.registerFlushAccess(name(), access, directWriteToPmem ? EnumSet.allOf(FlushType.class)
                : EnumSet.of(FlushType.VISIBILITY), "PERSISTENT needs this side's declaration of direct write to"
                + " persistent memory (TransportOptions.directWriteToPersistentMemory,"
                + " Cqflux.Builder.directWriteToPersistentMemory(true)) for memory that is persistent");
        peer();
        return RpmaLocalRegion.register(this, memory, access);
    }

    @Override
    public RemoteRegion remoteRegion(byte[] descriptor) {
        peer();
        return RpmaRemoteRegion.parse(descriptor, nativeDescriptorSize);
    }

    @Override
    public RemoteRegion remoteRegion(byte[] rawDescriptor, Set<RegionAccess> access) {
        peer();
        return RpmaRemoteRegion.fromRaw(rawDescriptor, access, nativeDescriptorSize);
    }

    @Override
    public io.cqflux.core.spi.Listener listen(InetSocketAddress address, ConnectionConfig config) {
        checkConfig(config);
        peer();
        return RpmaListener.listen(this, address, config);
    }

    private void checkConfig(ConnectionConfig config) {
        if (config == null) {
            throw new IllegalArgumentException("config is null");
        }
        if (config.sharedCompletionChannel()) {
            Checks.capability("rpma", capabilities, Capability.SHARED_COMPLETION_CHANNEL,
                    "librpma >= 1.0 (rpma_conn_get_compl_fd); use separate completion queues");
        }
    }

    /**
     * Connects: {@code rpma_conn_req_new(3)} resolves the address and route synchronously (up to
     * the configured timeout), then {@code rpma_conn_req_connect(3)} sends the request; the
     * outcome arrives as an event.
     */
    @Override
    public Connection connect(InetSocketAddress address, ConnectionConfig config, byte[] privateData) {
        checkConfig(config);
        Checks.privateData(privateData, maxConnectPrivateData(), "connect");
        if (address.getPort() == 0 || address.isUnresolved()) {
            throw new IllegalArgumentException("server address " + address + " needs a resolved host and a port in [1, 65535]");
        }
        // Pinned for the whole construction: a close() from another thread in between must not
        // delete the peer under the request's queue pair (the connection pins it itself once made).
        MemorySegment p = retain();
        try {
            return connect(p, address, config, privateData);
        } finally {
            release();
        }
    }

    private Connection connect(MemorySegment p, InetSocketAddress address, ConnectionConfig config, byte[] privateData) {
        String host = address.getAddress().getHostAddress();
        String description = "rpma " + this.address.getHostAddress() + " -> " + host + ":" + address.getPort();
        MemorySegment req;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cfg = newConnCfg(config, a);
            try {
                MemorySegment reqOut = a.allocate(ValueLayout.ADDRESS);
                long r = Calls.CONN_REQ_NEW.call(a, p, RpmaNative.cString(a, host),
                        RpmaNative.cString(a, Integer.toString(address.getPort())), cfg, reqOut);
                if (RpmaNative.rc(r) != 0) {
                    throw RpmaNative.failure("rpma_conn_req_new", RpmaNative.rc(r), RpmaNative.errno(r), description);
                }
                req = reqOut.get(ValueLayout.ADDRESS, 0);
            } finally {
                deleteConnCfg(cfg, a);
            }
        }
        MemorySegment conn = connectRequest(req, privateData, description);
        return RpmaConnection.create(this, conn, config, description, false, null);
    }

    /**
     * Yes while librpma logs through {@link RpmaLog}'s upcall; no where it keeps its default log
     * function ({@code -Dcqflux.rpma.log=native}, or a failed {@code rpma_log_set_function}).
     * Facts the answer depends on (librpma's THREAD_SAFETY.md, referenced by librpma(7)):
     * {@code rpma_conn_req_new}, {@code rpma_conn_req_delete}, {@code rpma_mr_reg},
     * {@code rpma_mr_dereg} and {@code rpma_ep_next_conn_req} are listed as NOT thread-safe, and
     * the reason given is {@code rpma_log_default_function}: these calls log at NOTICE while a
     * connection is established, and that function uses {@code localtime_r(3)} and
     * {@code syslog(3)} (MT-Safe env locale). With the upcall installed no librpma call reaches
     * that function: the upcall only hands a record to {@code System.Logger}, which is
     * thread-safe. The rest of the set-up is thread-safe by the same document:
     * {@code rpma_conn_req_connect} when each thread uses a request of its own (a connect's is its
     * own), the connection configuration getters when each thread uses a configuration of its own
     * (each connect makes and deletes its own, {@link #newConnCfg}), and the peer may be shared by
     * threads making separate connections. The active side's CM id is created by
     * {@code rpma_conn_req_new} on no event channel and migrated to the connection's own, which no
     * loop reads yet: nothing polls a channel under the migration ({@code rdma_migrate_id(3)}).
     */
    @Override
    public boolean connectsOffLoop() {
        return RpmaLog.replacesDefault();
    }

    /**
     * As {@link #connectsOffLoop()}: yes while librpma logs through {@link RpmaLog}'s upcall.
     * librpma's THREAD_SAFETY.md lists {@code rpma_conn_disconnect} and {@code rpma_conn_delete}
     * as thread-safe, under its assumption that one connection is used by one thread at a time,
     * which the hand-off keeps (the loop has let go of the connection and touches it again only
     * after the close returned); a connection's CQs, CM id and event channel are its own, shared
     * with no other connection's loop. The disconnect logs at NOTICE, which without the upcall
     * reaches {@code rpma_log_default_function} ({@code localtime_r(3)}, {@code syslog(3)}): the
     * same condition as the connect's.
     */
    @Override
    public boolean closesOffLoop() {
        return RpmaLog.replacesDefault();
    }

    /**
     * No: the passive side's accept ({@code rpma_conn_req_connect(3)} of a request from
     * {@code rpma_ep_next_conn_req(3)}) migrates the request's CM id from the listener's event
     * channel to the connection's own ({@code rpma_conn_new} calls {@code rdma_migrate_id}), and
     * {@code rdma_migrate_id(3)} says that no one may poll for events on the id's current channel
     * during the migration, while the listener's loop reads that channel whenever it is readable.
     * So a request is accepted on the thread that reads the listener.
     */
    @Override
    public boolean acceptsOffLoop() {
        return false;
    }

    /**
     * {@code rpma_conn_req_connect(3)}: consumes {@code req} whether it succeeds or not. The
     * private data goes verbatim; empty data goes as none (NULL), which librpma allows, where an
     * empty buffer is {@code RPMA_E_INVAL}.
     */
    MemorySegment connectRequest(MemorySegment req, byte[] privateData, String description) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment reqPtr = a.allocate(ValueLayout.ADDRESS);
            reqPtr.set(ValueLayout.ADDRESS, 0, req);
            MemorySegment pdata = MemorySegment.NULL;
            if (privateData != null && privateData.length > 0) {
                pdata = rpma_conn_private_data.allocate(a);
                rpma_conn_private_data.ptr(pdata, a.allocateFrom(ValueLayout.JAVA_BYTE, privateData));
                rpma_conn_private_data.len(pdata, (byte) privateData.length);
            }
            MemorySegment connOut = a.allocate(ValueLayout.ADDRESS);
            long r = Calls.CONN_REQ_CONNECT.call(a, reqPtr, pdata, connOut);
            if (RpmaNative.rc(r) != 0) {
                throw RpmaNative.failure("rpma_conn_req_connect", RpmaNative.rc(r), RpmaNative.errno(r), description);
            }
            return connOut.get(ValueLayout.ADDRESS, 0);
        }
    }

    /** Builds an {@code rpma_conn_cfg} from a {@link ConnectionConfig}; deletes it again if a setter fails. */
    static MemorySegment newConnCfg(ConnectionConfig c, Arena arena) {
        MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
        RpmaNative.check("rpma_conn_cfg_new", librpma_h.rpma_conn_cfg_new(out), "");
        MemorySegment cfg = out.get(ValueLayout.ADDRESS, 0);
        try {
            RpmaNative.check("rpma_conn_cfg_set_sq_size", librpma_h.rpma_conn_cfg_set_sq_size(cfg, c.sendQueueSize()), "");
            RpmaNative.check("rpma_conn_cfg_set_rq_size", librpma_h.rpma_conn_cfg_set_rq_size(cfg, c.receiveQueueSize()), "");
            RpmaNative.check("rpma_conn_cfg_set_cq_size", librpma_h.rpma_conn_cfg_set_cq_size(cfg, c.completionQueueSize()), "");
            RpmaNative.check("rpma_conn_cfg_set_rcq_size",
                    librpma_h.rpma_conn_cfg_set_rcq_size(cfg, c.receiveCompletionQueueSize()), "");
            RpmaNative.check("rpma_conn_cfg_set_timeout",
                    librpma_h.rpma_conn_cfg_set_timeout(cfg, (int) c.timeout().toMillis()), "");
            if (c.sharedCompletionChannel()) {
                RpmaNative.check("rpma_conn_cfg_set_compl_channel", librpma_h.rpma_conn_cfg_set_compl_channel(cfg, true), "");
            }
            return cfg;
        } catch (RuntimeException | Error e) {
            deleteConnCfg(cfg, arena);
            throw e;
        }
    }

    static void deleteConnCfg(MemorySegment cfg, Arena arena) {
        if (cfg == null || cfg.equals(MemorySegment.NULL)) {
            return;
        }
        MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
        p.set(ValueLayout.ADDRESS, 0, cfg);
        RpmaNative.logged(LOG, System.Logger.Level.WARNING, "rpma_conn_cfg_delete", librpma_h.rpma_conn_cfg_delete(p), "");
    }

    /**
     * Closes the transport. With listeners, regions or connections still open, the peer is freed
     * when the last of them closes (freeing it earlier would leave them on freed memory); new ones
     * are refused from now on. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closeRequested) {
            return;
        }
        closeRequested = true;
        if (children == 0) {
            deletePeer(true);
        }
    }

    private void deletePeer(boolean throwing) {
        MemorySegment p = peer;
        if (p == null) {
            return;
        }
        peer = null;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ValueLayout.ADDRESS);
            out.set(ValueLayout.ADDRESS, 0, p);
            int rc = librpma_h.rpma_peer_delete(out);
            if (throwing) {
                RpmaNative.check("rpma_peer_delete", rc, address.getHostAddress());
            } else {
                RpmaNative.logged(LOG, System.Logger.Level.WARNING, "rpma_peer_delete", rc, address.getHostAddress());
            }
        }
    }

    @Override
    public String toString() {
        return "rpma transport on " + address.getHostAddress() + " " + capabilities;
    }
}
