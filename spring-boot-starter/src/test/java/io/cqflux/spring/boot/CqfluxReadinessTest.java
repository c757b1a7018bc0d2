package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.test.CqfluxTest;
import io.cqflux.test.LoopbackPeer;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.Region;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import reactor.core.publisher.Mono;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.availability.ApplicationAvailabilityAutoConfiguration;
import org.springframework.boot.availability.ApplicationAvailability;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class CqfluxReadinessTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ApplicationAvailabilityAutoConfiguration.class,
                    CqfluxAutoConfiguration.class))
            .withPropertyValues("cqflux.transport=fabric", "cqflux.connect-timeout=2s");

    @Test
    void requiredPeerLost_readinessRefusesTraffic() {
        LoopbackPeer server = CqfluxTest.loopback().start();
        try {
            runner.withPropertyValues("cqflux.peers.store.address=127.0.0.1",
                            "cqflux.peers.store.port=" + server.address().getPort())
                    .run(ctx -> {
                        ApplicationAvailability availability = ctx.getBean(ApplicationAvailability.class);
                        AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC); // as Boot does when ready
                        assertThat(availability.getReadinessState()).isEqualTo(ReadinessState.ACCEPTING_TRAFFIC);
                        CqfluxPeer store = ctx.getBean(CqfluxPeers.class).get("store");
                        server.close();
                        store.states().filter(s -> s == CqfluxPeer.State.DOWN).next().block(Duration.ofSeconds(10));
                        Awaitility.await().atMost(Duration.ofSeconds(10)).until(
                                () -> availability.getReadinessState() == ReadinessState.REFUSING_TRAFFIC);
                    });
        } finally {
            server.close();
        }
    }

    @Test
    void requiredPeerBack_readinessAcceptsTrafficAgain_andOperationsGoThrough() throws Exception {
        int port;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        runner.withPropertyValues("cqflux.peers.store.address=127.0.0.1", "cqflux.peers.store.port=" + port,
                        "cqflux.peers.store.min-backoff=50ms", "cqflux.peers.store.max-backoff=200ms")
                .run(ctx -> {
                    ApplicationAvailability availability = ctx.getBean(ApplicationAvailability.class);
                    CqfluxPeer store = ctx.getBean(CqfluxPeers.class).get("store");
                    AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC);
                    Awaitility.await().atMost(Duration.ofSeconds(10)).until(
                            () -> availability.getReadinessState() == ReadinessState.REFUSING_TRAFFIC);
                    try (Arena arena = Arena.ofShared();
                         Cqflux server = Cqflux.builder().transport("fabric").threadNamePrefix("late-server").build()) {
                        Region exposed = server.register(arena.allocate(4096), RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
                        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), c -> c.onDispose(), exposed)
                                .block(Duration.ofSeconds(10));
                        store.awaitAvailable(Duration.ofSeconds(10)).block(Duration.ofSeconds(15));
                        Awaitility.await().atMost(Duration.ofSeconds(10)).until(
                                () -> availability.getReadinessState() == ReadinessState.ACCEPTING_TRAFFIC);
                        assertThat(store.withConnection(c -> Mono.just(c.remoteRegion(0).size()))
                                .block(Duration.ofSeconds(10))).isEqualTo(4096L);
                    }
                });
    }

    @Test
    void requiredPeerDownWhenBootDeclaresReady_readinessRefusesTraffic() {
        runner.withPropertyValues("cqflux.peers.store.address=127.0.0.1", "cqflux.peers.store.port=9")
                .run(ctx -> {
                    AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC);
                    ApplicationAvailability availability = ctx.getBean(ApplicationAvailability.class);
                    Awaitility.await().atMost(Duration.ofSeconds(10)).until(
                            () -> availability.getReadinessState() == ReadinessState.REFUSING_TRAFFIC);
                });
    }

    @Test
    void optionalPeerDown_readinessUnchanged() {
        runner.withPropertyValues("cqflux.peers.cache.address=127.0.0.1", "cqflux.peers.cache.port=9",
                        "cqflux.peers.cache.required=false")
                .run(ctx -> {
                    AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC);
                    Thread.sleep(100); // what a required peer would have changed by then
                    assertThat(ctx.getBean(ApplicationAvailability.class).getReadinessState())
                            .isEqualTo(ReadinessState.ACCEPTING_TRAFFIC);
                });
    }
}
