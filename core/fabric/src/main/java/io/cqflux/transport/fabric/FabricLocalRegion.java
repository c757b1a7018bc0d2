package io.cqflux.transport.fabric;

import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.LocalRegion;
import java.lang.foreign.MemorySegment;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

/**
 * Memory registered with {@code fi_mr_reg(3)}. Thread-safe to read; {@link #close()} (idempotent)
 * closes the MR with {@code fi_close}; call it only when no operation using it is in flight, and
 * before the transport is closed.
 *
 * <p>Where the provider needs local descriptors ({@code FI_MR_LOCAL}: verbs), a region of the
 * transport's domain used by a connection that lives in a scoped domain of its own gets a
 * registration there too, on that connection's first post with it ({@link #descIn}); the close
 * closes those first (ScopedLocalMr says who else may, and why that is safe). Lock order: this
 * region, then a scoped domain (a registration made in it is kept holding both; it is made under
 * neither); nothing that holds a domain's lock takes a transport-domain region's (a scoped
 * domain's close closes its own flush sink, a region of that domain, holding its lock).
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
    /**
     * Its registrations in scoped domains (FI_MR_LOCAL only), made on first use; null until the
     * first. Added to holding this region's lock and the domain's (after the registration, made
     * under neither), removed by the registration's close under neither: a map that needs no lock
     * to read or remove from.
     */
    private volatile ConcurrentHashMap<ScopedDomain, ScopedLocalMr> scoped;

    /**
     * Tests only, null otherwise: called by {@link #registerIn} on the registering thread right
     * after the registration in a scoped domain was made and before it is kept (under no lock,
     * holding the domain), so that a test can close the region or the connection at that point,
     * or hold threads there until they all made one.
     */
    static volatile BiConsumer<FabricLocalRegion, ScopedDomain> afterScopedRegistrationForTests;

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

    /**
     * {@return the descriptor of this region for a post on an endpoint of {@code scope}} The
     * region's registration in that domain, made on the first call (a kernel call that pins the
     * whole region, on the caller's thread: the loop's; under no lock, see {@link #registerIn}),
     * then looked up without a lock or an allocation.
     *
     * @throws io.cqflux.core.ResourceClosedException when this region or the domain is closed
     * @throws io.cqflux.core.NativeCallException when the registration fails: the one post fails
     */
    MemorySegment descIn(ScopedDomain scope) {
        ConcurrentHashMap<ScopedDomain, ScopedLocalMr> m = scoped;
        ScopedLocalMr r = m == null ? null : m.get(scope);
        if (r == null) {
            r = registerIn(scope);
        }
        if (!r.isOpen()) {
            throw new io.cqflux.core.ResourceClosedException(r + " is closed: the region or its connection was closed");
        }
        return r.desc();
    }

    /**
     * Registers this region in {@code scope} and keeps the registration, or the one another
     * thread kept first. The {@code fi_mr_reg} (which pins the whole region) runs under no lock,
     * so that first uses on other loops and this region's close do not wait behind it; the
     * domain is held open meanwhile ({@link ScopedDomain#holdForLocal}), so that it cannot close
     * under the call. Then, under this region's lock and the domain's, the registration is kept
     * unless this region was closed meanwhile or another thread kept one first; a registration
     * not kept is closed here.
     */
    private ScopedLocalMr registerIn(ScopedDomain scope) {
        if (!open) {
            throw new io.cqflux.core.ResourceClosedException(this + " is closed");
        }
        scope.holdForLocal(this);
        try {
            ScopedLocalMr made = transport.registerLocal(scope, this);
            BiConsumer<FabricLocalRegion, ScopedDomain> hook = afterScopedRegistrationForTests;
            if (hook != null) {
                try {
                    hook.accept(this, scope);
                } catch (RuntimeException | Error e) {
                    made.close();
                    throw e;
                }
            }
            ScopedLocalMr kept;
            synchronized (this) {
                if (open) {
                    if (scoped == null) {
                        scoped = new ConcurrentHashMap<>();
                    }
                    kept = scope.adopt(this, made);
                } else {
                    kept = null;
                }
            }
            if (kept != made) {
                made.close();
            }
            if (kept == null) {
                throw new io.cqflux.core.ResourceClosedException(this + " was closed while it was registered in the "
                        + scope);
            }
            return kept;
        } finally {
            scope.release(); // may close the domain, and the registration kept in it, when it was the last hold
        }
    }

    /**
     * The domain's half of {@link #registerIn}, called holding this region's lock and the
     * domain's: keeps {@code r} unless one is kept already. {@return the one kept}
     */
    ScopedLocalMr keep(ScopedDomain scope, ScopedLocalMr r) {
        ScopedLocalMr prior = scoped.putIfAbsent(scope, r);
        return prior == null ? r : prior;
    }

    /** A registration of it in {@code scope} was closed. */
    void forget(ScopedDomain scope, ScopedLocalMr r) {
        ConcurrentHashMap<ScopedDomain, ScopedLocalMr> m = scoped;
        if (m != null) {
            m.remove(scope, r);
        }
    }

    /** {@return how many scoped domains hold a registration of it} (tests) */
    int scopedRegistrations() {
        ConcurrentHashMap<ScopedDomain, ScopedLocalMr> m = scoped;
        return m == null ? 0 : m.size();
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
            // Its registrations in scoped domains first: no operation using this region is in
            // flight (the caller's rule), so none uses them either.
            ConcurrentHashMap<ScopedDomain, ScopedLocalMr> m = scoped;
            if (m != null) {
                for (ScopedLocalMr r : List.copyOf(m.values())) {
                    r.close();
                }
            }
        } finally {
            try {
                FabricLibrary.close(mr, "mr", this);
            } finally {
                home.release();
            }
        }
    }

    @Override
    public String toString() {
        return "FabricLocalRegion[" + memory.byteSize() + " bytes, key " + key + ", " + access + "]";
    }
}
