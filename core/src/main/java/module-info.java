/**
 * cqflux core: pure Java, no native access. The transport-neutral model ({@code io.cqflux.core}),
 * the transport SPI with its {@link io.cqflux.core.spi.TransportProvider} found through
 * {@link java.util.ServiceLoader} ({@code io.cqflux.core.spi}), and internals shared by the
 * project's own modules only ({@code io.cqflux.core.internal}: the one argument check per
 * operation, the errno names, the native-error exception builder, and the arena whose close
 * leaves the loop).
 */
module io.cqflux.core {
    exports io.cqflux.core;
    exports io.cqflux.core.spi;
    exports io.cqflux.core.internal to
            io.cqflux.transport.rpma, io.cqflux.transport.fabric, io.cqflux.epoll, io.cqflux.reactor, io.cqflux.test;

    uses io.cqflux.core.spi.TransportProvider;
}
