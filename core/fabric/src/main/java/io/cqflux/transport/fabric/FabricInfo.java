package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.*;

import io.cqflux.transport.fabric.ffm.fi_domain_attr;
import io.cqflux.transport.fabric.ffm.fi_ep_attr;
import io.cqflux.transport.fabric.ffm.fi_fabric_attr;
import io.cqflux.transport.fabric.ffm.fi_info;
import io.cqflux.transport.fabric.ffm.fi_rx_attr;
import io.cqflux.transport.fabric.ffm.fi_tx_attr;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * {@code fi_getinfo(3)} as the fabric transport asks it: the hints, the providers present, and
 * what an info says about ordering. Static helpers, thread-safe.
 */
@SuppressWarnings("restricted") // FFM: this package is the native-access boundary of the fabric transport
final class FabricInfo {

    private FabricInfo() {
    }

    /**
     * {@return whether {@code info} orders an RMA read after the RMA writes posted before it on
     * the same endpoint}: FI_ORDER_RAW in both the tx_attr's and the rx_attr's {@code msg_order}
     * ({@code fi_endpoint(3)} "msg_order"). The fabric flush is a read-back and rests on it.
     */
    static boolean readAfterWriteOrdered(MemorySegment info) {
        long raw = FI_ORDER_RAW();
        return (fi_tx_attr.msg_order(fi_info.tx_attr(info)) & raw) != 0
                && (fi_rx_attr.msg_order(fi_info.rx_attr(info)) & raw) != 0;
    }

    /**
     * {@code fi_getinfo} with our hints: FI_EP_MSG, FI_MSG|FI_RMA, FI_THREAD_SAFE, the MR modes we
     * handle, and of the mode bits only FI_RX_CQ_DATA. Returns NULL for -FI_ENODATA (nothing
     * matches). The hints' strings point into {@code tmp}; they are detached before
     * {@code fi_freeinfo} (which would free them).
     *
     * <p>Facts this depends on ({@code fi_getinfo(3)}, {@code fi_mr(3)}; checked on libfabric 1.17
     * with {@code tcp} on loopback and {@code verbs} over rxe in the Soft-RoCE lane):
     * <ul>
     *   <li>mode: no FI_CONTEXT/FI_CONTEXT2, so {@code context} may be any 64-bit value (our
     *       wr_id): neither provider asks for them on FI_EP_MSG, and one that did would not match.
     *       FI_RX_CQ_DATA is accepted: verbs needs it (a write with immediate consumes a posted
     *       receive, as in verbs itself) and otherwise reports {@code cq_data_size} 0, i.e. no
     *       immediate data at all; tcp ignores the bit (its mode comes back 0).</li>
     *   <li>mr_mode: tcp returns 0 (offsets into the region, our requested keys); verbs returns
     *       FI_MR_LOCAL|FI_MR_VIRT_ADDR|FI_MR_ALLOCATED|FI_MR_PROV_KEY: every local buffer needs
     *       its descriptor ({@code fi_mr_desc}), remote addresses are virtual addresses, keys are
     *       the provider's (4 bytes). {@link #register} and FabricConnection handle both.</li>
     *   <li>msg_order: the hints ask for FI_ORDER_RAW | FI_ORDER_WAW in tx_attr and rx_attr
     *       (a provider that cannot order so does not match): the flush is a read-back that must
     *       come after the earlier writes, and a durable write's writes stay in order. tcp returns
     *       both bits in both attributes ({@code FabricTransportTest} asserts it);
     *       {@link #readAfterWriteOrdered} checks the returned info before FLUSH_VISIBILITY is
     *       offered.</li>
     * </ul>
     */
    static MemorySegment getinfo(Arena tmp, String provider, MemorySegment fabricName, MemorySegment domainName,
                                 String node, String service, long flags) {
        MemorySegment hints = fi_dupinfo(MemorySegment.NULL); // fi_allocinfo() is static inline: this
        if (hints.equals(MemorySegment.NULL)) {
            throw FabricLibrary.failure("fi_allocinfo", -FabricErrno.ENOMEM.code(), "");
        }
        MemorySegment fattr = fi_info.fabric_attr(hints);
        MemorySegment dattr = fi_info.domain_attr(hints);
        try {
            fi_info.caps(hints, FI_MSG() | FI_RMA());
            fi_info.mode(hints, FI_RX_CQ_DATA());
            fi_rx_attr.mode(fi_info.rx_attr(hints), FI_RX_CQ_DATA());
            fi_tx_attr.msg_order(fi_info.tx_attr(hints), FI_ORDER_RAW() | FI_ORDER_WAW());
            fi_rx_attr.msg_order(fi_info.rx_attr(hints), FI_ORDER_RAW() | FI_ORDER_WAW());
            fi_ep_attr.type(fi_info.ep_attr(hints), FI_EP_MSG());
            fi_domain_attr.mr_mode(dattr, FI_MR_LOCAL() | FI_MR_VIRT_ADDR() | FI_MR_ALLOCATED() | FI_MR_PROV_KEY());
            fi_domain_attr.threading(dattr, FI_THREAD_SAFE());
            fi_fabric_attr.prov_name(fattr, tmp.allocateFrom(provider));
            if (fabricName != null) {
                fi_fabric_attr.name(fattr, fabricName);
            }
            if (domainName != null) {
                fi_domain_attr.name(dattr, domainName);
            }
            MemorySegment out = tmp.allocate(C_POINTER);
            MemorySegment nodeStr = node == null ? MemorySegment.NULL : tmp.allocateFrom(node);
            MemorySegment serviceStr = service == null ? MemorySegment.NULL : tmp.allocateFrom(service);
            int rc = SignalGuard.preserve(() -> fi_getinfo(FabricLibrary.apiVersion(), nodeStr, serviceStr, flags, hints,
                    out));
            if (rc == -FI_ENODATA()) {
                return MemorySegment.NULL;
            }
            FabricLibrary.check("fi_getinfo", rc, "provider " + provider + ", node " + node + ", service " + service);
            return out.get(C_POINTER, 0);
        } finally {
            fi_fabric_attr.prov_name(fattr, MemorySegment.NULL);
            fi_fabric_attr.name(fattr, MemorySegment.NULL);
            fi_domain_attr.name(dattr, MemorySegment.NULL);
            fi_freeinfo(hints);
        }
    }

    /** {@return the provider names fi_getinfo offers without hints} */
    static Set<String> providers() {
        Set<String> names = new LinkedHashSet<>();
        try (Arena tmp = Arena.ofConfined()) {
            MemorySegment out = tmp.allocate(C_POINTER);
            // Without hints every provider initialises, the psm ones included (see SignalGuard).
            int rc = SignalGuard.preserve(() -> fi_getinfo(FabricLibrary.apiVersion(), MemorySegment.NULL,
                    MemorySegment.NULL, 0, MemorySegment.NULL, out));
            if (rc != 0) {
                return names;
            }
            MemorySegment head = out.get(C_POINTER, 0);
            for (MemorySegment i = head; !i.equals(MemorySegment.NULL); i = fi_info.next(i)) {
                names.add(FabricLibrary.string(fi_fabric_attr.prov_name(fi_info.fabric_attr(i))));
            }
            fi_freeinfo(head);
        }
        return names;
    }

}
