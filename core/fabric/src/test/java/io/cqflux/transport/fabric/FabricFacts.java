package io.cqflux.transport.fabric;

/** Provider behaviour found by the tests on libfabric 1.17 tcp; each is asserted somewhere. */
final class FabricFacts {
    /** Whether a remote write with CQ data consumes a posted receive at the target on tcp. */
    static final boolean TCP_WRITEDATA_CONSUMES_RECEIVE = false;
    /**
     * Whether tcp reports the written length in the target's entry for a remote write with CQ
     * data. It does not on 1.17 ({@code len} 0 unconditionally); the transport then reports -1.
     */
    static final boolean TCP_WRITEDATA_REPORTS_LENGTH = false;

    /**
     * Whether tcp's info orders an RMA read after earlier RMA writes (FI_ORDER_RAW in tx_attr and
     * rx_attr msg_order) when the hints ask for it: it does on 1.17, so its read-back flush is offered.
     */
    static final boolean TCP_ORDERS_READ_AFTER_WRITE = true;

    private FabricFacts() {
    }
}
