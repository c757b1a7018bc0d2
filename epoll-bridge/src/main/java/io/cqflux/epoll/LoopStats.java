package io.cqflux.epoll;

/**
 * A snapshot of an event loop's counters.
 *
 * @param wakeups returns from {@code epoll_wait} with at least one ready fd
 * @param emptyWakeups wake-ups after which no completion, event or task was found (spurious)
 * @param batches native drain calls that returned at least one completion
 * @param completions completions delivered
 * @param largestBatch most completions returned by one drain call
 * @param tasks tasks run from the task queue
 */
public record LoopStats(long wakeups, long emptyWakeups, long batches, long completions, int largestBatch, long tasks) {
}
