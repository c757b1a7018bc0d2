package io.cqflux.reactor;

/** {@link ReactiveGlobalStateContract} on libfabric's tcp provider, with a separate receive CQ per connection. */
class FabricSeparateReceiveQueueReactiveGlobalStateTest extends ReactiveGlobalStateContract {
    @Override
    ReactiveContract contract() {
        return new FabricSeparateReceiveQueueReactiveContractTest();
    }
}
