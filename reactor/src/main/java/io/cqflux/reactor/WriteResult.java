package io.cqflux.reactor;

/**
 * The outcome of one {@link WriteRequest}: emitted once the write (and, if durable, its flush)
 * completed successfully. A failed write fails the stream instead.
 *
 * @param request the request
 * @param sequence its position in the stream, from 0
 */
public record WriteResult(WriteRequest request, long sequence) {
}
