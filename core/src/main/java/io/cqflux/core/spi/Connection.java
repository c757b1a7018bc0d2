package io.cqflux.core.spi;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.FlushType;
import java.util.List;

/**
 * One connection (a reliable queue pair) and the operations that can be posted on it.
 *
 * <p><b>Threading.</b> Confined to the event loop that registered its queues and event channel:
 * every method except {@link #description()} is called on that thread. The one exception is
 * {@link #close()} where the transport says {@link Transport#closesOffLoop()}: after the loop let
 * go of the connection, it may run once on another thread.
 *
 * <p><b>Posting.</b> Each operation checks its arguments (ranges against region sizes, access
 * rights, alignment, capabilities) and throws {@link IllegalArgumentException},
 * {@link IllegalStateException} or {@link io.cqflux.core.UnsupportedCapabilityException}
 * before anything is posted. It returns {@code true} once posted; {@code false} when the
 * transport's queue is momentarily full (libfabric {@code -FI_EAGAIN}): nothing was posted and
 * the caller retries after the next drain. A native failure throws
 * {@link io.cqflux.core.NativeCallException}. {@code context} comes back as the completion's
 * {@link io.cqflux.core.Completion#context()}; do not use 0, which transports use for completions
 * that belong to no posted operation (libfabric tcp reports a peer's write-with-immediate with a
 * NULL {@code op_context}). An unsignaled operation produces a completion only on error. The
 * context bits from {@link #TRANSPORT_CONTEXT_SHIFT} up, {@link #TRANSPORT_CONTEXT_BITS} of them,
 * belong to the transport: the caller leaves them 0 (a transport may refuse a context that sets
 * them), a transport may carry its own routing there from its post to its completion queue (a
 * context never leaves this process: it is no part of what goes on the wire), and it clears them
 * again before the completion reaches the sink.
 *
 * <p><b>Lifetime.</b> {@link #disconnect()} starts an orderly close (a {@code CLOSED} event
 * follows); {@link #close()} frees the native objects and is idempotent. Buffers of operations
 * still in flight must stay alive until their completions (or the queue's destruction).
 */
public interface Connection extends AutoCloseable {

    /**
     * The lowest context bit that belongs to the transport (see "Posting" above); the transport's
     * bits are {@link #TRANSPORT_CONTEXT_MASK}. The bit above them stays the caller's, and 0
     * (contexts are never negative).
     */
    int TRANSPORT_CONTEXT_SHIFT = 47;

    /** How many context bits, from {@link #TRANSPORT_CONTEXT_SHIFT} up, belong to the transport. */
    int TRANSPORT_CONTEXT_BITS = 16;

    /** The transport's context bits as a mask. */
    long TRANSPORT_CONTEXT_MASK = ((1L << TRANSPORT_CONTEXT_BITS) - 1) << TRANSPORT_CONTEXT_SHIFT;

    /** {@return a human-readable description: transport, local and peer address; thread-safe} */
    String description();

    /** {@return the configuration it was created with} */
    ConnectionConfig config();

    /** {@return its event channel} */
    EventChannel events();

    /**
     * {@return the private data the peer sent: on the client, the server's accept data; on the
     * server, the client's request data; verbatim as the transport delivered it, which may be
     * zero-padded beyond what was sent (RDMA CM, rdma_get_cm_event(3)); a copy, possibly empty;
     * valid once established. On a client whose connect ended
     * {@link io.cqflux.core.ConnectionEvent#REJECTED}, the server's reject data where the
     * transport delivers it ({@link ConnectionRequest#reject(byte[])}), else empty}
     */
    byte[] peerPrivateData();

    /**
     * Applies the peer's connection handshake (the bytes of the peer transport's
     * {@link Transport#handshake()}, as they arrived in its private data). Called once per
     * connection, on the loop thread, after {@code ESTABLISHED} and before any operation is
     * posted on it; an operation that depends on the peer's parameters (rpma: a
     * {@link FlushType#PERSISTENT} flush) is refused until then. rpma:
     * {@code rpma_peer_cfg_from_descriptor(3)} and {@code rpma_conn_apply_remote_peer_cfg(3)};
     * empty bytes (a peer that sent no handshake) leave librpma's default configuration, which
     * has no direct write to persistent memory. The default, for transports without a handshake
     * (fabric), accepts only empty bytes.
     *
     * @param handshake the peer's bytes, possibly empty
     * @throws IllegalArgumentException when the bytes are malformed (named with their length and
     *     the expected one)
     */
    default void applyPeerHandshake(byte[] handshake) {
        if (handshake == null || handshake.length != 0) {
            throw new IllegalArgumentException("peer handshake of "
                    + (handshake == null ? "null" : handshake.length + " bytes") + " for " + description()
                    + ": this transport has no handshake, expected 0 bytes");
        }
    }

    /**
     * Applies the peer connection's parameters ({@link Transport#connectWithHello}), as they
     * arrived in its hello: called at most once, on the loop thread right after
     * {@link #applyPeerHandshake}, before anything but receives is posted. fabric/tcp: the tag the
     * peer's connection asks this side to put in the high half of each write-with-immediate's CQ
     * data (4 bytes; empty, or 0: none). The default, for transports whose connections have none,
     * accepts only empty bytes.
     *
     * @param parameters the peer's bytes, possibly empty (a peer that told none)
     * @throws IllegalArgumentException when the bytes are malformed (named with their length and
     *     the expected one)
     */
    default void applyPeerParameters(byte[] parameters) {
        if (parameters == null || parameters.length != 0) {
            throw new IllegalArgumentException("peer connection parameters of "
                    + (parameters == null ? "null" : parameters.length + " bytes") + " for " + description()
                    + ": this transport has none, expected 0 bytes");
        }
    }

    /**
     * {@return the completion queues to register: the main CQ and, if separate, the receive CQ;
     * in shared-channel mode a single queue that serves both}
     */
    List<CompletionQueue> completionQueues();

    /**
     * Reads from the peer.
     *
     * @param dst local destination ({@code READ_DST})
     * @param dstOffset offset in {@code dst}
     * @param src remote source ({@code READ_SRC})
     * @param srcOffset offset in {@code src}
     * @param length bytes, at least 1
     * @param context the completion's context
     * @param signaled whether success is reported too
     * @return whether it was posted
     */
    boolean read(LocalRegion dst, long dstOffset, RemoteRegion src, long srcOffset, long length,
                 long context, boolean signaled);

    /**
     * Writes to the peer.
     *
     * @param dst remote destination ({@code WRITE_DST})
     * @param dstOffset offset in {@code dst}
     * @param src local source ({@code WRITE_SRC})
     * @param srcOffset offset in {@code src}
     * @param length bytes, at least 1
     * @param context the completion's context
     * @param signaled whether success is reported too
     * @return whether it was posted
     */
    boolean write(RemoteRegion dst, long dstOffset, LocalRegion src, long srcOffset, long length,
                  long context, boolean signaled);

    /**
     * Writes to the peer and consumes one of its posted receives, which completes with
     * {@code immediate}.
     *
     * @param dst remote destination
     * @param dstOffset offset in {@code dst}
     * @param src local source
     * @param srcOffset offset in {@code src}
     * @param length bytes, at least 1
     * @param immediate 32-bit value, host byte order
     * @param context the completion's context
     * @param signaled whether success is reported too
     * @return whether it was posted
     */
    boolean writeWithImmediate(RemoteRegion dst, long dstOffset, LocalRegion src, long srcOffset, long length,
                               int immediate, long context, boolean signaled);

    /**
     * Writes 8 bytes atomically.
     *
     * @param dst remote destination
     * @param dstOffset offset in {@code dst}, a multiple of 8
     * @param value the 8 bytes, host byte order
     * @param context the completion's context
     * @param signaled whether success is reported too
     * @return whether it was posted
     */
    boolean atomicWrite(RemoteRegion dst, long dstOffset, long value, long context, boolean signaled);

    /**
     * Makes earlier writes to a range of the peer's region visible or persistent.
     *
     * @param dst remote region
     * @param dstOffset offset in {@code dst}
     * @param length bytes
     * @param type the flush type; must be one of {@code dst.flushTypes()}
     * @param context the completion's context
     * @param signaled whether success is reported too
     * @return whether it was posted
     */
    boolean flush(RemoteRegion dst, long dstOffset, long length, FlushType type, long context, boolean signaled);

    /**
     * Sends a message into one of the peer's posted receives.
     *
     * @param src local source ({@code SEND})
     * @param offset offset in {@code src}
     * @param length bytes (0 allowed)
     * @param context the completion's context
     * @param signaled whether success is reported too
     * @return whether it was posted
     */
    boolean send(LocalRegion src, long offset, long length, long context, boolean signaled);

    /**
     * Sends a message with 32-bit immediate data.
     *
     * @param src local source
     * @param offset offset in {@code src}
     * @param length bytes (0 allowed)
     * @param immediate 32-bit value, host byte order
     * @param context the completion's context
     * @param signaled whether success is reported too
     * @return whether it was posted
     */
    boolean sendWithImmediate(LocalRegion src, long offset, long length, int immediate, long context,
                              boolean signaled);

    /**
     * Posts a receive buffer.
     *
     * @param dst local destination ({@code RECV})
     * @param offset offset in {@code dst}
     * @param length bytes (0 allowed: for write-with-immediate notifications)
     * @param context the completion's context
     * @return whether it was posted
     */
    boolean receive(LocalRegion dst, long offset, long length, long context);

    /** Starts an orderly disconnect; the event channel reports {@code CLOSED}. Idempotent. */
    void disconnect();

    /** Frees the connection's native objects (disconnecting first if needed); idempotent. */
    @Override
    void close();
}
