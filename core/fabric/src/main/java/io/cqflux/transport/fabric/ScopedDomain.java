package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.*;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.KeyScope;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.transport.fabric.ffm.fi_domain_attr;
import io.cqflux.transport.fabric.ffm.fi_info;
import io.cqflux.transport.fabric.ffm.fi_ops_fabric;
import io.cqflux.transport.fabric.ffm.fid_fabric;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;

/**
 * One accepted connection's own domain ({@code fi_domain(3)} opened with the connection
 * request's {@code fi_info}), so that the keys registered in it work on that connection only:
 * the target of a remote access looks the key up in the domain of the endpoint it arrived on.
 * The connection's endpoint, its own CQs (where it has them: on tcp of the libfabric measured it
 * shares its loop's group queue of the transport's domain, ProviderProfile#sharesQueuesAcrossDomains),
 * its flush sink and what the server registers for it (its exposures and control words) are
 * opened in it; the instance's other registrations (the
 * application's regions, receive buffers, the shared receive pool's chunks) stay in the
 * transport's domain. Where a post's local buffers need no descriptor of the endpoint's domain
 * (no {@code FI_MR_LOCAL}: tcp) the connection posts from those as they are; where they do
 * (verbs: a work request's lkey must belong to the queue pair's protection domain), the
 * connection registers each of the transport's regions it posts from in this domain, once, on
 * first use ({@link #holdForLocal}, {@link #adopt}, ScopedLocalMr), and this domain closes those before itself.
 *
 * <p>Facts measured on libfabric 1.17's tcp over 127.0.0.1
 * ({@code core/fabric/src/test/c/scoped_domain_probe.c}): a domain costs no file descriptor and
 * no thread (tcp's progress and wait objects belong to its CQs and EQs) and little native heap; a read
 * with a key of domain A presented on an endpoint of domain B fails on the initiator with
 * {@code FI_ECANCELED} and the target drops that connection (the initiator's EQ reports
 * {@code FI_SHUTDOWN}), exactly as a key unknown to the whole domain does, while the connection
 * of domain A goes on working.
 *
 * <p>Facts measured on libfabric 1.17's verbs over Soft-RoCE (rxe, kernel 6.1) in the lane
 * (FabricVerbsScopedKeysTest): {@code fi_domain} with an {@code FI_CONNREQ}'s info opens a
 * domain (a protection domain, {@code ibv_alloc_pd}) on the passive endpoint's device other
 * than the one the passive endpoint was opened from, and the request's endpoint opened and
 * accepted in it works; a write with a key of domain A presented on B's queue pair fails on the
 * initiator with {@code REM_ACCESS_ERR} (rxe's responder looks the rkey up in the queue pair's
 * protection domain: {@code rxe_resp.c} check_rkey, {@code rxe_mr.c} lookup_mr), B's queue pair
 * is in the error state afterwards (its next operation is flushed), A's memory is unchanged and
 * A goes on writing with its key. The same write on two connections of one domain succeeds. And
 * a write on a scoped connection from a region of the transport's domain, posted with that
 * registration's descriptor (as on tcp), fails locally (its lkey belongs to another protection
 * domain; rxe completes it with {@code IBV_WC_LOC_QP_OP_ERR}) unless the provider posts it inline (at most
 * {@code tx_attr->inject_size} bytes, {@code IBV_SEND_INLINE}: the data is copied into the work
 * request and no lkey is looked at), which succeeds; hence ScopedLocalMr, for every length.
 *
 * <p><b>Lifetime.</b> Holds one count of its transport from its open until its native close.
 * Its children (the connection, every region registered in it, the request's own hold,
 * {@link #close()}, and, for as long as each lasts, the transient hold of a transport region
 * being registered in it, {@link #holdForLocal}, given back with {@link #release()} once that
 * registration is kept or closed) each hold it; the last to go closes the flush sink, then the transport's
 * regions registered in it for the connection's posts (which are not children: the application's
 * regions outlive connections, and the connection's endpoint, closed by then, was their only
 * user), then the domain, then gives the transport's count back ({@code fi_domain(3)}: a domain's
 * objects before it). Thread-safe; lock order: a transport region, then this domain, then one of
 * the registrations in it (FabricLocalRegion, ScopedLocalMr).
 */
@SuppressWarnings("restricted") // FFM: this package is the native-access boundary of the fabric transport
final class ScopedDomain implements DomainHolder, KeyScope {

    private final FabricTransport transport;
    private final DomainOps ops;
    private final String label;
    /** Its children (guarded by this); the request's hold is one of them until {@link #close()}. */
    private int children = 1;
    private boolean held = true;
    private boolean nativeClosed;
    /** The flush sink, registered on first use (guarded by this); one of {@link #children} while open. */
    private FabricLocalRegion flushSink;
    private final Arena arena = Arena.ofShared();
    /**
     * The transport's regions registered in it for the connection's posts (FI_MR_LOCAL only;
     * guarded by this): not children, since the application's regions outlive connections; closed
     * before the domain.
     */
    private final Set<ScopedLocalMr> locals = new java.util.HashSet<>();

    private ScopedDomain(FabricTransport transport, MemorySegment domain, String label) {
        this.transport = transport;
        this.ops = DomainOps.of(domain);
        this.label = label;
    }

    /**
     * Opens a domain with a connection request's info ({@code fi_domain(3)}), thread-safe as the
     * transport's (the hints ask for {@code FI_THREAD_SAFE}: set on the request's info too, which
     * the caller owns, so that a set-up thread and the loop may use its objects as they use the
     * transport's).
     *
     * @param transport the transport the listener belongs to; held until the domain closes
     * @param info the {@code FI_CONNREQ} event's info
     * @param label for messages
     */
    static ScopedDomain open(FabricTransport transport, MemorySegment info, String label) {
        transport.retain(); // released by closeNative(), or below when opening fails
        try (Arena tmp = Arena.ofConfined()) {
            fi_domain_attr.threading(fi_info.domain_attr(info), transport.threading());
            MemorySegment out = tmp.allocate(C_POINTER);
            MemorySegment fp = fi_ops_fabric.domain(fid_fabric.ops(transport.fabric()));
            FabricLibrary.check("fi_domain", fi_ops_fabric.domain.invoke(fp, transport.fabric(), info, out,
                    MemorySegment.NULL), label);
            return new ScopedDomain(transport, out.get(C_POINTER, 0), label);
        } catch (RuntimeException e) {
            transport.release();
            throw e;
        }
    }

    @Override
    public DomainOps ops() {
        return ops;
    }

    @Override
    public synchronized void retain() {
        if (nativeClosed || !held && children == 0) {
            throw new ResourceClosedException("the key scope of " + label + " is closed");
        }
        transport.ensureOpen();
        children++;
    }

    @Override
    public synchronized void release() {
        children--;
        closeIfDone();
    }

    /** Registers memory in this domain: its key works on the connection opened in it only. */
    @Override
    public LocalRegion register(MemorySegment memory, Set<RegionAccess> access) {
        return transport.register(this, memory, access);
    }

    /**
     * Holds this domain open while a region of the transport's domain is registered in it for
     * the connection's posts (FabricLocalRegion#registerIn, which gives the hold back with
     * {@link #release()} once it kept or closed the registration): the registration runs under no
     * lock, and the domain must not close under it.
     *
     * @throws ResourceClosedException when the domain is closed, or closing (its last child gone)
     */
    synchronized void holdForLocal(FabricLocalRegion parent) {
        if (nativeClosed || !held && children == 0) {
            throw new ResourceClosedException("the " + this + " is closed: " + parent + " cannot be registered in it");
        }
        transport.ensureOpen();
        children++;
    }

    /**
     * Keeps a registration of {@code parent} made in this domain, unless one is kept already
     * (FabricLocalRegion#registerIn, which holds the region's lock and this domain's hold, so the
     * domain is open). {@return the registration kept}
     */
    synchronized ScopedLocalMr adopt(FabricLocalRegion parent, ScopedLocalMr made) {
        ScopedLocalMr kept = parent.keep(this, made);
        if (kept == made) {
            locals.add(made);
        }
        return kept;
    }

    /** A registration of {@link #adopt} was closed (by its region, or below). */
    synchronized void forget(ScopedLocalMr r) {
        locals.remove(r);
    }

    /** {@return how many regions of the transport are registered in it} (tests) */
    synchronized int localRegistrations() {
        return locals.size();
    }

    /** {@return what it is, for messages} */
    String label() {
        return label;
    }

    @Override
    public synchronized FabricLocalRegion flushSink() {
        if (flushSink == null) {
            flushSink = transport.register(this, arena.allocate(8, 8), EnumSet.of(RegionAccess.READ_DST));
        }
        return flushSink;
    }

    /** The request's hold goes; the domain closes with its last child. */
    @Override
    public synchronized void close() {
        if (!held) {
            return;
        }
        held = false;
        children--;
        closeIfDone();
    }

    /** {@return whether the domain is closed} (tests) */
    synchronized boolean nativeClosed() {
        return nativeClosed;
    }

    /** Nothing left but the flush sink (and no hold): it goes; then nothing: the domain goes. */
    private void closeIfDone() {
        if (held || nativeClosed) {
            return;
        }
        if (children == 1 && flushSink != null) {
            FabricLocalRegion sink = flushSink;
            flushSink = null;
            sink.close(); // its release() comes back here with no children left
            return;
        }
        if (children == 0) {
            nativeClosed = true;
            try {
                // The transport's regions registered here go first (fi_domain(3): a domain's
                // objects before it). A region closing one of them on another thread meanwhile
                // holds that registration's lock until its fi_close returned: close() waits.
                for (ScopedLocalMr r : java.util.List.copyOf(locals)) {
                    r.close();
                }
                locals.clear();
                FabricLibrary.close(ops.domain(), "domain", label);
            } finally {
                arena.close();
                transport.release();
            }
        }
    }

    @Override
    public String toString() {
        return "key scope of " + label;
    }
}
