package io.cqflux.transport.fabric;

import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.LocalRegion;
import java.lang.foreign.MemorySegment;
import java.util.Collections;
import java.util.Set;

/**
 * Memory registered with {@code fi_mr_reg(3)}. Thread-safe to read; {@link #close()} (idempotent)
 * closes the MR with {@code fi_close}; call it only when no operation using it is in flight, and
 * before the transport is closed.
 */
final class FabricLocalRegion implements LocalRegion {

    private final FabricTransport transport;
    /** The domain it is registered in (the transport's, or a connection's scoped one): released on close. */
    private final DomainHolder home;
    private final MemorySegment memory;
    private final Set<RegionAccess> access;
    private final MemorySegment mr;
    private final MemorySegment desc;
    private final long key;
    private final long base;
    private final Set<FlushType> flushTypes;
    private volatile boolean open = true;

    FabricLocalRegion(FabricTransport transport, DomainHolder home, MemorySegment memory, Set<RegionAccess> access,
                      MemorySegment mr, MemorySegment desc, long key, long base, Set<FlushType> flushTypes) {
        this.transport = transport;
        this.home = home;
        this.memory = memory;
        this.access = Collections.unmodifiableSet(access);
        this.mr = mr;
        this.desc = desc;
        this.key = key;
        this.base = base;
        this.flushTypes = flushTypes;
    }

    FabricTransport transport() {
        return transport;
    }

    /** {@return the domain it is registered in} */
    DomainHolder home() {
        return home;
    }

    /** {@return {@code fi_mr_desc(mr)}: the local descriptor passed with every post} */
    MemorySegment desc() {
        return desc;
    }

    long key() {
        return key;
    }

    @Override
    public MemorySegment segment() {
        return memory;
    }

    @Override
    public Set<RegionAccess> access() {
        return access;
    }

    @Override
    public byte[] descriptor() {
        return RegionDescriptor.encode(key, base, memory.byteSize(), access, flushTypes, transport.keyBytes());
    }

    @Override
    public byte[] rawDescriptor() {
        return RegionDescriptor.encodeRaw(key, base, memory.byteSize(), transport.keyBytes());
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public synchronized void close() {
        if (!open) {
            return;
        }
        open = false;
        try {
            FabricLibrary.close(mr, "mr", this);
        } finally {
            home.release();
        }
    }

    @Override
    public String toString() {
        return "FabricLocalRegion[" + memory.byteSize() + " bytes, key " + key + ", " + access + "]";
    }
}
