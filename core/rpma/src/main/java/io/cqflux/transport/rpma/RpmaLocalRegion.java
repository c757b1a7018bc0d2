package io.cqflux.transport.rpma;

import io.cqflux.core.RegionAccess;
import io.cqflux.transport.rpma.ffm.librpma_h;
import io.cqflux.core.spi.LocalRegion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Set;

/**
 * A registered local region ({@code rpma_mr_reg(3)}). Thread-safe to read; {@link #close()}
 * deregisters ({@code rpma_mr_dereg(3)}) once, when no operation uses it.
 */
final class RpmaLocalRegion implements LocalRegion {
    private static final System.Logger LOG = System.getLogger(RpmaLocalRegion.class.getName());

    private final RpmaTransport transport;
    private final MemorySegment memory;
    private final Set<RegionAccess> access;
    private final byte[] descriptor;
    private final byte[] rawDescriptor;
    private volatile MemorySegment mr;

    RpmaLocalRegion(RpmaTransport transport, MemorySegment memory, Set<RegionAccess> access, MemorySegment mr,
                    byte[] rawDescriptor) {
        this.transport = transport;
        this.memory = memory;
        this.access = Set.copyOf(access);
        this.mr = mr;
        this.rawDescriptor = rawDescriptor;
        this.descriptor = RegionDescriptor.encode(this.access, rawDescriptor);
    }

    /** Registers {@code memory} and reads its descriptor; deregisters again if that fails. */
    static RpmaLocalRegion register(RpmaTransport t, MemorySegment memory, Set<RegionAccess> access) {
        MemorySegment peer = t.retain();
        boolean registered = false;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment mrPtr = a.allocate(ValueLayout.ADDRESS);
            // A downcall given a segment keeps its arena open for the call, but checks that a
            // confined arena's owner makes it; the library registers on threads of its own (an
            // exposure, for each accepted connection): memory this thread may not touch goes by
            // its address.
            MemorySegment at = memory.isAccessibleBy(Thread.currentThread()) ? memory
                    : MemorySegment.ofAddress(memory.address());
            long r = RpmaTransport.MR_REG.call(a, peer, at, memory.byteSize(), RegionAccess.bits(access), mrPtr);
            if (RpmaNative.rc(r) != 0) {
                throw RpmaNative.failure("rpma_mr_reg", RpmaNative.rc(r), RpmaNative.errno(r),
                        memory.byteSize() + " bytes, usage " + access);
            }
            MemorySegment mr = mrPtr.get(ValueLayout.ADDRESS, 0);
            try {
                MemorySegment size = a.allocate(ValueLayout.JAVA_LONG);
                RpmaNative.check("rpma_mr_get_descriptor_size", librpma_h.rpma_mr_get_descriptor_size(mr, size), "");
                long n = size.get(ValueLayout.JAVA_LONG, 0);
                if (n <= 0 || n > 255) {
                    throw new IllegalStateException("rpma_mr_get_descriptor_size returned " + n + ", expected 1..255");
                }
                MemorySegment desc = a.allocate(n);
                RpmaNative.check("rpma_mr_get_descriptor", librpma_h.rpma_mr_get_descriptor(mr, desc), "");
                RpmaLocalRegion region = new RpmaLocalRegion(t, memory, access, mr, desc.toArray(ValueLayout.JAVA_BYTE));
                registered = true;
                return region;
            } catch (RuntimeException | Error e) {
                mrPtr.set(ValueLayout.ADDRESS, 0, mr);
                RpmaNative.logged(LOG, System.Logger.Level.WARNING, "rpma_mr_dereg", librpma_h.rpma_mr_dereg(mrPtr), memory.byteSize() + " bytes");
                throw e;
            }
        } finally {
            if (!registered) {
                t.release();
            }
        }
    }

    /**
     * {@return the {@code struct rpma_mr_local *}}
     *
     * @throws io.cqflux.core.ResourceClosedException when deregistered (never a NULL to native)
     */
    MemorySegment mr() {
        MemorySegment m = mr;
        if (m == null) {
            throw new io.cqflux.core.ResourceClosedException("local region is closed");
        }
        return m;
    }

    RpmaTransport transport() {
        return transport;
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
        return descriptor.clone();
    }

    @Override
    public byte[] rawDescriptor() {
        return rawDescriptor.clone();
    }

    @Override
    public boolean isOpen() {
        return mr != null;
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
            RpmaNative.check("rpma_mr_dereg", librpma_h.rpma_mr_dereg(p), memory.byteSize() + " bytes");
        } finally {
            transport.release();
        }
    }

    @Override
    public String toString() {
        return "rpma region[" + memory.byteSize() + " bytes, " + access + (isOpen() ? "" : ", closed") + "]";
    }
}
