package io.cqflux.benchmarks;

import io.cqflux.core.spi.Transport;
import io.cqflux.core.spi.TransportOptions;
import io.cqflux.core.spi.TransportProvider;

/**
 * The {@link java.util.ServiceLoader} entry of the {@code synthetic} transport
 * ({@link SyntheticTransport}): an "instant NIC" test double for benchmarks that measure the Java
 * path of an operation apart from any native library. Chosen by name
 * ({@code Cqflux.builder().transport("synthetic")}); it ranks below every real transport, so an
 * automatic choice never picks it. Registered in this module's
 * {@code META-INF/services/io.cqflux.core.spi.TransportProvider}.
 */
public final class SyntheticTransportProvider implements TransportProvider {

    /** The name users choose it by. */
    public static final String NAME = "synthetic";

    /** For {@link java.util.ServiceLoader}. */
    public SyntheticTransportProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int priority() {
        return Integer.MIN_VALUE;
    }

    @Override
    public String unavailabilityCause() {
        return "";
    }

    @Override
    public Transport open(TransportOptions options) {
        return new SyntheticTransport(options);
    }
}
