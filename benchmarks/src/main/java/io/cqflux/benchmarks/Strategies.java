package io.cqflux.benchmarks;

import io.cqflux.epoll.WaitStrategy;

/** Maps the {@code @Param} names the benchmarks use to wait strategies. */
final class Strategies {

    /**
     * Spin budget of the ADAPTIVE parameter: empty rounds before the loop sleeps. A round with a
     * fabric CQ costs a few microseconds ({@code fi_cq_read} drives the tcp provider's progress,
     * a non-blocking poll of its sockets), so 100 rounds spin for a few hundred microseconds:
     * longer than one operation's round trip, short enough to let an idle loop sleep.
     */
    static final int ADAPTIVE_SPINS = 100;

    private Strategies() {
    }

    /**
     * @param name {@code BLOCKING}, {@code BUSY_POLL} or {@code ADAPTIVE}
     * @return the strategy
     */
    static WaitStrategy of(String name) {
        return switch (name) {
            case "BLOCKING" -> WaitStrategy.BLOCKING;
            case "BUSY_POLL" -> WaitStrategy.BUSY_POLL;
            case "ADAPTIVE" -> WaitStrategy.adaptive(ADAPTIVE_SPINS);
            default -> throw new IllegalArgumentException("wait strategy " + name
                    + " is not one of BLOCKING, BUSY_POLL, ADAPTIVE");
        };
    }
}
