package io.cqflux.transport.rpma;

import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import io.cqflux.transport.rpma.ffm.librpma_h;
import io.cqflux.core.spi.RemoteRegion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.Set;

/**
 * A peer's region ({@code rpma_mr_remote_from_descriptor(3)}). Thread-safe to read;
 * {@link #close()} frees the native copy ({@code rpma_mr_remote_delete(3)}) once.
 */
final class RpmaRemoteRegion implements RemoteRegion {
    private static final System.Logger LOG = System.getLogger(RpmaRemoteRegion.class.getName());

    private final long size;
    private final Set<FlushType> flushTypes;
    private final Set<RegionAccess> access;
    private volatile MemorySegment mr;

    private RpmaRemoteRegion(MemorySegment mr, long size, Set<FlushType> flushTypes, Set<RegionAccess> access) {
        this.mr = mr;
        this.size = size;
        this.flushTypes = flushTypes;
        this.access = access;
    }

    static RpmaRemoteRegion parse(byte[] bytes, int expectedNativeSize) {
        RegionDescriptor d = RegionDescriptor.parse(bytes, expectedNativeSize);
        return fromNative(d.nativeDescriptor(), d.access());
    }

    /**
     * A peer region from librpma's own descriptor.
     *
     * <p>librpma's descriptor ends with the owner's usage bits: {@code rpma_mr_get_descriptor}
     * writes the address, length and rkey, then the {@code RPMA_MR_USAGE_*} bits the region was
     * registered with as its last byte (librpma 1.2, {@code src/mr.c}), which
     * {@code rpma_mr_remote_get_flush_type(3)} reads back for the flush bits only. That byte is
     * what the peer granted, so it is the access when the caller states none; a stated access is
     * checked against it and refused when it claims a right the byte does not carry, since the
     * NIC would fail such an operation only after posting (a remote access error that ends the
     * connection). A stated access narrower than the byte narrows what this side may do.
     *
     * @param raw the bytes of the peer's {@code rpma_mr_get_descriptor(3)}
     * @param access what the caller says the peer granted, or empty to take the descriptor's
     * @param expectedNativeSize {@code rpma_mr_get_descriptor_size} of this library
     * @return the region
     * @throws IllegalArgumentException when the size is wrong, the descriptor grants nothing, or
     *     the stated access claims more than the descriptor grants (both named)
     */
    static RpmaRemoteRegion fromRaw(byte[] raw, Set<RegionAccess> access, int expectedNativeSize) {
        if (raw == null) {
            throw new IllegalArgumentException("raw region descriptor is null");
        }
        // rpma_mr_remote_from_descriptor trusts its input: check the size first.
        if (raw.length != expectedNativeSize) {
            throw new IllegalArgumentException("raw librpma descriptor of " + raw.length + " bytes, expected exactly "
                    + expectedNativeSize + " (rpma_mr_get_descriptor_size)");
        }
        int usage = raw[raw.length - 1] & 0xff;
        Set<RegionAccess> granted = usageOf(usage);
        if (granted.isEmpty()) {
            throw new IllegalArgumentException("raw librpma descriptor grants no access: its usage byte is 0x"
                    + Integer.toHexString(usage));
        }
        if (access == null || access.isEmpty()) {
            return fromNative(raw, granted);
        }
        if (!granted.containsAll(access)) {
            Set<RegionAccess> missing = EnumSet.copyOf(access);
            missing.removeAll(granted);
            throw new IllegalArgumentException("stated access " + EnumSet.copyOf(access)
                    + " claims more than the peer's descriptor grants: its usage byte 0x" + Integer.toHexString(usage)
                    + " is " + granted + ", without " + missing);
        }
        return fromNative(raw, Set.copyOf(access));
    }

    /** {@return the accesses whose {@code RPMA_MR_USAGE_*} bits are set in {@code usage}} */
    static Set<RegionAccess> usageOf(int usage) {
        Set<RegionAccess> s = EnumSet.noneOf(RegionAccess.class);
        for (RegionAccess a : RegionAccess.values()) {
            if ((usage & a.bit()) != 0) {
                s.add(a);
            }
        }
        return java.util.Collections.unmodifiableSet(s); // an EnumSet: named in its declared order
    }

    private static RpmaRemoteRegion fromNative(byte[] nativeDescriptor, Set<RegionAccess> access) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment desc = a.allocateFrom(ValueLayout.JAVA_BYTE, nativeDescriptor);
            MemorySegment p = a.allocate(ValueLayout.ADDRESS);
            int rc = librpma_h.rpma_mr_remote_from_descriptor(desc, desc.byteSize(), p);
            if (rc == librpma_h.RPMA_E_INVAL()) {
                throw new IllegalArgumentException("librpma rejected the region descriptor: " + RpmaNative.errText(rc));
            }
            RpmaNative.check("rpma_mr_remote_from_descriptor", rc, desc.byteSize() + " bytes");
            MemorySegment mr = p.get(ValueLayout.ADDRESS, 0);
            try {
                MemorySegment sz = a.allocate(ValueLayout.JAVA_LONG);
                RpmaNative.check("rpma_mr_remote_get_size", librpma_h.rpma_mr_remote_get_size(mr, sz), "");
                MemorySegment ft = a.allocate(ValueLayout.JAVA_INT);
                RpmaNative.check("rpma_mr_remote_get_flush_type", librpma_h.rpma_mr_remote_get_flush_type(mr, ft), "");
                int bits = ft.get(ValueLayout.JAVA_INT, 0);
                Set<FlushType> types = EnumSet.noneOf(FlushType.class);
                if ((bits & librpma_h.RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT()) != 0) {
                    types.add(FlushType.PERSISTENT);
                }
                if ((bits & librpma_h.RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY()) != 0) {
                    types.add(FlushType.VISIBILITY);
                }
                return new RpmaRemoteRegion(mr, sz.get(ValueLayout.JAVA_LONG, 0), Set.copyOf(types), access);
            } catch (RuntimeException | Error e) {
                p.set(ValueLayout.ADDRESS, 0, mr);
                RpmaNative.logged(LOG, System.Logger.Level.WARNING, "rpma_mr_remote_delete", librpma_h.rpma_mr_remote_delete(p), "");
                throw e;
            }
        }
    }

    /** {@return the {@code struct rpma_mr_remote *}, or NULL when closed} */
    MemorySegment mr() {
        MemorySegment m = mr;
        if (m == null) {
            throw new io.cqflux.core.ResourceClosedException("remote region is closed");
        }
        return m;
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
    public synchronized void close() {
        MemorySegment m = mr;
        if (m == null) {
            return;
        }
        mr = null;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ValueLayout.ADDRESS);
            p.set(ValueLayout.ADDRESS, 0, m);
            RpmaNative.check("rpma_mr_remote_delete", librpma_h.rpma_mr_remote_delete(p), "");
        }
    }

    @Override
    public String toString() {
        return "rpma remote region[" + size + " bytes, " + access + ", flush " + flushTypes + "]";
    }
}
