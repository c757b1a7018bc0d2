package io.cqflux.transport.rpma;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.FlushType;
import io.cqflux.core.Opcode;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.transport.rpma.ffm.librpma_h;
import io.cqflux.core.internal.Checks;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.EventChannel;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.transport.rpma.ffm.rpma_conn_private_data;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * A librpma connection ({@code struct rpma_conn}) with its event channel and completion queues.
 *
 * <p><b>Threading.</b> Loop-confined like every {@link Connection}; {@link #description()} is
 * thread-safe. <b>Lifetime.</b> {@link #close()} disconnects if needed and deletes the connection
 * ({@code rpma_conn_delete(3)}), which destroys its CQs; idempotent. All per-connection native
 * scratch (event and pollfd out-parameters, the atomic-write source) is allocated once here.
 *
 * <p><b>Posting.</b> Every operation is one work request: librpma posts it with a single
 * {@code ibv_post_send}/{@code ibv_post_recv} and no chained WRs, so a failure posted nothing.
 * librpma reports any such failure as {@code RPMA_E_PROVIDER} and logs the provider's code, but
 * does not pass it on through errno ({@code rpma_write(3)}: "RPMA_E_PROVIDER - ibv_post_send(3)
 * failed"); a full send queue therefore cannot be told apart from, say, a QP in the error state.
 * The operations thus throw {@link io.cqflux.core.NativeCallException} rather than returning
 * {@code false}: the reactive layer's credits (one per send-queue slot) keep the queue from
 * filling in the first place. (Measured over Soft-RoCE, kernel 6.1: 10,000 signaled 8-byte writes
 * posted back to back on a 4-entry send queue, without draining, were all accepted — rxe runs
 * the requester inside {@code ibv_post_send} — so a full queue cannot even be provoked there;
 * the limit is the device's business, the credits are ours.)
 */
final class RpmaConnection implements Connection {

    private static final System.Logger LOG = System.getLogger(RpmaConnection.class.getName());
    /** {@code ibv_sge.length} is 32-bit; RDMA devices (rxe included) cap a message at 2^31 bytes. */
    static final long MAX_MESSAGE = 1L << 31;

    private final RpmaTransport transport;
    private final ConnectionConfig config;
    private final String description;
    private final Arena arena;
    private final MemorySegment eventOut;
    private final MemorySegment pollfd;
    private final MemorySegment atomicSource;
    private final MemorySegment pdataOut;
    private final int eventFd;
    private final Events events = new Events();
    private final List<CompletionQueue> queues;
    private final boolean server;

    private volatile MemorySegment conn;
    private byte[] peerPrivateData;
    private boolean disconnectRequested;
    private ConnectionEvent lastEvent;
    private boolean directWriteToPmem;

    private RpmaConnection(RpmaTransport transport, MemorySegment conn, ConnectionConfig config, String description,
                           boolean server, byte[] requestPrivateData) {
        this.transport = transport;
        this.conn = conn;
        this.config = config;
        this.description = description;
        this.server = server;
        this.peerPrivateData = requestPrivateData == null ? new byte[0] : requestPrivateData;
        this.arena = Arena.ofShared();
        try {
            eventOut = arena.allocate(ValueLayout.JAVA_INT);
            pollfd = arena.allocate(8, 8);
            atomicSource = arena.allocate(8, 8);
            pdataOut = rpma_conn_private_data.allocate(arena);
            MemorySegment fdOut = arena.allocate(ValueLayout.JAVA_INT);
            RpmaNative.check("rpma_conn_get_event_fd", librpma_h.rpma_conn_get_event_fd(conn, fdOut), description);
            eventFd = fdOut.get(ValueLayout.JAVA_INT, 0);
            MemorySegment cqOut = arena.allocate(ValueLayout.ADDRESS);
            RpmaNative.check("rpma_conn_get_cq", librpma_h.rpma_conn_get_cq(conn, cqOut), description);
            MemorySegment cq = cqOut.get(ValueLayout.ADDRESS, 0);
            RpmaNative.check("rpma_conn_get_rcq", librpma_h.rpma_conn_get_rcq(conn, cqOut), description);
            MemorySegment rcq = cqOut.get(ValueLayout.ADDRESS, 0);
            if (config.sharedCompletionChannel()) {
                queues = List.of(RpmaCompletionQueue.shared(this, conn, cq, rcq, arena));
            } else if (rcq.equals(MemorySegment.NULL)) {
                queues = List.of(RpmaCompletionQueue.single(this, "main", cq, arena));
            } else {
                queues = List.of(RpmaCompletionQueue.single(this, "main", cq, arena),
                        RpmaCompletionQueue.single(this, "receive", rcq, arena));
            }
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    /**
     * Wraps a new {@code struct rpma_conn}; on failure deletes it (half-built state is not leaked).
     *
     * @param requestPrivateData on the server, the client's request data as delivered; else null
     */
    static RpmaConnection create(RpmaTransport t, MemorySegment conn, ConnectionConfig config, String description,
                                 boolean server, byte[] requestPrivateData) {
        try {
            t.retain(); // the connection keeps the peer's protection domain in use until deleted
        } catch (RuntimeException e) {
            deleteQuietly(conn);
            throw e;
        }
        try {
            return new RpmaConnection(t, conn, config, description, server, requestPrivateData);
        } catch (RuntimeException | Error e) {
            deleteQuietly(conn);
            t.release();
            throw e;
        }
    }

    static void deleteQuietly(MemorySegment conn) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ValueLayout.ADDRESS);
            p.set(ValueLayout.ADDRESS, 0, conn);
            RpmaNative.logged(LOG, System.Logger.Level.DEBUG, "rpma_conn_delete", librpma_h.rpma_conn_delete(p), "");
        }
    }

    MemorySegment conn() {
        MemorySegment c = conn;
        if (c == null) {
            throw new ResourceClosedException("connection " + description + " is closed");
        }
        return c;
    }

    /** {@return the connection for posting}: open, and no terminal event seen (else nothing would complete but flush errors) */
    private MemorySegment live() {
        MemorySegment c = conn();
        ConnectionEvent e = lastEvent;
        if (e != null && e.isTerminal()) {
            throw new IllegalStateException("connection " + description + " is " + e + ": nothing can be posted");
        }
        return c;
    }

    boolean isClosed() {
        return conn == null;
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
        return peerPrivateData.clone();
    }

    @Override
    public List<CompletionQueue> completionQueues() {
        return queues;
    }

    /**
     * Applies the peer's configuration descriptor ({@code rpma_peer_cfg_from_descriptor(3)},
     * {@code rpma_conn_apply_remote_peer_cfg(3)}): whether the peer supports direct write to
     * persistent memory, which {@code rpma_flush(3)} requires for {@link FlushType#PERSISTENT}.
     * Empty bytes (a peer that sent no handshake) keep librpma's default: no direct write, so
     * PERSISTENT flushes to that peer are refused.
     *
     * @param handshake bytes from the peer's {@link RpmaTransport#handshake()}, or empty
     * @throws IllegalArgumentException when they are not a descriptor of this library's size
     */
    @Override
    public void applyPeerHandshake(byte[] handshake) {
        if (handshake == null) {
            throw new IllegalArgumentException("peer handshake of " + description + " is null");
        }
        if (handshake.length == 0) {
            directWriteToPmem = false;
            return;
        }
        directWriteToPmem = RpmaPeerConfig.apply(conn(), handshake);
    }

    // ---- operations


    private static RpmaLocalRegion local(LocalRegion r) {
        if (r instanceof RpmaLocalRegion l) {
            return l;
        }
        throw new IllegalArgumentException("region " + r + " was not registered by the rpma transport");
    }

    private static RpmaRemoteRegion remote(RemoteRegion r) {
        if (r instanceof RpmaRemoteRegion l) {
            return l;
        }
        throw new IllegalArgumentException("remote region " + r + " was not parsed by the rpma transport");
    }

    private static int flags(boolean signaled) {
        return signaled ? librpma_h.RPMA_F_COMPLETION_ALWAYS() : librpma_h.RPMA_F_COMPLETION_ON_ERROR();
    }

    private boolean posted(int rc, String call, long context) {
        if (rc == 0) {
            return true;
        }
        throw RpmaNative.failure(call, rc, 0, description + ", context 0x" + Long.toHexString(context));
    }

    @Override
    public boolean read(LocalRegion dst, long dstOffset, RemoteRegion src, long srcOffset, long length,
                        long context, boolean signaled) {
        MemorySegment c = live();
        Checks.read(transport, dst, dstOffset, src, srcOffset, length);
        return posted(librpma_h.rpma_read(c, local(dst).mr(), dstOffset, remote(src).mr(), srcOffset, length,
                flags(signaled), MemorySegment.ofAddress(context)), "rpma_read", context);
    }

    @Override
    public boolean write(RemoteRegion dst, long dstOffset, LocalRegion src, long srcOffset, long length,
                         long context, boolean signaled) {
        MemorySegment c = live();
        Checks.write(transport, dst, dstOffset, src, srcOffset, length);
        return posted(librpma_h.rpma_write(c, remote(dst).mr(), dstOffset, local(src).mr(), srcOffset, length,
                flags(signaled), MemorySegment.ofAddress(context)), "rpma_write", context);
    }


    @Override
    public boolean writeWithImmediate(RemoteRegion dst, long dstOffset, LocalRegion src, long srcOffset, long length,
                                      int immediate, long context, boolean signaled) {
        MemorySegment c = live();
        Checks.writeWithImmediate(transport, dst, dstOffset, src, srcOffset, length);
        MemorySegment rmr = remote(dst).mr();
        MemorySegment lmr = local(src).mr();
        // librpma converts imm to network order itself (htonl in rpma_mr_write): pass host order
        return posted(librpma_h.rpma_write_with_imm(c, rmr, dstOffset, lmr, srcOffset,
                length, flags(signaled), immediate, MemorySegment.ofAddress(context)), "rpma_write_with_imm", context);
    }

    /**
     * librpma posts the atomic write as an inline ({@code IBV_SEND_INLINE}), fenced RDMA write:
     * the 8 source bytes are copied into the work request by {@code ibv_post_send} itself, so one
     * per-connection 8-byte slot suffices, reused by every atomic write (no slot per in-flight
     * operation). Its completion carries {@code IBV_WC_RDMA_WRITE}, reported as {@link Opcode#WRITE}:
     * the layer that posted it owns what it was.
     */
    @Override
    public boolean atomicWrite(RemoteRegion dst, long dstOffset, long value, long context, boolean signaled) {
        MemorySegment c = live();
        Checks.atomicWrite(transport, dst, dstOffset);
        MemorySegment rmr = remote(dst).mr();
        atomicSource.set(ValueLayout.JAVA_LONG, 0, value);
        return posted(librpma_h.rpma_atomic_write(c, rmr, dstOffset, atomicSource, flags(signaled),
                MemorySegment.ofAddress(context)), "rpma_atomic_write", context);
    }

    /**
     * librpma emulates a flush with a read of 8 bytes at the flushed offset, which
     * {@link FlushSpan} keeps inside the region; the completion then carries {@code IBV_WC_RDMA_READ} and is reported as
     * {@link Opcode#READ} (the layer that posted it owns what it was). {@link FlushType#PERSISTENT} needs both a persistent remote region and
     * the peer's configuration (direct write to pmem) applied to this connection; librpma would
     * otherwise refuse it with {@code RPMA_E_NOSUPP} ({@code rpma_flush(3)}), so it is refused
     * here first.
     */
    @Override
    public boolean flush(RemoteRegion dst, long dstOffset, long length, FlushType type, long context,
                         boolean signaled) {
        MemorySegment c = live();
        // Also refuses a region smaller than librpma's 8-byte read (FlushSpan).
        Checks.flush(transport, dst, dstOffset, length, type);
        if (type == FlushType.PERSISTENT && !directWriteToPmem) {
            throw new IllegalStateException("flush type PERSISTENT on " + description + " needs the peer's declaration"
                    + " of direct write to persistent memory (rpma_conn_apply_remote_peer_cfg(3)), and its handshake"
                    + " did not declare it (peer side: TransportOptions.directWriteToPersistentMemory,"
                    + " Cqflux.Builder.directWriteToPersistentMemory(true))");
        }
        int t = type == FlushType.PERSISTENT ? librpma_h.RPMA_FLUSH_TYPE_PERSISTENT() : librpma_h.RPMA_FLUSH_TYPE_VISIBILITY();
        MemorySegment rmr = remote(dst).mr();
        // librpma's flush reads 8 bytes at the offset: FlushSpan keeps that read inside the region.
        FlushSpan span = FlushSpan.of(dst.size(), dstOffset, length);
        return posted(librpma_h.rpma_flush(c, rmr, span.offset(), span.length(), t, flags(signaled),
                MemorySegment.ofAddress(context)), "rpma_flush", context);
    }

    @Override
    public boolean send(LocalRegion src, long offset, long length, long context, boolean signaled) {
        MemorySegment c = live();
        Checks.send(transport, src, offset, length, false);
        MemorySegment mr = length == 0 ? MemorySegment.NULL : local(src).mr();
        return posted(librpma_h.rpma_send(c, mr, length == 0 ? 0 : offset, length, flags(signaled),
                MemorySegment.ofAddress(context)), "rpma_send", context);
    }

    @Override
    public boolean sendWithImmediate(LocalRegion src, long offset, long length, int immediate, long context,
                                     boolean signaled) {
        MemorySegment c = live();
        Checks.send(transport, src, offset, length, true);
        MemorySegment mr = length == 0 ? MemorySegment.NULL : local(src).mr();
        return posted(librpma_h.rpma_send_with_imm(c, mr, length == 0 ? 0 : offset, length, flags(signaled),
                immediate, MemorySegment.ofAddress(context)), "rpma_send_with_imm", context);
    }

    @Override
    public boolean receive(LocalRegion dst, long offset, long length, long context) {
        MemorySegment c = live();
        Checks.receive(transport, dst, offset, length);
        MemorySegment mr = length == 0 ? MemorySegment.NULL : local(dst).mr();
        return posted(librpma_h.rpma_recv(c, mr, length == 0 ? 0 : offset, length, MemorySegment.ofAddress(context)),
                "rpma_recv", context);
    }

    // ---- lifecycle

    /**
     * Starts the disconnect ({@code rpma_conn_disconnect(3)}); {@code CLOSED} follows on the
     * event channel. After the peer's disconnect ({@code CLOSED} received) it completes the
     * handshake instead: rdma_cm answers the peer's disconnect request only when this side calls
     * {@code rdma_disconnect}, and until then the peer waits for its own {@code CLOSED} (or a CM
     * timeout). A no-op after a previous call, or after {@code LOST}/{@code REJECTED}/
     * {@code UNREACHABLE} (nothing to tear down).
     */
    @Override
    public void disconnect() {
        MemorySegment c = conn;
        if (c == null || disconnectRequested || !canDisconnect()) {
            return;
        }
        disconnectRequested = true;
        RpmaNative.check("rpma_conn_disconnect", librpma_h.rpma_conn_disconnect(c), description);
    }

    /**
     * Disconnects if still connected, then deletes the connection ({@code rpma_conn_delete(3)}:
     * QP, CQs, CM id, event channel). It does not wait for {@code CLOSED}: librpma acknowledges
     * every CM event it reads, so {@code rdma_destroy_id} cannot block on an unacknowledged one,
     * and destroying a connected id sends the peer its disconnect request. Idempotent.
     */
    @Override
    public synchronized void close() {
        MemorySegment c = conn;
        if (c == null) {
            return;
        }
        if (!disconnectRequested && canDisconnect()) {
            disconnectRequested = true;
            RpmaNative.logged(LOG, System.Logger.Level.DEBUG, "rpma_conn_disconnect", librpma_h.rpma_conn_disconnect(c),
                    description + ", before delete");
        }
        conn = null;
        for (CompletionQueue q : queues) {
            q.close();
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ValueLayout.ADDRESS);
            p.set(ValueLayout.ADDRESS, 0, c);
            RpmaNative.logged(LOG, System.Logger.Level.WARNING, "rpma_conn_delete", librpma_h.rpma_conn_delete(p),
                    description);
        } finally {
            arena.close();
            transport.release();
        }
    }

    private boolean canDisconnect() {
        return lastEvent == ConnectionEvent.ESTABLISHED || lastEvent == ConnectionEvent.CLOSED;
    }

    @Override
    public String toString() {
        return "rpma connection " + description;
    }

    /** The CM event channel ({@code rpma_conn_get_event_fd(3)}, {@code rpma_conn_next_event(3)}). */
    private final class Events implements EventChannel {

        @Override
        public int fd() {
            return eventFd;
        }

        @Override
        public ConnectionEvent nextEvent() {
            MemorySegment c = conn;
            if (c == null || !RpmaNative.readable(eventFd, pollfd)) {
                return null;
            }
            int rc = librpma_h.rpma_conn_next_event(c, eventOut);
            if (rc == librpma_h.RPMA_E_UNKNOWN()) {
                // an RDMA CM event librpma does not map (it acknowledged it): nothing to report
                LOG.log(System.Logger.Level.DEBUG, () -> description + ": librpma skipped an unmapped RDMA CM event");
                return null;
            }
            if (!RpmaNative.result("rpma_conn_next_event", rc, description)) {
                return null;
            }
            int e = eventOut.get(ValueLayout.JAVA_INT, 0);
            ConnectionEvent event = map(e);
            if (event == ConnectionEvent.ESTABLISHED && !server) {
                peerPrivateData = readPrivateData(c);
            }
            if (event != null) {
                lastEvent = event;
            }
            if (event == ConnectionEvent.CLOSED && !disconnectRequested) {
                // the peer disconnected: answer now (rpma_conn_disconnect(3) "may be called after
                // receiving the RPMA_CONN_CLOSED event"). librdmacm then moves the QP to the error
                // state, which flushes the posted receives, and sends the peer the reply it waits
                // for; without it the peer's CLOSED would wait for a CM timeout.
                disconnectRequested = true;
                RpmaNative.logged(LOG, System.Logger.Level.DEBUG, "rpma_conn_disconnect", librpma_h.rpma_conn_disconnect(c),
                        description + ", answering the peer's disconnect");
            }
            return event;
        }

        private byte[] readPrivateData(MemorySegment c) {
            RpmaNative.check("rpma_conn_get_private_data", librpma_h.rpma_conn_get_private_data(c, pdataOut), description);
            byte[] raw = RpmaNative.copyBytes(rpma_conn_private_data.ptr(pdataOut),
                    Byte.toUnsignedInt(rpma_conn_private_data.len(pdataOut)));
            return raw; // verbatim, padded by RDMA CM (PrivateData)
        }

        @Override
        public String toString() {
            return "rpma events of " + description + " (fd " + eventFd + ")";
        }
    }

    static ConnectionEvent map(int e) {
        if (e == librpma_h.RPMA_CONN_ESTABLISHED()) {
            return ConnectionEvent.ESTABLISHED;
        } else if (e == librpma_h.RPMA_CONN_CLOSED()) {
            return ConnectionEvent.CLOSED;
        } else if (e == librpma_h.RPMA_CONN_LOST()) {
            return ConnectionEvent.LOST;
        } else if (e == librpma_h.RPMA_CONN_REJECTED()) {
            return ConnectionEvent.REJECTED;
        } else if (e == librpma_h.RPMA_CONN_UNREACHABLE()) {
            return ConnectionEvent.UNREACHABLE;
        }
        return null;
    }
}
