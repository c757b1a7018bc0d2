package io.cqflux.reactor;

import io.cqflux.core.ConnectionConfig;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * {@link PeerProcessFaultContract} on librpma over Soft-RoCE: runs only in the lane (tag
 * {@code rpma}), the peer JVM in the same guest, both ends on {@code CQFLUX_RPMA_ADDRESS}.
 *
 * <p>Bounds: the guest runs under TCG (emulated CPUs, two of them shared by both JVMs, rxe's
 * kernel threads and the host's other builds), so a peer JVM takes tens of seconds to listen and
 * an operation tens of times longer than on the host. Fewer operations (still thousands pending
 * at the fault) keep the class's time in the lane small. The bound is three times fabric's:
 * every step of the end (the RDMA CM event, the loop's wake-up, failing thousands of sinks) runs on
 * an emulated CPU, and after a SIGSTOP the pending operations complete at rxe's rate under TCG
 * rather than fail (below), which takes seconds for a few thousand.
 * The peer gets a minute and a half to listen, the traffic half a minute to reach its threshold.
 *
 * <p>A stopped peer still serves one-sided operations: its RDMA device (here rxe, in the guest's
 * kernel) answers writes, reads and the flush's read without the process, so operations keep
 * completing after the SIGSTOP. In the lane the close, handed to a loop thousands of operations
 * behind, ends at most a handful early: the others complete (docs/reliability.md gives the figures).
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
     * The kernel frees a killed process's memory registrations as it tears down its verbs objects;
     * a write that reaches the peer's rxe in between finds its rkey gone and is answered with a
     * remote access error, which its own work completion reports ({@code IBV_WC_REM_ACCESS_ERR},
     * ibv_poll_cq(3)) and which fails that operation's Mono.
     */
    @Override
    boolean deathMayFailInFlightWithRemoteAccessError() {
        return true;
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
        return 5_000;
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
        return Duration.ofSeconds(15);
    }
}
