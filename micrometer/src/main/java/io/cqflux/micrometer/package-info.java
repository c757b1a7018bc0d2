/**
 * Micrometer meters for cqflux: {@link io.cqflux.micrometer.CqfluxMetrics}, a {@code MeterBinder}
 * whose class javadoc lists every meter, its type, unit and tags.
 */
package io.cqflux.micrometer;
