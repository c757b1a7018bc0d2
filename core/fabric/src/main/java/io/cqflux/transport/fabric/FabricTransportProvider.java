package io.cqflux.transport.fabric;

import io.cqflux.core.spi.Transport;
import io.cqflux.core.spi.TransportOptions;
import io.cqflux.core.spi.TransportProvider;

/**
 * The fabric transport's {@link TransportProvider} ({@code ServiceLoader} name {@code fabric}).
 * It ranks below rpma: its default {@code tcp} provider runs on any host, so it is the fallback.
 * The libfabric provider comes from the option {@link TransportOptions#FABRIC_PROVIDER}.
 */
public final class FabricTransportProvider implements TransportProvider {

    /** Its {@link #priority()}. */
    public static final int PRIORITY = 10;

    /** For {@link java.util.ServiceLoader}. */
    public FabricTransportProvider() {
    }

    @Override
    public String name() {
        return "fabric";
    }

    @Override
    public int priority() {
        return PRIORITY;
    }

    @Override
    public String unavailabilityCause() {
        return Fabric.unavailabilityCause();
    }

    @Override
    public Transport open(TransportOptions options) {
        return Fabric.open(options.property(TransportOptions.FABRIC_PROVIDER, Fabric.DEFAULT_PROVIDER),
                options.localAddress());
    }

    @Override
    public String toString() {
        return "fabric (libfabric)";
    }
}
