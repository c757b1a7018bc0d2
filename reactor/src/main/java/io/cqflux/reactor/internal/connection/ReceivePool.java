package io.cqflux.reactor.internal.connection;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.Transport;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;

/**
 * A receive pool made before its connection exists, for receives posted before a server
 * accepts ({@code rpma_conn_req_recv(3)}), or by the {@link Receiver} itself on its first
 * subscription. Closed by its receiver once adopted; by its creator if the accept fails.
 */
public final class ReceivePool {
    final Arena arena;
    final LocalRegion region;
    final int bufferSize;
    int posted;

    private ReceivePool(Arena arena, LocalRegion region, int bufferSize) {
        this.arena = arena;
        this.region = region;
        this.bufferSize = bufferSize;
    }

    /**
     * Allocates {@code count} buffers of {@code bufferSize} bytes in one shared arena and
     * registers them for receives; the memory is freed again when the registration fails.
     *
     * @return the pool, with nothing posted
     */
    public static ReceivePool allocate(Transport t, int count, int bufferSize) {
        Arena a = io.cqflux.core.internal.DeferredArena.ofShared(); // closed after the deregistration: DeferredArena
        try {
            MemorySegment mem = a.allocate((long) count * bufferSize, 64);
            return new ReceivePool(a, t.register(mem, EnumSet.of(RegionAccess.RECV)), bufferSize);
        } catch (RuntimeException | Error e) {
            a.close();
            throw e;
        }
    }

    /**
     * Posts up to {@code n} receives on a request before it is accepted, in buffers 0.. with
     * the contexts a new in-flight table hands out first.
     *
     * @return how many were posted: 0 where the transport cannot post before accepting
     */
    public int postBeforeAccept(ConnectionRequest req, int n) {
        while (posted < n && req.receiveBeforeAccept(region, (long) posted * bufferSize, bufferSize,
                InFlightTable.freshContext(posted))) {
            posted++;
        }
        return posted;
    }

    /** Frees it (the accept failed: its receives went with the request). */
    public void close() {
        try {
            region.close();
        } finally {
            arena.close();
        }
    }
}
