package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.*;

import io.cqflux.core.Capability;
import io.cqflux.core.FlushType;
import io.cqflux.transport.fabric.ffm.fi_domain_attr;
import io.cqflux.transport.fabric.ffm.fi_ep_attr;
import io.cqflux.transport.fabric.ffm.fi_info;
import io.cqflux.transport.fabric.ffm.fi_ops_fabric;
import io.cqflux.transport.fabric.ffm.fi_rx_attr;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * What one provider's {@code fi_info} offers a {@link FabricTransport}, read once when it opens
 * (the transport frees the info at its close): the capabilities it advertises and why each is
 * or is not, the flush types, the limits (message size, private data, key size) and the modes
 * the transport's behaviour depends on. Immutable.
 */
@SuppressWarnings("restricted") // FFM: this package is the native-access boundary of the fabric transport
final class ProviderProfile {

    private final long mrMode;
    private final long caps;
    private final long cqDataSize;
    /** fi_domain(3) threading, as the provider granted it. */
    private final int threading;
    /** fi_domain(3) mr_key_size: 8 on tcp, 4 on verbs (rkeys); chooses the descriptor form. */
    private final long keyBytes;
    /** fi_getinfo(3) FI_RX_CQ_DATA: remote CQ data consumes a posted receive (verbs), or not (tcp). */
    private final boolean rxCqData;
    private final long maxMessageSize;
    private final Set<Capability> capabilities;
    private final Set<FlushType> providerFlushTypes;
    /** Whether the info orders an RMA read after earlier RMA writes (FI_ORDER_RAW, tx and rx). */
    private final boolean readAfterWriteOrdered;
    private final int maxPrivateData;

    /**
     * @param provider the provider's name, for what only some providers were measured to do
     * @param info the chosen entry
     * @param fabric the fabric opened from it, where the private-data limit is asked
     * @param passiveEpFp the fabric's {@code fi_passive_ep} op
     */
    ProviderProfile(String provider, MemorySegment info, MemorySegment fabric, MemorySegment passiveEpFp) {
        MemorySegment dattr = fi_info.domain_attr(info);
        this.mrMode = fi_domain_attr.mr_mode(dattr);
        this.caps = fi_info.caps(info);
        this.cqDataSize = fi_domain_attr.cq_data_size(dattr);
        this.threading = fi_domain_attr.threading(dattr);
        long kb = fi_domain_attr.mr_key_size(dattr);
        this.keyBytes = kb <= 0 ? 8 : kb;
        this.rxCqData = ((fi_info.mode(info) | fi_rx_attr.mode(fi_info.rx_attr(info))) & FI_RX_CQ_DATA()) != 0;
        long mms = fi_ep_attr.max_msg_size(fi_info.ep_attr(info));
        // size_t: tcp reports SIZE_MAX, which reads as -1 in a Java long.
        this.maxMessageSize = mms < 0 ? Long.MAX_VALUE : mms;
        EnumSet<Capability> c = EnumSet.noneOf(Capability.class);
        this.readAfterWriteOrdered = FabricInfo.readAfterWriteOrdered(info);
        if ((caps & FI_RMA()) != 0) {
            c.add(Capability.RMA);
        }
        if ((caps & FI_RMA()) != 0 && readAfterWriteOrdered) {
            // Flush is a read-back of the flushed range (see FabricConnection#flush): it proves
            // visibility only because the read is ordered after the earlier writes, which the
            // hints request (FI_ORDER_RAW) and the returned info must confirm; without it no
            // flush type is offered and a FLUSH_TYPE_VISIBILITY registration is refused. FLUSH_PERSISTENT is never offered, although tcp advertises FI_RMA_PMEM:
            // its FI_COMMIT_COMPLETE commits only the byte ranges of the operation that carries the
            // flag (fi_cq(3) "completion levels"; measured on 1.17), so a flush cannot make
            // EARLIER writes persistent. Durable writes on pmem would need the writes themselves
            // posted at FI_COMMIT_COMPLETE.
            c.add(Capability.FLUSH_VISIBILITY);
        }
        if ((caps & FI_MSG()) != 0) {
            c.add(Capability.MESSAGES);
        }
        // 1.17's tcp does not list FI_REMOTE_CQ_DATA among its caps: remote CQ data is available
        // when the domain has cq_data_size > 0 (fi_domain(3)); we need 4 bytes for the immediate.
        // verbs reports cq_data_size 4 only when the hints accept the FI_RX_CQ_DATA mode (0
        // otherwise; measured on 1.17 over rxe): see getinfo.
        if (cqDataSize >= 4) {
            if (c.contains(Capability.RMA)) {
                c.add(Capability.WRITE_WITH_IMMEDIATE);
            }
            if (c.contains(Capability.MESSAGES)) {
                c.add(Capability.SEND_WITH_IMMEDIATE);
            }
        }
        if (scopedKeysMeasured(provider)) {
            c.add(Capability.CONNECTION_SCOPED_KEYS);
        }
        // ATOMIC_WRITE: not offered. tcp has no FI_ATOMIC at all; verbs lists FI_ATOMIC when
        // asked, but this transport does not bind fi_ops_atomic (fi_atomic(3)), so the capability
        // check refuses atomicWrite with UnsupportedCapabilityException on every provider.
        this.capabilities = Collections.unmodifiableSet(c);
        this.providerFlushTypes = Collections.unmodifiableSet(readAfterWriteOrdered
                ? EnumSet.of(FlushType.VISIBILITY) : EnumSet.noneOf(FlushType.class));
        this.maxPrivateData = (int) Math.min(FabricTransport.PRIVATE_DATA_BOUND,
                queryCmDataSize(info, fabric, passiveEpFp));
    }

    /**
     * {@return whether keys scoped to their connection are offered on {@code provider}} A domain
     * per accepted connection (ScopedDomain); the instance's own registrations (the application's
     * regions, receive buffers) stay in the transport's domain. A provider that needs no local
     * descriptor (tcp) posts from them as they are; one with FI_MR_LOCAL (verbs: a post's lkey
     * must belong to the queue pair's protection domain) gets them registered in the
     * connection's domain on first use (ScopedLocalMr). Only tcp and verbs were measured to keep
     * a key to the domain of the endpoint it arrives on and to open a domain with a connection
     * request's info (ScopedDomain's facts); another provider may do either differently, so it is
     * not offered there (FabricTransport#scopedKeysRefusal says so).
     */
    static boolean scopedKeysMeasured(String provider) {
        return "tcp".equals(provider) || "verbs".equals(provider);
    }

    /**
     * {@return whether an endpoint opened in a domain of its own (ScopedDomain) may be bound to a
     * completion queue of the transport's domain, so that a connection with keys scoped to it
     * shares its loop's completion queues in groups (CompletionGroup) as the transport's own
     * connections do} fi_domain(3) calls a domain "the boundary for associating different
     * resources together" and fi_endpoint(3) names no rule for a CQ of another domain, so this
     * rests on what was measured: libfabric 1.17's tcp
     * ({@code core/fabric/src/test/c/scoped_shared_cq_probe.c}, CompletionGroupTest) accepts
     * the binding ({@code fi_ep_bind} returns 0; ofi_ep_bind_cq checks no domain), progresses the
     * endpoint when the CQ is read (its CQ progress walks the endpoints bound to it, whatever
     * their domain) and wakes the CQ's wait fd for it, delivers its completions there, and still
     * looks a key up in the endpoint's own domain: a key of another scope presented on it fails
     * and ends that connection alone. Later tcp providers give each domain progress objects of
     * their own, which was not measured, so there, and on other providers, a scoped connection
     * keeps CQs of its own domain.
     *
     * @param provider the provider's name
     * @param libraryVersion the loaded libfabric's {@code fi_version()}
     */
    static boolean sharesQueuesAcrossDomains(String provider, int libraryVersion) {
        return "tcp".equals(provider) && libraryVersion == FI_VERSION(1, 17);
    }

    /**
     * {@return whether the transport destroys the RDMA CM id that {@code fi_reject(3)} on
     * {@code provider} leaves} libfabric's verbs provider before 1.21 rejects with
     * {@code rdma_reject(3)} and frees its request without {@code rdma_destroy_id(3)} ("Address
     * cm_id resource leak in rdma_reject path", libfabric 1.21's release notes; FabricListener's
     * fact); 1.21 destroys it itself, and so may an older build with that fix backported, where a
     * second destroy would be a use after free. {@code fi_version()} tells major and minor only,
     * so the transport does it on the release it was measured on, 1.17, alone; 1.18 to 1.20 keep
     * the leak (until the listener closes) rather than risk that. It also needs
     * {@code rdma_destroy_id} reachable from libfabric (a verbs provider built as a plugin does not
     * link librdmacm into libfabric itself).
     *
     * @param provider the provider's name
     * @param libraryVersion the loaded libfabric's {@code fi_version()}
     * @param destroyIdFound whether {@code rdma_destroy_id} resolves
     */
    static boolean destroysRejectedCmId(String provider, int libraryVersion, boolean destroyIdFound) {
        return "verbs".equals(provider) && libraryVersion == FI_VERSION(1, 17) && destroyIdFound;
    }

    /**
     * The provider's private-data limit: {@code fi_getopt(FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE)}
     * on a passive endpoint opened (and closed again, never listening) from our info; tcp says
     * 256. Falls back to 56, the smallest limit fi_cm(3) lets a provider have, if it cannot tell.
     */
    private static long queryCmDataSize(MemorySegment info, MemorySegment fabric, MemorySegment passiveEpFp) {
        try (Arena tmp = Arena.ofConfined()) {
            MemorySegment out = tmp.allocate(C_POINTER);
            int rc = fi_ops_fabric.passive_ep.invoke(passiveEpFp, fabric, info, out, MemorySegment.NULL);
            if (rc != 0) {
                return 56;
            }
            MemorySegment pep = out.get(C_POINTER, 0);
            try {
                long size = cmDataSize(pep);
                return size >= 0 ? size : 56;
            } finally {
                FabricLibrary.close(pep, "passive endpoint", "cm data size probe");
            }
        }
    }

    /**
     * {@code fi_getopt(pep, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE)}.
     *
     * @param pep a passive endpoint
     * @return the provider's private-data limit, or the negative return code when it cannot tell
     */
    static long cmDataSize(MemorySegment pep) {
        try (Arena tmp = Arena.ofConfined()) {
            MemorySegment v = tmp.allocate(ValueLayout.JAVA_LONG);
            MemorySegment l = tmp.allocate(ValueLayout.JAVA_LONG);
            l.set(ValueLayout.JAVA_LONG, 0, 8);
            int rc = io.cqflux.transport.fabric.ffm.fi_ops_ep.getopt.invoke(
                    io.cqflux.transport.fabric.ffm.fi_ops_ep.getopt(io.cqflux.transport.fabric.ffm.fid_pep.ops(pep)), pep,
                    FI_OPT_ENDPOINT(), FI_OPT_CM_DATA_SIZE(), v, l);
            return rc == 0 ? v.get(ValueLayout.JAVA_LONG, 0) : rc;
        }
    }

    /** {@return fi_domain(3) mr_mode} */
    long mrMode() {
        return mrMode;
    }

    /** {@return fi_getinfo(3) caps} */
    long caps() {
        return caps;
    }

    /** {@return the domain's threading level as the provider granted it (fi_domain(3) enum fi_threading)} */
    int threading() {
        return threading;
    }

    /** {@return the provider's key size in bytes (fi_domain(3) mr_key_size), 8 when it says none} */
    long keyBytes() {
        return keyBytes;
    }

    /** {@return whether remote CQ data consumes a posted receive (FI_RX_CQ_DATA)} */
    boolean rxCqData() {
        return rxCqData;
    }

    /** {@return the largest message, Long.MAX_VALUE for SIZE_MAX} */
    long maxMessageSize() {
        return maxMessageSize;
    }

    /** {@return what the transport offers on this provider} */
    Set<Capability> capabilities() {
        return capabilities;
    }

    /** {@return the flush types a region may be registered with} */
    Set<FlushType> flushTypes() {
        return providerFlushTypes;
    }

    /** {@return whether the info orders an RMA read after earlier RMA writes (FI_ORDER_RAW, tx and rx)} */
    boolean readAfterWriteOrdered() {
        return readAfterWriteOrdered;
    }

    /** {@return the provider's private-data limit, at most FabricTransport#PRIVATE_DATA_BOUND} */
    int maxPrivateData() {
        return maxPrivateData;
    }
}
