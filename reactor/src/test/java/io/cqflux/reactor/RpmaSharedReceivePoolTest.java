package io.cqflux.reactor;

import io.cqflux.core.ConnectionConfig;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The shared receive pool on librpma, in the Soft-RoCE lane (tag {@code rpma}): a few hundred
 * idle connections to one server each pin their starting window of its pool, and every buffer is
 * back once they close; connections accepted before any subscribes each get their window; a
 * hostile client is caught or held back (SharedReceivePoolTest's
 * scenarios). The guest's 4,096 fds bound the count.
 */
@Tag("rpma")
class RpmaSharedReceivePoolTest {
    private static final int IDLE = Integer.getInteger("srq.rpma.idle", 300);

    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void threeHundredIdleConnections_eachPinOnlyItsStartingWindow_andClosingReturnsEveryBuffer() throws Exception {
        // One connect at a time, each with 30 s: the emulated NIC sets connections up slowly, so
        // concurrent connects can outlast the default timeout.
        SharedReceivePoolTest.idleConnections(
                () -> Cqflux.builder().transport(TransportChoice.RPMA).localAddress(RpmaReactiveContractTest.address())
                        .connectionConfig(ConnectionConfig.DEFAULT.withTimeout(Duration.ofSeconds(30))).loops(2).build(),
                () -> new InetSocketAddress(RpmaReactiveContractTest.address(), ReactiveContract.freePort()),
                IDLE, 1);
    }

    /**
     * Connections accepted before any subscribes, then all subscribing: those that find the pool
     * empty make it grow, and each posts its starting window and receives its client's message.
     */
    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void manyConnectionsAcceptedBeforeAnySubscribes_eachGetsItsWindow_thePoolGrowingWhenFoundEmpty() {
        SharedReceivePoolTest.acceptedThenSubscribing(RpmaSharedReceivePoolTest::rpma, RpmaSharedReceivePoolTest::rpma,
                () -> new InetSocketAddress(RpmaReactiveContractTest.address(), ReactiveContract.freePort()));
    }

    private static Cqflux rpma() {
        return Cqflux.builder().transport(TransportChoice.RPMA).localAddress(RpmaReactiveContractTest.address())
                .connectionConfig(ConnectionConfig.DEFAULT.withTimeout(Duration.ofSeconds(30))).loops(2).build();
    }

    /**
     * A raw client that ignores its grant: on rpma a send that finds no posted receive is retried
     * by the NIC (RNR), so the excess lands in receives as they are posted; caught beyond the
     * grant or delivered in order, and every buffer is back in the pool once both clients leave.
     */
    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void hostileClientSendingBeyondItsGrant_isCaughtOrHeldBack_andCannotTakeTheNeighboursBuffers() {
        SharedReceivePoolTest.hostileClient(
                () -> Cqflux.builder().transport(TransportChoice.RPMA).localAddress(RpmaReactiveContractTest.address())
                        .connectionConfig(ConnectionConfig.DEFAULT.withTimeout(Duration.ofSeconds(30))).loops(1).build(),
                () -> new InetSocketAddress(RpmaReactiveContractTest.address(), ReactiveContract.freePort()));
    }
}
