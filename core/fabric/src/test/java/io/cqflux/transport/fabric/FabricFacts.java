package io.cqflux.transport.fabric;

/** Provider behaviour found by the tests on libfabric 1.17 tcp; each is asserted somewhere. */
final class FabricFacts {
    /** Whether a remote write with CQ data consumes a posted receive at the target on tcp. */
    static final boolean TCP_WRITEDATA_CONSUMES_RECEIVE = false;

    private FabricFacts() {
    }
}
