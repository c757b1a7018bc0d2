package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.Resources;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The reactive contract on libfabric's tcp provider over loopback. */
class FabricReactiveContractTest extends ReactiveContract {

    @Override
    Cqflux.Builder builder() {
        return Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(InetAddress.getLoopbackAddress());
    }

    @Override
    InetSocketAddress listenAddress() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    }

    /**
     * The fabric transport offers VISIBILITY flushes only: tcp's FI_COMMIT_COMPLETE commits only
     * the committing operation's own bytes, so no flush can make earlier writes persistent.
     */
    @Override
    RegionAccess[] serverFlushAccess() {
        return new RegionAccess[] {RegionAccess.FLUSH_TYPE_VISIBILITY};
    }

    /** tcp has no FI_ATOMIC (native-facts: provider capabilities). */
    @Override
    boolean atomicWriteSupported() {
        return false;
    }

    /** tcp reports fi_writedata's remote CQ data with no posted receive (FabricFacts.TCP_WRITEDATA_CONSUMES_RECEIVE). */
    @Override
    boolean notificationConsumesReceive() {
        return false;
    }

    /** tcp 1.17 reports no length for it; the transport says -1 (FabricFacts.TCP_WRITEDATA_REPORTS_LENGTH). */
    @Override
    long notificationLength(long written) {
        return -1;
    }

    /**
     * A peer that accepts the TCP connection but never answers libfabric's handshake: only the
     * connect timeout ends the attempt, on Reactor's scheduler, so virtual time drives it.
     */
    @Test
    // Virtual time replaces every scheduler: the global lock, which JUnit lifts to this class and
    // its subclasses (the fabric/tcp contracts run on the host, one class at a time, so it costs
    // nothing there).
    @ResourceLock(value = Resources.GLOBAL, mode = ResourceAccessMode.READ_WRITE)
    void connect_toPeerThatNeverAnswers_timesOutInVirtualTime_andLeavesNoConnection() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            InetSocketAddress a = new InetSocketAddress(InetAddress.getLoopbackAddress(), silent.getLocalPort());
            int before = client.openConnections();
            StepVerifier.withVirtualTime(() -> client.connect(a))
                    .expectSubscription()
                    .thenAwait(client.connectionConfig().timeout())
                    .expectErrorSatisfies(e -> {
                        assertInstanceOf(ConnectionException.class, e);
                        assertEquals(ConnectionEvent.UNREACHABLE, ((ConnectionException) e).event());
                        assertTrue(e.getMessage().contains("timed out"), e.getMessage());
                    })
                    .verify(T);
            // The half-open attempt is closed on its loop after the cancel.
            StepVerifier.create(Mono.fromCallable(client::openConnections).filter(n -> n == before)
                            .repeatWhenEmpty(200, f -> f.delayElements(Duration.ofMillis(20))))
                    .expectNext(before).expectComplete().verify(T);
        }
    }

    /** A server-side connection names its peer (tcp's connection request carries the sockaddr). */
    @Test
    void serverSideDescription_namesThePeersAddress() {
        assertTrue(serverConn.description().contains("from 127.0.0.1:"), serverConn.description());
    }
}
