package io.cqflux.transport.fabric;

import io.cqflux.transport.fabric.ffm.fi_ops_domain;
import io.cqflux.transport.fabric.ffm.fi_ops_mr;
import io.cqflux.transport.fabric.ffm.fid_domain;
import java.lang.foreign.MemorySegment;

/**
 * A domain and the ops of it that connections and registrations call, resolved once from its
 * fid's ops tables ({@code fi_domain(3)}: {@code fi_endpoint} and {@code fi_cq_open} are
 * {@code static inline} over {@code struct fi_ops_domain}, {@code fi_mr_reg} over
 * {@code struct fi_ops_mr}): the transport's domain and each scoped domain alike.
 *
 * @param domain the {@code struct fid_domain *}
 * @param endpointFp its {@code fi_endpoint} op
 * @param cqOpenFp its {@code fi_cq_open} op
 * @param mrRegFp its {@code fi_mr_reg} op
 */
record DomainOps(MemorySegment domain, MemorySegment endpointFp, MemorySegment cqOpenFp, MemorySegment mrRegFp) {

    /** {@return {@code domain}'s ops} */
    static DomainOps of(MemorySegment domain) {
        MemorySegment dops = fid_domain.ops(domain);
        return new DomainOps(domain, fi_ops_domain.endpoint(dops), fi_ops_domain.cq_open(dops),
                fi_ops_mr.reg(fid_domain.mr(domain)));
    }
}
