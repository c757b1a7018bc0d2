package io.cqflux.spring.boot.metrics;

import io.cqflux.micrometer.CqfluxMetrics;
import io.cqflux.reactor.Cqflux;
import io.cqflux.spring.boot.CqfluxAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Binds cqflux's meters ({@code cqflux.loop.*}, {@code cqflux.connection.*}, the
 * {@code cqflux.operation} timer: see {@link CqfluxMetrics}) to the application's Micrometer
 * registry, when {@code cqflux-micrometer} is on the class path and a {@link MeterRegistry} bean
 * exists (Spring Boot's actuator makes one). Spring Boot binds every {@code MeterBinder} bean to
 * its registries; the binder is closed, and its meters removed, with the context.
 */
@AutoConfiguration(after = CqfluxAutoConfiguration.class, afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration" })
@ConditionalOnClass({ MeterRegistry.class, CqfluxMetrics.class })
@ConditionalOnBean({ Cqflux.class, MeterRegistry.class })
public class CqfluxMetricsAutoConfiguration {

    /** Created by Spring. */
    public CqfluxMetricsAutoConfiguration() {
    }

    /**
     * The meter binder of the auto-configured instance.
     *
     * @param cqflux the instance
     * @return the binder
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public CqfluxMetrics cqfluxMetrics(Cqflux cqflux) {
        return new CqfluxMetrics(cqflux);
    }
}
