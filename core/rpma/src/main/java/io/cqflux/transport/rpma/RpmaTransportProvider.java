package io.cqflux.transport.rpma;

import io.cqflux.core.spi.Transport;
import io.cqflux.core.spi.TransportOptions;
import io.cqflux.core.spi.TransportProvider;

/**
 * The rpma transport's {@link TransportProvider} ({@code ServiceLoader} name {@code rpma}). It
 * ranks above fabric: where an RDMA device serves the local address, librpma is the direct path.
 */
public final class RpmaTransportProvider implements TransportProvider {

    /** Its {@link #priority()}. */
    public static final int PRIORITY = 100;

    /** For {@link java.util.ServiceLoader}. */
    public RpmaTransportProvider() {
    }

    @Override
    public String name() {
        return "rpma";
    }

    @Override
    public int priority() {
        return PRIORITY;
    }

    @Override
    public String unavailabilityCause() {
        return Rpma.unavailabilityCause();
    }

    @Override
    public Transport open(TransportOptions options) {
        options.checkNames(name(), java.util.Set.of());
        return Rpma.open(options);
    }

    @Override
    public String toString() {
        return "rpma (librpma)";
    }
}
