package io.cqflux.reactor;

import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.RemoteRegion;
import java.util.Set;

/**
 * A region of the peer's memory: one it exposed on a connection
 * ({@link RdmaConnection#remoteRegions()}), or one made from its raw descriptor
 * ({@link RdmaConnection#remoteRegion(byte[], RegionAccess...)}). Valid for
 * the connection's lifetime; its native copy is freed when the connection closes. Thread-safe.
 */
public final class PeerRegion {
    private final RemoteRegion native_;
    private final int index;

    PeerRegion(RemoteRegion nativeRegion, int index) {
        this.native_ = nativeRegion;
        this.index = index;
    }

    /**
     * {@return its position in the list the peer exposed, or -1 for a region made from a raw
     * descriptor ({@link RdmaConnection#remoteRegion(byte[], RegionAccess...)})}
     */
    public int index() {
        return index;
    }

    /** {@return the size in bytes} */
    public long size() {
        return native_.size();
    }

    /** {@return the flush types the peer's memory supports} */
    public Set<FlushType> flushTypes() {
        return native_.flushTypes();
    }

    /** {@return the accesses the peer granted} */
    public Set<RegionAccess> access() {
        return native_.access();
    }

    /**
     * The flush type that {@link RdmaConnection#durableWrite(PeerRegion, long, Region, long, long)}
     * (without an explicit type) uses on this region, exactly: {@link FlushType#PERSISTENT} when
     * the peer registered it with {@link RegionAccess#FLUSH_TYPE_PERSISTENT}, else
     * {@link FlushType#VISIBILITY}. Check it before telling your own client that its data is
     * durable: a durable write completes only once the data reached this level, and it is never
     * silently weakened. A peer can register a persistent region only where its transport can
     * deliver persistence (rpma with {@link Cqflux.Builder#directWriteToPersistentMemory(boolean)}
     * declared; never fabric), and that declaration travels in the connection's handshake.
     *
     * @return {@link FlushType#PERSISTENT} or {@link FlushType#VISIBILITY}; with neither in
     *     {@link #flushTypes()} (a region without flush access) a durable write fails
     */
    public FlushType strongestFlush() {
        return flushTypes().contains(FlushType.PERSISTENT) ? FlushType.PERSISTENT : FlushType.VISIBILITY;
    }

    RemoteRegion nativeRegion() {
        return native_;
    }

    @Override
    public String toString() {
        return "PeerRegion[#" + index + ", " + size() + " bytes, " + access() + ", flush " + flushTypes() + "]";
    }
}
