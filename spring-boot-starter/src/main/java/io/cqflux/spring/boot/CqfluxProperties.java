package io.cqflux.spring.boot;

import io.cqflux.reactor.Cqflux;

import io.cqflux.reactor.PeerPoolOptions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * The {@code cqflux.*} configuration properties: how the auto-configured
 * {@link io.cqflux.reactor.Cqflux} is built, and the named peers it connects to. Every value left
 * unset keeps {@link io.cqflux.reactor.Cqflux.Builder}'s default; the builder checks each one and
 * names the bound it breaks, so a bad value fails the start with that message.
 *
 * <p>The groups {@code server}, {@code web}, {@code keep-alive} and {@code buffer-pool} are
 * classes of their own, each field marked {@link NestedConfigurationProperty}: without it the
 * configuration processor, which treats only inner classes as nested, would leave their
 * properties out of the generated metadata (binding would still work). {@link Peer} and
 * {@link WaitMode} stay inner types: applications name them.
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

    /**
     * Runs the instance's set-up and close threads at background priority (nice +19), so that a
     * storm of connects or closes takes from established connections only the CPU their loops
     * leave. Code that runs there (a connect's credentials supplier, the instance's onDispose
     * subscribers) and every thread it starts runs at that priority too. Refused beside
     * {@code wait-strategy=busy-poll}.
     */
    private boolean backgroundPriority = false;

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
    @NestedConfigurationProperty
    private final CqfluxKeepAliveProperties keepAlive = new CqfluxKeepAliveProperties();

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
    @NestedConfigurationProperty
    private final CqfluxBufferPoolProperties bufferPool = new CqfluxBufferPoolProperties();

    /** Peers by name; each one is a client connection (or pool of them) to a cqflux server. */
    private Map<String, Peer> peers = new LinkedHashMap<>();

    /** The server side: where this application listens and what it exposes to its peers. */
    @NestedConfigurationProperty
    private final CqfluxServerProperties server = new CqfluxServerProperties();

    /** The web layer: the HTTP answers of cqflux's errors. */
    @NestedConfigurationProperty
    private final CqfluxWebProperties web = new CqfluxWebProperties();

    /** How the loops wait. */
    public enum WaitMode {
        /** Sleep in epoll whenever idle: lowest CPU, highest latency. */
        BLOCKING,
        /** Never sleep: one core per loop. */
        BUSY_POLL,
        /** Poll for {@code adaptive-spins} empty rounds, then sleep. */
        ADAPTIVE
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

        /**
         * The least time a reconnection attempt is given before it is abandoned for the next;
         * set it above the slowest connect of a healthy network to this peer. A pool heals within
         * the larger of this and max-backoff, plus one connect, of the network's return.
         */
        private Duration minAttemptTime = PeerPoolOptions.DEFAULT_MIN_ATTEMPT_TIME;

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

        /** @return the least time a reconnection attempt is given */
        public Duration getMinAttemptTime() {
            return minAttemptTime;
        }

        /** @param minAttemptTime the least time a reconnection attempt is given */
        public void setMinAttemptTime(Duration minAttemptTime) {
            this.minAttemptTime = minAttemptTime;
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

    /** @return whether the set-up and close threads run at background priority */
    public boolean isBackgroundPriority() {
        return backgroundPriority;
    }

    /** @param backgroundPriority whether the set-up and close threads run at background priority */
    public void setBackgroundPriority(boolean backgroundPriority) {
        this.backgroundPriority = backgroundPriority;
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
    public CqfluxKeepAliveProperties getKeepAlive() {
        return keepAlive;
    }

    /** @return the buffer pool's size */
    public CqfluxBufferPoolProperties getBufferPool() {
        return bufferPool;
    }

    /** @return the server side's settings */
    public CqfluxServerProperties getServer() {
        return server;
    }

    /** @return the web layer's settings */
    public CqfluxWebProperties getWeb() {
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
