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
 * <p>Immutable and thread-safe.
 */
public final class ConnectOptions {
    private static final ConnectOptions DEFAULT = new ConnectOptions(List.of(), null);

    private final List<Region> exposed;
    private final byte[] raw;

    private ConnectOptions(List<Region> exposed, byte[] raw) {
        this.exposed = exposed;
        this.raw = raw;
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
        return new ConnectOptions(checked, null);
    }

    /**
     * Raw private data, sent verbatim instead of a cqflux hello (see the class comment).
     *
     * @param data the bytes, possibly empty (then the request carries no private data at all); copied
     * @return the options
     */
    public static ConnectOptions rawPrivateData(byte[] data) {
        return new ConnectOptions(List.of(), Objects.requireNonNull(data, "data").clone());
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
        return raw != null ? "ConnectOptions[raw " + raw.length + " bytes " + Arrays.toString(raw) + "]"
                : "ConnectOptions[hello, " + exposed.size() + " exposed regions]";
    }
}
