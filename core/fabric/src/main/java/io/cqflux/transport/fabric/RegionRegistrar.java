package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.*;

import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.internal.Checks;
import io.cqflux.transport.fabric.ffm.fi_ops_mr;
import io.cqflux.transport.fabric.ffm.fid_mr;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.EnumSet;
import java.util.Set;

/**
 * The memory registration of one {@link FabricTransport}: {@code fi_mr_reg(3)} in the
 * transport's domain or a connection's scoped one, the access bits a region is registered with,
 * and the keys it requests. Thread-safe, as the transport's registration is (its domain is
 * {@code FI_THREAD_SAFE}; {@link KeySequence} is thread-safe).
 */
@SuppressWarnings("restricted") // FFM: this package is the native-access boundary of the fabric transport
final class RegionRegistrar {

    /** How many keys {@link #register} draws before it gives up on -FI_ENOKEY. */
    static final int KEY_ATTEMPTS = 8;

    private final FabricTransport transport;
    /** The transport's name, for errors. */
    private final String name;
    /** fi_domain(3) mr_mode of the transport's domain. */
    private final long mrMode;
    private final Set<FlushType> providerFlushTypes;
    /** Whether the info orders an RMA read after earlier RMA writes (FI_ORDER_RAW, tx and rx). */
    private final boolean readAfterWriteOrdered;
    /**
     * The keys this domain requests (tcp); null where the provider chooses them (FI_MR_PROV_KEY:
     * verbs, whose rkeys come from the NIC). Never sequential: see KeySequence for why and how.
     *
     * <p>Facts about the keys we do not choose (kernel sources): on Soft-RoCE an rkey is
     * {@code index << 8 | rxe_get_next_key(-1)} ({@code rxe_mr.c}): one random byte over the
     * MR's slot in the device pool, which {@code xa_alloc_cyclic} hands out in turn, so 8 bits of
     * entropy; the responder ({@code lookup_mr}) also checks the protection domain (this
     * domain). mlx5's low byte is a per-device counter ({@code assign_mkey_variant}). A peer of
     * this domain that knows one verbs key finds a neighbour's in about 256 tries, one connection
     * each. Neither tcp nor verbs (1.17) can bind a key to one endpoint: tcp drops
     * FI_MR_ENDPOINT from the hints and answers fi_mr_bind with -FI_ENOSYS (mr_isolation_probe.c),
     * verbs' MR ops have fi_no_bind. See docs/security.md.
     */
    private final KeySequence keys;

    /**
     * @param mrMode the domain's fi_domain(3) mr_mode
     * @param keyBytes the provider's key size in bytes (FabricTransport#keyBytes)
     * @param providerFlushTypes the flush types the transport offers
     * @param readAfterWriteOrdered whether the info orders a read after earlier writes
     */
    RegionRegistrar(FabricTransport transport, String name, long mrMode, long keyBytes,
                    Set<FlushType> providerFlushTypes, boolean readAfterWriteOrdered) {
        this.transport = transport;
        this.name = name;
        this.mrMode = mrMode;
        this.providerFlushTypes = providerFlushTypes;
        this.readAfterWriteOrdered = readAfterWriteOrdered;
        this.keys = (mrMode & FI_MR_PROV_KEY()) != 0 ? null
                : new KeySequence((int) Math.min(8, Math.max(2, keyBytes)), new SecureRandom());
    }

    /**
     * Registers memory in {@code home}'s domain (this transport's, or one connection's scoped
     * domain), with a key from this transport's sequence: keys stay unique across all of them.
     *
     * @param home the domain, held by the region until it is closed
     */
    FabricLocalRegion register(DomainHolder home, MemorySegment memory, Set<RegionAccess> access) {
        Checks.registration(memory, access);
        transport.ensureOpen();
        // Refused, never registered at VISIBILITY: a peer's durable write to it would otherwise
        // complete without the data being persistent (see the capabilities in ProviderProfile).
        Checks.registerFlushAccess(name, access, providerFlushTypes, readAfterWriteOrdered
                ? "FI_COMMIT_COMPLETE commits only the bytes of the operation that carries it, so no flush can make"
                + " earlier writes persistent; register with FLUSH_TYPE_VISIBILITY, or use the rpma transport with"
                + " directWriteToPersistentMemory"
                : "the provider does not order a read after earlier writes (no FI_ORDER_RAW in its tx_attr and"
                + " rx_attr msg_order), so the read-back that is this transport's flush would prove nothing;"
                + " use the rpma transport, or a provider with FI_ORDER_RAW");
        long fiAccess = remoteAccess(access);
        EnumSet<FlushType> flush = EnumSet.noneOf(FlushType.class);
        if (access.contains(RegionAccess.FLUSH_TYPE_VISIBILITY)) {
            flush.add(FlushType.VISIBILITY);
        }
        if (access.contains(RegionAccess.FLUSH_TYPE_PERSISTENT)) {
            flush.add(FlushType.PERSISTENT); // only where the provider delivers it (checked above)
        }
        home.retain(); // released by the region's close, or below when registration fails
        boolean registered = false;
        try {
            Registered reg = mrReg(home.ops(), memory, fiAccess, memory.byteSize() + " bytes, access " + access);
            MemorySegment mr = reg.mr();
            long actualKey = reg.key();
            // FI_MR_VIRT_ADDR: the peer addresses the region by virtual address; else by offset.
            long base = (mrMode & FI_MR_VIRT_ADDR()) != 0 ? memory.address() : 0;
            FabricLocalRegion region = new FabricLocalRegion(transport, home, memory, EnumSet.copyOf(access), mr,
                    fid_mr.mem_desc(mr), actualKey, base, flush);
            registered = true;
            return region;
        } finally {
            if (!registered) {
                home.release();
            }
        }
    }

    /**
     * Registers {@code parent}'s memory once more in a connection's scoped domain, for that
     * connection's posts only ({@code FI_MR_LOCAL}: a local buffer's descriptor must come from the
     * endpoint's own domain): with the parent's local rights and no remote right, so the
     * registration's key, which no peer is told, reaches nothing either (ScopedLocalMr), except
     * on an iWARP device, below.
     *
     * <p>Fact (libfabric 1.17, {@code prov/verbs/src/verbs_mr.c}, {@code vrb_mr_ofi2ibv_access}):
     * under {@code if (ofi_access & FI_READ)} the provider adds
     * {@code if (domain->verbs->device->transport_type == IBV_TRANSPORT_IWARP) ibv_access |=
     * IBV_ACCESS_REMOTE_WRITE;}, since iWARP places a read's response into its sink as a
     * remote write. So on iWARP the registration here of a {@code READ_DST} region carries a
     * remotely writable key in the connection's domain, as the region's own registration does in
     * the transport's domain (where a peer of any connection may present it). FI_READ is kept:
     * without it the sink would lack the right iWARP requires, and the connection's reads into
     * the region would fail. What it adds is a key of that one connection's domain, which only
     * that connection's peer can present; over RoCE and InfiniBand (rxe in the lane) no remote
     * right is added. docs/security.md, section 5, says so.
     *
     * @param scope the connection's domain; the caller holds it open (ScopedDomain#holdForLocal),
     *     under no lock, and keeps or closes the registration
     * @param parent the instance's region
     * @return the registration
     * @throws IllegalArgumentException when {@code parent} grants no local use
     * @throws io.cqflux.core.NativeCallException when {@code fi_mr_reg} fails
     */
    ScopedLocalMr registerLocal(ScopedDomain scope, FabricLocalRegion parent) {
        long fiAccess = remoteAccess(localRights(parent.access()));
        if (fiAccess == 0) {
            throw new IllegalArgumentException(parent + " grants no local use (" + parent.access()
                    + "): it cannot be a local buffer of a post on " + scope.label());
        }
        MemorySegment memory = parent.segment();
        MemorySegment mr = mrReg(scope.ops(), memory, fiAccess, parent + " for the posts of " + scope.label()
                + " (a local registration in that connection's own domain, FI_MR_LOCAL)").mr();
        return new ScopedLocalMr(transport, scope, parent, mr, fid_mr.mem_desc(mr));
    }

    /** {@return the local rights of {@code access}: what a post's own buffer uses} */
    static Set<RegionAccess> localRights(Set<RegionAccess> access) {
        EnumSet<RegionAccess> local = EnumSet.noneOf(RegionAccess.class);
        for (RegionAccess a : access) {
            switch (a) {
                case READ_DST, WRITE_SRC, SEND, RECV -> local.add(a);
                default -> { } // remote rights and flush grants: never on a local-only registration
            }
        }
        return local;
    }

    /**
     * A registration and its key: the one requested (tcp), or the provider's (FI_MR_PROV_KEY).
     *
     * @param mr the {@code struct fid_mr *}
     * @param key its key
     */
    private record Registered(MemorySegment mr, long key) {
    }

    /**
     * {@code fi_mr_reg(3)} in {@code d}, with a key from this transport's sequence where the
     * provider takes requested keys.
     *
     * @param detail names what is registered, for the error
     * @return the {@code struct fid_mr *} and its key
     */
    private Registered mrReg(DomainOps d, MemorySegment memory, long fiAccess, String detail) {
        // A downcall given a segment keeps its arena open for the call, but checks that a
        // confined arena's owner makes it; an exposure is registered again for each accepted
        // connection on the library's set-up thread. Memory this thread may not touch goes by
        // its address (Checks#registration checked it alive; keeping it so while registered is
        // the caller's, as for the NIC).
        MemorySegment at = memory.isAccessibleBy(Thread.currentThread()) ? memory
                : MemorySegment.ofAddress(memory.address());
        try (Arena tmp = Arena.ofConfined()) {
            MemorySegment out = tmp.allocate(C_POINTER);
            long rc = -FabricErrno.ENOKEY.code();
            long key = 0;
            // fi_mr_reg(3): requested_key is ignored when the provider sets FI_MR_PROV_KEY; where
            // it is ours, a key already in use answers -FI_ENOKEY. Ours never repeat, but another
            // registration in the domain could in principle hold one: draw the next.
            for (int attempt = 0; attempt < KEY_ATTEMPTS && rc == -FabricErrno.ENOKEY.code(); attempt++) {
                key = keys == null ? 0 : keys.next();
                rc = fi_ops_mr.reg.invoke(d.mrRegFp(), d.domain(), at, memory.byteSize(), fiAccess, 0L, key, 0L,
                        out, MemorySegment.NULL);
                if (keys == null) {
                    break;
                }
            }
            FabricLibrary.check("fi_mr_reg", rc, detail);
            MemorySegment mr = out.get(C_POINTER, 0);
            return new Registered(mr, keys == null ? fid_mr.key(mr) : key);
        }
    }

    /**
     * The {@code fi_mr_reg(3)} access bits for what a region grants, and not one more remote
     * right: a region granted no WRITE_DST is never registered with {@code FI_REMOTE_WRITE},
     * whatever else it grants, so no peer can write it, with a forged descriptor or otherwise.
     * A flush grant adds {@code FI_REMOTE_READ} only: a flush reads back 1 to 8 bytes at the
     * flushed offset (FabricConnection#flush), the way librpma's VISIBILITY flush does
     * ({@code rpma_flush(3)}; librpma registers a flushable region with
     * {@code IBV_ACCESS_REMOTE_READ} for the same reason). So a flushable region is remotely
     * readable: that is the price of a flush, and docs/security.md says so.
     *
     * @param access what the region grants
     * @return the libfabric access bits
     */
    static long remoteAccess(Set<RegionAccess> access) {
        long fiAccess = 0;
        for (RegionAccess a : access) {
            fiAccess |= switch (a) {
                case READ_SRC -> FI_REMOTE_READ();
                case READ_DST -> FI_READ();
                case WRITE_SRC -> FI_WRITE();
                case WRITE_DST -> FI_REMOTE_WRITE();
                case FLUSH_TYPE_VISIBILITY, FLUSH_TYPE_PERSISTENT -> FI_REMOTE_READ();
                case SEND -> FI_SEND();
                case RECV -> FI_RECV();
            };
        }
        return fiAccess;
    }
}
