/**
 * Micrometer support of the cqflux starter: the {@code cqflux-micrometer} meter binder of the
 * auto-configured instance, bound to the application's registries, and on request
 * ({@code cqflux.observations.enabled}) an {@code Observation} per operation.
 */
package io.cqflux.spring.boot.metrics;
