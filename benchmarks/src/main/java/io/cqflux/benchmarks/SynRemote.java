package io.cqflux.benchmarks;

import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.RemoteRegion;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;

/** A peer's region: the registered region itself, reached in this JVM. */
final class SynRemote implements RemoteRegion {
    final SynRegion target;
    private final long size;
    private final Set<RegionAccess> access;
    private final Set<FlushType> flushTypes;

    private SynRemote(SynRegion target, long size, Set<RegionAccess> access) {
        this.target = target;
        this.size = size;
        this.access = access;
        this.flushTypes = access.contains(RegionAccess.FLUSH_TYPE_VISIBILITY)
                ? EnumSet.of(FlushType.VISIBILITY) : EnumSet.noneOf(FlushType.class);
    }

    /** Any thread: parses a peer's {@link SynRegion#descriptor()}. */
    static SynRemote fromDescriptor(byte[] descriptor) {
        if (descriptor == null || descriptor.length != SynRegion.DESCRIPTOR_BYTES) {
            throw new IllegalArgumentException("synthetic region descriptor of "
                    + (descriptor == null ? "null" : descriptor.length + " bytes") + ", expected "
                    + SynRegion.DESCRIPTOR_BYTES);
        }
        ByteBuffer b = ByteBuffer.wrap(descriptor);
        long id = b.getLong();
        long size = b.getLong();
        int bits = b.getInt();
        EnumSet<RegionAccess> access = EnumSet.noneOf(RegionAccess.class);
        for (RegionAccess a : RegionAccess.values()) {
            if ((bits & a.bit()) != 0) {
                access.add(a);
            }
        }
        return of(id, size, access);
    }

    /** Any thread: parses a peer's {@link SynRegion#rawDescriptor()}, granted {@code access}. */
    static SynRemote fromRawDescriptor(byte[] rawDescriptor, Set<RegionAccess> access) {
        if (rawDescriptor == null || rawDescriptor.length != SynRegion.RAW_DESCRIPTOR_BYTES) {
            throw new IllegalArgumentException("synthetic raw descriptor of "
                    + (rawDescriptor == null ? "null" : rawDescriptor.length + " bytes") + ", expected "
                    + SynRegion.RAW_DESCRIPTOR_BYTES);
        }
        if (access.isEmpty()) {
            throw new IllegalArgumentException("access must not be empty");
        }
        ByteBuffer b = ByteBuffer.wrap(rawDescriptor);
        return of(b.getLong(), b.getLong(), EnumSet.copyOf(access));
    }

    private static SynRemote of(long id, long size, Set<RegionAccess> access) {
        SynRegion target = SynRegion.lookup(id);
        if (target == null || size < 0 || size > target.segment.byteSize()) {
            throw new IllegalArgumentException("synthetic region " + id + " of " + size
                    + " bytes is not registered in this JVM");
        }
        return new SynRemote(target, size, access);
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public Set<FlushType> flushTypes() {
        return flushTypes;
    }

    @Override
    public Set<RegionAccess> access() {
        return access;
    }

    @Override
    public void close() {
        // no native copy
    }
}
