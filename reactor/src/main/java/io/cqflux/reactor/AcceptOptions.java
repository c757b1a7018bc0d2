package io.cqflux.reactor;

import io.cqflux.core.internal.Checks;
import io.cqflux.reactor.internal.resources.Arguments;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * What a server answers connection requests with: a cqflux hello (the default: exposed regions,
 * the transport's handshake, the control words) or, per request, raw private data for clients not
 * written with cqflux. Used with {@link Cqflux#bind(java.net.InetSocketAddress, AcceptOptions)}.
 *
 * <pre>{@code
 * // a C client built on librpma that speaks its examples' common_data
 * byte[] mine = RpmaCommonData.encode(region.rawDescriptor(), cq.peerConfigurationDescriptor(), 0);
 * RdmaServer s = cq.bind(address, AcceptOptions.rawPrivateData(request -> AcceptDecision.accept(mine))).block();
 * }</pre>
 *
 * <p><b>Raw private data.</b> The accept function sees each request's private data exactly as the
 * transport delivered it (padded by RDMA CM to 56 bytes on rpma) and answers with its own bytes,
 * verbatim, or rejects. It runs on the server's event-loop thread: keep it short and never block.
 * If it throws, returns {@code null} or answers more than {@link Cqflux#maxAcceptPrivateData()}
 * bytes, the request is rejected and the reason logged at WARN. The connection has no cqflux
 * hello (see {@link ConnectOptions#rawPrivateData(byte[])} for what that means).
 *
 * <p><b>Receives for a client without credits.</b> A client not written with cqflux may send as
 * soon as it is connected, before anything here subscribed to {@link RdmaConnection#receive()}.
 * So with raw private data the server posts its whole receive queue ({@code receiveQueueSize})
 * on each request <em>before</em> accepting it, as librpma's own servers do with
 * {@code rpma_conn_req_recv(3)} (on transports that cannot, fabric, once the connection is
 * established), and keeps that many posted ahead of demand: what arrives waits, in order, for
 * the connection's receive subscriber, and a pool full of messages nobody took ends the
 * connection with an error rather than leave the client's next send to the NIC's retries (see
 * {@link ConnectOptions}). {@link #withReceivePrefetch(int)}, {@link #withReceivesBeforeAccept(boolean)}
 * and {@link #withEndOnReceiveOverflow(boolean)} change that.
 *
 * <p><b>One receive pool for the server's connections</b> ({@link #withSharedReceivePool()}, off
 * by default). By default each accepted connection that receives registers a pool of its own of
 * {@code receiveQueueSize} buffers and posts as many receives as its subscriber asks for, up to
 * that depth: {@code receiveQueueSize} x {@code receiveBufferSize} bytes for each subscriber that
 * asks for unbounded demand, idle or not. With the shared pool the server registers one pool of receive buffers, for local
 * receive access only, and every connection takes its receive buffers from it: a connection posts
 * two receives to begin with (if its subscriber asks for that many) and one more for each message
 * that arrives while the pool has room, up to {@code receiveQueueSize}; under pressure its window
 * shrinks again as messages arrive. So {@code request(n)} then posts at most the window, not
 * {@code n}: a client's burst of messages starts at two in flight and grows to the full depth
 * within {@code receiveQueueSize} messages, which is why it is not the default. Its client sends only into receives the connection posted and granted (message
 * credits), so nothing is lost and nothing waits in the NIC, and a mostly idle connection pins
 * two buffers instead of its whole receive queue. The pool is registered in chunks, the first on
 * the first accept, another whenever less than half a chunk is free before an accept, and another
 * whenever a connection finds it empty, so every connection gets its starting window while the
 * pool is below its bound of {@value #MAX_SHARED_RECEIVE_POOL} buffers (and a chunk can be
 * registered). {@link #withSharedReceivePool()} registers chunks of {@value #SHARED_POOL_DEPTHS}
 * receive queue depths ({@value #SHARED_POOL_DEPTHS} x {@code receiveQueueSize} x
 * {@code receiveBufferSize} bytes), so a few busy connections reach their full window at once.
 * Only at the bound (or when registering a chunk fails) does a connection with nothing posted wait
 * for a buffer given back, its client's messages waiting for credits meanwhile. A chunk may hold
 * at most {@value #MAX_SHARED_RECEIVE_CHUNK_BYTES} bytes:
 * a larger one fails the bind. {@link #withSharedReceivePool(int)} sizes the chunk. A client with
 * raw private data sends without credits and keeps a pool of its own (above).
 *
 * <p><b>Keys scoped to their connection</b> (by default where the transport scopes them by
 * default: {@link KeyScoping#WHERE_SUPPORTED}; {@link #withKeysScopedToConnection(boolean)}
 * requires them or turns them off). The
 * server always registers what an accepted connection is exposed to, and the connection's control
 * words, once more for that connection, so its keys die with it (docs/security.md, section 5).
 * With scoped keys each accepted connection also gets a libfabric domain of its own: its endpoint
 * and what the server registers for it are opened there, so a key presented on any other
 * connection reaches nothing (the provider ends the connection it came on, as for a forged key);
 * ending or revoking the connection closes the domain after its last object. Without them those
 * registrations live in the instance's one domain, so while connection A lives, A's key also works
 * when a peer presents it on another connection of the instance (it reaches only what A was
 * granted, with A's rights). rpma cannot scope them (librpma creates a request's queue pair in the
 * listening peer's protection domain), nor fabric on another provider (not measured): there
 * {@code withKeysScopedToConnection(true)} fails the bind with
 * {@link io.cqflux.core.UnsupportedCapabilityException} naming the transport and why. fabric/tcp on
 * a libfabric other than 1.17 and fabric/verbs under a finite {@code RLIMIT_MEMLOCK} (below) can,
 * but do not by default. Where the default does not scope them the bind says so at WARNING, naming
 * why, and {@code withKeysScopedToConnection(false)} acknowledges it without a warning.
 * {@link RdmaServer#keysScopedToConnection()} tells what a bound server got.
 *
 * <p>What a scoped connection's peer can reach is exactly what its hello named: a region the
 * application registered with {@link Cqflux#register} and handed to that peer some other way (its
 * {@link Region#rawDescriptor()} in a message, say) lives in the instance's domain, so the peer's
 * access to it fails and ends the connection, as a forged key does. A server that hands regions out
 * that way exposes them in its hello instead, or turns scoping off. Locally the application's regions,
 * the buffer pool and the shared receive pool stay in the instance's domain and work on a scoped
 * connection (a connection's own receive pool is registered in its scope): tcp needs no local
 * descriptor; verbs needs one of the connection's own protection domain ({@code FI_MR_LOCAL}), so
 * on verbs each of the instance's regions a scoped connection posts from (a source or destination
 * of its operations, the shared pool's chunks it receives into, the buffer pool its
 * {@code send(byte[])} and {@code write(byte[])} copy into) is registered once more in that
 * connection's domain, whole and locally only, on the connection's first operation with it, and
 * that registration is closed with the region or the connection, whichever ends first.
 *
 * <p>The cost measured on libfabric 1.17's tcp is one domain per connection: no file descriptor
 * (the connection shares its loop's completion queues as an unscoped one does), well under a KiB
 * of native heap, and no accept time that shows beside the connection's own; on other libfabric
 * versions (not measured) a scoped connection would keep completion queues of its own domain (3
 * more file descriptors each, and the domain's progress), so there it is not the default. On verbs
 * the cost is real, and the reason for the opt-out and for the default's condition: each of those
 * registrations pins its whole region again and counts against {@code RLIMIT_MEMLOCK} again: allow
 * roughly the instance's own registrations plus, per scoped connection, the buffer pool (4 MiB by
 * default) if it sends or writes from {@code byte[]}, each shared pool chunk it received into (2 MiB
 * by default), its own receive pool if it has one, a page for its flush sink and each application
 * region it posted from (about 6 MiB per connection with the defaults; a registration the limit
 * refuses fails that operation). So verbs scopes them by default only where the process may pin
 * without bound: an unlimited soft {@code RLIMIT_MEMLOCK}, or {@code CAP_IPC_LOCK}, which memory
 * registration does not count against the limit. Each registration runs on the connection's event loop, which
 * serves nothing else meanwhile: over Soft-RoCE under emulation 0.6-1.0 ms for 4 KiB, 4 MiB or
 * 2 MiB alike (docs/security.md, section 5, has the figures; a NIC's differ).
 *
 * <p>Immutable and thread-safe.
 */
public final class AcceptOptions {
    /** The most buffers a shared receive pool may have, its chunks together (and so the largest chunk). */
    public static final int MAX_SHARED_RECEIVE_POOL = io.cqflux.reactor.internal.connection.SharedReceivePool.MAX_BUFFERS;
    /**
     * The chunk of {@link #withSharedReceivePool()}, in receive queue depths: enough for a few
     * connections at their full window at once while the rest hold their starting windows.
     */
    public static final int SHARED_POOL_DEPTHS = 4;
    /** The most bytes one chunk of a shared receive pool may register (its buffers times {@code receiveBufferSize}). */
    public static final long MAX_SHARED_RECEIVE_CHUNK_BYTES =
            io.cqflux.reactor.internal.connection.SharedReceivePool.MAX_CHUNK_BYTES;
    /**
     * The smallest chunk of {@link #withSharedReceivePool(int)}: four starting windows, so that the
     * low-water mark (a quarter of a chunk) leaves a window free.
     */
    public static final int MIN_SHARED_RECEIVE_CHUNK = 4 * io.cqflux.reactor.internal.connection.SharedReceivePool.INITIAL_WINDOW;

    /** The default bound on requests between their arrival and their establishment or refusal. */
    public static final int DEFAULT_MAX_PENDING_HANDSHAKES = 128;

    private final List<Region> exposed;
    private final Function<byte[], AcceptDecision> accept;
    private final int receivePrefetch;
    private final boolean beforeAccept;
    private final Authenticator authenticator;
    private final int maxConnections;
    private final int maxPendingHandshakes;
    /** Null: the instance's connect timeout. */
    private final Duration handshakeTimeout;
    private final boolean endOnReceiveOverflow;
    /** Buffers per chunk of the server's shared receive pool; 0: off (the default); -1: SHARED_POOL_DEPTHS depths. */
    private final int sharedReceivePool;
    /** Whether each accepted connection gets a key scope of its own (withKeysScopedToConnection). */
    private final KeyScoping scopedKeys;
    /** The bound on connections from one address or network (withMaxConnectionsPerAddress). */
    private final PerAddress perAddress;

    /**
     * The bound on connections from one client network: at most {@code max}, counted per IPv4
     * address's first {@code ipv4Prefix} bits and per IPv6 address's first {@code ipv6Prefix}
     * bits; {@code max} {@link Integer#MAX_VALUE}: none.
     */
    private record PerAddress(int max, int ipv4Prefix, int ipv6Prefix) {
        static final PerAddress NONE = new PerAddress(Integer.MAX_VALUE, 32, 128);
    }

    private AcceptOptions(List<Region> exposed, Function<byte[], AcceptDecision> accept, int receivePrefetch,
                          boolean beforeAccept, Authenticator authenticator, int maxConnections,
                          int maxPendingHandshakes, Duration handshakeTimeout, boolean endOnReceiveOverflow,
                          int sharedReceivePool, KeyScoping scopedKeys, PerAddress perAddress) {
        this.exposed = exposed;
        this.accept = accept;
        this.receivePrefetch = receivePrefetch;
        this.beforeAccept = beforeAccept;
        this.authenticator = authenticator;
        this.maxConnections = maxConnections;
        this.maxPendingHandshakes = maxPendingHandshakes;
        this.handshakeTimeout = handshakeTimeout;
        this.endOnReceiveOverflow = endOnReceiveOverflow;
        this.sharedReceivePool = sharedReceivePool;
        this.scopedKeys = scopedKeys;
        this.perAddress = perAddress;
    }

    private AcceptOptions(List<Region> exposed, Function<byte[], AcceptDecision> accept, int receivePrefetch,
                          boolean beforeAccept) {
        this(exposed, accept, receivePrefetch, beforeAccept, null, Integer.MAX_VALUE, DEFAULT_MAX_PENDING_HANDSHAKES,
                null, true, 0, KeyScoping.WHERE_SUPPORTED, PerAddress.NONE);
    }

    /** {@return the defaults of a server bound without options: {@code exposing(regions)}} */
    static AcceptOptions defaults(List<Region> regions) {
        return new AcceptOptions(regions, null, -1, false);
    }

    /**
     * A cqflux hello that exposes regions to every client, as {@link Cqflux#bind(java.net.InetSocketAddress, Region...)}.
     *
     * @param regions the regions, in the order the clients' {@link RdmaConnection#remoteRegions()} lists them
     * @return the options
     */
    public static AcceptOptions exposing(Region... regions) {
        List<Region> checked = Arguments.exposedRegions(regions); // one check, one wording, for every entry point
        return new AcceptOptions(checked, null, -1, false);
    }

    /**
     * Raw private data: {@code accept} decides on each request from its raw private data.
     *
     * @param accept called on the event loop with a copy of each request's private data, as delivered
     * @return the options
     */
    public static AcceptOptions rawPrivateData(Function<byte[], AcceptDecision> accept) {
        return new AcceptOptions(List.of(), Objects.requireNonNull(accept, "accept"), -1, true);
    }

    /**
     * These options with a receive prefetch for each accepted connection (see the class comment
     * and {@link ConnectOptions#withReceivePrefetch(int)}).
     *
     * @param receives receives kept posted ahead of demand; 0 posts for demand only (and none
     *     before the accept). At most {@code receiveQueueSize} are posted, whatever this says,
     *     and with a shared receive pool ({@link #withSharedReceivePool()}) at most the
     *     connection's window
     * @return new options
     * @throws IllegalArgumentException when {@code receives} is negative
     */
    public AcceptOptions withReceivePrefetch(int receives) {
        if (receives < 0) {
            throw new IllegalArgumentException("receive prefetch " + receives + " is negative (0 turns it off)");
        }
        return new AcceptOptions(exposed, accept, receives, beforeAccept, authenticator, maxConnections,
                maxPendingHandshakes, handshakeTimeout, endOnReceiveOverflow, sharedReceivePool, scopedKeys, perAddress);
    }

    /**
     * These options with the prefetch posted before each accept ({@code rpma_conn_req_recv(3)}),
     * or only once established. On by default with raw private data.
     *
     * @param before whether to post before accepting
     * @return new options
     * @throws IllegalStateException on options with a cqflux hello: its client sends only into
     *     receives this side granted, so nothing can arrive before them
     */
    public AcceptOptions withReceivesBeforeAccept(boolean before) {
        if (accept == null && before) {
            throw new IllegalStateException("receives before the accept are for raw private data: a cqflux client"
                    + " sends only into receives this side granted");
        }
        return new AcceptOptions(exposed, accept, receivePrefetch, before, authenticator, maxConnections,
                maxPendingHandshakes, handshakeTimeout, endOnReceiveOverflow, sharedReceivePool, scopedKeys, perAddress);
    }

    /**
     * These options with an authenticated accept: each client's hello must carry credentials
     * ({@link ConnectOptions#credentials(byte[])}) that {@code authenticator} accepts, and nothing
     * of the server's (control words, registrations of the exposed regions) is registered for a
     * request before it said so. A refused client's connect fails with {@code REJECTED} and the
     * authenticator's reason.
     *
     * @param authenticator the decision, e.g. {@link SharedSecretAuthenticator}
     * @return new options
     * @throws IllegalStateException on options with raw private data (they carry no hello: decide
     *     in the accept function instead)
     */
    public AcceptOptions authenticatedBy(Authenticator authenticator) {
        Objects.requireNonNull(authenticator, "authenticator");
        if (accept != null) {
            throw new IllegalStateException("an authenticator reads a cqflux hello's credentials; with raw private"
                    + " data the accept function decides");
        }
        return new AcceptOptions(exposed, accept, receivePrefetch, beforeAccept, authenticator, maxConnections,
                maxPendingHandshakes, handshakeTimeout, endOnReceiveOverflow, sharedReceivePool, scopedKeys, perAddress);
    }

    /**
     * These options with a bound on the server's connections: established ones plus handshakes
     * in progress. A request beyond it is rejected before anything is registered for it (WARN,
     * rate-limited; {@link RdmaServer#stats()}). Unbounded by default.
     *
     * @param max at least 1
     * @return new options
     * @throws IllegalArgumentException when {@code max} is below 1
     */
    public AcceptOptions withMaxConnections(int max) {
        if (max < 1) {
            throw new IllegalArgumentException("max connections " + max + " is below 1");
        }
        return new AcceptOptions(exposed, accept, receivePrefetch, beforeAccept, authenticator, max,
                maxPendingHandshakes, handshakeTimeout, endOnReceiveOverflow, sharedReceivePool, scopedKeys, perAddress);
    }

    /**
     * These options with a bound on the connections from one IP address (established ones plus
     * handshakes in progress, whatever their port), so that one client host cannot take every
     * connection and handshake the other bounds allow. A request beyond it is rejected before
     * anything is registered for it, its client reading "refused by the server: too many
     * connections from your address; try again later" where the transport's reject carries a
     * reason (WARN, rate-limited; {@link RdmaServer#stats()}, {@link RefusalKind#MAX_PER_ADDRESS}).
     * The address is the one the request came from ({@code ConnectionRequest.peerAddress()}: what the
     * network says, so clients behind one NAT share a bound, and an IPv6 host with a prefix of its
     * own can use many: {@link #withMaxConnectionsPerAddress(int, int, int)} bounds a network). A
     * request whose address the transport cannot tell is not counted (the server says so once, at
     * WARN): fabric reads it from the request on tcp and verbs, rpma from the RDMA CM id inside
     * librpma's request (docs/security.md, section 7). Unbounded by default.
     *
     * @param max at least 1
     * @return new options
     * @throws IllegalArgumentException when {@code max} is below 1
     */
    public AcceptOptions withMaxConnectionsPerAddress(int max) {
        return withMaxConnectionsPerAddress(max, 32, 128);
    }

    /**
     * These options with a bound on the connections from one client network, as
     * {@link #withMaxConnectionsPerAddress(int)} bounds one address: the addresses whose first
     * {@code ipv4PrefixLength} bits (IPv4) or first {@code ipv6PrefixLength} bits (IPv6) are the
     * same count together. An IPv6 host is usually given a whole /64 (RFC 4291's interface
     * identifiers, SLAAC, privacy addresses that change by the hour), so a bound per single IPv6
     * address lets one host open as many connections as it picks addresses;
     * {@code withMaxConnectionsPerAddress(n, 32, 64)} bounds each IPv4 address and each /64. An
     * IPv4-mapped IPv6 address ({@code ::ffff:a.b.c.d}) counts as its IPv4 address. The log line
     * of a refusal names the network ({@code 10.1.2.0/24}, {@code 2001:db8:1:2:0:0:0:0/64}); the
     * client reads the same reason as for one address.
     *
     * @param max at least 1
     * @param ipv4PrefixLength the bits of an IPv4 address that name its network, 1..32 (32: each
     *     address alone)
     * @param ipv6PrefixLength the bits of an IPv6 address that name its network, 1..128 (128: each
     *     address alone)
     * @return new options
     * @throws IllegalArgumentException when a value is outside its range (named, with the range)
     */
    public AcceptOptions withMaxConnectionsPerAddress(int max, int ipv4PrefixLength, int ipv6PrefixLength) {
        if (max < 1) {
            throw new IllegalArgumentException("max connections per address " + max + " is below 1");
        }
        Checks.inRange("ipv4PrefixLength", ipv4PrefixLength, 1, 32);
        Checks.inRange("ipv6PrefixLength", ipv6PrefixLength, 1, 128);
        return new AcceptOptions(exposed, accept, receivePrefetch, beforeAccept, authenticator, maxConnections,
                maxPendingHandshakes, handshakeTimeout, endOnReceiveOverflow, sharedReceivePool, scopedKeys,
                new PerAddress(max, ipv4PrefixLength, ipv6PrefixLength));
    }

    /**
     * These options with a bound on handshakes in progress: requests taken from the listener whose
     * connection is neither established nor refused yet (an authenticator's pending decision
     * included). A request beyond it is rejected at once (WARN, rate-limited;
     * {@link RdmaServer#stats()}). {@value #DEFAULT_MAX_PENDING_HANDSHAKES} by default.
     *
     * @param max at least 1
     * @return new options
     * @throws IllegalArgumentException when {@code max} is below 1
     */
    public AcceptOptions withMaxPendingHandshakes(int max) {
        if (max < 1) {
            throw new IllegalArgumentException("max pending handshakes " + max + " is below 1");
        }
        return new AcceptOptions(exposed, accept, receivePrefetch, beforeAccept, authenticator, maxConnections, max,
                handshakeTimeout, endOnReceiveOverflow, sharedReceivePool, scopedKeys, perAddress);
    }

    /**
     * These options with a bound on a handshake's time, from the request's arrival to the
     * connection's establishment (the authenticator's decision included). A handshake still in
     * progress then is refused, or its connection closed (WARN, rate-limited;
     * {@link RdmaServer#stats()}). The instance's connect timeout by default.
     *
     * @param timeout more than zero, at most one day
     * @return new options
     * @throws IllegalArgumentException when {@code timeout} is outside (0, PT24H]
     */
    public AcceptOptions withHandshakeTimeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        Checks.timeout("handshake timeout", timeout);
        return new AcceptOptions(exposed, accept, receivePrefetch, beforeAccept, authenticator, maxConnections,
                maxPendingHandshakes, timeout, endOnReceiveOverflow, sharedReceivePool, scopedKeys, perAddress);
    }

    /** {@return the authenticator, or {@code null} for none} */
    public Authenticator authenticator() {
        return authenticator;
    }

    /** {@return the bound on connections (established plus handshaking)} */
    public int maxConnections() {
        return maxConnections;
    }

    /** {@return the bound on connections from one IP address or network ({@link Integer#MAX_VALUE}: none)} */
    public int maxConnectionsPerAddress() {
        return perAddress.max();
    }

    /**
     * {@return the bits of an IPv4 address that name the network {@link #maxConnectionsPerAddress()}
     * bounds (32, each address alone, unless {@link #withMaxConnectionsPerAddress(int, int, int)} said)}
     */
    public int ipv4PrefixLength() {
        return perAddress.ipv4Prefix();
    }

    /**
     * {@return the bits of an IPv6 address that name the network {@link #maxConnectionsPerAddress()}
     * bounds (128, each address alone, unless {@link #withMaxConnectionsPerAddress(int, int, int)} said)}
     */
    public int ipv6PrefixLength() {
        return perAddress.ipv6Prefix();
    }

    /** {@return the bound on handshakes in progress} */
    public int maxPendingHandshakes() {
        return maxPendingHandshakes;
    }

    /** {@return the handshake timeout, or {@code null} for the instance's connect timeout} */
    public Duration handshakeTimeout() {
        return handshakeTimeout;
    }

    /**
     * {@return the receive prefetch asked for, or -1 for the default: the whole receive queue
     * with raw private data, 0 with a cqflux hello}
     */
    public int receivePrefetch() {
        return receivePrefetch;
    }

    /** {@return whether the prefetch is posted before each accept} */
    public boolean receivesBeforeAccept() {
        return beforeAccept;
    }

    /** {@return whether requests are answered with raw private data instead of a cqflux hello} */
    public boolean isRaw() {
        return accept != null;
    }

    /** {@return the regions a cqflux hello exposes (empty with raw private data)} */
    public List<Region> exposed() {
        return exposed;
    }

    Function<byte[], AcceptDecision> acceptFunction() {
        return accept;
    }

    /**
     * These options with what each accepted raw connection does when every receive buffer holds
     * a message nobody took (see {@link ConnectOptions#withEndOnReceiveOverflow(boolean)}).
     *
     * @param end {@code true} (the default): end the connection {@code LOST}; {@code false}:
     *     leave the client's next send to wait for a receive, holding the client back
     * @return new options
     */
    public AcceptOptions withEndOnReceiveOverflow(boolean end) {
        return new AcceptOptions(exposed, accept, receivePrefetch, beforeAccept, authenticator, maxConnections,
                maxPendingHandshakes, handshakeTimeout, end, sharedReceivePool, scopedKeys, perAddress);
    }

    /**
     * These options with the size of the server's shared receive pool (see the class comment).
     *
     * @param buffers buffers of {@code receiveBufferSize} bytes per chunk (one registration) of
     *     the pool, from {@value #MIN_SHARED_RECEIVE_CHUNK} to {@value #MAX_SHARED_RECEIVE_POOL}
     *     (and a chunk of at most {@value #MAX_SHARED_RECEIVE_CHUNK_BYTES}
     *     bytes, checked at the bind); 0 turns the shared pool off (the
     *     default): each connection that receives registers a pool of its own of
     *     {@code receiveQueueSize} buffers and posts as many receives as its subscriber asks for,
     *     up to that depth
     * @return new options
     * @throws IllegalArgumentException when {@code buffers} is neither 0 nor within those bounds
     * @throws IllegalStateException on options with raw private data, whose clients send without
     *     credits and so keep a pool of their own per connection
     */
    public AcceptOptions withSharedReceivePool(int buffers) {
        if (buffers != 0 && (buffers < MIN_SHARED_RECEIVE_CHUNK || buffers > MAX_SHARED_RECEIVE_POOL)) {
            throw new IllegalArgumentException("shared receive pool of " + buffers + " buffers a chunk is outside ["
                    + MIN_SHARED_RECEIVE_CHUNK + ", " + MAX_SHARED_RECEIVE_POOL + "] (0 turns it off)");
        }
        return sharedReceivePool(buffers);
    }

    /**
     * These options with a shared receive pool registered in chunks of {@value #SHARED_POOL_DEPTHS}
     * times {@code receiveQueueSize} buffers (see the class comment).
     *
     * @return new options
     * @throws IllegalStateException on options with raw private data, whose clients send without
     *     credits and so keep a pool of their own per connection
     */
    public AcceptOptions withSharedReceivePool() {
        return sharedReceivePool(-1);
    }

    private AcceptOptions sharedReceivePool(int buffers) {
        if (accept != null && buffers != 0) {
            throw new IllegalStateException("a shared receive pool is for clients with a cqflux hello: a client with"
                    + " raw private data sends without credits, so each of its connections keeps a pool of its own");
        }
        return new AcceptOptions(exposed, accept, receivePrefetch, beforeAccept, authenticator, maxConnections,
                maxPendingHandshakes, handshakeTimeout, endOnReceiveOverflow, buffers, scopedKeys, perAddress);
    }

    /**
     * {@return the shared receive pool's chunk asked for, in buffers: 0 for none (the default), -1
     * for {@value #SHARED_POOL_DEPTHS} times {@code receiveQueueSize}}
     */
    public int sharedReceivePool() {
        return sharedReceivePool;
    }

    /**
     * What a server does about keys scoped to their connection (the class comment;
     * docs/security.md, section 5).
     */
    public enum KeyScoping {
        /**
         * The default: scoped where the transport scopes them by default (fabric/tcp on
         * libfabric 1.17, the release measured; fabric/verbs where this process may pin memory
         * without bound: an unlimited {@code RLIMIT_MEMLOCK} or {@code CAP_IPC_LOCK}); elsewhere
         * (rpma, which cannot, fabric on another provider, those cases not met) the server's keys
         * work on every connection of the instance while their own connection lives, which the
         * bind says at WARNING, naming why, and {@link RdmaServer#keysScopedToConnection()} tells.
         */
        WHERE_SUPPORTED,
        /** Scoped, or the bind fails naming the transport and why ({@code withKeysScopedToConnection(true)}). */
        REQUIRED,
        /**
         * Not scoped: the instance's one domain for every connection, for a trusted single-tenant
         * server or one that hands out {@link Region#rawDescriptor()}s
         * ({@code withKeysScopedToConnection(false)}); no warning.
         */
        OFF
    }

    /**
     * These options with keys scoped to their connection required, or turned off; without this
     * call they are scoped where the transport scopes them by default
     * ({@link KeyScoping#WHERE_SUPPORTED}): see the class comment.
     *
     * @param scoped {@code true}: each accepted connection gets a domain of its own for what the
     *     server registers for it, and the bind fails, naming the transport and why, where the
     *     transport cannot ({@code rpma}, and fabric on a provider other than tcp and verbs, where
     *     it was not measured); {@code false}: the instance's one domain for every connection (a
     *     key of a live connection then works on its neighbours too), the opt-out for a trusted
     *     single-tenant server or one that hands regions out by their raw descriptor
     * @return new options
     * @throws IllegalStateException when {@code scoped} is asked of options with raw private data:
     *     the server registers nothing for such a connection, so there is no key to scope
     */
    public AcceptOptions withKeysScopedToConnection(boolean scoped) {
        if (accept != null && scoped) {
            throw new IllegalStateException("keys scoped to their connection are the keys of a cqflux hello (exposures,"
                    + " control words): with raw private data the server registers nothing for a connection");
        }
        return new AcceptOptions(exposed, accept, receivePrefetch, beforeAccept, authenticator, maxConnections,
                maxPendingHandshakes, handshakeTimeout, endOnReceiveOverflow, sharedReceivePool,
                scoped ? KeyScoping.REQUIRED : KeyScoping.OFF, perAddress);
    }

    /**
     * These options with {@code scoping}: {@link #withKeysScopedToConnection(boolean)}'s two
     * choices and the default ({@link KeyScoping#WHERE_SUPPORTED}) back.
     *
     * @param scoping what to do about keys scoped to their connection
     * @return new options
     * @throws IllegalStateException when {@link KeyScoping#REQUIRED} is asked of options with raw
     *     private data (as {@link #withKeysScopedToConnection(boolean)})
     */
    public AcceptOptions withKeyScoping(KeyScoping scoping) {
        Objects.requireNonNull(scoping, "scoping");
        if (scoping == KeyScoping.REQUIRED) {
            return withKeysScopedToConnection(true);
        }
        return new AcceptOptions(exposed, accept, receivePrefetch, beforeAccept, authenticator, maxConnections,
                maxPendingHandshakes, handshakeTimeout, endOnReceiveOverflow, sharedReceivePool, scoping, perAddress);
    }

    /**
     * {@return whether {@link #withKeysScopedToConnection(boolean)} required keys scoped to their
     * connection} {@code false} by default, where they are still scoped if the transport can
     * ({@link #keyScoping()}); what a bound server got, {@link RdmaServer#keysScopedToConnection()} tells.
     */
    public boolean keysScopedToConnection() {
        return scopedKeys == KeyScoping.REQUIRED;
    }

    /** {@return what these options do about keys scoped to their connection: {@link KeyScoping#WHERE_SUPPORTED} unless set} */
    public KeyScoping keyScoping() {
        return scopedKeys;
    }

    /** {@return whether a full receive pool ends an accepted raw connection (the default) or holds the client back} */
    public boolean endsOnReceiveOverflow() {
        return endOnReceiveOverflow;
    }

    @Override
    public String toString() {
        String prefetch = receivePrefetch < 0 ? "" : ", receive prefetch " + receivePrefetch;
        return accept != null ? "AcceptOptions[raw" + prefetch + (beforeAccept ? ", receives before accept" : "") + "]"
                : "AcceptOptions[hello, " + exposed.size() + " exposed regions" + prefetch
                + (authenticator != null ? ", authenticated by " + authenticator : "")
                + (maxConnections != Integer.MAX_VALUE ? ", max connections " + maxConnections : "")
                + (perAddress.max() != Integer.MAX_VALUE ? ", max connections per address " + perAddress.max()
                        + (perAddress.ipv4Prefix() != 32 || perAddress.ipv6Prefix() != 128 ? " (IPv4 /"
                        + perAddress.ipv4Prefix() + ", IPv6 /" + perAddress.ipv6Prefix() + ")" : "") : "")
                + ", max pending handshakes " + maxPendingHandshakes
                + (handshakeTimeout != null ? ", handshake timeout " + handshakeTimeout.toMillis() + " ms" : "")
                + (sharedReceivePool != 0 ? ", shared receive pool" + (sharedReceivePool > 0 ? " of " + sharedReceivePool
                        + " buffers a chunk" : "") : "")
                + (scopedKeys == KeyScoping.REQUIRED ? ", keys scoped to their connection required"
                        : scopedKeys == KeyScoping.OFF ? ", keys not scoped to their connection" : "") + "]";
    }
}
