package io.cqflux.core.internal;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;

/**
 * RDMA CM's {@code struct rdma_cm_id} ({@code <rdma/rdma_cma.h>}), as far as the two transports
 * over RDMA CM read it: librpma and libfabric's verbs provider each keep one per request inside an
 * opaque struct of their own, and neither destroys the id of a request it rejects (the facts in
 * {@code RpmaConnectionRequest} and {@code FabricListener}), so each transport reaches the id to
 * destroy it, and rpma to read the requester's address, which librpma has no getter for. The
 * offsets are the public header's on 64-bit Linux; {@code RdmaCmIdsTest} checks them against
 * the installed header. A transport passes an id as a segment of at least {@link #READ_SIZE}
 * bytes: one read with its bindings' {@code C_POINTER}, whose target is an unbounded byte sequence
 * (this module has no native access of its own).
 */
public final class RdmaCmIds {

    /** {@code offsetof(struct rdma_cm_id, verbs)}: the device's {@code struct ibv_context *}. */
    public static final long VERBS = 0;
    /** {@code offsetof(struct rdma_cm_id, route.addr.src_addr)}: the id's own address. */
    public static final long SOURCE = 32;
    /** {@code offsetof(struct rdma_cm_id, route.addr.dst_addr)}: the peer's address. */
    public static final long DESTINATION = 160;
    /** {@code sizeof(struct sockaddr_storage)}: each address's room. */
    public static final long ADDRESS_SIZE = 128;
    /** The bytes of an id the reads here touch: through the destination's room. */
    public static final long READ_SIZE = DESTINATION + ADDRESS_SIZE;

    private RdmaCmIds() {
    }

    /**
     * {@return an id's own address (a listener's, and that of the requests it hands out), or
     * {@code null} when it is neither IPv4 nor IPv6}
     *
     * @param id an id, at least {@link #READ_SIZE} bytes
     */
    public static InetSocketAddress source(MemorySegment id) {
        return SocketAddresses.decode(id.asSlice(SOURCE, ADDRESS_SIZE));
    }

    /**
     * {@return the peer's address of an id (a request's: the requester's), or {@code null} when it
     * is neither IPv4 nor IPv6}
     *
     * @param id an id, at least {@link #READ_SIZE} bytes
     */
    public static InetSocketAddress destination(MemorySegment id) {
        return SocketAddresses.decode(id.asSlice(DESTINATION, ADDRESS_SIZE));
    }
}
