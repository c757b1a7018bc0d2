/**
 * One server's state behind {@link io.cqflux.reactor.RdmaServer}: its bind and listener, and each
 * request's way from there to a connection (the admission's limits and counters, the
 * authenticator's questions, the accept with the connection's own exposures and control words,
 * and the outlet that hands the connection to the handler or to {@code connections()}).
 * Internal: exported to no module, and the loop-thread rules stated on each class hold for every
 * caller.
 */
package io.cqflux.reactor.internal.server;
