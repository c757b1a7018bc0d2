package io.cqflux.transport.fabric;

import io.cqflux.core.ConnectionConfig;

/**
 * The contract again with one CQ per connection for sends and receives
 * ({@code receiveCompletionQueueSize} 0), where the opcode must come from the flags alone.
 */
class FabricSharedQueueContractTest extends FabricTransportContractTest {

    @Override
    protected ConnectionConfig config() {
        return new ConnectionConfig(64, 64, 128, 0, java.time.Duration.ofSeconds(5), false,
                io.cqflux.core.CompletionLevel.DELIVERY);
    }
}
