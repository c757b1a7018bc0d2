/**
 * cqflux's rpma transport: librpma through the FFM API. Public: {@link io.cqflux.transport.rpma.Rpma}
 * and its {@link io.cqflux.core.spi.TransportProvider}; the bindings ({@code …rpma.ffm}) and the
 * SPI implementations are internal. It calls native code: grant it
 * {@code --enable-native-access=io.cqflux.transport.rpma}.
 */
module io.cqflux.transport.rpma {
    requires io.cqflux.core;

    exports io.cqflux.transport.rpma;

    provides io.cqflux.core.spi.TransportProvider with io.cqflux.transport.rpma.RpmaTransportProvider;
}
