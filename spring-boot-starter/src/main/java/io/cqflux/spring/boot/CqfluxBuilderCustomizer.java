package io.cqflux.spring.boot;

import io.cqflux.reactor.Cqflux;

/**
 * Customizes the auto-configured {@link Cqflux} beyond what {@code cqflux.*} properties set:
 * declare beans of this type; they run in their {@code @Order}, after the properties are applied.
 */
@FunctionalInterface
public interface CqfluxBuilderCustomizer {

    /**
     * Customizes the builder.
     *
     * @param builder the builder, with the {@code cqflux.*} properties applied
     */
    void customize(Cqflux.Builder builder);
}
