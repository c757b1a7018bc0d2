package io.cqflux.reactor;

import java.util.Objects;

/**
 * One write of a bulk {@link RdmaConnection#writeAll} stream.
 *
 * @param remote the peer's region
 * @param remoteOffset offset in it
 * @param local the local source
 * @param localOffset offset in it
 * @param length bytes, at least 1
 * @param durable whether to flush after the write ({@link RdmaConnection#durableWrite})
 */
public record WriteRequest(PeerRegion remote, long remoteOffset, Region local, long localOffset, long length,
                           boolean durable) {
    /**
     * Rejects null regions, as Java's own values do: where the value is made, before any stream
     * takes it.
     *
     * @throws NullPointerException when {@code remote} or {@code local} is null; its message is
     *     the argument's name
     */
    public WriteRequest {
        Objects.requireNonNull(remote, "remote");
        Objects.requireNonNull(local, "local");
    }
}
