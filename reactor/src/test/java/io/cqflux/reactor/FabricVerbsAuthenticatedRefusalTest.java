package io.cqflux.reactor;

import java.net.InetAddress;
import org.junit.jupiter.api.Tag;

/**
 * {@link AuthenticatedRefusalTest} on libfabric's {@code verbs} provider over Soft-RoCE (rxe):
 * runs only in the lane (tag {@code fabric-verbs}). verbs' {@code fi_reject} carries its 55 bytes
 * of private data to the client (core/fabric's {@code verbs_cm_data_probe.c}), so a refusal there
 * opens no endpoint either, and its reason is cut to the 52 bytes beside the refusal's frame.
 */
@Tag("fabric-verbs")
class FabricVerbsAuthenticatedRefusalTest extends AuthenticatedRefusalTest {

    @Override
    Cqflux.Builder builder() {
        return Cqflux.builder().transport(TransportChoice.FABRIC).fabricProvider("verbs")
                .localAddress(RpmaReactiveContractTest.address()).loops(1);
    }

    @Override
    InetAddress address() {
        return RpmaReactiveContractTest.address();
    }

    /** verbs' 55 bytes of reject data less the refusal's 3-byte frame (PeerHello.encodeRefusal). */
    @Override
    int reasonBudget() {
        return 52;
    }
}
