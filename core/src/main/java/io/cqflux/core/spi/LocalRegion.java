package io.cqflux.core.spi;

import io.cqflux.core.RegionAccess;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * Registered local memory. It owns the registration and keeps the segment reachable until
 * {@link #close()} deregisters it. Thread-safe to read; close only when no operation that uses
 * it is in flight (the reactive layer enforces that).
 */
public interface LocalRegion extends AutoCloseable {

    /** {@return the registered memory} */
    MemorySegment segment();

    /** {@return the size in bytes} */
    default long size() {
        return segment().byteSize();
    }

    /** {@return what the region may be used for} */
    Set<RegionAccess> access();

    /** {@return the bytes a peer needs to address this region ({@link Transport#remoteRegion(byte[])})} */
    byte[] descriptor();

    /**
     * {@return the transport's own descriptor of this region, as a peer not written with cqflux
     * knows it (librpma: the bytes of {@code rpma_mr_get_descriptor(3)}; libfabric: key, base
     * address and length as three big-endian 64-bit values). It says nothing of the access the
     * region allows: a peer states that itself ({@link Transport#remoteRegion(byte[], Set)})}
     */
    byte[] rawDescriptor();

    /** {@return whether it is still registered} */
    boolean isOpen();

    /** Deregisters; idempotent. */
    @Override
    void close();
}
