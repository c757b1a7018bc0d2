/**
 * The event loop: one thread per {@link io.cqflux.epoll.loop.EventLoop} sleeps in
 * {@code epoll_wait} on the file descriptors of completion queues and other pollable sources
 * (connection event channels, listeners), drains completion queues in batches into their sinks,
 * and runs tasks that other threads hand over. Exported only to the project's own modules
 * ({@code exports ... to io.cqflux.reactor}); users configure a loop through
 * {@link io.cqflux.epoll.WaitStrategy} and read it through {@link io.cqflux.epoll.LoopStats}.
 * Knows nothing of Reactor.
 */
package io.cqflux.epoll.loop;
