/**
 * The Reactor operators behind the public Monos and Fluxes: one fused Mono per posted operation,
 * operations staged behind a pooled buffer, the windowed {@code writeAll}, the receive stream,
 * and the blocking and hand-over wrappers. Internal: exported to no module.
 */
package io.cqflux.reactor.internal.op;
