package io.cqflux.transport.rpma;

import io.cqflux.core.ConnectionConfig;
import org.junit.jupiter.api.Tag;

/**
 * The shared transport contract again with librpma's shared completion channel
 * ({@code rpma_conn_get_compl_fd(3)}, {@code rpma_conn_wait(3)}): each connection exposes one
 * completion queue that serves the main and the receive CQ.
 */
@Tag("rpma")
class RpmaSharedChannelContractTest extends RpmaTransportContractTest {

    @Override
    protected ConnectionConfig config() {
        // Two CQs (the default has one) behind the one channel.
        return ConnectionConfig.DEFAULT.withReceiveCompletionQueueSize(128).withSharedCompletionChannel(true);
    }
}
