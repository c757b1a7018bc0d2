package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.*;

import io.cqflux.core.Capability;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.TransportUnavailableException;
import io.cqflux.transport.fabric.ffm.fi_domain_attr;
import io.cqflux.transport.fabric.ffm.fi_fabric_attr;
import io.cqflux.transport.fabric.ffm.fi_info;
import io.cqflux.transport.fabric.ffm.fi_ops_fabric;
import io.cqflux.transport.fabric.ffm.fid_fabric;
import io.cqflux.core.internal.Checks;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.Listener;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * A libfabric fabric and domain of one provider, with the fid ops it calls resolved once.
 * Thread-safe for registration, parsing and opening endpoints (the domain is opened with
 * {@code FI_THREAD_SAFE}); close it after its connections, listeners and regions.
 */
@SuppressWarnings("restricted") // FFM: this package is the native-access boundary of the fabric transport
final class FabricTransport implements Transport, DomainHolder {

    /**
     * The largest private data we pass whatever the provider allows (it sizes the EQ entry
     * buffer): we ask the provider ({@code FI_OPT_CM_DATA_SIZE}, 256 on tcp) and clamp to this.
     */
    static final int PRIVATE_DATA_BOUND = 256;

    private final Arena arena = Arena.ofShared();
    private final String provider;
    private final String name;
    private final MemorySegment info;      // fi_dupinfo of the chosen entry, ours to free
    private final MemorySegment fabric;    // struct fid_fabric *
    private final MemorySegment domain;    // struct fid_domain *
    private final MemorySegment fabricName;
    private final MemorySegment domainName;
    /** The domain's name as a Java string: toString() must work after close() freed the arena. */
    private final String domainLabel;
    private final MemorySegment providerName;
    // fid ops resolved once (fi_domain(3), fi_eq(3), fi_trywait(3), fi_mr(3)).
    final MemorySegment eqOpenFp;
    final MemorySegment passiveEpFp;
    final MemorySegment trywaitFp;
    /** The domain's ops (DomainOps). */
    private final DomainOps ops;
    /** What the provider's info offers: capabilities, flush types, limits, modes. */
    private final ProviderProfile profile;
    /** ProviderProfile#sharesQueuesAcrossDomains, for #mayShareQueues. */
    private final boolean sharesQueuesAcrossDomains;
    /** Registers regions in its domain and the scoped ones, with its keys. */
    private final RegionRegistrar regions;
    private volatile boolean closed;
    /** Open listeners, connections and regions (guarded by this): the domain outlives them. */
    private int children;
    /**
     * Where every connection's flush reads back into ({@link FabricConnection#flush}): 8 bytes
     * registered once per domain, on the first connection, not once per connection, so that a
     * connection (a refused or flooding client's too) costs the domain no registration of its
     * own. What a read-back fetches is never looked at, so concurrent flushes of several
     * connections may land in it in any order. One of {@link #children} while it is open; closed
     * when it is the last child of a closed transport (guarded by this).
     */
    private FabricLocalRegion flushSink;
    /** The event queues shared per loop by this domain's connections. */
    private final LoopQueues loopQueues = new LoopQueues(this);
    /** Entries without a context that no completion-queue group member could take (CompletionGroup). */
    private final java.util.concurrent.atomic.AtomicLong droppedNotifications =
            new java.util.concurrent.atomic.AtomicLong();
    /** The domain and fabric are closed (guarded by this). */
    private boolean nativeClosed;
    /** Open registrations of its regions in scoped domains (ScopedLocalMr). */
    private final java.util.concurrent.atomic.AtomicLong scopedLocals = new java.util.concurrent.atomic.AtomicLong();

    private FabricTransport(String provider, MemorySegment info, MemorySegment fabric, MemorySegment domain) {
        this.provider = provider;
        this.name = "fabric/" + provider;
        this.info = info;
        this.fabric = fabric;
        this.domain = domain;
        MemorySegment fattr = fi_info.fabric_attr(info);
        MemorySegment dattr = fi_info.domain_attr(info);
        this.fabricName = arena.allocateFrom(FabricLibrary.string(fi_fabric_attr.name(fattr)));
        this.domainLabel = FabricLibrary.string(fi_domain_attr.name(dattr));
        this.domainName = arena.allocateFrom(domainLabel);
        this.providerName = arena.allocateFrom(provider);
        MemorySegment fops = fid_fabric.ops(fabric);
        this.eqOpenFp = fi_ops_fabric.eq_open(fops);
        this.passiveEpFp = fi_ops_fabric.passive_ep(fops);
        this.trywaitFp = fi_ops_fabric.trywait(fops);
        this.ops = DomainOps.of(domain);
        this.profile = new ProviderProfile(provider, info, fabric, passiveEpFp);
        this.sharesQueuesAcrossDomains = ProviderProfile.sharesQueuesAcrossDomains(provider,
                FabricLibrary.libraryVersion());
        this.regions = new RegionRegistrar(this, name, profile.mrMode(), profile.keyBytes(),
                profile.flushTypes(), profile.readAfterWriteOrdered());
    }

    static FabricTransport open(String requested, InetAddress localAddress) {
        return open(requested, localAddress, 1);
    }

    /**
     * @param group connections per completion queue (TransportOptions#FABRIC_COMPLETION_QUEUE_GROUP): 1
     *     for a queue per connection; above 1 only on tcp; 0 for the default, which is
     *     {@link CompletionGroup#DEFAULT_SIZE} on tcp after the first
     *     {@link CompletionGroup#DEFAULT_OWN_PER_LOOP} connections of each loop, which keep
     *     queues of their own, and 1 elsewhere
     */
    static FabricTransport open(String requested, InetAddress localAddress, int group) {
        // FabricLibrary's probe first: it sets IPATH_NO_BACKTRACE and guards the JVM's signal
        // handlers before the first dlopen of libfabric (the bindings below would load it bare,
        // and libinfinipath's SIGSEGV handler then kills the JVM at a later trap: FabricLibrary).
        if (!Fabric.isAvailable()) {
            throw new TransportUnavailableException("fabric", Fabric.unavailabilityCause(), null);
        }
        MemorySegment info = MemorySegment.NULL;
        MemorySegment fabric = MemorySegment.NULL;
        MemorySegment domain = MemorySegment.NULL;
        try (Arena tmp = Arena.ofConfined()) {
            MemorySegment list = FabricInfo.getinfo(tmp, requested, null, null, localAddress.getHostAddress(), null, FI_SOURCE());
            if (list.equals(MemorySegment.NULL)) {
                throw new TransportUnavailableException("fabric", "provider '" + requested
                        + "' offers no FI_EP_MSG endpoint with FI_MSG|FI_RMA on " + localAddress.getHostAddress()
                        + "; providers present here: " + FabricInfo.providers(), null);
            }
            info = fi_dupinfo(list);
            fi_freeinfo(list);
            // The provider's own name, not the one asked for: fi_getinfo matches prov_name without
            // regard to case (libfabric 1.17 gives "TCP" and "Tcp" the provider "tcp"), and every
            // check of the provider (isTcp, the trywait answers, the MR cache rule) compares names.
            String provider = FabricLibrary.string(fi_fabric_attr.prov_name(fi_info.fabric_attr(info)));
            FabricLibrary.refuseMrCache(provider);
            int ownPerLoop = 0;
            if (group == 0) {
                group = "tcp".equals(provider) ? CompletionGroup.DEFAULT_SIZE : 1;
                ownPerLoop = CompletionGroup.DEFAULT_OWN_PER_LOOP;
            }
            if (group > 1 && !"tcp".equals(provider)) {
                // The groups rest on tcp's CQ: entries routed by context, trywait answers, the
                // peer's write-with-immediate tag (CompletionGroup). verbs has FI_MR_LOCAL, its
                // own CQ semantics and drops the "no completion" context's errors: not checked there.
                throw new IllegalArgumentException(io.cqflux.core.spi.TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP
                        + "=" + group + " is supported on the tcp provider only, not on " + provider
                        + ": leave it unset (a completion queue per connection)");
            }
            MemorySegment pp = tmp.allocate(ValueLayout.ADDRESS);
            FabricLibrary.check("fi_fabric", fi_fabric(fi_info.fabric_attr(info), pp, MemorySegment.NULL), provider);
            fabric = pp.get(C_POINTER, 0);
            MemorySegment domainFp = fi_ops_fabric.domain(fid_fabric.ops(fabric));
            FabricLibrary.check("fi_domain", fi_ops_fabric.domain.invoke(domainFp, fabric, info, pp, MemorySegment.NULL),
                    provider);
            domain = pp.get(C_POINTER, 0);
            FabricTransport t = new FabricTransport(provider, info, fabric, domain);
            t.loopQueues.groupSize(group, ownPerLoop);
            return t;
        } catch (RuntimeException e) {
            // A half-built transport (the constructor failed after fi_domain) closes its domain
            // before the fabric: fi_close(3) of a fabric with an open domain fails with -FI_EBUSY.
            if (!domain.equals(MemorySegment.NULL)) {
                FabricLibrary.close(domain, "domain", requested);
            }
            if (!fabric.equals(MemorySegment.NULL)) {
                FabricLibrary.close(fabric, "fabric", requested);
            }
            if (!info.equals(MemorySegment.NULL)) {
                fi_freeinfo(info);
            }
            throw e;
        }
    }

    MemorySegment fabric() {
        return fabric;
    }

    MemorySegment domain() {
        return domain;
    }

    @Override
    public DomainOps ops() {
        return ops;
    }

    MemorySegment fabricName() {
        return fabricName;
    }

    MemorySegment domainName() {
        return domainName;
    }

    String provider() {
        return provider;
    }

    long caps() {
        return profile.caps();
    }

    /**
     * {@return whether this is libfabric's tcp provider} Where tcp and the RDMA providers differ
     * in a way the mode and capability bits do not say (flush, what a peer's end does to posted
     * receives), the transport checks this; see FabricConnection#flush and FabricEvents#peerEnded.
     */
    boolean isTcp() {
        return "tcp".equals(provider);
    }

    /**
     * {@return whether an endpoint opened in {@code home} may share a completion queue of this
     * transport's domain (LoopQueues)} Always in its own domain; in a connection's own
     * (ScopedDomain) where that was measured to work ({@link ProviderProfile#sharesQueuesAcrossDomains}).
     */
    boolean mayShareQueues(DomainHolder home) {
        return home == this || sharesQueuesAcrossDomains;
    }

    /** {@return the provider's key size in bytes (fi_domain(3) mr_key_size), 8 when it says none} */
    long keyBytes() {
        return profile.keyBytes();
    }

    /**
     * {@return whether a CQ error entry's prov_errno is an {@code enum ibv_wc_status}} The verbs
     * provider copies the work completion's status there (and maps it to a coarse errno in
     * {@code err}, e.g. EIO for IBV_WC_REM_ACCESS_ERR, measured over rxe); tcp's is not meaningful.
     */
    boolean providerErrnoIsVerbsStatus() {
        return "verbs".equals(provider);
    }

    @Override
    public long maxMessageSize() {
        return profile.maxMessageSize();
    }

    void ensureOpen() {
        if (closed) {
            throw new ResourceClosedException(name + " transport is closed");
        }
    }

    /**
     * Pins the domain and fabric for a child being created (listener, connection, region):
     * {@code fi_domain(3)} requires every object opened from a domain to be closed before it,
     * otherwise {@code fi_close} fails with {@code -FI_EBUSY} and the domain leaks. Pair with
     * {@link #release()} when the child closes (or its construction fails).
     *
     * @throws ResourceClosedException when the transport is closed
     */
    @Override
    public synchronized void retain() {
        ensureOpen();
        children++;
    }

    /** A child closed; the last one completes a {@link #close()} that was asked for meanwhile. */
    @Override
    public synchronized void release() {
        if (--children == 0 && closed) {
            closeNative();
        } else {
            closeFlushSinkIfLast();
        }
    }

    /**
     * {@return the domain's flush sink} Registered on first use (see {@link #flushSink}).
     *
     * @throws ResourceClosedException when the transport is closed
     */
    @Override
    public synchronized FabricLocalRegion flushSink() {
        ensureOpen();
        if (flushSink == null) {
            flushSink = register(this, arena.allocate(8, 8), EnumSet.of(RegionAccess.READ_DST));
        }
        return flushSink;
    }

    /** Closed and nothing left but the flush sink: it goes, and its release closes the domain. */
    private void closeFlushSinkIfLast() {
        if (closed && children == 1 && flushSink != null) {
            FabricLocalRegion sink = flushSink;
            flushSink = null;
            sink.close();
        }
    }

    @Override
    public String name() {
        return name;
    }

    /**
     * What the provider said in its mode bits ({@code fi_getinfo(3)} FI_RX_CQ_DATA): tcp (1.17)
     * reports a peer's {@code fi_writedata} as remote CQ data with op_context NULL, consuming no
     * posted receive; verbs requires the mode and consumes one, as verbs itself does.
     */
    @Override
    public boolean writeWithImmediateConsumesReceive() {
        return profile.rxCqData();
    }

    @Override
    public Set<Capability> capabilities() {
        return profile.capabilities();
    }

    /**
     * Scoped keys are a domain per accepted connection (ScopedDomain), offered on the providers
     * they were measured on: tcp (needs no local descriptor) and verbs (FI_MR_LOCAL: a
     * connection's posts register the transport's regions they use in its domain, ScopedLocalMr).
     * ProviderProfile#scopedKeysMeasured decides; another provider is refused with
     * {@link #scopedKeysRefusal}.
     */
    @Override
    public String connectionScopedKeysRefusal() {
        return profile.capabilities().contains(Capability.CONNECTION_SCOPED_KEYS) ? null : scopedKeysRefusal(provider);
    }

    /**
     * Scoped by default where their cost was measured and this process can bear it: tcp on the
     * libfabric measured (1.17: a domain per connection costs no fd and shares its loop's queues,
     * {@link ProviderProfile#sharesQueuesAcrossDomains}); verbs where pinning is unbounded
     * ({@link LockedMemory}: each scoped connection pins its own registrations of the instance's
     * buffers, about 6 MiB with the defaults). Elsewhere a server may still require them.
     */
    @Override
    public String connectionScopedKeysDefaultRefusal() {
        String cannot = connectionScopedKeysRefusal();
        if (cannot != null) {
            return cannot;
        }
        if (isTcp() && !sharesQueuesAcrossDomains) {
            int v = FabricLibrary.libraryVersion();
            return "libfabric " + (v >>> 16) + "." + (v & 0xffff) + "'s tcp was not measured with a domain per"
                    + " connection (1.17 was: there it costs no file descriptor and shares its loop's completion"
                    + " queues); AcceptOptions.withKeysScopedToConnection(true) scopes them anyway";
        }
        if (needsLocalDescriptors()) {
            Long bound = LockedMemory.boundOrNull();
            if (bound != null) {
                return "on " + provider + " each connection with keys of its own registers the instance's buffer pool"
                        + " and receive chunks again, about 6 MiB more of locked memory per connection with the"
                        + " defaults, and this process's RLIMIT_MEMLOCK is "
                        + (bound < 0 ? "unknown" : bound / 1024 + " KiB") + " without CAP_IPC_LOCK: raise it to"
                        + " unlimited, or AcceptOptions.withKeysScopedToConnection(true) scopes them anyway";
            }
        }
        return null;
    }

    /** {@return the reason {@link #connectionScopedKeysRefusal()} gives for a provider they were not measured on} */
    static String scopedKeysRefusal(String provider) {
        return "provider " + provider + " was not measured with keys scoped to their connection (a domain per accepted"
                + " connection, opened with the request's fi_info, that keeps its keys to that connection): they are"
                + " offered on tcp and verbs only; use a separate Cqflux instance per trust group instead";
    }

    /**
     * {@return whether every local buffer of a post needs a descriptor of its endpoint's own
     * domain ({@code fi_mr(3)} FI_MR_LOCAL: verbs), so that a connection of a scoped domain
     * registers the transport's regions it posts from in its domain (ScopedLocalMr)}
     */
    boolean needsLocalDescriptors() {
        return (profile.mrMode() & FI_MR_LOCAL()) != 0;
    }

    /** Registers {@code parent} in {@code scope} for that connection's posts (RegionRegistrar#registerLocal). */
    ScopedLocalMr registerLocal(ScopedDomain scope, FabricLocalRegion parent) {
        return regions.registerLocal(scope, parent);
    }

    void scopedLocalRegistered() {
        scopedLocals.incrementAndGet();
    }

    void scopedLocalClosed() {
        scopedLocals.decrementAndGet();
    }

    /**
     * {@return how many registrations of this transport's regions in connections' scoped domains
     * are open (FI_MR_LOCAL only; ScopedLocalMr)} (tests: each closes with its region or its
     * connection's domain)
     */
    long scopedLocalRegistrations() {
        return scopedLocals.get();
    }

    @Override
    public int maxConnectPrivateData() {
        return profile.maxPrivateData();
    }

    @Override
    public int maxAcceptPrivateData() {
        return profile.maxPrivateData();
    }

    /**
     * tcp and verbs: the provider's private-data limit. fi_reject(3)'s data reaches the client's
     * error entry on both, byte for byte ({@code core/fabric/src/test/c/reject_data_probe.c} and
     * {@code FabricTransportTest} on tcp; {@code verbs_cm_data_probe.c} and
     * {@code VerbsHostilePeerTest} over rxe, where verbs hands it to rdma_reject(3)). Other
     * providers: 0, not measured, so a server accepts to say why it refuses.
     */
    @Override
    public int maxRejectPrivateData() {
        return "tcp".equals(provider) || "verbs".equals(provider) ? profile.maxPrivateData() : 0;
    }

    @Override
    public LocalRegion register(MemorySegment memory, Set<RegionAccess> access) {
        return register(this, memory, access);
    }

    /**
     * Registers memory in {@code home}'s domain (this transport's, or one connection's scoped
     * domain), with a key from this transport's sequence: keys stay unique across all of them
     * (RegionRegistrar).
     *
     * @param home the domain, held by the region until it is closed
     */
    FabricLocalRegion register(DomainHolder home, MemorySegment memory, Set<RegionAccess> access) {
        return regions.register(home, memory, access);
    }

    @Override
    public RemoteRegion remoteRegion(byte[] descriptor) {
        return RegionDescriptor.parse(descriptor);
    }

    @Override
    public RemoteRegion remoteRegion(byte[] rawDescriptor, Set<RegionAccess> access) {
        return RegionDescriptor.parseRaw(rawDescriptor, access);
    }

    @Override
    public Listener listen(InetSocketAddress address, ConnectionConfig config) {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(config, "config");
        ensureOpen();
        return FabricListener.open(this, address, config);
    }

    /** {@return the domain's threading level as the provider granted it (fi_domain(3) enum fi_threading)} */
    int threading() {
        return profile.threading();
    }

    /**
     * {@return how many completions without a context the completion-queue groups of this
     * transport (TransportOptions#FABRIC_COMPLETION_QUEUE_GROUP) have dropped because no member
     * could take them: above all peers' writes-with-immediate whose tag no member holds (a peer
     * without the setting, a NAT, port mapping or TCP proxy between the peers) or two members
     * hold; each tag is also logged at WARNING once} Always 0 without the setting.
     */
    public long droppedNotifications() {
        return droppedNotifications.get();
    }

    /** A group dropped an entry without a context (CompletionGroup). */
    void notificationDropped() {
        droppedNotifications.incrementAndGet();
    }

    LoopQueues loopQueues() {
        return loopQueues;
    }

    @Override
    public Connection connect(InetSocketAddress address, ConnectionConfig config, byte[] privateData) {
        return connect(address, config, privateData, null);
    }

    /** tcp: the connection's events come through its loop's shared event queue (LoopQueues). */
    @Override
    public Connection connect(InetSocketAddress address, ConnectionConfig config, byte[] privateData,
                              Object affinity) {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(config, "config");
        byte[] data = Checks.privateData(privateData, maxConnectPrivateData(), "connect");
        ensureOpen();
        // Raw bytes carry no parameters: the peer never learns a tag, so the queue is its own.
        return FabricConnection.connect(this, address, config, hs -> data, false, affinity);
    }

    /**
     * tcp: the connection may share its loop's completion queue in a group (LoopQueues), whose
     * tag {@code hello} carries to the server in the connection's parameters.
     */
    @Override
    public Connection connectWithHello(InetSocketAddress address, ConnectionConfig config,
                                       java.util.function.UnaryOperator<byte[]> hello, Object affinity) {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(hello, "hello");
        ensureOpen();
        return FabricConnection.connect(this, address, config, hello, true, affinity);
    }

    /**
     * tcp: as long as a connection's receiving tag (GroupRoster#parameters), here 0; empty on
     * other providers, which share no completion queue.
     */
    @Override
    public byte[] connectionParametersTemplate() {
        return isTcp() ? GroupRoster.parameters(0) : new byte[0];
    }

    /**
     * Yes where the domain is {@code FI_THREAD_SAFE}, as the hints ask ({@link FabricInfo#getinfo};
     * tcp and verbs grant it: FabricThreadingTest, FabricVerbsThreadingTest). {@code fi_domain(3)}:
     * then all objects, endpoints and queues included, may be used by several threads at once,
     * so {@code fi_getinfo}, {@code fi_mr_reg}, {@code fi_cq_open}, {@code fi_endpoint},
     * {@code fi_ep_bind} to the loop's shared EQ (which that loop reads meanwhile), {@code fi_enable}
     * and {@code fi_connect} may run on a set-up thread. An event the loop reads before the
     * hand-over waits in the connection's {@link FabricEvents} (routed before {@code fi_connect}).
     */
    @Override
    public boolean connectsOffLoop() {
        return threading() == FI_THREAD_SAFE();
    }

    /** As {@link #connectsOffLoop()}; a request's answer and the listener's close are one step apart (FabricListener). */
    @Override
    public boolean acceptsOffLoop() {
        return connectsOffLoop();
    }

    /**
     * Yes where the domain is {@code FI_THREAD_SAFE} ({@link #connectsOffLoop()}): then
     * {@code fi_shutdown} and the {@code fi_close} of an endpoint and of its CQs may run on
     * another thread while the loop reads the shared EQ the endpoint is bound to (the endpoint's
     * close and its unroute are one step against that read: SharedEventQueue). What the close
     * leaves alone for the loop: FabricConnection#close.
     */
    @Override
    public boolean closesOffLoop() {
        return connectsOffLoop();
    }

    /**
     * Closes the transport: new children are refused at once; the domain and the fabric are
     * closed when the last listener, connection and region is (at once when there are none).
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (children == 0) {
            closeNative();
        } else {
            closeFlushSinkIfLast();
        }
    }

    /** {@return whether the domain and the fabric are closed} (tests: nothing kept them open) */
    synchronized boolean nativeClosed() {
        return nativeClosed;
    }

    private void closeNative() {
        nativeClosed = true;
        // fi_domain(3): close the domain after every object opened from it, then the fabric.
        try {
            FabricLibrary.close(domain, "domain", this);
            FabricLibrary.close(fabric, "fabric", this);
        } finally {
            fi_freeinfo(info);
            arena.close();
        }
    }

    @Override
    public String toString() {
        return name + "[" + domainLabel + "]";
    }
}
