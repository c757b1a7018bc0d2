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
 * <p><b>Lifetime.</b> Close connections, listeners and regions first; {@link #close()} frees
 * the device objects and is idempotent.
 */
public interface Transport extends AutoCloseable {

    /** {@return the transport name with its provider, e.g. {@code rpma} or {@code fabric/tcp}} */
    String name();

    /** {@return what this transport can do} */
    Set<Capability> capabilities();

    /** {@return the most bytes one operation may move (a message, a read or a write)} */
    long maxMessageSize();

    /** {@return the most private-data bytes a connection request may carry} */
    int maxConnectPrivateData();

    /** {@return the most private-data bytes an accept may carry} */
    int maxAcceptPrivateData();

    /**
     * Registers memory for RDMA.
     *
     * @param memory native memory, alive at least as long as the region
     * @param access what it may be used for (non-empty)
     * @return the region
     */
    LocalRegion register(MemorySegment memory, Set<RegionAccess> access);

    /**
     * Parses a peer's region descriptor, with bounds checks: malformed bytes throw
     * {@link IllegalArgumentException}.
     *
     * @param descriptor the bytes from {@link LocalRegion#descriptor()} on the peer
     * @return the remote region
     */
    RemoteRegion remoteRegion(byte[] descriptor);

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
     * @param privateData bytes for the server, at most {@link #maxConnectPrivateData()}
     * @return the connection, not yet established
     */
    Connection connect(InetSocketAddress address, ConnectionConfig config, byte[] privateData);

    /** Frees the transport's native objects; idempotent. */
    @Override
    void close();
}
