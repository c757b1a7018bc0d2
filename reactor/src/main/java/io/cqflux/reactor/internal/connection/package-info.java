/**
 * One connection's state behind {@link io.cqflux.reactor.RdmaConnection}: its lifecycle and end,
 * the send queue and credits, the in-flight table and completion dispatch, deadlines and the
 * keep-alive (timers of the loop's heap), the receiver, the peer's control words and the hello. Internal: exported to no module, and the
 * loop-thread rules stated on each class hold for every caller.
 */
package io.cqflux.reactor.internal.connection;
