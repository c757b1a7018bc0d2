package io.cqflux.test.network;

import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.TransportChoice;
import org.junit.jupiter.api.Tag;

/**
 * The {@link RxePartitionContract} on librpma over Soft-RoCE (tag {@code rpma}). Figures in
 * docs/reliability.md ("On rpma, in the Soft-RoCE lane").
 */
@Tag("rpma")
class RpmaPartitionTest extends RxePartitionContract {

    @Override
    Cqflux.Builder transport(Cqflux.Builder b) {
        return b.transport(TransportChoice.RPMA);
    }

    @Override
    String name() {
        return "rpma";
    }
}
