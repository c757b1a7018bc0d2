package io.cqflux.reactor;

import org.junit.jupiter.api.Tag;

/** {@link ReactiveGlobalStateContract} on librpma: the Soft-RoCE lane only, as {@link RpmaReactiveContractTest}. */
@Tag("rpma")
class RpmaReactiveGlobalStateTest extends ReactiveGlobalStateContract {
    @Override
    ReactiveContract contract() {
        return new RpmaReactiveContractTest();
    }
}
