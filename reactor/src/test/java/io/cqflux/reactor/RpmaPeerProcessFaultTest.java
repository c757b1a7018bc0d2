package io.cqflux.reactor;

import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Tag;

/**
 * {@link PeerProcessFaultContract} on librpma over Soft-RoCE: runs only in the lane (tag
 * {@code rpma}), the peer JVM in the same guest, both ends on {@code CQFLUX_RPMA_ADDRESS}.
 *
 * <p>Bounds: the guest runs under TCG (emulated CPUs, two of them shared by both JVMs, rxe's
 * kernel threads and the host's other builds), so a JVM start takes seconds and an operation tens
 * of times longer than on the host. Fewer operations (still thousands pending at the fault) keep
 * the class's time in the lane small; the bound is twice fabric's because every step of the end
 * (the RDMA CM event, the loop's wake-up, failing thousands of sinks) runs on an emulated CPU.
 * The peer gets a minute to listen, the traffic half a minute to reach its threshold.
 */
@Tag("rpma")
class RpmaPeerProcessFaultTest extends PeerProcessFaultContract {

    @Override
    Cqflux.Builder builder() {
        return Cqflux.builder().transport(TransportChoice.RPMA).localAddress(RpmaReactiveContractTest.address());
    }

    @Override
    PeerProcess.Handle startPeer() throws IOException {
        return PeerProcess.start(TransportChoice.RPMA, RpmaReactiveContractTest.address(),
                ReactiveContract.freePort(), Duration.ofSeconds(60));
    }

    @Override
    String transport() {
        return "rpma/rxe";
    }

    @Override
    int operations() {
        return 10_000;
    }

    @Override
    int trafficBeforeFault() {
        return 200;
    }

    @Override
    Duration trafficBound() {
        return Duration.ofSeconds(30);
    }

    @Override
    Duration bound() {
        return Duration.ofSeconds(10);
    }
}
