package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionRecord;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.testing.TransportContract;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;

/** The shared transport contract on libfabric's tcp provider over 127.0.0.1. */
class FabricTransportContractTest extends TransportContract {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    @Override
    protected Transport openTransport() {
        return Fabric.open("tcp", LOOPBACK);
    }

    @Override
    protected InetSocketAddress listenAddress() {
        return new InetSocketAddress(LOOPBACK, 0); // fi_getname reports the bound port
    }

    /**
     * tcp has no per-operation remote access error: the target drops the connection on a bad
     * key, so the write fails with ECANCELED (WR_FLUSH_ERR) or ENOTCONN and the EQ reports the
     * shutdown, which the transport passes on as CLOSED (fi_cm(3) FI_SHUTDOWN): it is the owner of
     * the operations that knows an error completion came first and calls the end LOST.
     */
    @Override
    protected void checkBadKeyOutcome(CompletionRecord failed, List<ConnectionEvent> events) {
        assertTrue(failed.status() == CompletionStatus.WR_FLUSH_ERR || failed.status() == CompletionStatus.RETRY_EXC_ERR,
                failed::toString);
        assertTrue(failed.errorNumber() != 0, failed::toString);
        assertEquals(ConnectionEvent.CLOSED, events.get(events.size() - 1), events::toString);
    }

    @Override
    protected boolean badKeyEndsConnection() {
        return true;
    }

    @Override
    protected boolean writeWithImmediateConsumesReceive() {
        return FabricFacts.TCP_WRITEDATA_CONSUMES_RECEIVE;
    }
}
