package io.cqflux.spring.boot;

import io.cqflux.reactor.Cqflux;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code cqflux.*} configuration properties: how the auto-configured
 * {@link io.cqflux.reactor.Cqflux} is built, and the named peers it connects to. Every value left
 * unset keeps {@link io.cqflux.reactor.Cqflux.Builder}'s default; the builder checks each one and
 * names the bound it breaks, so a bad value fails the start with that message.
 *
 * <pre>
 * cqflux.transport=auto
 * cqflux.wait-strategy=adaptive
 * cqflux.peers.store.address=10.0.0.2
 * cqflux.peers.store.port=7471
 * </pre>
 */
@ConfigurationProperties("cqflux")
public class CqfluxProperties {

    /** Whether to auto-configure cqflux at all. */
    private boolean enabled = true;

    /**
     * The transport: {@code auto} (librpma where an RDMA device serves the local address, else
     * libfabric), {@code rpma} or {@code fabric}.
     */
    private String transport = "auto";

    /** The libfabric provider of the fabric transport ({@code tcp} by default: works on any Linux host). */
    private String fabricProvider;

    /** Further transport-specific options, passed as they are (e.g. {@code fabric.provider}). */
    private Map<String, String> transportProperties = new LinkedHashMap<>();

    /**
     * The local interface address the transport binds to (host name or literal); loopback by
     * default. It must be one of this host's addresses; an empty value is refused.
     */
    private String localAddress;

    /**
     * Declares that this side's registered memory is persistent and takes RDMA writes directly,
     * so that peers may make their writes to it persistent. Refused at start on a transport that
     * cannot deliver a PERSISTENT flush (fabric).
     */
    private boolean directWriteToPersistentMemory = false;

    /** How the event loops wait for completions. */
    private WaitMode waitStrategy = WaitMode.BLOCKING;

    /** Empty polling rounds before sleeping, with {@code wait-strategy=adaptive}. */
    private int adaptiveSpins = 1000;

    /** Event-loop threads; connections are spread over them round-robin (1..64). */
    private int loops = 1;

    /** Completions read per native call (1..the loop's maximum batch). */
    private int batchSize = 32;

    /**
     * Send-queue depth of every connection: the most operations in flight at once (credits); a
     * durable write holds two. Unset keeps the transport-neutral default (128).
     */
    private Integer sendCredits;

    /** Operations that may wait for a credit per connection before failing with QueueFullException (0..1,048,576). */
    private int pendingLimit = 4096;

    /**
     * How long a posted operation may go without a completion before its connection is declared
     * lost and every operation on it fails.
     */
    private Duration operationTimeout = Duration.ofSeconds(30);

    /**
     * The keep-alive between cqflux peers: how an idle connection learns that its peer went
     * silent (an interval of 0 switches it off).
     */
    private final KeepAlive keepAlive = new KeepAlive();

    /** Connection set-up timeout. */
    private Duration connectTimeout = Duration.ofSeconds(5);

    /**
     * The shutdown budget: how long, when the application stops, the requests in progress (in a
     * reactive web application) and then the in-flight operations get to end, and then the
     * connections to close; one budget for all of it.
     */
    private Duration shutdownTimeout = Duration.ofSeconds(30);

    /**
     * Event-loop thread name prefix: threads are named {@code <prefix>-loop-<n>}. Unset, each
     * instance gets the library's own, {@code cqflux-1}, {@code cqflux-2}, ...
     */
    private String threadNamePrefix;

    /** Publish readiness (AvailabilityChangeEvent) from the state of the peers marked required. */
    private boolean readiness = true;

    /** The registered buffer pool (Cqflux.buffers()) that byte[], ByteBuffer and DataBuffer operations copy through. */
    private final BufferPool bufferPool = new BufferPool();

    /** Peers by name; each one is a client connection (or pool of them) to a cqflux server. */
    private Map<String, Peer> peers = new LinkedHashMap<>();

    /** The server side: where this application listens and what it exposes to its peers. */
    private final Server server = new Server();

    /** The web layer: the HTTP answers of cqflux's errors. */
    private final Web web = new Web();

    /** The server side: a cqflux server started with the application, exposing regions. */
    public static class Server {
        /** Listen on this port (0: a free one); setting it turns the server on. */
        private Integer port;

        /** Listen on this address; unset: cqflux.local-address, or the loopback address. */
        private String address;

        /** The exposed regions, in the order declared: a client's remoteRegion(0) is the first. */
        private Map<String, ExposedRegion> regions = new LinkedHashMap<>();

        /** Authenticated accept: which clients are served. */
        private final Auth auth = new Auth();

        /** At most this many connections (established plus handshaking); unset: unbounded. */
        private Integer maxConnections;

        /** At most this many handshakes in progress; more are rejected at once. */
        private int maxPendingHandshakes = io.cqflux.reactor.AcceptOptions.DEFAULT_MAX_PENDING_HANDSHAKES;

        /** How long a handshake (the authentication included) may take; unset: cqflux.connect-timeout. */
        private Duration handshakeTimeout;

        /** Created by the binder. */
        public Server() {
        }

        /** @return the authentication settings */
        public Auth getAuth() {
            return auth;
        }

        /** @return the bound on connections, or null for none */
        public Integer getMaxConnections() {
            return maxConnections;
        }

        /** @param maxConnections the bound on connections */
        public void setMaxConnections(Integer maxConnections) {
            this.maxConnections = maxConnections;
        }

        /** @return the bound on handshakes in progress */
        public int getMaxPendingHandshakes() {
            return maxPendingHandshakes;
        }

        /** @param maxPendingHandshakes the bound on handshakes in progress */
        public void setMaxPendingHandshakes(int maxPendingHandshakes) {
            this.maxPendingHandshakes = maxPendingHandshakes;
        }

        /** @return the handshake timeout, or null for cqflux.connect-timeout */
        public Duration getHandshakeTimeout() {
            return handshakeTimeout;
        }

        /** @param handshakeTimeout the handshake timeout */
        public void setHandshakeTimeout(Duration handshakeTimeout) {
            this.handshakeTimeout = handshakeTimeout;
        }

        /** @return the port, or null when the server is off */
        public Integer getPort() {
            return port;
        }

        /** @param port the port (0: a free one) */
        public void setPort(Integer port) {
            this.port = port;
        }

        /** @return the address, or null for cqflux.local-address or the loopback address */
        public String getAddress() {
            return address;
        }

        /** @param address the address */
        public void setAddress(String address) {
            this.address = address;
        }

        /** @return the exposed regions by name, in the order declared */
        public Map<String, ExposedRegion> getRegions() {
            return regions;
        }

        /** @param regions the exposed regions by name */
        public void setRegions(Map<String, ExposedRegion> regions) {
            this.regions = regions;
        }
    }

    /**
     * The server's authenticated accept: with a shared secret, every client must present an
     * HMAC-SHA256 under it over a timestamp and a nonce (the peers' {@code shared-secret}).
     */
    public static class Auth {
        /** The shared secret (UTF-8, at least 16 bytes); unset: clients are not authenticated. */
        private String sharedSecret;

        /** How far a client's clock may be from the server's. */
        private Duration maxSkew = Duration.ofSeconds(30);

        /** Created by the binder. */
        public Auth() {
        }

        /** @return the shared secret, or null for none */
        public String getSharedSecret() {
            return sharedSecret;
        }

        /** @param sharedSecret the shared secret */
        public void setSharedSecret(String sharedSecret) {
            this.sharedSecret = sharedSecret;
        }

        /** @return the allowed clock skew */
        public Duration getMaxSkew() {
            return maxSkew;
        }

        /** @param maxSkew the allowed clock skew */
        public void setMaxSkew(Duration maxSkew) {
            this.maxSkew = maxSkew;
        }
    }

    /** One exposed region: anonymous memory of a size, or a memory-mapped file. */
    public static class ExposedRegion {
        /** Its size: anonymous memory of this size, or a file's size (the file grows to it when shorter). */
        private org.springframework.util.unit.DataSize size;

        /** A file to map and expose (e.g. on a DAX file system for persistent memory); unset: anonymous memory. */
        private java.nio.file.Path file;

        /**
         * What peers may do with it. The default lets them read it, write it, and make a write
         * durable to the memory's visibility (what a durableWrite needs); FLUSH_TYPE_PERSISTENT
         * must be asked for, and only persistent memory on rpma delivers it.
         */
        private java.util.Set<io.cqflux.core.RegionAccess> access = java.util.EnumSet.of(
                io.cqflux.core.RegionAccess.READ_SRC, io.cqflux.core.RegionAccess.WRITE_DST,
                io.cqflux.core.RegionAccess.FLUSH_TYPE_VISIBILITY);

        /** Created by the binder. */
        public ExposedRegion() {
        }

        /** @return its size, or null (a file's own size) */
        public org.springframework.util.unit.DataSize getSize() {
            return size;
        }

        /** @param size its size */
        public void setSize(org.springframework.util.unit.DataSize size) {
            this.size = size;
        }

        /** @return the file to map, or null for anonymous memory */
        public java.nio.file.Path getFile() {
            return file;
        }

        /** @param file the file to map */
        public void setFile(java.nio.file.Path file) {
            this.file = file;
        }

        /** @return what peers may do with it */
        public java.util.Set<io.cqflux.core.RegionAccess> getAccess() {
            return access;
        }

        /** @param access what peers may do with it */
        public void setAccess(java.util.Set<io.cqflux.core.RegionAccess> access) {
            this.access = access;
        }
    }

    /** The web layer's settings. */
    public static class Web {
        /** The HTTP answers of cqflux's errors ({@link CqfluxErrorWebExceptionHandler}). */
        private final ErrorMapping errorMapping = new ErrorMapping();

        /** Created by the binder. */
        public Web() {
        }

        /** @return the error mapping's settings */
        public ErrorMapping getErrorMapping() {
            return errorMapping;
        }
    }

    /** The HTTP answers of cqflux's errors. */
    public static class ErrorMapping {
        /** Answer cqflux's errors with 503 / 400 / 500 problem details instead of the default 500 (opt-in). */
        private boolean enabled = false;

        /** The Retry-After of a 503 answered because the peer is away. */
        private Duration retryAfter = Duration.ofSeconds(1);

        /**
         * Whether a 5xx problem's detail is the exception's message (it may name peer addresses
         * and native calls) instead of a generic sentence; a 400's detail is always the message.
         */
        private boolean includeMessage = false;

        /** Created by the binder. */
        public ErrorMapping() {
        }

        /** @return whether the mapping is on */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether the mapping is on */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return the Retry-After of a 503 answered because the peer is away */
        public Duration getRetryAfter() {
            return retryAfter;
        }

        /** @param retryAfter the Retry-After of a 503 answered because the peer is away */
        public void setRetryAfter(Duration retryAfter) {
            this.retryAfter = retryAfter;
        }

        /** @return whether a 5xx problem's detail is the exception's message */
        public boolean isIncludeMessage() {
            return includeMessage;
        }

        /** @param includeMessage whether a 5xx problem's detail is the exception's message */
        public void setIncludeMessage(boolean includeMessage) {
            this.includeMessage = includeMessage;
        }
    }

    /** How the loops wait. */
    public enum WaitMode {
        /** Sleep in epoll whenever idle: lowest CPU, highest latency. */
        BLOCKING,
        /** Never sleep: one core per loop. */
        BUSY_POLL,
        /** Poll for {@code adaptive-spins} empty rounds, then sleep. */
        ADAPTIVE
    }

    /**
     * The keep-alive (Cqflux.Builder.keepAlive): an idle connection to a cqflux peer is probed
     * every interval without a completion, and ends LOST after misses intervals without a sign of
     * life; never applied to a peer with raw private data.
     */
    public static class KeepAlive {
        /** How often an idle connection is checked, 10 ms to 1 day; 0 switches the keep-alive off. */
        private Duration interval = Cqflux.Builder.DEFAULT_KEEP_ALIVE_INTERVAL;

        /** Intervals in a row without a sign of life before the connection ends LOST (1..1000). */
        private int misses = Cqflux.Builder.DEFAULT_KEEP_ALIVE_MISSES;

        /** @return the interval; 0: off */
        public Duration getInterval() {
            return interval;
        }

        /** @param interval the interval; 0: off */
        public void setInterval(Duration interval) {
            this.interval = interval;
        }

        /** @return intervals without a sign of life before the end */
        public int getMisses() {
            return misses;
        }

        /** @param misses intervals without a sign of life before the end */
        public void setMisses(int misses) {
            this.misses = misses;
        }
    }

    /** The registered buffer pool's size. */
    public static class BufferPool {
        /** Registered buffers in the pool (never grows); an operation that finds none waits for one. */
        private int buffers = io.cqflux.reactor.BufferPool.DEFAULT_BUFFERS;

        /** Bytes per buffer: the largest byte[], ByteBuffer or DataBuffer one operation can carry. */
        private int bufferSize = io.cqflux.reactor.BufferPool.DEFAULT_BUFFER_SIZE;

        /** Operations that may wait for a free buffer; one more fails with QueueFullException. */
        private int maxWaiters = io.cqflux.reactor.BufferPool.DEFAULT_MAX_WAITERS;

        /** @return operations that may wait for a free buffer */
        public int getMaxWaiters() {
            return maxWaiters;
        }

        /** @param maxWaiters operations that may wait for a free buffer */
        public void setMaxWaiters(int maxWaiters) {
            this.maxWaiters = maxWaiters;
        }

        /** @return buffers in the pool */
        public int getBuffers() {
            return buffers;
        }

        /** @param buffers buffers in the pool */
        public void setBuffers(int buffers) {
            this.buffers = buffers;
        }

        /** @return bytes per buffer */
        public int getBufferSize() {
            return bufferSize;
        }

        /** @param bufferSize bytes per buffer */
        public void setBufferSize(int bufferSize) {
            this.bufferSize = bufferSize;
        }
    }

    /** One named peer: a cqflux server this application connects to. */
    public static class Peer {
        /** The peer's host name or address. */
        private String address;

        /** The secret shared with the peer's cqflux.server.auth.shared-secret (UTF-8); unset: none. */
        private String sharedSecret;

        /** @return the shared secret, or null for none */
        public String getSharedSecret() {
            return sharedSecret;
        }

        /** @param sharedSecret the shared secret */
        public void setSharedSecret(String sharedSecret) {
            this.sharedSecret = sharedSecret;
        }

        /** The peer's port. */
        private int port = 7471;

        /** Connections kept to this peer. */
        private int connections = 1;

        /** Whether the application is ready (readiness state) only while this peer is reachable. */
        private boolean required = true;

        /**
         * How long an operation waits for the peer to come back before failing; zero fails at once
         * while the peer is away.
         */
        private Duration maxWait = Duration.ZERO;

        /** The first delay between reconnection attempts; it doubles up to max-backoff. */
        private Duration minBackoff = Duration.ofMillis(100);

        /** The longest delay between reconnection attempts. */
        private Duration maxBackoff = Duration.ofSeconds(5);

        /** @return the peer's host name or address */
        public String getAddress() {
            return address;
        }

        /** @param address the peer's host name or address */
        public void setAddress(String address) {
            this.address = address;
        }

        /** @return the peer's port */
        public int getPort() {
            return port;
        }

        /** @param port the peer's port */
        public void setPort(int port) {
            this.port = port;
        }

        /** @return connections kept to this peer */
        public int getConnections() {
            return connections;
        }

        /** @param connections connections kept to this peer */
        public void setConnections(int connections) {
            this.connections = connections;
        }

        /** @return whether readiness follows this peer */
        public boolean isRequired() {
            return required;
        }

        /** @param required whether readiness follows this peer */
        public void setRequired(boolean required) {
            this.required = required;
        }

        /** @return how long an operation waits for the peer to come back */
        public Duration getMaxWait() {
            return maxWait;
        }

        /** @param maxWait how long an operation waits for the peer to come back */
        public void setMaxWait(Duration maxWait) {
            this.maxWait = maxWait;
        }

        /** @return the first reconnection delay */
        public Duration getMinBackoff() {
            return minBackoff;
        }

        /** @param minBackoff the first reconnection delay */
        public void setMinBackoff(Duration minBackoff) {
            this.minBackoff = minBackoff;
        }

        /** @return the longest reconnection delay */
        public Duration getMaxBackoff() {
            return maxBackoff;
        }

        /** @param maxBackoff the longest reconnection delay */
        public void setMaxBackoff(Duration maxBackoff) {
            this.maxBackoff = maxBackoff;
        }
    }

    /** @return whether cqflux is auto-configured */
    public boolean isEnabled() {
        return enabled;
    }

    /** @param enabled whether cqflux is auto-configured */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /** @return the transport's name, or {@code auto} */
    public String getTransport() {
        return transport;
    }

    /** @param transport the transport's name, or {@code auto} */
    public void setTransport(String transport) {
        this.transport = transport;
    }

    /** @return the libfabric provider, or {@code null} for the transport's default */
    public String getFabricProvider() {
        return fabricProvider;
    }

    /** @param fabricProvider the libfabric provider */
    public void setFabricProvider(String fabricProvider) {
        this.fabricProvider = fabricProvider;
    }

    /** @return transport-specific options */
    public Map<String, String> getTransportProperties() {
        return transportProperties;
    }

    /** @param transportProperties transport-specific options */
    public void setTransportProperties(Map<String, String> transportProperties) {
        this.transportProperties = transportProperties;
    }

    /** @return the local interface address, or {@code null} for loopback */
    public String getLocalAddress() {
        return localAddress;
    }

    /** @param localAddress the local interface address */
    public void setLocalAddress(String localAddress) {
        this.localAddress = localAddress;
    }

    /** @return whether this side declares direct writes to persistent memory */
    public boolean isDirectWriteToPersistentMemory() {
        return directWriteToPersistentMemory;
    }

    /** @param directWriteToPersistentMemory the declaration */
    public void setDirectWriteToPersistentMemory(boolean directWriteToPersistentMemory) {
        this.directWriteToPersistentMemory = directWriteToPersistentMemory;
    }

    /** @return how the loops wait */
    public WaitMode getWaitStrategy() {
        return waitStrategy;
    }

    /** @param waitStrategy how the loops wait */
    public void setWaitStrategy(WaitMode waitStrategy) {
        this.waitStrategy = waitStrategy;
    }

    /** @return the adaptive spin budget */
    public int getAdaptiveSpins() {
        return adaptiveSpins;
    }

    /** @param adaptiveSpins the adaptive spin budget */
    public void setAdaptiveSpins(int adaptiveSpins) {
        this.adaptiveSpins = adaptiveSpins;
    }

    /** @return event-loop threads */
    public int getLoops() {
        return loops;
    }

    /** @param loops event-loop threads */
    public void setLoops(int loops) {
        this.loops = loops;
    }

    /** @return completions read per native call */
    public int getBatchSize() {
        return batchSize;
    }

    /** @param batchSize completions read per native call */
    public void setBatchSize(int batchSize) {
        this.batchSize = batchSize;
    }

    /** @return the send-queue depth, or {@code null} for the default */
    public Integer getSendCredits() {
        return sendCredits;
    }

    /** @param sendCredits the send-queue depth */
    public void setSendCredits(Integer sendCredits) {
        this.sendCredits = sendCredits;
    }

    /** @return operations that may wait for a credit per connection */
    public int getPendingLimit() {
        return pendingLimit;
    }

    /** @param pendingLimit operations that may wait for a credit per connection */
    public void setPendingLimit(int pendingLimit) {
        this.pendingLimit = pendingLimit;
    }

    /** @return the operation timeout */
    public Duration getOperationTimeout() {
        return operationTimeout;
    }

    /** @param operationTimeout the operation timeout */
    public void setOperationTimeout(Duration operationTimeout) {
        this.operationTimeout = operationTimeout;
    }

    /** @return the connection set-up timeout */
    public Duration getConnectTimeout() {
        return connectTimeout;
    }

    /** @param connectTimeout the connection set-up timeout */
    public void setConnectTimeout(Duration connectTimeout) {
        this.connectTimeout = connectTimeout;
    }

    /** @return the shutdown budget */
    public Duration getShutdownTimeout() {
        return shutdownTimeout;
    }

    /** @param shutdownTimeout the shutdown budget */
    public void setShutdownTimeout(Duration shutdownTimeout) {
        this.shutdownTimeout = shutdownTimeout;
    }

    /** @return the thread name prefix, or null for the library's default */
    public String getThreadNamePrefix() {
        return threadNamePrefix;
    }

    /** @param threadNamePrefix the thread name prefix */
    public void setThreadNamePrefix(String threadNamePrefix) {
        this.threadNamePrefix = threadNamePrefix;
    }

    /** @return whether readiness follows the required peers */
    public boolean isReadiness() {
        return readiness;
    }

    /** @param readiness whether readiness follows the required peers */
    public void setReadiness(boolean readiness) {
        this.readiness = readiness;
    }

    /** @return the keep-alive's settings */
    public KeepAlive getKeepAlive() {
        return keepAlive;
    }

    /** @return the buffer pool's size */
    public BufferPool getBufferPool() {
        return bufferPool;
    }

    /** @return the server side's settings */
    public Server getServer() {
        return server;
    }

    /** @return the web layer's settings */
    public Web getWeb() {
        return web;
    }

    /** @return the peers by name */
    public Map<String, Peer> getPeers() {
        return peers;
    }

    /** @param peers the peers by name */
    public void setPeers(Map<String, Peer> peers) {
        this.peers = peers;
    }
}
