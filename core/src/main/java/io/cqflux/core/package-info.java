/**
 * The transport-neutral model of cqflux: completions (a flyweight view with an immutable
 * snapshot), operation kinds and statuses, region access rights, connection configuration and
 * events, and the sealed exception hierarchy rooted at {@link io.cqflux.core.CqfluxException}.
 *
 * <p>Nothing here knows Reactor or the event loop; the transport SPI is in
 * {@link io.cqflux.core.spi}, the native transports in {@code io.cqflux.transport.rpma} and
 * {@code io.cqflux.transport.fabric}.
 */
package io.cqflux.core;
