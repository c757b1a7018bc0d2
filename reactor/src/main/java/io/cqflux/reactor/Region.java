package io.cqflux.reactor;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.reactor.internal.op.Emissions;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Local memory registered for RDMA with {@link Cqflux#register}. Operations name it as their
 * local source or destination; {@link Cqflux#bind server} exposes it to peers.
 *
 * <p><b>Lifetime.</b> {@link #close()} refuses new operations at once and deregisters the memory
 * when the last operation that uses it has completed (the NIC may still be reading or writing it
 * until then); {@link #onClose()} tells when that happened. The caller keeps the
 * {@link #segment() memory} alive until then. Closing it also revokes, at once, the keys that
 * servers gave their peers for it (each accepted connection gets a registration of its own).
 *
 * <p><b>Thread safety.</b> Thread-safe; {@code close()} is idempotent and never blocks.
 */
public final class Region implements AutoCloseable {
    private static final long CLOSED = 1L << 62;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Region.class, "state", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final LocalRegion native_;
    /**
     * In-flight operation count, plus {@link #CLOSED} once closed; updated through {@link #STATE}.
     * A field of its own rather than an {@code AtomicLong}: every operation acquires and releases
     * it, and that is one object less to reach on the path.
     */
    private volatile long state;
    private final Sinks.Empty<Void> closed = Sinks.empty();

    /** The transport of the {@link Cqflux} that registered it: operations and hellos of another refuse it. */
    private final Transport owner;

    /**
     * The live per-connection registrations of this memory that servers handed to their peers
     * ({@link #expose()}): each has its own key, so that a key given to one connection reaches
     * nothing once that connection ends. {@link #close()} revokes them all at once.
     */
    private final Map<LocalRegion, Runnable> exposures = new ConcurrentHashMap<>();

    Region(LocalRegion nativeRegion, Transport owner) {
        this.native_ = nativeRegion;
        this.owner = owner;
    }

    /**
     * Refuses this region unless the instance whose transport is {@code t} registered it: its key
     * means nothing to another instance's connections (on fabric/tcp it may equal the key of one
     * of their own regions, so a peer's writes would land in memory nobody exposed).
     *
     * @param t the transport of the instance that wants to use or expose it
     * @param role what the region would be, for the message ("exposed region 0", "local source")
     */
    void checkRegisteredWith(Transport t, String role) {
        if (owner != t) {
            throw new IllegalArgumentException(role + " " + this + " was registered with another Cqflux instance;"
                    + " use regions registered with this one (" + t.name() + ")");
        }
    }

    /** {@return the registered memory} */
    public MemorySegment segment() {
        return native_.segment();
    }

    /** {@return the size in bytes} */
    public long size() {
        return native_.size();
    }

    /** {@return what the region may be used for} */
    public Set<RegionAccess> access() {
        return native_.access();
    }

    /**
     * {@return the transport's own descriptor of this region, for a peer not written with cqflux
     * (a copy): on rpma the bytes of {@code rpma_mr_get_descriptor(3)}, which a librpma peer turns
     * into its remote region with {@code rpma_mr_remote_from_descriptor(3)} (see
     * {@link RpmaCommonData}); they end with this region's usage bits ({@link #access()} as
     * {@code RPMA_MR_USAGE_*}), so a peer learns what it may do from them. On fabric they are the
     * key, base address and length as three big-endian 64-bit values, and carry no access rights:
     * the peer must know them. A cqflux peer makes a {@link PeerRegion} of it with
     * {@link RdmaConnection#remoteRegion(byte[])} (rpma) or
     * {@link RdmaConnection#remoteRegion(byte[], RegionAccess...)}. This descriptor is the
     * instance's registration: a connection this instance accepted with keys scoped to it (a
     * server's default on fabric/tcp, {@link AcceptOptions.KeyScoping}) cannot reach it, and an
     * access with it there ends that connection as a forged key does; expose the region in the
     * bind's hello instead, or bind with {@code withKeysScopedToConnection(false)}}
     */
    public byte[] rawDescriptor() {
        return native_.rawDescriptor();
    }

    /** {@return whether {@link #close()} has not been called} */
    public boolean isOpen() {
        return (state & CLOSED) == 0;
    }

    /**
     * {@return the number of operations using it right now: subscribed and not yet terminal at the
     * NIC (their completion has not arrived and their connection's native objects still exist),
     * cancelled ones included. At 0 no operation can touch the region's memory: after a cancel,
     * that is when a range you used may be reused}
     */
    public long inFlight() {
        return state & ~CLOSED;
    }

    /** {@return a Mono that completes once the region is deregistered} */
    public Mono<Void> onClose() {
        return closed.asMono();
    }

    LocalRegion nativeRegion() {
        return native_;
    }

    /**
     * Registers this region's memory once more, with its rights, for one accepted connection: a
     * key of its own, which {@link #unexpose} or this region's {@link #close()} revokes. On
     * libfabric a key works on every endpoint of the domain ({@code fi_mr_bind} is not supported
     * by tcp or verbs), so a registration per connection is what scopes a key to one peer; in
     * {@code into}, one connection's own key scope, its keys work on that connection only.
     *
     * @param into where to register: a connection's own key scope, or {@code null}: the region's
     *     transport
     * @param onRevoke run once when the registration is revoked, by whichever revokes it
     * @return the new registration
     * @throws ResourceClosedException when the region is closed
     */
    LocalRegion expose(io.cqflux.core.spi.Registrar into, Runnable onRevoke) {
        if (!isOpen()) {
            throw new ResourceClosedException("exposed " + this + " is closed");
        }
        LocalRegion r = (into == null ? owner : into).register(native_.segment(), native_.access());
        exposures.put(r, onRevoke);
        if (!isOpen()) {
            unexpose(r); // closed meanwhile: its close() may have missed this one
            throw new ResourceClosedException("exposed " + this + " is closed");
        }
        return r;
    }

    /** Revokes one registration of {@link #expose()}; idempotent (a close may have revoked it). */
    void unexpose(LocalRegion r) {
        Runnable revoked = exposures.remove(r);
        if (revoked != null) {
            try {
                r.close();
            } finally {
                revoked.run();
            }
        }
    }

    /** {@return the number of live per-connection registrations of this region} */
    int exposures() {
        return exposures.size();
    }

    /**
     * Marks one more operation as using the region.
     *
     * @param what the operand's role, for the message
     * @throws ResourceClosedException when the region is closed
     */
    void acquire(String what) {
        for (;;) {
            long s = state;
            if ((s & CLOSED) != 0) {
                throw new ResourceClosedException(what + " region is closed");
            }
            if (STATE.compareAndSet(this, s, s + 1)) {
                return;
            }
        }
    }

    /** Ends one operation's use; the last one after {@link #close()} deregisters. */
    void release() {
        long s = (long) STATE.getAndAdd(this, -1L) - 1;
        if (s == CLOSED) {
            deregister();
        }
    }

    /**
     * Refuses new operations and deregisters as soon as no operation uses the region; idempotent.
     */
    @Override
    public void close() {
        for (;;) {
            long s = state;
            if ((s & CLOSED) != 0) {
                return;
            }
            if (STATE.compareAndSet(this, s, s | CLOSED)) {
                // Peers lose their access at once: their keys are this memory's other registrations.
                for (LocalRegion r : exposures.keySet()) {
                    unexpose(r);
                }
                if (s == 0) {
                    deregister();
                }
                return;
            }
        }
    }

    private void deregister() {
        native_.close();
        Emissions.guarded(closed::tryEmitEmpty);
    }

    @Override
    public String toString() {
        return "Region[" + size() + " bytes, " + access() + (isOpen() ? "" : ", closed") + "]";
    }
}
