package io.cqflux.reactor;

import java.io.IOException;
import java.time.Duration;

/**
 * {@link PeerProcessFaultContract} on fabric/tcp over 127.0.0.1, on the host: 50,000 operations,
 * everything ends within 5 s of the fault.
 */
class PeerProcessFaultTest extends PeerProcessFaultContract {
    static final Duration BOUND = Duration.ofSeconds(5);
    static final int OPS = 50_000;

    @Override
    Cqflux.Builder builder() {
        return FaultRig.fabric();
    }

    @Override
    PeerProcess.Handle startPeer() throws IOException {
        return PeerProcess.start();
    }

    @Override
    String transport() {
        return "fabric/tcp";
    }

    @Override
    int operations() {
        return OPS;
    }

    @Override
    int trafficBeforeFault() {
        return 1_000;
    }

    @Override
    Duration trafficBound() {
        return FaultRig.T;
    }

    @Override
    Duration bound() {
        return BOUND;
    }
}
