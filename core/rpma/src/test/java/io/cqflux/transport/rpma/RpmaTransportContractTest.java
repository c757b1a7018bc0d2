package io.cqflux.transport.rpma;

import io.cqflux.core.spi.Transport;
import io.cqflux.core.testing.TransportContract;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Tag;

/**
 * The shared transport contract on librpma over Soft-RoCE: two transports (two peers on rxe0)
 * on the guest's eth0 address. librpma cannot bind port 0 and report the port, so each listener
 * gets a port that is free at that moment.
 */
@Tag("rpma")
class RpmaTransportContractTest extends TransportContract {

    @Override
    protected Transport openTransport() {
        try {
            return Rpma.open(LaneSupport.address());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    protected InetSocketAddress listenAddress() {
        try {
            return LaneSupport.freePort(LaneSupport.address());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
