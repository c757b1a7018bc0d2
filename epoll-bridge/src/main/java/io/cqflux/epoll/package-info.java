/**
 * What users of cqflux see of the event loop: {@link io.cqflux.epoll.WaitStrategy} chooses
 * between sleeping in {@code epoll_wait}, busy polling and an adaptive mix, and
 * {@link io.cqflux.epoll.LoopStats} counts a loop's wake-ups, batches and tasks. The loop itself
 * lives in {@code io.cqflux.epoll.loop}, which the module exports only to the project's reactive
 * module. Knows nothing of Reactor.
 */
package io.cqflux.epoll;
