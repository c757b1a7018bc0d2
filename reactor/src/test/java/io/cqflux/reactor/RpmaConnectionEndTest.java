package io.cqflux.reactor;

import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link ConnectionEndTest}'s close under load on librpma over Soft-RoCE (tag {@code rpma}, the
 * lane only), with its assertions: a close by either side fails every queued operation with
 * {@code ConnectionException(CLOSED)}, once, within a bound, and emits CLOSED.
 *
 * <p>A tenth of the host's backlog and twice its bound: under TCG the loop works through a backlog
 * of 20,000 so slowly that a task handed to it behind them waited over 10 s, and the operations
 * completed before the close could reach them.
 */
@Tag("rpma")
class RpmaConnectionEndTest {
    static final Duration BOUND = Duration.ofSeconds(10);
    static final int BACKLOG = 2_000;

    FaultRig rig;

    @AfterEach
    void tearDown() {
        if (rig != null) {
            rig.close();
        }
    }

    private static FaultRig rig() {
        return new FaultRig(RpmaSoakTest::rpma,
                new InetSocketAddress(RpmaReactiveContractTest.address(), ReactiveContract.freePort()), b -> b,
                b -> b.pendingLimit(1 << 20));
    }

    @Test
    void localClose_failsPendingAndQueuedWithConnectionClosed_andEmitsClosed() {
        rig = rig();
        ConnectionEndTest.localCloseCase(rig, BACKLOG, BOUND, "rpma/rxe");
    }

    @Test
    void peerClose_failsPendingAndQueuedWithConnectionClosed_withinBound() {
        rig = rig();
        ConnectionEndTest.peerCloseCase(rig, BACKLOG, BOUND, "rpma/rxe");
    }
}
