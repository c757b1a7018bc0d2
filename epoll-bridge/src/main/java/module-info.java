/**
 * cqflux epoll bridge: one event-loop thread per loop that sleeps in {@code epoll_wait} on the
 * completion queues' and event channels' file descriptors, drains completions in batches, and
 * runs tasks handed over from other threads. Knows nothing of Reactor.
 */
module io.cqflux.epoll {
    requires transitive io.cqflux.core;
    requires java.logging;

    exports io.cqflux.epoll;
}
