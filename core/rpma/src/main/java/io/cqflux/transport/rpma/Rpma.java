package io.cqflux.transport.rpma;

import io.cqflux.core.TransportUnavailableException;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.spi.TransportOptions;
import java.net.InetAddress;
import java.util.Map;
import java.util.Objects;

/**
 * Entry point of the rpma transport: librpma (≥ 0.14 API, {@code librpma.so.0}) over RDMA NICs,
 * Soft-RoCE or SoftiWARP, through the FFM API.
 *
 * <p>librpma's log goes to {@code java.util.logging} (logger {@code io.cqflux.transport.rpma.librpma})
 * from the first {@link #open}; its format arguments are not available there (the log callback
 * is variadic, see the logger's records).
 */
public final class Rpma {
    private Rpma() {
    }

    /** {@return whether librpma is loadable and has the API this transport needs} */
    public static boolean isAvailable() {
        return RpmaNative.unavailabilityCause().isEmpty();
    }

    /** {@return why {@link #isAvailable()} is false (what to install), or an empty string} */
    public static String unavailabilityCause() {
        return RpmaNative.unavailabilityCause();
    }

    /**
     * Opens the transport on the RDMA device that serves a local address.
     *
     * @param localAddress an address of an RDMA-capable interface
     * @return the transport
     * @throws TransportUnavailableException when librpma is missing or too old, when there is no
     *     RDMA device (the message names Soft-RoCE and the fabric transport), or when the address
     *     is not on an RDMA interface
     */
    public static Transport open(InetAddress localAddress) {
        return open(new TransportOptions(localAddress, false, Map.of()));
    }

    /**
     * Opens the transport with options.
     *
     * @param options the local address of an RDMA-capable interface, and whether this side's
     *     memory takes direct writes to persistent memory (then peers may flush to it with
     *     {@link io.cqflux.core.FlushType#PERSISTENT})
     * @return the transport
     * @throws TransportUnavailableException as {@link #open(InetAddress)}
     */
    public static Transport open(TransportOptions options) {
        Objects.requireNonNull(options, "options");
        if (!isAvailable()) {
            throw new TransportUnavailableException("rpma", unavailabilityCause(), null);
        }
        return RpmaTransport.open(options.localAddress(), options.directWriteToPersistentMemory());
    }

    /**
     * Builds this side's peer configuration descriptor ({@code rpma_peer_cfg_get_descriptor(3)}),
     * to send to the peer (for instance in the accept private data).
     *
     * @param directWriteToPmem whether this side's memory supports direct write to persistent
     *     memory (needed by the peer for {@link io.cqflux.core.FlushType#PERSISTENT} flushes)
     * @return the descriptor bytes
     * @throws TransportUnavailableException when librpma is missing
     */
    public static byte[] peerConfigDescriptor(boolean directWriteToPmem) {
        if (!isAvailable()) {
            throw new TransportUnavailableException("rpma", unavailabilityCause(), null);
        }
        return RpmaPeerConfig.descriptor(directWriteToPmem);
    }

    /**
     * Applies the peer's configuration descriptor to an rpma connection
     * ({@code rpma_conn_apply_remote_peer_cfg(3)}); call on the connection's loop thread once it
     * is established.
     *
     * @param connection a connection of this transport
     * @param descriptor bytes from the peer's {@link #peerConfigDescriptor(boolean)}
     * @throws IllegalArgumentException when the connection is not an rpma one or the bytes are malformed
     */
    public static void applyPeerConfig(Connection connection, byte[] descriptor) {
        if (!(connection instanceof RpmaConnection c)) {
            throw new IllegalArgumentException("connection " + connection + " is not an rpma connection");
        }
        c.applyRemotePeerConfig(descriptor);
    }
}
