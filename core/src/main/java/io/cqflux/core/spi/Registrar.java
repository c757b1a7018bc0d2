package io.cqflux.core.spi;

import io.cqflux.core.RegionAccess;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * Something memory can be registered in: a {@link Transport} (its domain or protection domain,
 * shared by every connection of it) or a {@link KeyScope} (one accepted connection's own).
 */
public interface Registrar {

    /**
     * Registers memory for RDMA.
     *
     * @param memory native memory, alive at least as long as the region
     * @param access what it may be used for (non-empty)
     * @return the region
     * @throws IllegalArgumentException from {@link io.cqflux.core.internal.Checks#registration}
     *     for memory or access that cannot be registered
     */
    LocalRegion register(MemorySegment memory, Set<RegionAccess> access);
}
