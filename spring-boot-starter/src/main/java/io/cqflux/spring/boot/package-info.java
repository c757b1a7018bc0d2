/**
 * The cqflux Spring Boot starter: {@code cqflux.*} properties ({@link io.cqflux.spring.boot.CqfluxProperties}),
 * the auto-configured {@link io.cqflux.reactor.Cqflux} and named peers
 * ({@link io.cqflux.spring.boot.CqfluxPeers}), readiness tied to the peers, a failure analyzer for
 * an unavailable transport, and a lifecycle that drains in-flight operations after the web server's
 * graceful shutdown.
 */
package io.cqflux.spring.boot;
