package io.cqflux.spring.boot.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.micrometer.CqfluxMetrics;
import io.cqflux.spring.boot.CqfluxAutoConfiguration;
import io.cqflux.spring.boot.CqfluxPeers;
import io.cqflux.test.CqfluxTest;
import io.cqflux.test.LoopbackPeer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.publisher.Mono;

class CqfluxMetricsAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class, CqfluxMetricsAutoConfiguration.class))
            .withPropertyValues("cqflux.transport=fabric");

    @Test
    void withBootsMeterRegistry_cqfluxMetersAreBound_includingPerConnectionAndOperationMeters() {
        try (LoopbackPeer server = CqfluxTest.loopback().start()) {
            runner.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                            SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class))
                    .withPropertyValues("cqflux.peers.store.address=127.0.0.1",
                            "cqflux.peers.store.port=" + server.address().getPort())
                    .run(ctx -> {
                        assertThat(ctx).hasSingleBean(CqfluxMetrics.class);
                        MeterRegistry registry = ctx.getBean(MeterRegistry.class);
                        assertThat(registry.find("cqflux.loop.wakeups").meters()).isNotEmpty();
                        ctx.getBean(CqfluxPeers.class).get("store")
                                .withConnection(c -> c.read(c.remoteRegion(0), 0, 16).then(Mono.just(1)))
                                .block(Duration.ofSeconds(10));
                        assertThat(registry.find("cqflux.connection.credits.max").meters()).isNotEmpty();
                        assertThat(registry.find("cqflux.operation").tag("outcome", "success").timers()).isNotEmpty();
                    });
        }
    }

    @Test
    void withoutAMeterRegistry_noBinder() {
        runner.run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(CqfluxMetrics.class));
    }

    @Test
    void applicationsOwnRegistryBean_isUsed() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(ctx -> {
            CqfluxMetrics metrics = ctx.getBean(CqfluxMetrics.class);
            metrics.bindTo(ctx.getBean(MeterRegistry.class)); // outside Boot's post-processor, bind by hand
            assertThat(ctx.getBean(MeterRegistry.class).find("cqflux.loop.completions").meters()).isNotEmpty();
        });
    }
}
