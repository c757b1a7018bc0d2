package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.core.Opcode;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.Region;
import io.cqflux.test.CqfluxTest;
import io.cqflux.test.Faults;
import io.cqflux.test.LoopbackPeer;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.web.server.context.WebServerGracefulShutdownLifecycle;

class CqfluxLifecycleTest {

    @Test
    void phase_stopsAfterTheWebServersGracefulShutdownAndStop() {
        // Lower phases stop later: graceful shutdown (MAX - 1024), then the server's stop (MAX - 2048).
        assertThat(CqfluxLifecycle.PHASE).isLessThan(WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE - 1024);
    }

    @Test
    void stopIsFinal_aStartAfterItIsRefused_andTheLifecycleSaysItIsNotRunning() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class))
                .withPropertyValues("cqflux.transport=fabric")
                .run(ctx -> {
                    CqfluxLifecycle lc = ctx.getBean(CqfluxLifecycle.class);
                    lc.stop();
                    assertThat(lc.isRunning()).isFalse();
                    assertThat(ctx.getBean(Cqflux.class).isDisposed()).isTrue();
                    org.assertj.core.api.Assertions.assertThatThrownBy(lc::start)
                            .isInstanceOf(IllegalStateException.class).hasMessageContaining("cannot start again");
                    assertThat(lc.isRunning()).isFalse();
                });
    }

    @Test
    void anApplicationsOwnPeers_replaceTheStartersAndAreConnectedAndDrainedByTheLifecycle() {
        try (LoopbackPeer server = CqfluxTest.loopback().start()) {
            Cqflux[] cq = new Cqflux[1];
            CqfluxPeer[] peer = new CqfluxPeer[1];
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class))
                    .withPropertyValues("cqflux.transport=fabric")
                    .withUserConfiguration(OwnPeers.class)
                    .withBean(java.net.InetSocketAddress.class, server::address)
                    .run(ctx -> {
                        assertThat(ctx).hasNotFailed().hasSingleBean(CqfluxPeers.class);
                        cq[0] = ctx.getBean(Cqflux.class);
                        peer[0] = ctx.getBean(CqfluxPeers.class).get("own");
                        peer[0].awaitAvailable(Duration.ofSeconds(10)).block(Duration.ofSeconds(15));
                        assertThat(peer[0].withConnection(c -> reactor.core.publisher.Mono.just(c.remoteRegions().size()))
                                .block(Duration.ofSeconds(10))).isEqualTo(1);
                    });
            assertThat(peer[0].state()).isEqualTo(CqfluxPeer.State.CLOSED);
            assertThat(cq[0].isDisposed()).isTrue();
        }
    }

    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    static class OwnPeers {
        @org.springframework.context.annotation.Bean
        CqfluxPeers ownPeers(Cqflux cqflux, java.net.InetSocketAddress address) {
            return CqfluxPeers.of(CqfluxPeer.pooled("own", cqflux, address, true,
                    io.cqflux.reactor.PeerPoolOptions.defaults()));
        }
    }

    @Test
    void awaitAvailable_beforeTheContextStarts_waitsForTheStart_insteadOfCompleting() throws Exception {
        Cqflux cq = Cqflux.builder().transport("fabric").build();
        try {
            CqfluxPeer p = CqfluxPeer.pooled("early", cq, new java.net.InetSocketAddress("127.0.0.1", 9), true,
                    io.cqflux.reactor.PeerPoolOptions.defaults());
            assertThat(p.state()).isEqualTo(CqfluxPeer.State.CONNECTING);
            org.assertj.core.api.Assertions.assertThatThrownBy(
                            () -> p.awaitAvailable(Duration.ofMillis(300)).block(Duration.ofSeconds(5)))
                    .hasCauseInstanceOf(java.util.concurrent.TimeoutException.class);
            assertThat(p.states().take(Duration.ofMillis(200)).collectList().block(Duration.ofSeconds(5)))
                    .containsExactly(CqfluxPeer.State.CONNECTING);
            // Still waiting when the instance is disposed without a start: it ends, CLOSED.
            java.util.concurrent.CompletableFuture<java.util.List<CqfluxPeer.State>> seen =
                    p.states().collectList().toFuture();
            cq.disposeNow(Duration.ofSeconds(10));
            assertThat(seen.get(5, java.util.concurrent.TimeUnit.SECONDS))
                    .containsExactly(CqfluxPeer.State.CONNECTING, CqfluxPeer.State.CLOSED);
            assertThat(p.state()).isEqualTo(CqfluxPeer.State.CLOSED);
            // Closed before it was up: an error, not a completion that would say it is up.
            org.assertj.core.api.Assertions.assertThatThrownBy(
                            () -> p.awaitAvailable(Duration.ofSeconds(5)).block(Duration.ofSeconds(10)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed before it was up");
        } finally {
            cq.disposeNow(Duration.ofSeconds(10));
        }
    }

    @Test
    void awaitAvailable_subscribedBeforeTheStart_completesOnceTheStartedPeerIsUp() throws Exception {
        Cqflux cq = Cqflux.builder().transport("fabric").build();
        try (LoopbackPeer server = CqfluxTest.loopback().start()) {
            CqfluxPeer p = CqfluxPeer.pooled("early", cq, server.address(), true,
                    io.cqflux.reactor.PeerPoolOptions.defaults());
            java.util.concurrent.CompletableFuture<Void> up = p.awaitAvailable(Duration.ofSeconds(10)).toFuture();
            Thread.sleep(100);
            assertThat(up).isNotDone();
            p.link().start();
            up.get(15, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(p.state()).isEqualTo(CqfluxPeer.State.UP);
            p.link().close().block(Duration.ofSeconds(10));
        } finally {
            cq.disposeNow(Duration.ofSeconds(10));
        }
    }

    @Test
    void stop_drainsAnInFlightDurableWriteBeforeDisposing() {
        Faults faults = Faults.create();
        try (LoopbackPeer server = CqfluxTest.loopback().start(); Arena arena = Arena.ofShared()) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class))
                    .withPropertyValues("cqflux.transport=faulty", "cqflux.transport-properties[faulty.id]=" + faults.id(),
                            "cqflux.peers.store.address=127.0.0.1", "cqflux.peers.store.port=" + server.address().getPort(),
                            "cqflux.shutdown-timeout=10s")
                    .run(ctx -> {
                        Cqflux cq = ctx.getBean(Cqflux.class);
                        CqfluxPeer store = ctx.getBean(CqfluxPeers.class).get("store");
                        Region src = cq.register(arena.allocate(64), RegionAccess.WRITE_SRC);
                        faults.on(Opcode.FLUSH).once().delay(Duration.ofSeconds(2)); // wide: seen in flight before it lands
                        AtomicReference<String> outcome = new AtomicReference<>();
                        store.withConnection(c -> c.durableWrite(c.remoteRegion(0), 0, src, 0, 64))
                                .subscribe(v -> { }, e -> outcome.set("failed: " + e), () -> outcome.set("completed"));
                        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                                .until(() -> store.inFlight() > 0);
                        long t0 = System.nanoTime();
                        ctx.getBean(CqfluxLifecycle.class).stop();
                        assertThat(outcome.get()).isEqualTo("completed");
                        assertThat(cq.isDisposed()).isTrue();
                        assertThat(store.state()).isEqualTo(CqfluxPeer.State.CLOSED);
                        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
                    });
        }
    }

    @Test
    void stop_pastTheBudget_failsWhatIsLeftInsteadOfHanging() {
        Faults faults = Faults.create();
        try (LoopbackPeer server = CqfluxTest.loopback().start(); Arena arena = Arena.ofShared()) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class))
                    .withPropertyValues("cqflux.transport=faulty", "cqflux.transport-properties[faulty.id]=" + faults.id(),
                            "cqflux.peers.store.address=127.0.0.1", "cqflux.peers.store.port=" + server.address().getPort(),
                            "cqflux.shutdown-timeout=1s")
                    .run(ctx -> {
                        Cqflux cq = ctx.getBean(Cqflux.class);
                        CqfluxPeer store = ctx.getBean(CqfluxPeers.class).get("store");
                        Region src = cq.register(arena.allocate(64), RegionAccess.WRITE_SRC);
                        faults.on(Opcode.FLUSH).once().hang();
                        AtomicReference<Throwable> error = new AtomicReference<>();
                        store.withConnection(c -> c.durableWrite(c.remoteRegion(0), 0, src, 0, 64))
                                .subscribe(v -> { }, error::set);
                        ctx.getBean(CqfluxLifecycle.class).stop();
                        assertThat(cq.isDisposed()).isTrue();
                        // Failed within the budget (ConnectionException or ResourceClosedException), never left pending.
                        reactor.core.publisher.Mono.fromCallable(error::get).repeatWhenEmpty(f -> f.delayElements(Duration.ofMillis(10)))
                                .block(Duration.ofSeconds(10));
                        assertThat(error.get()).isInstanceOf(io.cqflux.core.CqfluxException.class);
                    });
        }
    }
}
