package io.cqflux.transport.rpma;

/**
 * The sizes of connection private data on IB/RoCE, which this transport passes verbatim.
 *
 * <p>Private data goes to the peer exactly as given and comes back exactly as librpma delivers
 * it: no frame, so that a peer not written with cqflux (librpma's own examples send
 * {@code struct common_data}) reads what it expects and we read what it sent. What arrives is
 * the transport's whole buffer, not what the peer sent ({@code rdma_get_cm_event(3)}: "the size
 * of the private data buffer may be larger than the amount of private data sent by the remote
 * side. Any additional space in the buffer will be zeroed out"): formats carried over it must
 * tell their own length and tolerate trailing zeros. Empty data is sent as no private data at all,
 * because librpma refuses an empty buffer ({@code rpma_conn_req_connect(3)}: {@code RPMA_E_INVAL}
 * when {@code pdata->len == 0}).
 */
final class PrivateData {

    /** RDMA CM private data of a connect on IB/RoCE (92 bytes minus the 36-byte CMA header). */
    static final int CONNECT_CAPACITY = 56;
    /** RDMA CM private data of an accept on IB/RoCE (the CM REP's 196 bytes). */
    static final int ACCEPT_CAPACITY = 196;

    private PrivateData() {
    }
}
