package io.cqflux.reactor;

/** {@link ReactiveGlobalStateContract} on libfabric's tcp provider over loopback. */
class FabricReactiveGlobalStateTest extends ReactiveGlobalStateContract {
    @Override
    ReactiveContract contract() {
        return new FabricReactiveContractTest();
    }
}
