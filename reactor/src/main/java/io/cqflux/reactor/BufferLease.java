package io.cqflux.reactor;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One registered staging buffer leased from a {@link BufferPool}: fill {@link #segment()} and hand
 * the lease to an operation ({@link RdmaConnection#write(PeerRegion, long, BufferLease, int)},
 * {@link RdmaConnection#durableWrite(PeerRegion, long, BufferLease, int)},
 * {@link RdmaConnection#send(BufferLease, int)}), which then owns it and gives it back to the pool
 * when the operation terminates at the NIC (its completion arrived, or the connection's native
 * objects were destroyed), never when its subscriber cancels. A lease not handed to an operation
 * is given back with {@link #release()}.
 *
 * <p><b>Thread safety and lifetime.</b> Thread-safe. {@link #release()} is idempotent; after it,
 * and after a hand-over, the lease's memory belongs to the pool again (or to the NIC) and must not
 * be touched. The memory stays valid until the pool's {@link Cqflux} is disposed and the region
 * deregistered.
 */
public final class BufferLease {
    private static final int HELD = 0;
    private static final int HANDED = 1;
    private static final int RELEASED = 2;

    private final BufferPool pool;
    private final int slot;
    private final MemorySegment segment;
    /**
     * The pool's region, given by the grant (under the pool's lock, while the pool was open), so
     * that an operation made of the lease after the pool closed still names its region and fails
     * cleanly on its closed state ({@link Region#acquire}) instead of on the pool's.
     */
    private final Region region;
    private final AtomicInteger state = new AtomicInteger(HELD);

    BufferLease(BufferPool pool, int slot, MemorySegment segment, Region region) {
        this.pool = pool;
        this.slot = slot;
        this.segment = segment;
        this.region = region;
    }

    /** {@return the buffer's memory: exactly {@link BufferPool#bufferSize()} bytes of a registered region} */
    public MemorySegment segment() {
        return segment;
    }

    /** {@return the buffer's size in bytes, {@link BufferPool#bufferSize()}} */
    public int size() {
        return (int) segment.byteSize();
    }

    /** {@return whether the lease is still held by its taker: neither released nor handed to an operation} */
    public boolean isHeld() {
        return state.get() == HELD;
    }

    /**
     * Gives the buffer back to the pool, unless it was handed to an operation (which gives it back
     * itself) or already released; idempotent. Do not release a buffer that an operation you
     * posted from it with the {@link Region} forms may still use.
     */
    public void release() {
        if (state.compareAndSet(HELD, RELEASED)) {
            pool.giveBack(slot);
        }
    }

    /** {@return the pool that leased it} */
    BufferPool pool() {
        return pool;
    }

    /** {@return the pool's region (the operation's local region); never throws, closed or not} */
    Region region() {
        return region;
    }

    /** {@return the buffer's offset in {@link #region()}} */
    long offset() {
        return pool.offsetOf(slot);
    }

    /**
     * Makes an operation the owner of the lease.
     *
     * @throws IllegalStateException when the lease is released or already owned by an operation
     */
    void handOver() {
        if (!state.compareAndSet(HELD, HANDED)) {
            throw new IllegalStateException(this + " was " + (state.get() == HANDED
                    ? "already handed to an operation (a lease goes with one subscription)" : "released"));
        }
    }

    /** Gives the buffer back from the operation that owns it: the operation terminated at the NIC. Once. */
    void releaseFromOperation() {
        if (state.compareAndSet(HANDED, RELEASED)) {
            pool.giveBack(slot);
        }
    }

    @Override
    public String toString() {
        return "BufferLease[#" + slot + ", " + segment.byteSize() + " bytes]";
    }
}
