package io.cqflux.reactor;

import java.net.InetAddress;
import java.net.InetSocketAddress;

/** The reactive contract on libfabric's tcp provider over loopback. */
class FabricReactiveContractTest extends ReactiveContract {

    @Override
    Cqflux.Builder builder() {
        return Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(InetAddress.getLoopbackAddress());
    }

    @Override
    InetSocketAddress listenAddress() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    }

    /** tcp has no FI_ATOMIC (native-facts: provider capabilities). */
    @Override
    boolean atomicWriteSupported() {
        return false;
    }
}
