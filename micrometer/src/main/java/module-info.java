/**
 * cqflux micrometer ({@code cqflux-micrometer}): Micrometer meters for a {@link io.cqflux.reactor.Cqflux}
 * — its event loops, its connections and its operations — under stable names, bound with
 * {@link io.cqflux.micrometer.CqfluxMetrics}.
 */
module io.cqflux.micrometer {
    requires transitive io.cqflux.reactor;
    requires transitive micrometer.core;

    exports io.cqflux.micrometer;
}
