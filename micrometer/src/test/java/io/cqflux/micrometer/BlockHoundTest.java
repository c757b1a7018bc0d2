package io.cqflux.micrometer;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.reactor.RdmaConnection;
import io.cqflux.test.CqfluxTest;
import io.cqflux.test.LoopbackPeer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.test.StepVerifier;

/**
 * BlockHound on this JDK (the module's argLine has -XX:+AllowRedefinitionToAddDeleteMethods):
 * cqflux's loop threads are recognised as non-blocking, the library's own work on them passes,
 * and subscriber code that blocks on a loop is caught. Installed once for the test JVM (BlockHound
 * cannot be uninstalled); the other tests of this module run under it too, which is the point.
 */
class BlockHoundTest {

    /** Every blocking call BlockHound refused, whatever caught its error afterwards. */
    static final java.util.List<String> REFUSED = new java.util.concurrent.CopyOnWriteArrayList<>();

    @BeforeAll
    static void install() {
        // Finds CqfluxBlockHoundIntegration and Reactor's through ServiceLoader; the callback
        // records each refusal, then refuses as BlockHound does.
        BlockHound.install(b -> b.blockingMethodCallback(m -> {
            REFUSED.add(m + " on " + Thread.currentThread().getName());
            throw new BlockingOperationError(m);
        }));
    }

    @Test
    void operationsAndTheirEnd_passUnderBlockHound() {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection c = peer.connection();
            for (int i = 0; i < 10; i++) {
                CqfluxTest.verify(StepVerifier.create(c.durableWrite(peer.remote(), 0, peer.local(), 0, 64))
                        .expectComplete());
                CqfluxTest.verify(StepVerifier.create(c.read(peer.local(), 0, peer.remote(), 0, 64)).expectComplete());
            }
            // The peer goes away: the client's loop ends the connection and logs a WARN there.
            peer.serverConnection().dispose();
            CqfluxTest.verify(StepVerifier.create(c.events().filter(e -> e.name().equals("CLOSED")).next())
                    .expectNextCount(1).expectComplete());
            CqfluxTest.verify(StepVerifier.create(c.write(peer.remote(), 0, peer.local(), 0, 64))
                    .expectErrorSatisfies(e -> assertTrue(!(e instanceof BlockingOperationError), e.toString())));
        }
    }

    /**
     * A fabric/tcp server's dispose: its listener's close joins the listener's own thread (its
     * request reader), so the server runs that close on the instance's close thread, never on the
     * loop, where BlockHound would refuse the join and the server would never be released.
     */
    @Test
    void aServersDispose_passesUnderBlockHound() {
        java.net.InetAddress lo = java.net.InetAddress.getLoopbackAddress();
        try (io.cqflux.reactor.Cqflux server = io.cqflux.reactor.Cqflux.builder().transport("fabric")
                .fabricProvider("tcp").localAddress(lo).threadNamePrefix("cqflux-blockhound-server").build()) {
            int before = REFUSED.size();
            for (int i = 0; i < 3; i++) {
                io.cqflux.reactor.RdmaServer s = server.bind(new java.net.InetSocketAddress(lo, 0))
                        .block(java.time.Duration.ofSeconds(10));
                s.disposeNow(java.time.Duration.ofSeconds(5));
            }
            assertTrue(REFUSED.size() == before, () -> "blocking calls refused: " + REFUSED.subList(before,
                    REFUSED.size()));
        }
    }

    @Test
    void busyPollingLoops_passUnderBlockHound() {
        try (LoopbackPeer peer = CqfluxTest.loopback()
                .client(b -> b.waitStrategy(io.cqflux.epoll.WaitStrategy.BUSY_POLL)).start()) {
            RdmaConnection c = peer.connection();
            for (int i = 0; i < 10; i++) {
                CqfluxTest.verify(StepVerifier.create(c.write(peer.remote(), 0, peer.local(), 0, 64)).expectComplete());
            }
            // Counted after the batch's sinks ran: the last write's signal can come first.
            assertTrue(CqfluxMetricsTest.awaitAtLeast(() -> peer.client().loopStats().getFirst().completions(), 10)
                    >= 10);
        }
    }

    @Test
    void subscriberCodeThatBlocksOnTheLoop_isCaught() {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection c = peer.connection();
            CqfluxTest.verify(StepVerifier.create(c.write(peer.remote(), 0, peer.local(), 0, 64)
                            .doOnSuccess(v -> sleep(10))) // on the loop thread
                    .expectError(BlockingOperationError.class));
        }
    }

    @Test
    void blockingOffTheLoop_isNotCaught() {
        sleep(1); // the test thread is an ordinary thread
        assertTrue(!(Thread.currentThread() instanceof reactor.core.scheduler.NonBlocking));
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
