package io.cqflux.transport.fabric;

import io.cqflux.core.TransportUnavailableException;
import io.cqflux.core.spi.Transport;
import java.net.InetAddress;
import java.util.Objects;

/**
 * Entry point of the fabric transport: libfabric ({@code libfabric.so.1}, API ≥ 1.11) through the
 * FFM API, with connected {@code FI_EP_MSG} endpoints of one provider ({@code tcp} by default,
 * which gives real completions over TCP on any Linux host).
 */
public final class Fabric {
    /** The default provider: real completions over TCP on any Linux host. */
    public static final String DEFAULT_PROVIDER = "tcp";

    private Fabric() {
    }

    /** {@return whether libfabric is loadable with API ≥ 1.11} */
    public static boolean isAvailable() {
        return FabricLibrary.cause().isEmpty();
    }

    /** {@return why {@link #isAvailable()} is false (what to install), or an empty string} */
    public static String unavailabilityCause() {
        return FabricLibrary.cause();
    }

    /**
     * Opens the transport with the default provider.
     *
     * @param localAddress the local interface address
     * @return the transport
     * @throws TransportUnavailableException when libfabric or the provider is missing
     */
    public static Transport open(InetAddress localAddress) {
        return open(DEFAULT_PROVIDER, localAddress);
    }

    /**
     * Opens the transport with a named provider.
     *
     * @param provider a libfabric provider name, e.g. {@code tcp}
     * @param localAddress the local interface address
     * @return the transport; close it after its connections, listeners and regions
     * @throws TransportUnavailableException when libfabric or the provider is missing (the
     *     message lists the providers that are present)
     */
    public static Transport open(String provider, InetAddress localAddress) {
        Objects.requireNonNull(provider, "provider");
        Objects.requireNonNull(localAddress, "localAddress");
        if (!isAvailable()) {
            throw new TransportUnavailableException("fabric", unavailabilityCause(), null);
        }
        return FabricTransport.open(provider, localAddress);
    }
}
