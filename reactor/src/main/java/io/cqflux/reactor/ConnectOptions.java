package io.cqflux.reactor;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * What a connect sends the server: a cqflux hello (the default: exposed regions, the transport's
 * handshake, the control words two cqflux peers keep) or raw private data for a peer not written
 * with cqflux. Used with {@link Cqflux#connect(java.net.InetSocketAddress, ConnectOptions)}.
 *
 * <pre>{@code
 * // a C server built on librpma that speaks its examples' common_data
 * RdmaConnection c = cq.connect(server, ConnectOptions.rawPrivateData(
 *         RpmaCommonData.encode(local.rawDescriptor(), cq.peerConfigurationDescriptor(), 0))).block();
 * RpmaCommonData theirs = RpmaCommonData.decode(c.peerPrivateData());
 * }</pre>
 *
 * <p><b>Raw private data</b> travels verbatim, with no framing at any layer, and none at all when
 * empty; at most the transport's limit ({@link Cqflux#maxConnectPrivateData()}: 56 bytes on rpma).
 * The connection then has no cqflux hello: {@link RdmaConnection#remoteRegions()} is empty (make
 * peer regions with {@link RdmaConnection#remoteRegion(byte[], io.cqflux.core.RegionAccess...)}),
 * the transport's handshake is not applied unless you apply one
 * ({@link RdmaConnection#applyPeerConfiguration(byte[])}), sends are not held back by receive
 * credits (the peer must have posted its receives), and the end is what the transport reports
 * (an orderly close by the peer is {@code CLOSED}). The server's private data, as delivered, is
 * {@link RdmaConnection#peerPrivateData()}.
 *
 * <p><b>Receives for a peer without credits.</b> A peer not written with cqflux sends whenever it
 * likes, and a message that finds no posted receive is refused by the NIC (retried by the sender,
 * lost if it disconnects meanwhile). So a connection opened with raw private data keeps its whole
 * receive queue ({@code receiveQueueSize}) posted from the moment it is established, whether or
 * not {@link RdmaConnection#receive()} has a subscriber: what arrives waits in its buffer, in
 * order, for the next subscriber. When every buffer holds a message nobody took, nothing was lost
 * yet but the next message would find no posted receive, and by default the connection ends with
 * a {@link io.cqflux.core.ConnectionException} {@code LOST} saying so (the messages that arrived
 * are delivered first). A peer that never has more than {@code receiveQueueSize} messages
 * outstanding (a librpma peer whose window equals it) would be ended when it fills the pool
 * exactly: {@link #withEndOnReceiveOverflow(boolean) withEndOnReceiveOverflow(false)} lets its next
 * send wait for a receive instead (the NIC's RNR retries on RDMA, the stream on fabric/tcp). {@link #withReceivePrefetch(int)}
 * changes how many receives are kept posted ahead of demand; with a cqflux hello the default is 0
 * (its peer sends only into receives this side granted) and a prefetch only saves the first
 * messages a round trip.
 *
 * <p>Immutable and thread-safe.
 */
public final class ConnectOptions {
    private static final ConnectOptions DEFAULT = new ConnectOptions(List.of(), null, -1, true);

    private final List<Region> exposed;
    private final byte[] raw;
    private final int receivePrefetch;
    private final boolean endOnReceiveOverflow;

    private ConnectOptions(List<Region> exposed, byte[] raw, int receivePrefetch, boolean endOnReceiveOverflow) {
        this.exposed = exposed;
        this.raw = raw;
        this.receivePrefetch = receivePrefetch;
        this.endOnReceiveOverflow = endOnReceiveOverflow;
    }

    /** {@return the default: a cqflux hello that exposes no region} */
    public static ConnectOptions defaults() {
        return DEFAULT;
    }

    /**
     * A cqflux hello that exposes regions to the server.
     *
     * @param regions regions the server may access, in the order its
     *     {@link RdmaConnection#remoteRegions()} lists them
     * @return the options
     */
    public static ConnectOptions exposing(Region... regions) {
        List<Region> checked = Cqflux.exposedRegions(regions); // one check, one wording, for every entry point
        return new ConnectOptions(checked, null, -1, true);
    }

    /**
     * Raw private data, sent verbatim instead of a cqflux hello (see the class comment).
     *
     * @param data the bytes, possibly empty (then the request carries no private data at all); copied
     * @return the options
     */
    public static ConnectOptions rawPrivateData(byte[] data) {
        return new ConnectOptions(List.of(), Objects.requireNonNull(data, "data").clone(), -1, true);
    }

    /**
     * These options with a receive prefetch (see the class comment).
     *
     * @param receives receives kept posted ahead of what {@link RdmaConnection#receive()}'s
     *     subscriber asked for, from establishment on; 0 posts for demand only. At most
     *     {@code receiveQueueSize} are posted, whatever this says
     * @return new options
     * @throws IllegalArgumentException when {@code receives} is negative
     */
    public ConnectOptions withReceivePrefetch(int receives) {
        if (receives < 0) {
            throw new IllegalArgumentException("receive prefetch " + receives + " is negative (0 turns it off)");
        }
        return new ConnectOptions(exposed, raw, receives, endOnReceiveOverflow);
    }

    /**
     * These options with what a connection with raw private data does when every receive buffer
     * holds a message nobody took (see the class comment); a cqflux hello peer sends only into
     * receives granted to it, so this changes nothing for it.
     *
     * @param end {@code true} (the default): end the connection {@code LOST}, as the next
     *     message would find no posted receive; {@code false}: leave the peer's next send to wait
     *     for a receive, holding the peer back
     * @return new options
     */
    public ConnectOptions withEndOnReceiveOverflow(boolean end) {
        return new ConnectOptions(exposed, raw, receivePrefetch, end);
    }

    /** {@return whether a full receive pool ends a raw connection (the default) or holds the peer back} */
    public boolean endsOnReceiveOverflow() {
        return endOnReceiveOverflow;
    }

    /**
     * {@return the receive prefetch asked for, or -1 for the default: the whole receive queue
     * with raw private data, 0 with a cqflux hello}
     */
    public int receivePrefetch() {
        return receivePrefetch;
    }

    /** {@return whether the connect sends raw private data instead of a cqflux hello} */
    public boolean isRaw() {
        return raw != null;
    }

    /** {@return the raw private data (a copy), or {@code null} for a cqflux hello} */
    public byte[] privateData() {
        return raw == null ? null : raw.clone();
    }

    /** {@return the regions a cqflux hello exposes (empty with raw private data)} */
    public List<Region> exposed() {
        return exposed;
    }

    byte[] raw() {
        return raw;
    }

    @Override
    public String toString() {
        String prefetch = (receivePrefetch < 0 ? "" : ", receive prefetch " + receivePrefetch)
                + (endOnReceiveOverflow ? "" : ", holds the peer back on a full receive pool");
        return raw != null ? "ConnectOptions[raw " + raw.length + " bytes " + Arrays.toString(raw) + prefetch + "]"
                : "ConnectOptions[hello, " + exposed.size() + " exposed regions" + prefetch + "]";
    }
}
