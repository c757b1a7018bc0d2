package io.cqflux.transport.rpma;

import io.cqflux.core.TransportUnavailableException;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.spi.TransportOptions;
import java.net.InetAddress;
import java.util.Map;
import java.util.Objects;

/**
 * Entry point of the rpma transport: librpma (≥ 0.14 API, {@code librpma.so.0}) over RDMA NICs,
 * Soft-RoCE or SoftiWARP, through the FFM API.
 *
 * <p>librpma's log goes to {@link System.Logger} (logger {@code io.cqflux.transport.rpma.librpma})
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
     *     memory takes direct writes to persistent memory (then regions may be registered with
     *     {@link io.cqflux.core.RegionAccess#FLUSH_TYPE_PERSISTENT}, and the transport's
     *     {@link Transport#handshake()} tells peers so, which lets them flush to it with
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
}
