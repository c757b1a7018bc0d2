package io.cqflux.reactor;

import io.cqflux.core.RegionAccess;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Tag;

/**
 * The reactive contract on libfabric's {@code verbs} provider over Soft-RoCE (rxe): runs only in
 * the lane and only on request (tag {@code fabric-verbs}, see {@code FabricVerbsContractTest}, which
 * does not pass yet either).
 */
@Tag("fabric-verbs")
class FabricVerbsReactiveContractTest extends ReactiveContract {

    @Override
    Cqflux.Builder builder() {
        return Cqflux.builder().transport(TransportChoice.FABRIC).fabricProvider("verbs")
                .localAddress(RpmaReactiveContractTest.address());
    }

    @Override
    InetSocketAddress listenAddress() {
        return new InetSocketAddress(RpmaReactiveContractTest.address(), 0);
    }

    /** What the provider reports is checked by the suite: verbs lists FI_ATOMIC. */
    @Override
    boolean atomicWriteSupported() {
        return true;
    }

    @Override
    RegionAccess[] serverFlushAccess() {
        return new RegionAccess[] {RegionAccess.FLUSH_TYPE_VISIBILITY};
    }

    /** verbs consumes a posted receive for a write with immediate. */
    @Override
    boolean notificationConsumesReceive() {
        return true;
    }

    /** verbs reports the written length (ibv_poll_cq(3) byte_len). */
    @Override
    long notificationLength(long written) {
        return written;
    }
}
