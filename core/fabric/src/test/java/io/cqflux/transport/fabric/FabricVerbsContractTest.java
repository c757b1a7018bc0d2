package io.cqflux.transport.fabric;

import io.cqflux.core.spi.Transport;
import io.cqflux.core.testing.TransportContract;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import org.junit.jupiter.api.Tag;

/**
 * The shared transport contract on libfabric's {@code verbs} provider over Soft-RoCE (rxe): runs
 * only in the lane (tag {@code fabric-verbs}, excluded on the host, included by
 * {@code scripts/softroce/run-tests.sh}; {@code CQFLUX_RPMA_ADDRESS} names the rxe address).
 *
 * <p>The defaults of the contract are verbs' behaviour, as on rpma: a bad key fails the one
 * operation with REM_ACCESS_ERR (the provider's prov_errno is the ibv_wc_status), a write with
 * immediate consumes a posted receive (FI_RX_CQ_DATA mode). The first lane runs crashed with
 * SIGSEGV at libfabric.so.1+0x7da50: the zero-length flush passed a descriptor array holding
 * NULL, which verbs dereferences even for iov_count 0 (see FabricConnection#rmaRaw).
 */
@Tag("fabric-verbs")
class FabricVerbsContractTest extends TransportContract {

    static InetAddress laneAddress() {
        String a = System.getenv("CQFLUX_RPMA_ADDRESS");
        if (a == null || a.isBlank()) {
            throw new IllegalStateException("CQFLUX_RPMA_ADDRESS is not set: the verbs provider needs the Soft-RoCE"
                    + " lane (scripts/softroce)");
        }
        try {
            return InetAddress.getByName(a);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(a + " does not resolve", e);
        }
    }

    @Override
    protected Transport openTransport() {
        return Fabric.open("verbs", laneAddress());
    }

    @Override
    protected InetSocketAddress listenAddress() {
        return new InetSocketAddress(laneAddress(), 0);
    }
}
