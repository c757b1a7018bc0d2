package io.cqflux.reactor.internal.connection;

import java.time.Duration;

/**
 * The per-connection limits a {@link io.cqflux.reactor.Cqflux} applies.
 *
 * @param pendingLimit operations that may wait for a credit
 * @param receiveBufferSize bytes per receive buffer
 * @param notificationBacklog notifications kept for an absent receiver
 * @param operationTimeout how long a posted operation may go without a completion
 * @param blockSpinNanos how long an operation's {@code block()} spins before it parks, 0 for
 *     not at all ({@link io.cqflux.reactor.Cqflux.Builder#blockSpin})
 * @param keepAliveInterval the keep-alive's interval, {@link Duration#ZERO} for none
 *     ({@link io.cqflux.reactor.Cqflux.Builder#keepAlive})
 * @param keepAliveMisses intervals without a sign of life before a connection ends LOST
 */
public record Limits(int pendingLimit, int receiveBufferSize, int notificationBacklog, Duration operationTimeout,
                     long blockSpinNanos, Duration keepAliveInterval, int keepAliveMisses) {
}
