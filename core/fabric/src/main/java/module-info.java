/**
 * cqflux's fabric transport: libfabric through the FFM API. Public:
 * {@link io.cqflux.transport.fabric.Fabric} and its {@link io.cqflux.core.spi.TransportProvider};
 * the bindings ({@code …fabric.ffm}) and the SPI implementations are internal. It calls native
 * code: grant it {@code --enable-native-access=io.cqflux.transport.fabric}.
 */
module io.cqflux.transport.fabric {
    requires io.cqflux.core;

    exports io.cqflux.transport.fabric;

    provides io.cqflux.core.spi.TransportProvider with io.cqflux.transport.fabric.FabricTransportProvider;
}
