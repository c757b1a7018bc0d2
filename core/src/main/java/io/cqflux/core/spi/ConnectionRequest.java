package io.cqflux.core.spi;

/** An incoming connection request: accept it (with private data for the peer) or reject it, once. */
public interface ConnectionRequest {

    /**
     * {@return the private data the client sent with its request, verbatim as delivered (possibly
     * zero-padded beyond what was sent, rdma_get_cm_event(3)); a copy, may be empty}
     */
    byte[] privateData();

    /**
     * Accepts the request. The connection reports {@link io.cqflux.core.ConnectionEvent#ESTABLISHED}
     * on its event channel once the handshake is done.
     *
     * @param privateData bytes for the client, sent verbatim (none when empty), at most
     *     {@link Transport#maxAcceptPrivateData()}
     * @return the new connection (not yet established)
     */
    Connection accept(byte[] privateData);

    /** Rejects the request and frees it. */
    void reject();
}
