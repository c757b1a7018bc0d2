/**
 * The cqflux Spring Boot starter: {@code cqflux.*} properties ({@link io.cqflux.spring.boot.CqfluxProperties}
 * and its groups' classes), the auto-configured {@link io.cqflux.reactor.Cqflux} and named peers
 * ({@link io.cqflux.spring.boot.CqfluxPeers}), readiness tied to the peers, a failure analyzer for
 * an unavailable transport, and an orderly shutdown: in a reactive web application a request gate
 * ({@link io.cqflux.spring.boot.CqfluxRequestGate}, {@link io.cqflux.spring.boot.CqfluxRequestGateFilter})
 * refuses new requests with a 503 once the application is shutting down, and the lifecycle
 * ({@link io.cqflux.spring.boot.CqfluxLifecycle}) drains the peers only after the requests in
 * progress and the in-flight operations have ended.
 */
package io.cqflux.spring.boot;
