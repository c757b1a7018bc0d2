package io.cqflux.benchmarks;

import io.cqflux.epoll.WaitStrategy;

/** Maps the {@code @Param} names the benchmarks use to wait strategies. */
final class Strategies {

    /**
     * Spin budget of the ADAPTIVE parameter: empty rounds before the loop sleeps; the samples'
     * default. It must outlast one operation's round trip, or every operation pays a sleep and a
     * wake-up and ADAPTIVE measures like BLOCKING. 100 did once (a busy round asked epoll about
     * the other sources each time, a system call); since a busy round asks only every 50 µs
     * an empty round is a few hundred nanoseconds, and 100 of them end before one fabric round
     * trip of a few microseconds: ADAPTIVE then sleeps and wakes per operation.
     */
    static final int ADAPTIVE_SPINS = 1000;

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
