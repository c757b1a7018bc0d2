package io.cqflux.core.spi;

import io.cqflux.core.Capability;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.RegionAccess;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.Set;

/**
 * A native transport bound to one local device or interface (librpma: a peer from
 * {@code rpma_utils_get_ibv_context}; libfabric: a fabric and domain of one provider).
 *
 * <p><b>Threading.</b> {@link #register}, {@link #remoteRegion}, {@link #capabilities()} and
 * {@link #close()} are thread-safe. {@link #listen} and {@link #connect} may be called from any
 * thread; the objects they return are then confined to the event loop that registers them.
 *
 * <p><b>Lifetime.</b> Close connections, listeners and regions first (a connection closed off its
 * loop, {@link #closesOffLoop()}, included: its close has returned); {@link #close()} frees the
 * device objects and is idempotent.
 */
public interface Transport extends Registrar, AutoCloseable {

    /** {@return the transport name with its provider, e.g. {@code rpma} or {@code fabric/tcp}} */
    String name();

    /** {@return what this transport can do} */
    Set<Capability> capabilities();

    /** {@return the most bytes one operation may move (a message, a read or a write)} */
    long maxMessageSize();

    /**
     * {@return whether a peer's write with immediate data consumes one of the receives posted on
     * this transport's connections (verbs: always, {@code ibv_post_send(3)}
     * IBV_WR_RDMA_WRITE_WITH_IMM; libfabric's tcp provider: never, it reports the remote CQ data
     * without one). A receiver's flow control counts such writes as messages only where it does}
     */
    default boolean writeWithImmediateConsumesReceive() {
        return true;
    }

    /**
     * {@return how many bytes a flush reads inside the region whatever its length, or 0 where a
     * flush touches nothing outside its range} librpma 1.2 flushes with a read of 8 bytes at the
     * offset it is given (its {@code src/flush.c}, {@code RAW_SIZE}); the rpma transport places
     * that read inside the region (a range starting within the region's last 8 bytes, or at its
     * end, is flushed from 8 bytes before the end), so only a region smaller than the read cannot
     * be flushed. The argument check of a flush ({@code Checks.flush}) refuses such a region before
     * anything is posted, a durable write's included, whose write would otherwise go out first.
     */
    default int flushReadBytes() {
        return 0;
    }

    /** {@return the most private-data bytes a connection request may carry: the transport's true limit} */
    int maxConnectPrivateData();

    /** {@return the most private-data bytes an accept may carry} */
    int maxAcceptPrivateData();

    /**
     * {@return the most private-data bytes a reject carries to the client
     * ({@link ConnectionRequest#reject(byte[])}), 0 where the client cannot read any: a server
     * that wants the client to read why it was refused then has to accept it first} The default
     * is 0.
     */
    default int maxRejectPrivateData() {
        return 0;
    }

    /**
     * This side's connection handshake: the transport's own parameters that the peer's
     * connection needs before it posts anything, carried in the connection's private data beside
     * the exposed regions and handed to the peer's {@link Connection#applyPeerHandshake(byte[])}.
     * rpma: its peer configuration descriptor ({@code rpma_peer_cfg_get_descriptor(3)}) with
     * direct write to persistent memory as {@link TransportOptions#directWriteToPersistentMemory()}
     * declared, which the peer needs for {@link io.cqflux.core.FlushType#PERSISTENT} flushes
     * ({@code rpma_conn_apply_remote_peer_cfg(3)}). The default, for transports without
     * parameters of their own (fabric), is empty.
     *
     * <p>Thread-safe; the same bytes for every connection of this transport, at most 255.
     *
     * @return a copy of the bytes, possibly empty
     */
    default byte[] handshake() {
        return new byte[0];
    }

    /**
     * Registers memory for RDMA.
     *
     * @param memory native memory, alive at least as long as the region
     * @param access what it may be used for (non-empty)
     * @return the region
     * @throws IllegalArgumentException from {@link io.cqflux.core.internal.Checks#registration},
     *     which every transport runs first: memory that is null, on the heap, freed or empty, an
     *     empty access set or one with a null, a read-only view with an access that writes into it
     * @throws io.cqflux.core.UnsupportedCapabilityException when {@code access} asks for a flush
     *     type the transport cannot deliver to this memory (never registered at a weaker one):
     *     {@code FLUSH_TYPE_PERSISTENT} on fabric, or on rpma without
     *     {@link TransportOptions#directWriteToPersistentMemory()}; see
     *     {@link io.cqflux.core.internal.Checks#registerFlushAccess}
     */
    @Override
    LocalRegion register(MemorySegment memory, Set<RegionAccess> access);

    /**
     * {@return why this transport cannot give an accepted connection keys of its own
     * ({@link ConnectionRequest#scopeKeys()}), or {@code null} where it can: then
     * {@link #capabilities()} holds {@link Capability#CONNECTION_SCOPED_KEYS}} A server refuses a
     * bind that asks for scoped keys with this reason. The default answers for a transport
     * without the capability.
     */
    default String connectionScopedKeysRefusal() {
        return capabilities().contains(Capability.CONNECTION_SCOPED_KEYS) ? null
                : "it has no scope of registrations per connection";
    }

    /**
     * {@return why a server of this transport does not scope its connections' keys by default
     * (AcceptOptions' {@code KeyScoping.WHERE_SUPPORTED}), or {@code null} where it does} Where it
     * cannot ({@link #connectionScopedKeysRefusal()}), that reason; a transport that can at a cost
     * it was not measured at, or one this process cannot bear, says so here, and a server may
     * still require them. The server logs the reason at WARNING when it binds unscoped by default.
     * The default: {@link #connectionScopedKeysRefusal()}.
     */
    default String connectionScopedKeysDefaultRefusal() {
        return connectionScopedKeysRefusal();
    }

    /**
     * Parses a peer's region descriptor, with bounds checks: malformed bytes throw
     * {@link IllegalArgumentException}.
     *
     * @param descriptor the bytes from {@link LocalRegion#descriptor()} on the peer
     * @return the remote region
     */
    RemoteRegion remoteRegion(byte[] descriptor);

    /**
     * Checks a peer's handshake bytes as its connection's {@link Connection#applyPeerHandshake}
     * will take them in, before any connection exists: a server refuses a request whose handshake
     * is malformed before it accepts anything. The default, for transports without a handshake
     * (fabric), accepts only empty bytes.
     *
     * @param handshake the bytes, possibly empty
     * @throws IllegalArgumentException when they are malformed, naming their length and the expected one
     */
    default void checkPeerHandshake(byte[] handshake) {
        if (handshake == null || handshake.length != 0) {
            throw new IllegalArgumentException("peer handshake of "
                    + (handshake == null ? "null" : handshake.length + " bytes") + ": transport " + name()
                    + " has no handshake, expected 0 bytes");
        }
    }

    /**
     * Makes a peer region from the transport's own descriptor ({@link LocalRegion#rawDescriptor()}
     * on a cqflux peer, or what a peer not written with cqflux sends), with the access the caller
     * states. Where the raw form carries the owner's usage (rpma: the last byte of librpma's
     * descriptor) a stated access beyond it is refused, and an empty one means the descriptor's;
     * where it carries none (fabric) an empty access is refused. Bounds-checked: malformed bytes
     * throw {@link IllegalArgumentException}.
     *
     * @param rawDescriptor the transport's own descriptor bytes
     * @param access what the peer granted, or empty for what the descriptor names (where it names
     *     any); an operation outside it is refused before posting
     * @return the remote region
     */
    RemoteRegion remoteRegion(byte[] rawDescriptor, Set<RegionAccess> access);

    /**
     * Starts listening.
     *
     * @param address local address and port
     * @param config configuration of the connections accepted from it
     * @return the listener
     */
    Listener listen(InetSocketAddress address, ConnectionConfig config);

    /**
     * Starts connecting; the connection's event channel reports {@code ESTABLISHED},
     * {@code REJECTED} or {@code UNREACHABLE}.
     *
     * @param address the server
     * @param config queue sizes and options
     * @param privateData bytes for the server, sent verbatim (no framing; none when empty), at most
     *     {@link #maxConnectPrivateData()}
     * @return the connection, not yet established
     */
    Connection connect(InetSocketAddress address, ConnectionConfig config, byte[] privateData);

    /**
     * Starts connecting a connection that {@code affinity}'s event loop will serve: a transport
     * may bind it to native queues it shares among the connections of the same affinity (their
     * event channels then name a {@link Pollable#sharedBy() shared source}), so that a
     * connection costs fewer file descriptors. The default ignores the affinity.
     *
     * @param address the server
     * @param config queue sizes and options
     * @param privateData as for {@link #connect(InetSocketAddress, ConnectionConfig, byte[])}
     * @param affinity the loop that will register the connection (compared by identity), or
     *     {@code null} for queues of its own
     * @return the connection, not yet established
     */
    default Connection connect(InetSocketAddress address, ConnectionConfig config, byte[] privateData,
                               Object affinity) {
        return connect(address, config, privateData);
    }

    /**
     * Starts connecting with a hello: private data that carries this connection's parameters,
     * which the transport hands to {@code hello} once the connection exists and before anything is
     * sent, and which the server's connection is given with
     * {@link Connection#applyPeerParameters(byte[])}. Unlike {@link #handshake()}, which is the
     * same for every connection, they are the connection's own (fabric/tcp: the tag by which a
     * completion queue it shares with other connections routes the peer's write-with-immediate
     * notifications to it). They have the length of {@link #connectionParametersTemplate()}, so
     * that a caller may check its hello's size with those first. A connection started with
     * private data that does not carry them ({@link #connect(InetSocketAddress, ConnectionConfig,
     * byte[], Object)}: raw private data, or a hello without room for them) gets nothing that
     * needs its peer to know them. The default passes none.
     *
     * @param address the server
     * @param config queue sizes and options
     * @param hello builds the private data from the connection's parameters; its result as for
     *     {@link #connect(InetSocketAddress, ConnectionConfig, byte[])}
     * @param affinity as for {@link #connect(InetSocketAddress, ConnectionConfig, byte[], Object)}
     * @return the connection, not yet established
     */
    default Connection connectWithHello(InetSocketAddress address, ConnectionConfig config,
                                        java.util.function.UnaryOperator<byte[]> hello, Object affinity) {
        return connect(address, config, hello.apply(new byte[0]), affinity);
    }

    /**
     * {@return bytes as long as the parameters of every connection of this transport
     * ({@link #connectWithHello}, {@link ConnectionRequest#acceptWithHello}), so that a caller can
     * check a hello's size before the connection exists; a copy} The default is empty (no
     * parameters); fabric/tcp: 4 bytes (a receiving tag).
     */
    default byte[] connectionParametersTemplate() {
        return new byte[0];
    }

    /**
     * {@return whether {@link #connect(InetSocketAddress, ConnectionConfig, byte[], Object)} (and
     * the registrations a connect makes) may run on a thread other than the affinity's loop, while
     * that loop serves the affinity's other connections, and at the same time as other connects
     * and accepts of this transport on other such threads: then a caller may build a connection on
     * a set-up thread (or, for a connect it gave up on, finish it on a second one) and hand it to
     * its loop, which alone uses it from then on. The default is the safe answer, no: a transport
     * says yes only where its native library allows it}
     */
    default boolean connectsOffLoop() {
        return false;
    }

    /**
     * {@return whether {@link ConnectionRequest#accept(byte[], Object)} (with the request's
     * {@link ConnectionRequest#receiveBeforeAccept receives before the accept}) may run on a thread
     * other than the one that reads the listener, while that thread goes on reading it and while
     * other threads connect or accept on this transport; the request is then answered by that one
     * other thread only. The default is no (see
     * {@link #connectsOffLoop()})}
     */
    default boolean acceptsOffLoop() {
        return false;
    }

    /**
     * {@return whether {@link Connection#close()} may run on a thread other than the connection's
     * loop, while that loop serves the transport's other connections (those sharing native queues
     * with it included), once the loop has let go of the connection: its completion queues and
     * event channel are unregistered, nothing more is posted on it, and the loop does not touch it
     * again until the close returned (the hand-off and the hand-back go through task queues: the
     * happens-before edges). The close must then touch nothing that the loop still uses without
     * a lock (a shared queue's state for the loop's sleep, say). The default is the safe answer,
     * no (see {@link #connectsOffLoop()})}
     */
    default boolean closesOffLoop() {
        return false;
    }

    /** Frees the transport's native objects; idempotent. */
    @Override
    void close();
}
