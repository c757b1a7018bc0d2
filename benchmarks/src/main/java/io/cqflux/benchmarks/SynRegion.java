package io.cqflux.benchmarks;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.LocalRegion;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/** Registered local memory; its id is the descriptor peers use. */
final class SynRegion implements LocalRegion {
    /** Registered regions of every synthetic transport in the JVM, by id (descriptors name them). */
    private static final ConcurrentHashMap<Long, SynRegion> REGIONS = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_REGION = new AtomicLong();
    /** The length of {@link #descriptor()}: id, size, access bits. */
    static final int DESCRIPTOR_BYTES = 20;
    /** The length of {@link #rawDescriptor()}: id, size. */
    static final int RAW_DESCRIPTOR_BYTES = 16;

    final long id;
    final MemorySegment segment;
    private final Set<RegionAccess> access;
    volatile boolean open = true;

    private SynRegion(long id, MemorySegment segment, Set<RegionAccess> access) {
        this.id = id;
        this.segment = segment;
        this.access = access;
    }

    /** Any thread: registers {@code memory} under a fresh id that peers in this JVM can name. */
    static SynRegion register(MemorySegment memory, Set<RegionAccess> access) {
        SynRegion r = new SynRegion(NEXT_REGION.incrementAndGet(), memory, EnumSet.copyOf(access));
        REGIONS.put(r.id, r);
        return r;
    }

    /** Any thread: the open region registered as {@code id}, or null. */
    static SynRegion lookup(long id) {
        return REGIONS.get(id);
    }

    @Override
    public MemorySegment segment() {
        return segment;
    }

    @Override
    public long size() {
        return segment.byteSize();
    }

    @Override
    public Set<RegionAccess> access() {
        return access;
    }

    @Override
    public byte[] descriptor() {
        return ByteBuffer.allocate(DESCRIPTOR_BYTES).putLong(id).putLong(segment.byteSize()).putInt(RegionAccess.bits(access))
                .array();
    }

    @Override
    public byte[] rawDescriptor() {
        return ByteBuffer.allocate(RAW_DESCRIPTOR_BYTES).putLong(id).putLong(segment.byteSize()).array();
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public void close() {
        open = false;
        REGIONS.remove(id, this);
    }
}
