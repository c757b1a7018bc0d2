package io.cqflux.spring.boot.metrics;

import io.cqflux.micrometer.CqfluxObservations;
import io.cqflux.reactor.Cqflux;
import io.cqflux.spring.boot.CqfluxAutoConfiguration;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Makes every operation of the auto-configured instance a Micrometer {@code Observation}
 * ({@link CqfluxObservations}: {@code cqflux.rdma.operation}, the child of the request's), when
 * {@code cqflux.observations.enabled=true}, {@code cqflux-micrometer} is on the class path and an
 * {@link ObservationRegistry} bean exists (Spring Boot's actuator makes one).
 *
 * <p>Off by default: an observation per operation is an allocation and the registry's handlers on
 * every operation, on the event loop for its end, which an application asks for rather than gets.
 */
@AutoConfiguration(after = CqfluxAutoConfiguration.class, afterName =
        "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass({ ObservationRegistry.class, CqfluxObservations.class })
@ConditionalOnBean({ Cqflux.class, ObservationRegistry.class })
@ConditionalOnProperty(name = "cqflux.observations.enabled", havingValue = "true")
public class CqfluxObservationAutoConfiguration {

    /** Created by Spring. */
    public CqfluxObservationAutoConfiguration() {
    }

    /**
     * The observations of the auto-configured instance.
     *
     * @param cqflux the instance
     * @param registry the application's observation registry
     * @return the listener, closed with the context
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public CqfluxObservations cqfluxObservations(Cqflux cqflux, ObservationRegistry registry) {
        return new CqfluxObservations(cqflux, registry);
    }
}
