package io.cqflux.reactor;

import io.cqflux.core.RegionAccess;
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

    /** tcp advertises FI_RMA_PMEM and commits on the target (FI_COMMIT_COMPLETE). */
    @Override
    RegionAccess[] serverFlushAccess() {
        return new RegionAccess[] {RegionAccess.FLUSH_TYPE_PERSISTENT, RegionAccess.FLUSH_TYPE_VISIBILITY};
    }

    /** tcp has no FI_ATOMIC (native-facts: provider capabilities). */
    @Override
    boolean atomicWriteSupported() {
        return false;
    }
}
