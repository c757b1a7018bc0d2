package io.cqflux.reactor;

import java.io.IOException;
import java.time.Duration;
import io.cqflux.core.ConnectionConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * {@link PeerProcessFaultContract} on librpma over Soft-RoCE: runs only in the lane (tag
 * {@code rpma}), the peer JVM in the same guest, both ends on {@code CQFLUX_RPMA_ADDRESS}.
 *
 * <p>Bounds: the guest runs under TCG (emulated CPUs, two of them shared by both JVMs, rxe's
 * kernel threads and the host's other builds), so a JVM start takes seconds and an operation tens
 * of times longer than on the host. Fewer operations (still thousands pending at the fault) keep
 * the class's time in the lane small; the bound is twice fabric's because every step of the end
 * (the RDMA CM event, the loop's wake-up, failing thousands of sinks) runs on an emulated CPU.
 * The peer gets a minute and a half to listen, the traffic half a minute to reach its threshold.
 *
 * <p>A stopped peer still serves one-sided operations: its RDMA device (here rxe, in the guest's
 * kernel) answers writes, reads and the flush's read without the process, so operations keep
 * completing after the SIGSTOP; what ends them is this side's close, which the tests measure.
 */
@Tag("rpma")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RpmaPeerProcessFaultTest extends PeerProcessFaultContract {
    /** The peer a SIGSTOP test resumed, for the next test; the SIGKILL test, last, ends it. */
    static PeerProcess.Handle kept;

    @AfterAll
    static void endKeptPeer() {
        if (kept != null) {
            kept.destroy();
            kept = null;
        }
    }

    /**
     * The connect timeout is 30 s, not the default 5 s: a peer JVM that has just begun to listen
     * loads and runs its accept path for the first time, on an emulated CPU.
     */
    @Override
    Cqflux.Builder builder() {
        return RpmaSoakTest.rpma().connectionConfig(ConnectionConfig.DEFAULT.withTimeout(Duration.ofSeconds(30)));
    }

    @Override
    PeerProcess.Handle startPeer() throws IOException {
        if (kept != null && kept.process().isAlive()) {
            PeerProcess.Handle p = kept;
            kept = null;
            return p;
        }
        return PeerProcess.start(TransportChoice.RPMA, RpmaReactiveContractTest.address(),
                ReactiveContract.freePort(), Duration.ofSeconds(90));
    }

    /**
     * A peer that was only stopped is resumed and kept: a peer JVM's start in the guest takes tens
     * of seconds, most of the class's time. Each test still has its own client and connection.
     */
    @Override
    void releasePeer(PeerProcess.Handle p) {
        if (p.process().isAlive()) {
            p.signal("CONT");
            kept = p;
        } else {
            p.destroy();
        }
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
