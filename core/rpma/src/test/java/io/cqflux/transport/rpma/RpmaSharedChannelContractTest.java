package io.cqflux.transport.rpma;

import io.cqflux.core.ConnectionConfig;
import org.junit.jupiter.api.Tag;

/**
 * The shared transport contract again with librpma's shared completion channel
 * ({@code rpma_conn_get_compl_fd(3)}, {@code rpma_conn_wait(3)}): each connection exposes one
 * completion queue, behind which librpma keeps the connection's CQ (or its main and receive CQ).
 */
@Tag("rpma")
class RpmaSharedChannelContractTest extends RpmaTransportContractTest {

    @Override
    protected ConnectionConfig config() {
        // The default's one CQ behind the channel, as a user who only flips the flag gets it;
        // RpmaLaneTest.sharedCompletionChannel_... puts a main and a receive CQ behind it.
        return ConnectionConfig.DEFAULT.withSharedCompletionChannel(true);
    }
}
