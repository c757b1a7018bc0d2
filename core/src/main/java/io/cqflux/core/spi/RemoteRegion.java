package io.cqflux.core.spi;

import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import java.util.Set;

/** A peer's registered memory, parsed from its descriptor. Thread-safe to read; close frees the native copy. */
public interface RemoteRegion extends AutoCloseable {

    /** {@return the size in bytes} */
    long size();

    /** {@return the flush types the peer's region supports} */
    Set<FlushType> flushTypes();

    /** {@return the accesses the peer granted} */
    Set<RegionAccess> access();

    /** Frees the native copy; idempotent. */
    @Override
    void close();
}
