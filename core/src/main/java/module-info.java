/**
 * cqflux core: the transport-neutral model, the transport SPI, and the native transports over
 * the FFM API (librpma and libfabric). The {@code ffm} binding packages and the transport
 * implementations are not exported.
 */
module io.cqflux.core {
    requires java.logging;

    exports io.cqflux.core;
    exports io.cqflux.core.spi;
    exports io.cqflux.core.rpma;
    exports io.cqflux.core.fabric;
}
