package io.cqflux.core.fabric;

import io.cqflux.core.TransportUnavailableException;
import io.cqflux.core.spi.Transport;
import java.net.InetAddress;

/**
 * Entry point of the fabric transport (libfabric; provider {@code tcp} by default).
 * STUB: implemented by the fabric transport work.
 */
public final class Fabric {
    /** The default provider: real completions over TCP on any Linux host. */
    public static final String DEFAULT_PROVIDER = "tcp";

    private Fabric() {
    }

    /** {@return whether libfabric is loadable with API ≥ 1.11} */
    public static boolean isAvailable() {
        return false;
    }

    /** {@return why {@link #isAvailable()} is false (what to install), or an empty string} */
    public static String unavailabilityCause() {
        return "not implemented yet";
    }

    /**
     * Opens the transport with the default provider.
     *
     * @param localAddress the local interface address
     * @return the transport
     */
    public static Transport open(InetAddress localAddress) {
        return open(DEFAULT_PROVIDER, localAddress);
    }

    /**
     * Opens the transport with a named provider.
     *
     * @param provider a libfabric provider name, e.g. {@code tcp}
     * @param localAddress the local interface address
     * @return the transport
     * @throws TransportUnavailableException when libfabric or the provider is missing
     */
    public static Transport open(String provider, InetAddress localAddress) {
        throw new TransportUnavailableException("fabric", unavailabilityCause(), null);
    }
}
