/**
 * One connection's state behind {@link io.cqflux.reactor.RdmaConnection}: its lifecycle and end,
 * the intake of the transport's events and the handshake, the send queue and credits, the
 * in-flight table and completion dispatch, deadlines and the keep-alive (timers of the loop's
 * heap), the receiver (its buffers, from a pool of its own or a share of a server's, its backlog
 * and leftovers, its one subscriber), the peer's control words, the checks that end a peer
 * breaking their protocol, the hello, and the monitoring side (events, completions, metrics).
 * Internal: exported to no module, and the loop-thread rules stated on each class hold for every
 * caller.
 */
package io.cqflux.reactor.internal.connection;
