package io.cqflux.reactor;

/** {@link ReactiveGlobalStateContract} on libfabric's tcp provider, completion queues shared in groups of two. */
class FabricCompletionQueueGroupReactiveGlobalStateTest extends ReactiveGlobalStateContract {
    @Override
    ReactiveContract contract() {
        return new FabricCompletionQueueGroupReactiveContractTest();
    }
}
