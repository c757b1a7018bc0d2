package io.cqflux.reactor;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Tag;

/** Raw private data on librpma: runs only in the Soft-RoCE lane (tag {@code rpma}). */
@Tag("rpma")
class RpmaRawPrivateDataTest extends RawPrivateDataContract {

    @Override
    Cqflux.Builder builder() {
        return Cqflux.builder().transport(TransportChoice.RPMA).localAddress(RpmaReactiveContractTest.address());
    }

    @Override
    InetSocketAddress listenAddress() {
        return new InetSocketAddress(RpmaReactiveContractTest.address(), ReactiveContract.freePort());
    }
}
