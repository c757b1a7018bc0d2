package io.cqflux.reactor;

import io.cqflux.core.ConnectionConfig;

/**
 * The reactive contract on libfabric's tcp provider again, with a separate receive CQ per
 * connection ({@link ConnectionConfig#withReceiveCompletionQueueSize(int)}; the default has one CQ
 * for both): the loop polls two queues per connection, receives and notifications complete on the
 * second.
 */
class FabricSeparateReceiveQueueReactiveContractTest extends FabricReactiveContractTest {

    @Override
    Cqflux.Builder builder() {
        return super.builder().connectionConfig(ConnectionConfig.DEFAULT.withReceiveCompletionQueueSize(128));
    }
}
