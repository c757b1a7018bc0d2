/**
 * The event loop: one thread per {@link io.cqflux.epoll.EventLoop} sleeps in {@code epoll_wait} on
 * the file descriptors of completion queues and other pollable sources (connection event
 * channels, listeners), drains completion queues in batches into their sinks, and runs tasks that
 * other threads hand over. {@link io.cqflux.epoll.WaitStrategy} chooses between sleeping, busy
 * polling and an adaptive mix; {@link io.cqflux.epoll.LoopStats} counts wake-ups, batches and
 * tasks. Knows nothing of Reactor.
 */
package io.cqflux.epoll;
