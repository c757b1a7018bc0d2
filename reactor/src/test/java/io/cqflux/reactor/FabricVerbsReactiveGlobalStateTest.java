package io.cqflux.reactor;

import org.junit.jupiter.api.Tag;

/** {@link ReactiveGlobalStateContract} on libfabric's verbs provider: the Soft-RoCE lane only, as {@link FabricVerbsReactiveContractTest}. */
@Tag("fabric-verbs")
class FabricVerbsReactiveGlobalStateTest extends ReactiveGlobalStateContract {
    @Override
    ReactiveContract contract() {
        return new FabricVerbsReactiveContractTest();
    }
}
