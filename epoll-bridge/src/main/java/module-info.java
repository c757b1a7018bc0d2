/**
 * cqflux epoll bridge: one event-loop thread per loop that sleeps in {@code epoll_wait} on the
 * completion queues' and event channels' file descriptors, drains completions in batches, and
 * runs tasks handed over from other threads. Knows nothing of Reactor.
 *
 * <p>Users see only {@link io.cqflux.epoll.WaitStrategy} and {@link io.cqflux.epoll.LoopStats} in
 * {@code io.cqflux.epoll}. The loop itself ({@code io.cqflux.epoll.loop}: the event loop, its epoll
 * poller, its source table, registrations and configuration) is exported only to the project's
 * reactive module, which owns every loop it starts; the libc bindings ({@code io.cqflux.epoll.ffm})
 * are not exported at all.
 */
// "module": the qualified export names io.cqflux.reactor, which is built after this module, so
// javac cannot find it here (JLS 7.7.2 allows that; it only warns).
@SuppressWarnings("module")
module io.cqflux.epoll {
    requires transitive io.cqflux.core;

    exports io.cqflux.epoll;
    exports io.cqflux.epoll.loop to io.cqflux.reactor;
}
