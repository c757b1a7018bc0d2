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

    /**
     * Accepts the request for a connection that {@code affinity}'s event loop will serve (see
     * {@link Transport#connect(java.net.InetSocketAddress, io.cqflux.core.ConnectionConfig, byte[],
     * Object)}). The default ignores the affinity.
     *
     * @param privateData as for {@link #accept(byte[])}
     * @param affinity the loop that will register the connection (compared by identity), or
     *     {@code null} for queues of its own
     * @return the new connection (not yet established)
     */
    default Connection accept(byte[] privateData, Object affinity) {
        return accept(privateData);
    }

    /**
     * Accepts the request with a hello: private data that carries the accepted connection's
     * parameters, which the transport hands to {@code hello} once the connection exists and
     * before anything is sent (see {@link Transport#connectWithHello}). A caller uses it only for
     * a client that told its own parameters (it reads the server's); a connection accepted with
     * private data that does not carry them ({@link #accept(byte[], Object)}) gets nothing that
     * needs its peer to know them. The default passes none.
     *
     * @param hello builds the private data from the connection's parameters; its result as for
     *     {@link #accept(byte[])}
     * @param affinity as for {@link #accept(byte[], Object)}
     * @return the new connection (not yet established)
     */
    default Connection acceptWithHello(java.util.function.UnaryOperator<byte[]> hello, Object affinity) {
        return accept(hello.apply(new byte[0]), affinity);
    }

    /**
     * Posts a receive on the request's queue pair before it is accepted, so that a peer which
     * sends as soon as it is connected (with no credits to wait for) finds it posted
     * ({@code rpma_conn_req_recv(3)}). Its completion arrives on the accepted connection's
     * completion queues, with {@code context}, like one posted with {@link Connection#receive}.
     * Only before {@link #accept}.
     *
     * @param dst registered with {@link io.cqflux.core.RegionAccess#RECV}
     * @param offset where the message lands in {@code dst}
     * @param length room for it
     * @param context the completion's context
     * @return whether it was posted; {@code false} where the transport cannot post before
     *     accepting (the default), and the caller posts once established instead
     */
    default boolean receiveBeforeAccept(LocalRegion dst, long offset, long length, long context) {
        return false;
    }

    /**
     * {@return the address the request came from, or {@code null} where the transport cannot tell
     * it. For an authenticator and for log lines, not an identity: anything on the path can claim
     * an address}
     */
    default java.net.InetSocketAddress peerAddress() {
        return null;
    }

    /**
     * Opens, once, the scope this request's connection will live in: what the caller registers
     * in it (the connection's exposures and control words) has keys that work on this connection
     * only, and {@link #accept} then opens the connection in it
     * ({@link io.cqflux.core.Capability#CONNECTION_SCOPED_KEYS}). Only before {@link #accept};
     * the caller closes the scope after the accept, or after the accept failed or the request was
     * rejected (see {@link KeyScope} for its lifetime). One caller: the thread that answers the
     * request, which asks once; a call after that caller closed the scope may return a scope
     * whose domain is already gone.
     *
     * @return the request's scope (the same one on every call)
     * @throws io.cqflux.core.UnsupportedCapabilityException where the transport cannot scope keys
     *     (the default), naming why ({@link Transport#connectionScopedKeysRefusal()})
     */
    default KeyScope scopeKeys() {
        throw new io.cqflux.core.UnsupportedCapabilityException("this transport",
                io.cqflux.core.Capability.CONNECTION_SCOPED_KEYS, "it has no scope of registrations per connection");
    }

    /** Rejects the request and frees it. */
    void reject();

    /**
     * Rejects the request with private data for the client, and frees it: nothing is opened for
     * the request, and the client's connect ends {@link io.cqflux.core.ConnectionEvent#REJECTED}
     * with these bytes as its {@link Connection#peerPrivateData()} where the transport delivers
     * them ({@code fi_reject(3)}'s {@code param}). The default, for transports that reject
     * without data ({@link Transport#maxRejectPrivateData()} 0), drops them and calls
     * {@link #reject()}.
     *
     * @param privateData bytes for the client, at most {@link Transport#maxRejectPrivateData()}
     *     where that is above 0
     */
    default void reject(byte[] privateData) {
        reject();
    }
}
