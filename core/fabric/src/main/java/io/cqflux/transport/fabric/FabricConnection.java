package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.*;

import io.cqflux.core.Capability;
import io.cqflux.core.CompletionLevel;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.FlushType;
import io.cqflux.core.Opcode;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.transport.fabric.ffm.fi_info;
import io.cqflux.transport.fabric.ffm.fi_ops_cm;
import io.cqflux.transport.fabric.ffm.fi_ops_domain;
import io.cqflux.transport.fabric.ffm.fi_rx_attr;
import io.cqflux.transport.fabric.ffm.fi_tx_attr;
import io.cqflux.transport.fabric.ffm.fid_ep;
import io.cqflux.core.internal.Checks;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.EventChannel;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * A connected {@code FI_EP_MSG} endpoint with its own completion queue(s), or (on tcp, beyond a
 * loop's first connections by default) a slot in a completion queue its loop's connections share
 * in groups (CompletionGroup); its events come
 * through the event queue of its loop (on tcp, shared with the loop's other connections and
 * routed by fid: SharedEventQueue, LoopQueues) or, without a loop, its own.
 *
 * <p>Every post goes through its {@link FabricPoster} (the {@code *msg} ops, flags per
 * operation, {@code FI_SELECTIVE_COMPLETION}), after this class checked the arguments and the
 * connection's state.
 *
 * <p>Facts about libfabric 1.17's {@code verbs} provider this class depends on (measured over
 * rxe in the Soft-RoCE lane; FabricVerbsContractTest): local buffers need their {@code fi_mr_desc}
 * (FI_MR_LOCAL), from a registration in the endpoint's own domain (a scoped connection's: see
 * {@link #desc}; the transport's registration fails there, LOC_QP_OP_ERR on rxe, but for a post
 * the provider makes inline, FabricVerbsScopedKeysTest),
 * and a zero-length post must pass {@code desc == NULL} (see {@link FabricPoster#rma});
 * it ignores completion-level flags (tx op_flags empty); a peer's disconnect leaves posted
 * receives pending until we shut down (see FabricEvents#peerEnded); the op context
 * {@code (uint64_t) -1} is its "no completion" marker, and a completion carrying it is dropped
 * even when it is an error (vrb_poll_cq), against fi_cq(3), so an unsignaled operation that fails reports
 * nothing itself -- its failure shows as the queue pair's error state (later operations fail
 * WR_FLUSH_ERR). The reactive layer's contexts never have the top bit set (InFlightTable), so
 * none collides with the marker.
 *
 * <p>Threading: loop-confined (see {@link Connection}) once handed to its loop; it may be built
 * (connect, accept) on another thread first (FabricTransport#connectsOffLoop), while the loop
 * routes its events already; {@link #description()} is thread-safe.
 * Lifetime: {@link #close()} closes the endpoint, then the CQs, then releases the EQ, which its
 * LoopQueues closes after its last endpoint ({@code fi_endpoint(3)}: an endpoint must be closed
 * before the objects bound to it: ConnectionQueues); an endpoint that fails to close keeps them
 * all, logged once ({@link ConnectionQueues#KEPT_ON_FAILED_CLOSE}); idempotent.
 */
@SuppressWarnings("restricted") // FFM: this package is the native-access boundary of the fabric transport
final class FabricConnection implements Connection {

    private static final System.Logger LOG = System.getLogger(FabricConnection.class.getName());

    private final FabricTransport transport;
    /**
     * The domain the endpoint, its own CQs (where it has them) and its flush sink are opened in:
     * the transport's, or the connection's own (ScopedDomain, keys scoped to the connection);
     * held until close.
     */
    private final DomainHolder home;
    private final ConnectionConfig config;
    private final String description;
    private final boolean client;
    private final Arena arena = io.cqflux.core.internal.DeferredArena.ofShared(); // closed after fi_close: DeferredArena
    /** Its event queue and its completion queues (own, or a slot in a group). */
    private final ConnectionQueues queues;
    private final MemorySegment ep;
    private final FabricEvents events;
    private final MemorySegment shutdownFp;
    /** Fills the message structs and calls the endpoint's ops. */
    private final FabricPoster poster;
    private final long writeLevel;
    /** Where a flush reads back into (see {@link #flush}): the domain's, 8 bytes, READ_DST. */
    private final FabricLocalRegion flushSink;
    /** Whether a post's local buffers need descriptors of the endpoint's own domain (FI_MR_LOCAL: verbs). */
    private final boolean localDescriptors;
    /** Whether the endpoint must be shut down by us when the peer ends (see FabricEvents#peerEnded). */
    private final boolean shutdownOnPeerEnd;
    private byte[] peerData;
    private boolean refusedAtConnect;
    private boolean closed;

    /**
     * @param groupable whether its private data carries its parameters, so that the peer learns
     *     its receiving tag: only then may it share a completion queue (ConnectionQueues)
     */
    private FabricConnection(FabricTransport transport, DomainHolder home, ConnectionConfig config, MemorySegment info,
                             boolean client, String description, Object affinity, boolean groupable,
                             Runnable endpointOpened) {
        this.transport = transport;
        this.home = home;
        this.config = config;
        this.client = client;
        this.description = description;
        // TRANSMIT: no completion-level flag, i.e. the provider's default (fi_cq(3)). Passing
        // FI_TRANSMIT_COMPLETE would not help on tcp 1.17: it treats FI_TRANSMIT_COMPLETE like
        // FI_DELIVERY_COMPLETE (both ask the target for an ack), while without a flag a write
        // completes once the data is queued on the socket.
        this.writeLevel = config.writeCompletion() == CompletionLevel.TRANSMIT ? 0 : FI_DELIVERY_COMPLETE();
        this.shutdownOnPeerEnd = !transport.isTcp();
        this.localDescriptors = transport.needsLocalDescriptors();
        ConnectionQueues q = null;
        FabricLocalRegion sink = null;
        MemorySegment endpoint = MemorySegment.NULL;
        home.retain(); // released by close(), or below when construction fails
        try {
            sink = home.flushSink(); // the domain's: closed with the domain, not here
            q = new ConnectionQueues(transport, home, this, config, affinity, description, groupable);
            fi_tx_attr.size(fi_info.tx_attr(info), config.sendQueueSize());
            fi_rx_attr.size(fi_info.rx_attr(info), Math.max(1, config.receiveQueueSize()));
            // fi_endpoint's answer is read at once: in the connection's arena it would stay, one
            // more native block per connection.
            try (Arena tmp = Arena.ofConfined()) {
                MemorySegment out = tmp.allocate(C_POINTER);
                FabricLibrary.check("fi_endpoint", fi_ops_domain.endpoint.invoke(home.ops().endpointFp(),
                        home.ops().domain(), info, out, MemorySegment.NULL), description);
                endpoint = out.get(C_POINTER, 0);
            }
            if (endpointOpened != null) {
                endpointOpened.run();
            }
            q.bind(endpoint);
            FabricLibrary.check("fi_enable", FabricLibrary.control(endpoint, FI_ENABLE(), MemorySegment.NULL),
                    description);
        } catch (RuntimeException ex) {
            // fi_endpoint(3): the endpoint first, then the CQs and the EQ it was bound to. An
            // endpoint that fails to close keeps them all (see close()).
            // (Queues that failed to be taken gave back what they took themselves.)
            boolean unbound = q == null || q.releaseAfterFailedSetup(endpoint);
            arena.close();
            if (unbound) {
                home.release();
            }
            throw ex;
        }
        // From here on no native step and nothing that throws but an Error (allocations in the
        // connection's arena, map puts): the try above covers every step that can fail.
        this.flushSink = sink;
        this.queues = q;
        this.events = new FabricEvents(this, q.eventQueue(), shutdownOnPeerEnd);
        this.ep = endpoint;
        this.shutdownFp = fi_ops_cm.shutdown(fid_ep.cm(ep));
        this.poster = new FabricPoster(ep, arena, q::touched, q.contextBits(), description);
        // Last, with every field set (the loop's handler of an event reads them), and before
        // fi_connect/fi_accept: the first event may follow at once.
        q.eventQueue().route(endpoint, events);
    }

    /**
     * @param hello the private data, built from the connection's parameters ({@link #parameters()})
     * @param groupable whether that private data carries them (a hello with room for them)
     */
    static FabricConnection connect(FabricTransport transport, InetSocketAddress address, ConnectionConfig config,
                                    UnaryOperator<byte[]> hello, boolean groupable, Object affinity) {
        String host = address.getAddress() == null ? address.getHostString() : address.getAddress().getHostAddress();
        String desc = transport.name() + " client to " + host + ":" + address.getPort();
        // Held across the whole set-up, from before fi_getinfo: its hints point at the fabric's
        // and the domain's names, which live in the transport's arena, and a close of the
        // transport on another thread frees that arena once no child holds it (the connection's
        // own hold begins only in its constructor, after fi_getinfo).
        transport.retain();
        try (Arena tmp = Arena.ofConfined()) {
            MemorySegment info = FabricInfo.getinfo(tmp, transport.provider(), transport.fabricName(),
                    transport.domainName(), host, Integer.toString(address.getPort()), 0);
            if (info.equals(MemorySegment.NULL)) {
                throw new IllegalArgumentException(transport.name() + " cannot reach " + address
                        + " from domain " + FabricLibrary.string(transport.domainName()));
            }
            FabricConnection c;
            try {
                c = new FabricConnection(transport, transport, config, info, true, desc, affinity, groupable, null);
                // Nothing after the construction may throw without closing the connection.
                int rc;
                try {
                    byte[] data = Checks.privateData(hello.apply(c.parameters()), transport.maxConnectPrivateData(),
                            "connect");
                    MemorySegment param = data.length == 0 ? MemorySegment.NULL
                            : tmp.allocateFrom(ValueLayout.JAVA_BYTE, data);
                    rc = fi_ops_cm.connect.invoke(fi_ops_cm.connect(fid_ep.cm(c.ep)), c.ep, fi_info.dest_addr(info),
                            param, (long) data.length);
                } catch (RuntimeException e) {
                    c.close();
                    throw e;
                }
                if (rc == -FabricErrno.ECONNREFUSED.code()) {
                    // fi_cm(3) lets fi_connect fail at once when the peer refuses: that is the
                    // REJECTED event, not an exception (tcp reports it through the EQ instead).
                    c.events.queueTerminal(ConnectionEvent.REJECTED);
                    c.refusedAtConnect = true;
                } else {
                    try {
                        FabricLibrary.check("fi_connect", rc, desc);
                    } catch (RuntimeException e) {
                        c.close();
                        throw e;
                    }
                }
            } finally {
                fi_freeinfo(info);
            }
            return c;
        } finally {
            transport.release(); // the connection holds the transport itself from its constructor on
        }
    }

    /**
     * @param hello the accept's private data, built from the connection's parameters ({@link #parameters()})
     * @param groupable whether that private data carries them (a hello with room for them, to a
     *     client that told its own)
     * @param endpointOpened run once {@code fi_endpoint(3)} opened the endpoint with the request's
     *     info: from then on the endpoint owns what the request's handle held (its RDMA CM id on
     *     verbs), even if the accept fails afterwards
     */
    static FabricConnection accept(FabricTransport transport, MemorySegment info, byte[] requestData,
                                   ConnectionConfig config, UnaryOperator<byte[]> hello, boolean groupable,
                                   Object affinity, ScopedDomain scope, Runnable endpointOpened) {
        String desc = transport.name() + " server connection from " + peerAddress(info);
        FabricConnection c = new FabricConnection(transport, scope == null ? transport : scope, config, info, false,
                desc, affinity, groupable, endpointOpened);
        // Nothing after the construction may throw without closing the connection.
        try (Arena tmp = Arena.ofConfined()) {
            c.peerData = requestData.clone();
            byte[] data = Checks.privateData(hello.apply(c.parameters()), transport.maxAcceptPrivateData(),
                    "accept");
            MemorySegment param = data.length == 0 ? MemorySegment.NULL : tmp.allocateFrom(ValueLayout.JAVA_BYTE, data);
            FabricLibrary.check("fi_accept", fi_ops_cm.accept.invoke(fi_ops_cm.accept(fid_ep.cm(c.ep)), c.ep, param,
                    (long) data.length), desc);
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /**
     * {@return this connection's parameters, which its hello carries to the peer: on tcp its
     * receiving tag, 0 where its completion queue is its own (GroupRoster#parameters); empty on
     * other providers} Any thread, before the connection is handed to its loop.
     */
    byte[] parameters() {
        return transport.isTcp() ? GroupRoster.parameters(queues.receivingTag()) : new byte[0];
    }

    /**
     * The peer's parameters: the tag it asked for, which each write with immediate then carries
     * in the high half of its CQ data (tcp; elsewhere nothing), or none (0, or empty bytes).
     */
    @Override
    public void applyPeerParameters(byte[] parameters) {
        int tag = GroupRoster.peerTag(parameters, description);
        queues.peerTag(transport.isTcp() ? tag : 0);
        if (parameters.length == 0 && queues.member() != null) {
            // A peer that told no parameters did not read this side's either (a server tells its
            // own to every client that told its own, where its hello has room): an older cqflux.
            // Its writes with immediate to this connection will carry no tag and be dropped.
            LOG.log(System.Logger.Level.WARNING, "{0} shares a completion queue, but its peer told no connection"
                    + " parameters (a cqflux from before them, or a hello without room for them): the peer did not"
                    + " read this connection''s tag, so its writes with immediate to it will be dropped; set "
                    + io.cqflux.core.spi.TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP + "=1 on this side to give"
                    + " every connection a queue of its own", description);
        }
    }

    /**
     * The requester's address from a connection request's {@code fi_info} ({@code fi_cm(3)}: the
     * {@code FI_CONNREQ} info carries the peer's address in {@code dest_addr}, a
     * {@code struct sockaddr} for the socket providers).
     *
     * @param info the request's info
     * @return "host:port", or "an unknown address" when the provider gives none we can read
     */
    static String peerAddress(MemorySegment info) {
        MemorySegment a = fi_info.dest_addr(info);
        long len = fi_info.dest_addrlen(info);
        if (a.equals(MemorySegment.NULL) || len < 8) {
            return "an unknown address";
        }
        java.net.InetSocketAddress peer = FabricListener.requester(info);
        return peer == null ? "an address of another family" : peer.getAddress().getHostAddress() + ":" + peer.getPort();
    }


    /** {@return whether fi_connect itself failed with ECONNREFUSED (REJECTED reported without the EQ)} */
    boolean refusedAtConnect() {
        return refusedAtConnect;
    }

    /** {@return the err of the last EQ error entry, for diagnostics and tests} */
    int lastEqError() {
        return events.lastError();
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public ConnectionConfig config() {
        return config;
    }

    @Override
    public EventChannel events() {
        return events;
    }

    @Override
    public byte[] peerPrivateData() {
        return peerData == null ? new byte[0] : peerData.clone();
    }

    @Override
    public List<CompletionQueue> completionQueues() {
        return queues.completionQueues();
    }

    // ---- posting ---------------------------------------------------------------------------

    private void requireEstablished() {
        if (closed) {
            throw new ResourceClosedException(description + " is closed");
        }
        if (events.state() != FabricEvents.State.ESTABLISHED) {
            throw new IllegalStateException(description + " is " + (events.state() == FabricEvents.State.CONNECTING
                    ? "not established yet" : "no longer connected") + ": cannot post");
        }
    }

    private FabricLocalRegion local(LocalRegion r) {
        if (r instanceof FabricLocalRegion f && f.transport() == transport) {
            return f;
        }
        throw new IllegalArgumentException("local region " + r + " was not registered with " + transport.name()
                + " transport " + transport);
    }

    private static RegionDescriptor.Remote remote(RemoteRegion r) {
        if (r instanceof RegionDescriptor.Remote f) {
            return f;
        }
        throw new IllegalArgumentException("remote region " + r + " was not parsed by the fabric transport");
    }

    @Override
    public boolean read(LocalRegion dst, long dstOffset, RemoteRegion src, long srcOffset, long length, long context,
                        boolean signaled) {
        Checks.read(transport, dst, dstOffset, src, srcOffset, length);
        FabricLocalRegion l = local(dst);
        RegionDescriptor.Remote r = remote(src);
        requireEstablished();
        return rma(true, l, dstOffset, r, srcOffset, length, 0, signaled ? FI_COMPLETION() : 0, context,
                Opcode.READ);
    }

    @Override
    public boolean write(RemoteRegion dst, long dstOffset, LocalRegion src, long srcOffset, long length, long context,
                         boolean signaled) {
        Checks.write(transport, dst, dstOffset, src, srcOffset, length);
        requireEstablished();
        return rma(false, local(src), srcOffset, remote(dst), dstOffset, length, 0,
                writeLevel | (signaled ? FI_COMPLETION() : 0), context, Opcode.WRITE);
    }

    @Override
    public boolean writeWithImmediate(RemoteRegion dst, long dstOffset, LocalRegion src, long srcOffset, long length,
                                      int immediate, long context, boolean signaled) {
        Checks.writeWithImmediate(transport, dst, dstOffset, src, srcOffset, length);
        requireEstablished();
        // fi_rma(3) fi_writedata == fi_writemsg with FI_REMOTE_CQ_DATA; data is host order.
        return rma(false, local(src), srcOffset, remote(dst), dstOffset, length,
                queues.sendingTag() | Integer.toUnsignedLong(immediate),
                writeLevel | FI_REMOTE_CQ_DATA() | (signaled ? FI_COMPLETION() : 0), context,
                Opcode.WRITE_WITH_IMMEDIATE);
    }

    @Override
    public boolean atomicWrite(RemoteRegion dst, long dstOffset, long value, long context, boolean signaled) {
        // Refused up front: tcp has no FI_ATOMIC and this transport does not bind fi_atomic.
        Checks.atomicWrite(transport, dst, dstOffset);
        throw new AssertionError("unreachable: ATOMIC_WRITE is never advertised");
    }

    /**
     * Flush: make earlier writes to the peer's region visible. libfabric has no flush operation;
     * we read back up to 8 bytes of the range into the domain's flush sink, as librpma's
     * VISIBILITY flush does ({@code rpma_flush(3)}). PERSISTENT is refused before posting:
     * regions of this transport never offer it (registering one with FLUSH_TYPE_PERSISTENT fails
     * with UnsupportedCapabilityException; see ProviderProfile's capabilities).
     *
     * <p>Why a read, not a zero-length write: a write, even of zero bytes, needs the region
     * registered with {@code FI_REMOTE_WRITE}, so a region granted READ_SRC and a flush would be
     * writable by every peer that holds its key. A read needs {@code FI_REMOTE_READ} only
     * (RegionRegistrar#remoteAccess).
     *
     * <p>Why a read proves visibility: on tcp (libfabric 1.17) one endpoint is one TCP stream
     * whose messages the target handles in order, placing a write's payload before it reads the
     * next message, so the read's response leaves the target after every earlier write was
     * placed. On verbs (and the RDMA providers), a write's completion is only the responder NIC's
     * acknowledgement and the provider ignores FI_DELIVERY_COMPLETE (its tx op_flags are empty);
     * on a reliable connection a read is executed after the earlier writes (msg_order
     * FI_ORDER_RAW), and a non-empty read makes the target's NIC fetch from memory behind them.
     * FI_FENCE is not needed for read-after-write. The ordering is not assumed: the hints ask for
     * FI_ORDER_RAW and FLUSH_VISIBILITY is offered only where the returned info has it
     * ({@code ProviderProfile#readAfterWriteOrdered}), so a flush never gets here without it.
     *
     * <p>A flush of 0 bytes (which {@code Checks.flush} allows) still reads 1 byte: a read of 0
     * bytes may complete without touching the target's memory and so proves nothing. It reads the
     * byte at {@code dstOffset}, or the region's last byte when {@code dstOffset} is its end.
     */
    /** {@return the memory a flush reads back into} (tests: what the read-back fetched). */
    MemorySegment flushSinkSegment() {
        return flushSink.segment();
    }

    @Override
    public boolean flush(RemoteRegion dst, long dstOffset, long length, FlushType type, long context, boolean signaled) {
        Checks.flush(transport, dst, dstOffset, length, type);
        RegionDescriptor.Remote r = remote(dst);
        requireEstablished();
        long n = Math.max(1, Math.min(8, length));
        long at = length == 0 && dstOffset == dst.size() ? dstOffset - 1 : dstOffset;
        return poster.rma(true, flushSink.segment().address(), flushSink.desc(), r.base() + at, n, r.key(), 0,
                signaled ? FI_COMPLETION() : 0, context, Opcode.FLUSH);
    }

    @Override
    public boolean send(LocalRegion src, long offset, long length, long context, boolean signaled) {
        Checks.send(transport, src, offset, length, false);
        FabricLocalRegion l = local(src);
        requireEstablished();
        return poster.message(false, l.segment().address() + offset, desc(l, length), length, 0,
                (signaled ? FI_COMPLETION() : 0) | writeLevel, context, Opcode.SEND);
    }

    @Override
    public boolean sendWithImmediate(LocalRegion src, long offset, long length, int immediate, long context,
                                     boolean signaled) {
        Checks.send(transport, src, offset, length, true);
        FabricLocalRegion l = local(src);
        requireEstablished();
        return poster.message(false, l.segment().address() + offset, desc(l, length), length,
                Integer.toUnsignedLong(immediate),
                FI_REMOTE_CQ_DATA() | (signaled ? FI_COMPLETION() : 0) | writeLevel, context,
                Opcode.SEND_WITH_IMMEDIATE);
    }

    @Override
    public boolean receive(LocalRegion dst, long offset, long length, long context) {
        Checks.receive(transport, dst, offset, length);
        FabricLocalRegion l = local(dst);
        if (closed) {
            throw new ResourceClosedException(description + " is closed");
        }
        if (events.state() == FabricEvents.State.ENDED) {
            throw new IllegalStateException(description + " is no longer connected: cannot post a receive");
        }
        // Receives may be posted once the endpoint is enabled, before the connection is up.
        return poster.message(true, l.segment().address() + offset, desc(l, length), length, 0, FI_COMPLETION(), context,
                Opcode.RECEIVE);
    }

    private boolean rma(boolean read, FabricLocalRegion l, long lOff, RegionDescriptor.Remote r, long rOff, long len,
                        long data, long flags, long context, Opcode op) {
        return poster.rma(read, l.segment().address() + lOff, desc(l, len), r.base() + rOff, len, r.key(), data, flags,
                context, op);
    }

    /**
     * The local descriptor of {@code l} for a post on this endpoint. A provider without
     * {@code FI_MR_LOCAL} (tcp) takes any registration's, or none. With it (verbs) it must come
     * from a registration in the endpoint's own domain ({@code fi_mr(3)}; on verbs the lkey of
     * the queue pair's protection domain): a region of the transport's domain used on a
     * connection of a scoped domain is registered there on its first use (FabricLocalRegion#descIn).
     * A failing registration fails this post only, with the reason. A zero-length post passes
     * no descriptor (FabricPoster), so it registers nothing: NULL.
     */
    private MemorySegment desc(FabricLocalRegion l, long length) {
        if (length == 0) {
            return MemorySegment.NULL;
        }
        DomainHolder at = l.home();
        if (at == home || !localDescriptors) {
            return l.desc();
        }
        if (home instanceof ScopedDomain scope && at == transport) {
            return l.descIn(scope);
        }
        throw new IllegalArgumentException("local region " + l + " is registered in the " + at + ", not usable on "
                + description + ": " + transport.provider() + " needs a local buffer registered in the connection's"
                + " own domain (FI_MR_LOCAL)");
    }

    // ---- lifecycle -------------------------------------------------------------------------

    /** {@return the connection's event queue (tests)} */
    FabricEventQueue eventQueue() {
        return queues.eventQueue().eq();
    }

    /** {@return the shared queue its events come through (tests)} */
    SharedEventQueue sharedEventQueue() {
        return queues.eventQueue();
    }

    boolean isClosed() {
        return closed;
    }

    /** FI_CONNECTED: a client keeps the server's accept data (the event's CM data). */
    void connected(byte[] cmData) {
        if (client) {
            peerData = cmData;
        }
    }

    /** {@return its completion-queue group member, or null (tests)} */
    CompletionGroup.Member groupMember() {
        return queues.member();
    }

    /** A refused connect: a client keeps the server's reject data (the error entry's err_data), possibly none. */
    void rejected(byte[] errData) {
        if (client) {
            peerData = errData;
        }
    }

    /**
     * {@code fi_shutdown(3)}. It flushes what was posted into the CQs and changes the endpoint's
     * connection state: every queue calls fi_trywait again before the loop sleeps (TrywaitAnswer).
     */
    void shutdown() {
        fi_ops_cm.shutdown.invoke(shutdownFp, ep, 0L);
        queues.eventQueue().touched();
        queues.touched();
    }

    @Override
    public void disconnect() {
        if (closed || events.disconnected()) {
            return;
        }
        events.markDisconnected();
        if (events.state() == FabricEvents.State.ESTABLISHED) {
            shutdown();
        }
        // fi_cm(3): FI_SHUTDOWN is reported to the peer; the side that calls fi_shutdown gets no
        // event of its own on tcp, so we report CLOSED ourselves.
        if (events.queueTerminal(ConnectionEvent.CLOSED)) {
            queues.eventQueue().touched(); // a loop that watches the queue asks it again
            events.tell(); // and runs this connection's handler, which reports the CLOSED
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>It may run off the loop (FabricTransport#closesOffLoop), after the loop unregistered the
     * connection's CQs and events: so it touches nothing the loop still uses. Its
     * {@code fi_shutdown} does not tell the shared event queue (SharedEventQueue#touched: the
     * loop's fi_trywait answer, loop-confined): the endpoint's {@code fi_close} follows at once
     * and takes the endpoint's queued events out of the queue and its socket out of the queue's
     * wait set, so nothing of this endpoint is left there that a fresh {@code fi_trywait} would
     * have to find. Its own CQs are closed right after, unwatched and unpolled.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        if (events.state() == FabricEvents.State.ESTABLISHED && !events.disconnected()) {
            fi_ops_cm.shutdown.invoke(shutdownFp, ep, 0L);
        }
        closed = true;
        events.markEnded();
        // fi_endpoint(3): close the endpoint before the CQs and the EQ bound to it (they refuse
        // with -FI_EBUSY while bound), and all of them before the domain (home.release()).
        // closeEndpoint also unroutes it, atomically against the loop's read of the EQ (its
        // queued events went with the endpoint: SharedEventQueue).
        // The domain is given back once the endpoint closed, also when a step after it throws.
        boolean unbound = false;
        try {
            unbound = queues.closeEndpoint(ep);
            if (unbound) {
                queues.giveBack();
            }
        } finally {
            arena.close(); // scratch for posts, which `closed` stops: nothing native points into it
            if (unbound) {
                home.release();
            }
        }
    }

    @Override
    public String toString() {
        return description;
    }
}
