package io.cqflux.reactor;

import io.cqflux.core.RegionAccess;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Tag;

/**
 * The reactive contract on libfabric's {@code verbs} provider over Soft-RoCE (rxe): runs only in
 * the lane (tag {@code fabric-verbs}, see {@code FabricVerbsContractTest}).
 */
@Tag("fabric-verbs")
class FabricVerbsReactiveContractTest extends ReactiveContract {

    @Override
    Cqflux.Builder builder() {
        return Cqflux.builder().transport(TransportChoice.FABRIC).fabricProvider("verbs")
                .localAddress(RpmaReactiveContractTest.address());
    }

    /**
     * Under TCG two instances cost more to build and close than most of the contract's tests take:
     * the class shares one server and one client (see {@link ReactiveContract#sharesInstances()}).
     */
    @Override
    boolean sharesInstances() {
        return true;
    }

    @Override
    InetSocketAddress listenAddress() {
        return new InetSocketAddress(RpmaReactiveContractTest.address(), 0);
    }

    /**
     * verbs lists FI_ATOMIC, but the fabric transport does not bind fi_atomic(3): ATOMIC_WRITE is
     * not among its capabilities on any provider, and the suite checks that atomicWrite is refused
     * with UnsupportedCapabilityException before anything is posted.
     */
    @Override
    boolean atomicWriteSupported() {
        return false;
    }

    @Override
    RegionAccess[] serverFlushAccess() {
        return new RegionAccess[] {RegionAccess.FLUSH_TYPE_VISIBILITY};
    }

    /** Soft-RoCE under TCG, as for the rpma lane run: a fifth of the fabric/tcp iterations. */
    @Override
    int rounds(int n) {
        return Math.max(100, n / 5);
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
