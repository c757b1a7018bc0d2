package io.cqflux.reactor;

import java.util.Objects;

/**
 * The outcome of one {@link WriteRequest}: emitted once the write (and, if durable, its flush)
 * completed successfully. A failed write fails the stream instead.
 *
 * @param request the request
 * @param sequence its position in the stream, from 0
 */
public record WriteResult(WriteRequest request, long sequence) {
    /**
     * Rejects a null request, as {@link WriteRequest} rejects its null regions.
     *
     * @throws NullPointerException when {@code request} is null; its message is the argument's name
     */
    public WriteResult {
        Objects.requireNonNull(request, "request");
    }
}
