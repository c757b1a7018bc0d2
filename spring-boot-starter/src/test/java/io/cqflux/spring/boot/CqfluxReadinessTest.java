package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.test.CqfluxTest;
import io.cqflux.test.LoopbackPeer;
import java.time.Duration;
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
