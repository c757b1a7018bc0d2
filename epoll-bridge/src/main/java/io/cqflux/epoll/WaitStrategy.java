package io.cqflux.epoll;

/**
 * How an event loop waits for completions.
 *
 * <ul>
 *   <li>{@link #BLOCKING}: arm and sleep in {@code epoll_wait} as soon as there is nothing to do;
 *       lowest CPU, highest latency.</li>
 *   <li>{@link #BUSY_POLL}: never sleep; poll every queue continuously (one core per loop).</li>
 *   <li>{@link #adaptive(int)}: poll for a budget of empty rounds, then arm and sleep.</li>
 * </ul>
 *
 * <p>Where polling a queue costs system calls (libfabric 1.17's tcp provider) and a loop has
 * several such queues, a spinning round (BUSY_POLL, or adaptive while it spins) leaves the idle
 * ones to one {@code epoll_wait(0)} per round, once their {@code fi_trywait(3)} said their fds
 * will signal what comes.
 */
public sealed interface WaitStrategy {

    /** Sleep in epoll whenever idle. */
    WaitStrategy BLOCKING = new Blocking();

    /** Never sleep. */
    WaitStrategy BUSY_POLL = new BusyPoll();

    /**
     * Busy-polls for up to {@code spins} consecutive empty rounds, then sleeps until woken; once
     * woken (by a task, a completion, or any readable fd, even one whose poll finds no
     * completion: the passive side of a libfabric tcp read or write) it spins again.
     *
     * @param spins empty polling rounds before sleeping, at least 1
     * @return the adaptive strategy
     */
    static WaitStrategy adaptive(int spins) {
        return new Adaptive(spins);
    }

    /** Sleep whenever idle. */
    record Blocking() implements WaitStrategy {
        @Override
        public String toString() {
            return "BLOCKING";
        }
    }

    /** Never sleep. */
    record BusyPoll() implements WaitStrategy {
        @Override
        public String toString() {
            return "BUSY_POLL";
        }
    }

    /**
     * Poll, then sleep.
     *
     * @param spins empty rounds before sleeping
     */
    record Adaptive(int spins) implements WaitStrategy {
        /** Validates the budget. */
        public Adaptive {
            if (spins < 1) {
                throw new IllegalArgumentException("adaptive spin budget " + spins + " must be at least 1");
            }
        }

        @Override
        public String toString() {
            return "ADAPTIVE(" + spins + ")";
        }
    }
}
