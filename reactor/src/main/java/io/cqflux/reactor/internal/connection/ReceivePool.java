package io.cqflux.reactor.internal.connection;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.Registrar;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;

/**
 * A receive pool made before its connection exists, for receives posted before a server
 * accepts ({@code rpma_conn_req_recv(3)}), or by the {@link Receiver} itself on its first
 * subscription. Closed by its receiver once adopted; by its creator if the accept fails. Its free
 * buffers are the receiver's to take and give back, on the connection's loop.
 */
public final class ReceivePool {
    final Arena arena;
    final LocalRegion region;
    final int bufferSize;
    int posted;
    private final ReceiveBuffer[] buffers;
    /** The indexes of the free buffers, a stack whose top is {@code free[freeTop - 1]}. */
    private final int[] free;
    private int freeTop;

    private ReceivePool(Arena arena, LocalRegion region, int count, int bufferSize) {
        this.arena = arena;
        this.region = region;
        this.bufferSize = bufferSize;
        buffers = new ReceiveBuffer[count];
        free = new int[count];
        for (int i = 0; i < count; i++) {
            buffers[i] = new ReceiveBuffer(i, region, (long) i * bufferSize);
            free[i] = count - 1 - i;
        }
        freeTop = count;
    }

    /**
     * Allocates {@code count} buffers of {@code bufferSize} bytes in one shared arena and
     * registers them for receives; the memory is freed again when the registration fails.
     *
     * @param t where to register: the transport, or a scoped connection's key scope
     * @return the pool, with nothing posted
     */
    public static ReceivePool allocate(Registrar t, int count, int bufferSize) {
        Arena a = io.cqflux.core.internal.DeferredArena.ofShared(); // closed after the deregistration: DeferredArena
        try {
            MemorySegment mem = a.allocate((long) count * bufferSize, 64);
            return new ReceivePool(a, t.register(mem, EnumSet.of(RegionAccess.RECV)), count, bufferSize);
        } catch (OutOfMemoryError e) {
            // Native memory refused: the receiver refuses what needed it (its subscriber's error,
            // the prefetch's end of the connection); a loop thread must not end on it, since its
            // lifecycle treats errors as fatal (as SharedReceivePool's growth does).
            a.close();
            throw new IllegalStateException("the receive pool of " + count + " buffers of " + bufferSize
                    + " bytes (receiveQueueSize x receiveBufferSize) could not be allocated: " + e.getMessage(), e);
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

    /**
     * Hands the receives posted before the accept ({@link #postBeforeAccept}) to the connection's
     * in-flight table, with the contexts {@link InFlightTable#freshContext} names: the table must
     * hand out exactly those now, before anything else was posted. Before the connection starts.
     *
     * @param q the connection's send queue, whose table the contexts come from
     * @return how many receives are posted
     * @throws IllegalStateException when the table hands out other contexts (a bookkeeping bug)
     */
    int handOver(SendQueue q) {
        for (int i = 0; i < posted; i++) {
            ReceiveBuffer b = take();
            long ctx = q.acquireReceiveContext(b);
            if (b.index != i || ctx != InFlightTable.freshContext(i)) {
                throw new IllegalStateException("receive " + i + " posted before the accept has context 0x"
                        + Long.toHexString(InFlightTable.freshContext(i)) + " in buffer " + i + ", but the table gave 0x"
                        + Long.toHexString(ctx) + " for buffer " + b.index);
            }
        }
        return posted;
    }

    /**
     * {@return a free buffer, taken, or null} Buffer 0 first, then 1 and so on, so that the
     * receives posted before the accept are taken again in order ({@link #handOver}).
     */
    ReceiveBuffer take() {
        return freeTop > 0 ? buffers[free[--freeTop]] : null;
    }

    /**
     * Gives a buffer back.
     *
     * @param b the buffer, no longer posted nor holding anything undelivered
     */
    void give(ReceiveBuffer b) {
        free[freeTop++] = b.index;
    }

    /** {@return whether no buffer is free} */
    boolean exhausted() {
        return freeTop == 0;
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
