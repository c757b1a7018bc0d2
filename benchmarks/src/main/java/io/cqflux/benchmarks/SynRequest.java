package io.cqflux.benchmarks;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.internal.Checks;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;

/** A client's request, answered once. */
final class SynRequest implements ConnectionRequest {
    private final SynListener listener;
    private final SynConnection client;
    private final byte[] data;
    private boolean answered;

    SynRequest(SynListener listener, SynConnection client, byte[] data) {
        this.listener = listener;
        this.client = client;
        this.data = data;
    }

    @Override
    public byte[] privateData() {
        return data.clone();
    }

    @Override
    public synchronized Connection accept(byte[] privateData) {
        if (answered) {
            throw new IllegalStateException("connection request already answered");
        }
        Checks.privateData(privateData, SyntheticTransport.MAX_PRIVATE_DATA, "accept");
        answered = true;
        SynConnection server = new SynConnection(client.transport, listener.config, client.localAddress());
        SynConnection.pair(client, data, server, privateData.clone());
        return server;
    }

    @Override
    public synchronized void reject() {
        if (!answered) {
            answered = true;
            client.fail(ConnectionEvent.REJECTED);
        }
    }
}
