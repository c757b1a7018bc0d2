/**
 * Micrometer meters for cqflux: {@link io.cqflux.micrometer.CqfluxMetrics}, a {@code MeterBinder}
 * whose class javadoc lists every meter, its type, unit and tags; and
 * {@link io.cqflux.micrometer.CqfluxObservations}, an {@code Observation} per operation, whose class
 * javadoc lists its conventions.
 */
package io.cqflux.micrometer;
