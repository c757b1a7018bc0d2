/**
 * cqflux micrometer ({@code cqflux-micrometer}): Micrometer meters for a {@link io.cqflux.reactor.Cqflux}
 * — its event loops, its connections and its operations — under stable names, bound with
 * {@link io.cqflux.micrometer.CqfluxMetrics}; each operation as an {@code Observation} with
 * {@link io.cqflux.micrometer.CqfluxObservations}.
 */
module io.cqflux.micrometer {
    requires transitive io.cqflux.reactor;
    requires transitive micrometer.core;
    requires transitive micrometer.observation;
    requires transitive micrometer.commons;

    exports io.cqflux.micrometer;
}
