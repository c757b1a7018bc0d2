package io.cqflux.transport.fabric;

import io.cqflux.core.spi.Transport;
import io.cqflux.core.testing.TransportContract;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import org.junit.jupiter.api.Tag;

/**
 * The shared transport contract on libfabric's {@code verbs} provider over Soft-RoCE (rxe): runs
 * only in the lane and only on request (tag {@code fabric-verbs}, excluded on the host and from
 * the lane's default rpma tier; {@code CQFLUX_RPMA_ADDRESS} names the rxe address):
 * {@code scripts/softroce/run-tests.sh -- --include-tag fabric-verbs --select-class=<this class>}.
 *
 * <p>Not yet green: in the lane (libfabric 1.17, rxe) the run dies with a SIGSEGV inside
 * libfabric.so.1 (same offset in every run) about a minute into the suite; which test, and
 * whether cqflux's bindings or the provider is at fault, is not known yet. Kept as the reproducer.
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
