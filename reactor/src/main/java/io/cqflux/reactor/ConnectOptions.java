package io.cqflux.reactor;

import io.cqflux.reactor.internal.resources.Arguments;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

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
 * {@link RdmaConnection#peerPrivateData()}. A cqflux server that refuses the request (a malformed
 * hello, a limit reached) still says why where the transport's reject carries data (fabric/tcp,
 * fabric/verbs):
 * the connect fails {@code REJECTED} with "refused by the server: " and the reason.
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
    private static final ConnectOptions DEFAULT = new ConnectOptions(List.of(), null, -1, null, 0, true);

    private final List<Region> exposed;
    private final byte[] raw;
    private final int receivePrefetch;
    /** Asked once per connect for the credentials the hello carries; null: none. */
    private final Supplier<byte[]> credentials;
    /**
     * The length of fixed credentials ({@link #credentials(byte[])}), known before any connect so
     * that a PeerPool can refuse a hello they do not fit at once; 0: none, or a supplier's.
     */
    private final int fixedCredentials;
    private final boolean endOnReceiveOverflow;

    private ConnectOptions(List<Region> exposed, byte[] raw, int receivePrefetch, Supplier<byte[]> credentials,
                           int fixedCredentials, boolean endOnReceiveOverflow) {
        this.exposed = exposed;
        this.raw = raw;
        this.receivePrefetch = receivePrefetch;
        this.credentials = credentials;
        this.fixedCredentials = fixedCredentials;
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
        List<Region> checked = Arguments.exposedRegions(regions); // one check, one wording, for every entry point
        return new ConnectOptions(checked, null, -1, null, 0, true);
    }

    /**
     * Raw private data, sent verbatim instead of a cqflux hello (see the class comment).
     *
     * @param data the bytes, possibly empty (then the request carries no private data at all); copied
     * @return the options
     */
    public static ConnectOptions rawPrivateData(byte[] data) {
        return new ConnectOptions(List.of(), Objects.requireNonNull(data, "data").clone(), -1, null, 0, true);
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
        return new ConnectOptions(exposed, raw, receives, credentials, fixedCredentials, endOnReceiveOverflow);
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
        return new ConnectOptions(exposed, raw, receivePrefetch, credentials, fixedCredentials, end);
    }

    /** {@return whether a full receive pool ends a raw connection (the default) or holds the peer back} */
    public boolean endsOnReceiveOverflow() {
        return endOnReceiveOverflow;
    }

    /**
     * These options with fixed credentials for a server bound with
     * {@link AcceptOptions#authenticatedBy(Authenticator)} (a token, say). They travel in the
     * hello, in clear (see {@code docs/security.md}): for a secret that must not be replayable,
     * use {@link #credentials(Supplier)} with {@link SharedSecretAuthenticator#credentials(byte[])}.
     *
     * @param token the bytes, 1 to 255 (copied); the hello with them must fit
     *     {@link Cqflux#maxConnectPrivateData()} (256 bytes on fabric/tcp, 56 on rpma, where the
     *     hello itself takes about 30)
     * @return new options
     * @throws IllegalArgumentException when {@code token} is empty or longer than 255 bytes
     * @throws IllegalStateException on options with raw private data, which carry no hello
     */
    public ConnectOptions credentials(byte[] token) {
        byte[] copy = checkCredentials(Objects.requireNonNull(token, "token").clone());
        return credentials(() -> copy.clone(), copy.length);
    }

    /**
     * These options with credentials made afresh for each connect, a PeerPool's reconnects
     * included (a MAC over a timestamp and a nonce: {@link SharedSecretAuthenticator#credentials(byte[])}).
     *
     * @param supplier called once per connect, on the instance's set-up thread where the transport
     *     builds connections off the loop (fabric; rpma with cqflux's log bridge), else on an event
     *     loop; must not block: the instance's other connects wait for it, and so do the accepts of
     *     the instance's servers whose native part runs on that same thread (fabric's); it may be
     *     called from several threads at once (a connect given up on finishes beside the next, such
     *     as a PeerPool's abandoned attempt and its next attempt; on the loops, where a transport
     *     connects there), so it must be thread-safe; with {@code Cqflux.Builder.backgroundPriority}
     *     the set-up thread runs at background CPU priority, which a thread first started from
     *     the supplier (a lazily started pool's or client's) inherits for good; its
     *     bytes must be 1 to 255 long, or
     *     the connect fails with an {@link IllegalArgumentException}
     * @return new options
     * @throws IllegalStateException on options with raw private data, which carry no hello
     */
    public ConnectOptions credentials(Supplier<byte[]> supplier) {
        return credentials(supplier, 0);
    }

    /** @param fixed the length of fixed credentials, or 0 for a supplier's (unknown before each connect) */
    private ConnectOptions credentials(Supplier<byte[]> supplier, int fixed) {
        Objects.requireNonNull(supplier, "supplier");
        if (raw != null) {
            throw new IllegalStateException("credentials travel in a cqflux hello; options with raw private data"
                    + " send none");
        }
        return new ConnectOptions(exposed, raw, receivePrefetch, () -> checkCredentials(supplier.get()), fixed,
                endOnReceiveOverflow);
    }

    private static byte[] checkCredentials(byte[] c) {
        if (c == null) {
            throw new IllegalArgumentException("the credentials supplier returned null");
        }
        if (c.length == 0 || c.length > 255) {
            throw new IllegalArgumentException("credentials of " + c.length + " bytes are outside 1 to 255");
        }
        return c;
    }

    /** {@return whether the hello carries credentials} */
    public boolean hasCredentials() {
        return credentials != null;
    }

    Supplier<byte[]> credentialsSupplier() {
        return credentials;
    }

    /** {@return the length of fixed credentials ({@link #credentials(byte[])}), or 0 for none or a supplier's} */
    int fixedCredentialsLength() {
        return fixedCredentials;
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
                : "ConnectOptions[hello, " + exposed.size() + " exposed regions" + prefetch
                + (credentials != null ? ", credentials" : "") + "]";
    }
}
