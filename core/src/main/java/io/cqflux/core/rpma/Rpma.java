package io.cqflux.core.rpma;

import io.cqflux.core.TransportUnavailableException;
import io.cqflux.core.spi.Transport;
import java.net.InetAddress;

/**
 * Entry point of the rpma transport (librpma over RDMA NICs, Soft-RoCE or SoftiWARP).
 * STUB: implemented by the rpma transport work.
 */
public final class Rpma {
    private Rpma() {
    }

    /** {@return whether librpma is loadable and has the API this transport needs} */
    public static boolean isAvailable() {
        return false;
    }

    /** {@return why {@link #isAvailable()} is false (what to install), or an empty string} */
    public static String unavailabilityCause() {
        return "not implemented yet";
    }

    /**
     * Opens the transport on the RDMA device that serves a local address.
     *
     * @param localAddress an address of an RDMA-capable interface
     * @return the transport
     * @throws TransportUnavailableException when librpma or a device is missing
     */
    public static Transport open(InetAddress localAddress) {
        throw new TransportUnavailableException("rpma", unavailabilityCause(), null);
    }
}
