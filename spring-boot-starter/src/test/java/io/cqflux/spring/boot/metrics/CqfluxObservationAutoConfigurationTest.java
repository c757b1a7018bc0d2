package io.cqflux.spring.boot.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.micrometer.CqfluxObservations;
import io.cqflux.spring.boot.CqfluxAutoConfiguration;
import io.cqflux.spring.boot.CqfluxPeers;
import io.cqflux.test.CqfluxTest;
import io.cqflux.test.LoopbackPeer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.publisher.Mono;

class CqfluxObservationAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class,
                    CqfluxObservationAutoConfiguration.class))
            .withPropertyValues("cqflux.transport=fabric");

    @Test
    void withoutTheProperty_noObservations_evenWithARegistry() {
        runner.withBean(ObservationRegistry.class, ObservationRegistry::create)
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(CqfluxObservations.class));
    }

    /** The property is the observations' own, whichever instance the context holds: the guard does not count it. */
    @Test
    void enabled_besideTheApplicationsOwnInstance_observesThatInstance() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class,
                        CqfluxObservationAutoConfiguration.class))
                .withBean("cqflux", io.cqflux.reactor.Cqflux.class,
                        () -> io.cqflux.reactor.Cqflux.builder().transport("fabric").loops(1).build())
                .withBean(ObservationRegistry.class, ObservationRegistry::create)
                .withPropertyValues("cqflux.observations.enabled=true", "cqflux.readiness=false")
                .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(CqfluxObservations.class));
    }

    @Test
    void enabled_withoutARegistry_noObservations() {
        runner.withPropertyValues("cqflux.observations.enabled=true")
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(CqfluxObservations.class));
    }

    @Test
    void enabled_eachOperationOfThePeersReachesTheRegistry() {
        List<String> stopped = new CopyOnWriteArrayList<>();
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public void onStop(Observation.Context context) {
                stopped.add(context.getName() + " " + context.getLowCardinalityKeyValue("kind").getValue());
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }
        });
        try (LoopbackPeer server = CqfluxTest.loopback().start()) {
            runner.withBean(ObservationRegistry.class, () -> registry)
                    .withPropertyValues("cqflux.observations.enabled=true", "cqflux.peers.store.address=127.0.0.1",
                            "cqflux.peers.store.port=" + server.address().getPort())
                    .run(ctx -> {
                        assertThat(ctx).hasSingleBean(CqfluxObservations.class);
                        ctx.getBean(CqfluxPeers.class).get("store")
                                .withConnection(c -> c.read(c.remoteRegion(0), 0, 16).then(Mono.just(1)))
                                .block(Duration.ofSeconds(10));
                        assertThat(stopped).containsExactly(CqfluxObservations.NAME + " read");
                    });
        }
    }
}
