package io.cqflux.transport.fabric;

import io.cqflux.core.ConnectionConfig;

/**
 * The contract again with a separate receive CQ per connection ({@code receiveCompletionQueueSize}
 * 64; the default shares one CQ), bound with {@code FI_RECV} while the main CQ is bound with
 * {@code FI_TRANSMIT} only.
 */
class FabricSeparateReceiveQueueContractTest extends FabricTransportContractTest {

    @Override
    protected ConnectionConfig config() {
        return new ConnectionConfig(64, 64, 64, 64, java.time.Duration.ofSeconds(5), false,
                io.cqflux.core.CompletionLevel.DELIVERY);
    }
}
