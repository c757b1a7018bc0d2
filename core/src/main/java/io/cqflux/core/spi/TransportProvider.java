package io.cqflux.core.spi;

/**
 * A native transport as {@link java.util.ServiceLoader} finds it: each transport module
 * ({@code cqflux-transport-rpma}, {@code cqflux-transport-fabric}) declares one with
 * {@code provides io.cqflux.core.spi.TransportProvider with ...}, and the reactive layer reaches
 * transports only through it. "AUTO" means the available provider of the highest
 * {@link #priority()}.
 *
 * <p>Implementations are stateless and thread-safe; {@link #unavailabilityCause()} must not throw
 * and must not load a native library that is missing (it is called on every host to explain why
 * a transport was skipped).
 */
public interface TransportProvider {

    /** {@return the transport's name as users choose it: {@code rpma}, {@code fabric}} */
    String name();

    /**
     * {@return the rank among available providers for an automatic choice: higher wins (rpma,
     * which needs an RDMA device, ranks above fabric, which runs on any host)}
     */
    int priority();

    /**
     * {@return an empty string when the transport's native library can be loaded, otherwise why
     * not and what to install}. A transport whose library loads may still fail to
     * {@linkplain #open open} (no RDMA device, an address on no RDMA interface): that failure
     * says why.
     */
    String unavailabilityCause();

    /**
     * Opens the transport.
     *
     * @param options the local address and the options the transport understands
     * @return the transport; close it after its connections, listeners and regions
     * @throws io.cqflux.core.TransportUnavailableException when it cannot be opened here, with
     *     what to install or configure
     */
    Transport open(TransportOptions options);
}
