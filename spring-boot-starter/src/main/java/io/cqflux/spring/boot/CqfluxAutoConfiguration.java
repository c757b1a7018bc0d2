package io.cqflux.spring.boot;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.epoll.WaitStrategy;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.ConnectOptions;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerPoolOptions;
import io.cqflux.reactor.SharedSecretAuthenticator;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.availability.ApplicationAvailabilityAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Auto-configures cqflux from {@code cqflux.*}: the {@link Cqflux} instance (disposed with the
 * context), the named peers ({@link CqfluxPeers}), the lifecycle that connects them at start and
 * drains them at stop ({@link CqfluxLifecycle}), readiness tied to the required peers
 * ({@link CqfluxReadiness}) and, in a reactive web application, the gate that refuses requests
 * once the application is shutting down and holds the drain until those in progress have ended
 * ({@link CqfluxRequestGate}, {@link CqfluxRequestGateFilter}). Each bean backs off when the
 * application declares its own.
 */
@AutoConfiguration(after = ApplicationAvailabilityAutoConfiguration.class)
@ConditionalOnClass(Cqflux.class)
@ConditionalOnBooleanProperty(name = "cqflux.enabled", matchIfMissing = true)
@EnableConfigurationProperties(CqfluxProperties.class)
public class CqfluxAutoConfiguration {

    /** Created by Spring. */
    public CqfluxAutoConfiguration() {
    }

    /**
     * Refuses an application's own {@link Cqflux} bean while {@code cqflux.*} instance properties
     * are set, which it would silently ignore ({@link CqfluxInstanceGuard}). Static: a bean-factory
     * post-processor runs before the configuration's own beans exist.
     *
     * @return the guard
     */
    @Bean
    public static CqfluxInstanceGuard cqfluxInstanceGuard() {
        return new CqfluxInstanceGuard();
    }

    /**
     * Logs, once the context's singletons exist, what the starter wired (instance, health,
     * meters) and the reason for each part it left out ({@link CqfluxWiringReport}).
     *
     * @param context the application context
     * @return the report
     */
    @Bean
    @ConditionalOnMissingBean
    public CqfluxWiringReport cqfluxWiringReport(ApplicationContext context) {
        return new CqfluxWiringReport(context, context.getClassLoader());
    }

    /**
     * The instance: transport, loops and connection settings from {@code cqflux.*}, then the
     * customizers. Opening the transport happens here, so an unavailable one fails the start with
     * {@link io.cqflux.core.TransportUnavailableException} (analysed by
     * {@link CqfluxFailureAnalyzer}).
     *
     * @param properties the {@code cqflux.*} properties
     * @param customizers further settings
     * @return the instance, closed ({@link Cqflux#close()}: disposal within the shutdown budget) with the context
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public Cqflux cqflux(CqfluxProperties properties, ObjectProvider<CqfluxBuilderCustomizer> customizers) {
        Cqflux.Builder b = builder(properties);
        customizers.orderedStream().forEach(c -> c.customize(b));
        try {
            return b.build();
        } catch (io.cqflux.core.UnsupportedCapabilityException e) {
            if (properties.isDirectWriteToPersistentMemory()
                    && e.capability() == io.cqflux.core.Capability.FLUSH_PERSISTENT) {
                throw new CqfluxPropertyException("cqflux.direct-write-to-persistent-memory", true, e);
            }
            throw e;
        } catch (IllegalArgumentException e) {
            // The background priority beside busy-polling loops, as the properties set them (a
            // customizer that changed either one is the application's own setting): the
            // builder's refusal, named as the property.
            if (properties.isBackgroundPriority() && properties.getWaitStrategy() == CqfluxProperties.WaitMode.BUSY_POLL
                    && String.valueOf(e.getMessage()).startsWith("backgroundPriority(true) beside")) {
                throw new CqfluxPropertyException("cqflux.background-priority", "true with cqflux.wait-strategy=busy-poll", e);
            }
            // A transport property the opening transport does not know, or refuses the value of
            // (TransportOptions.checkNames names it in quotes): named as the property set here.
            for (Map.Entry<String, String> t : properties.getTransportProperties().entrySet()) {
                if (String.valueOf(e.getMessage()).contains("'" + t.getKey() + "'")
                        || String.valueOf(e.getMessage()).startsWith(t.getKey() + "=")) {
                    throw new CqfluxPropertyException("cqflux.transport-properties." + t.getKey(), t.getValue(), e);
                }
            }
            throw e;
        }
    }

    /**
     * The builder {@code cqflux.*} describes; each setter checks its value and names the bound.
     *
     * @param p the properties
     * @return the builder
     */
    static Cqflux.Builder builder(CqfluxProperties p) {
        Cqflux.Builder b = Cqflux.builder();
        set("cqflux.transport", p.getTransport(), () -> b.transport(p.getTransport()));
        set("cqflux.loops", p.getLoops(), () -> b.loops(p.getLoops()));
        set("cqflux.batch-size", p.getBatchSize(), () -> b.batchSize(p.getBatchSize()));
        set("cqflux.pending-limit", p.getPendingLimit(), () -> b.pendingLimit(p.getPendingLimit()));
        set("cqflux.operation-timeout", p.getOperationTimeout(), () -> b.operationTimeout(p.getOperationTimeout()));
        b.shutdownTimeout(shutdownTimeout(p));
        CqfluxKeepAliveProperties keepAlive = p.getKeepAlive();
        if (keepAlive.getInterval() != null && keepAlive.getInterval().isZero()) {
            // Unused with the keep-alive off, but checked: a later interval would meet it.
            set("cqflux.keep-alive.misses", keepAlive.getMisses(), () -> Cqflux.builder()
                    .keepAlive(Cqflux.Builder.DEFAULT_KEEP_ALIVE_INTERVAL, keepAlive.getMisses()));
            b.noKeepAlive();
        } else {
            set("cqflux.keep-alive.interval", keepAlive.getInterval(),
                    () -> b.keepAlive(keepAlive.getInterval(), Cqflux.Builder.DEFAULT_KEEP_ALIVE_MISSES));
            set("cqflux.keep-alive.misses", keepAlive.getMisses(),
                    () -> b.keepAlive(keepAlive.getInterval(), keepAlive.getMisses()));
        }
        b.directWriteToPersistentMemory(p.isDirectWriteToPersistentMemory());
        b.backgroundPriority(p.isBackgroundPriority());
        // Checked whatever the strategy (used by adaptive only): a later wait-strategy=adaptive would meet it.
        WaitStrategy adaptive = checked("cqflux.adaptive-spins", p.getAdaptiveSpins(),
                () -> WaitStrategy.adaptive(p.getAdaptiveSpins()));
        switch (p.getWaitStrategy()) {
            case BLOCKING -> b.waitStrategy(WaitStrategy.BLOCKING);
            case BUSY_POLL -> b.waitStrategy(WaitStrategy.BUSY_POLL);
            case ADAPTIVE -> b.waitStrategy(adaptive);
        }
        ConnectionConfig timed = ConnectionConfig.DEFAULT.withTimeout(connectTimeout(p));
        if (p.getSendCredits() == null) {
            set("cqflux.connect-timeout", p.getConnectTimeout(), () -> b.connectionConfig(timed));
        } else {
            ConnectionConfig cc = checked("cqflux.send-credits", p.getSendCredits(),
                    () -> timed.withSendQueueSize(p.getSendCredits()));
            // The builder's own check of the configuration is the send queue's (at least 2).
            set("cqflux.send-credits", p.getSendCredits(), () -> b.connectionConfig(cc));
        }
        if (p.getThreadNamePrefix() != null) {
            set("cqflux.thread-name-prefix", p.getThreadNamePrefix(), () -> b.threadNamePrefix(p.getThreadNamePrefix()));
        }
        if (p.getFabricProvider() != null) {
            set("cqflux.fabric-provider", p.getFabricProvider(), () -> b.fabricProvider(p.getFabricProvider()));
        }
        p.getTransportProperties().forEach((k, v) ->
                set("cqflux.transport-properties." + k, v, () -> b.transportProperty(k, v)));
        if (p.getLocalAddress() != null) {
            InetAddress local = host("cqflux.local-address", p.getLocalAddress());
            set("cqflux.local-address", p.getLocalAddress(), () -> b.localAddress(local));
        }
        CqfluxBufferPoolProperties pool = p.getBufferPool();
        // Each value beside the smallest of the other two first, so that a refusal names its own
        // property and the total's bound cannot trip; then the three together, whose total
        // (buffers x buffer-size) has a bound of its own, named by both properties.
        set("cqflux.buffer-pool.buffers", pool.getBuffers(), () -> b.bufferPool(pool.getBuffers(), 1, 0));
        set("cqflux.buffer-pool.buffer-size", pool.getBufferSize(), () -> b.bufferPool(1, pool.getBufferSize(), 0));
        set("cqflux.buffer-pool.max-waiters", pool.getMaxWaiters(), () -> b.bufferPool(1, 1, pool.getMaxWaiters()));
        set("cqflux.buffer-pool.buffers and cqflux.buffer-pool.buffer-size", pool.getBuffers() + " x "
                + pool.getBufferSize() + " bytes",
                () -> b.bufferPool(pool.getBuffers(), pool.getBufferSize(), pool.getMaxWaiters()));
        return b;
    }

    /**
     * Runs one builder setting; a refusal names the property it came from. (An empty value of a
     * {@code Duration}, number or enum property keeps its default: Spring Boot's binder skips it.)
     */
    private static void set(String property, Object value, Runnable setting) {
        checked(property, value, () -> {
            setting.run();
            return null;
        });
    }

    /**
     * {@return {@code cqflux.connect-timeout}, checked against the instance's own bound} The one
     * check of it: {@link #builder} takes it from here, and the lifecycle and the server read it
     * beside an application's own instance too, for which the builder never runs.
     */
    static Duration connectTimeout(CqfluxProperties p) {
        checked("cqflux.connect-timeout", p.getConnectTimeout(),
                () -> ConnectionConfig.DEFAULT.withTimeout(p.getConnectTimeout()));
        return p.getConnectTimeout();
    }

    /** {@return {@code cqflux.shutdown-timeout}, checked as {@link #connectTimeout} is, against the builder's bound} */
    static Duration shutdownTimeout(CqfluxProperties p) {
        checked("cqflux.shutdown-timeout", p.getShutdownTimeout(),
                () -> Cqflux.builder().shutdownTimeout(p.getShutdownTimeout()));
        return p.getShutdownTimeout();
    }

    /** {@return what {@code make} makes of a property's value; a refusal names the property, as in {@link #set}} */
    private static <T> T checked(String property, Object value, java.util.function.Supplier<T> make) {
        try {
            return make.get();
        } catch (IllegalArgumentException e) {
            throw new CqfluxPropertyException(property, value, e);
        }
    }

    /**
     * The named peers, one client-side link each, connected by the lifecycle.
     *
     * @param cqflux the instance they connect through
     * @param properties their configuration
     * @return the peers
     */
    @Bean
    @ConditionalOnMissingBean
    public CqfluxPeers cqfluxPeers(Cqflux cqflux, CqfluxProperties properties) {
        Map<String, CqfluxPeer> peers = new LinkedHashMap<>();
        properties.getPeers().forEach((name, cfg) -> {
            String at = "cqflux.peers." + name;
            if (cfg.getAddress() == null) { // blank: refused by host() below
                throw new CqfluxPropertyException(at + ".address", "''",
                        new IllegalArgumentException("the peer's address is not set"));
            }
            if (cfg.getPort() < 1 || cfg.getPort() > 65535) {
                throw new CqfluxPropertyException(at + ".port", cfg.getPort(),
                        new IllegalArgumentException("port " + cfg.getPort() + " is outside [1, 65535]"));
            }
            InetSocketAddress address = new InetSocketAddress(host(at + ".address", cfg.getAddress()), cfg.getPort());
            peers.put(name, CqfluxPeer.pooled(name, cqflux, address, cfg.isRequired(), options(at, cfg)));
        });
        return new CqfluxPeers(peers);
    }

    /** A configured peer's pool options; each refused value names its property. */
    private static PeerPoolOptions options(String at, CqfluxProperties.Peer cfg) {
        PeerPoolOptions.Builder o = PeerPoolOptions.builder();
        if (cfg.getSharedSecret() != null) {
            String secret = cfg.getSharedSecret();
            // Fresh credentials per connect: each reconnect of the pool has its own nonce.
            set(at + ".shared-secret", "(" + secret.length() + " characters, not shown)",
                    () -> o.connectOptions(ConnectOptions.defaults().credentials(SharedSecretAuthenticator.credentials(
                            secret.getBytes(java.nio.charset.StandardCharsets.UTF_8)))));
        }
        set(at + ".connections", cfg.getConnections(), () -> o.size(cfg.getConnections()));
        set(at + ".max-backoff", cfg.getMaxBackoff(), () -> o.reconnectBackoff(cfg.getMaxBackoff(), cfg.getMaxBackoff()));
        set(at + ".min-backoff", cfg.getMinBackoff() + " (max-backoff " + cfg.getMaxBackoff() + ")",
                () -> o.reconnectBackoff(cfg.getMinBackoff(), cfg.getMaxBackoff()));
        set(at + ".min-attempt-time", cfg.getMinAttemptTime(), () -> o.minAttemptTime(cfg.getMinAttemptTime()));
        set(at + ".max-wait", cfg.getMaxWait(), () -> {
            if (cfg.getMaxWait().isZero()) {
                o.whenUnavailable(PeerPoolOptions.WhenUnavailable.FAIL_FAST);
            } else {
                o.whenUnavailable(PeerPoolOptions.WhenUnavailable.WAIT).maxAcquireTime(cfg.getMaxWait());
            }
        });
        return o.build();
    }

    /**
     * The server side, on when {@code cqflux.server.port} is set: listens with the instance and
     * exposes {@code cqflux.server.regions.*}.
     *
     * @param cqflux the instance that listens
     * @param properties where, and what to expose
     * @return the server, started and stopped with the context
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnProperty(name = "cqflux.server.port")
    public CqfluxServer cqfluxServer(Cqflux cqflux, CqfluxProperties properties) {
        CqfluxServerProperties cfg = properties.getServer();
        if (cfg.getPort() == null) {
            // Present but empty: @ConditionalOnProperty matches it, the binder leaves the port unset.
            throw new CqfluxPropertyException("cqflux.server.port", "''",
                    new IllegalArgumentException("the port is empty: give one in [0, 65535] (0: a free one)"));
        }
        int port = cfg.getPort();
        if (port < 0 || port > 65535) {
            throw new CqfluxPropertyException("cqflux.server.port", port,
                    new IllegalArgumentException("port " + port + " is outside [0, 65535]"));
        }
        InetAddress host;
        if (cfg.getAddress() != null) {
            // Not checked against this host's interfaces: the listen decides, and its refusal
            // names the property (CqfluxServer).
            host = host("cqflux.server.address", cfg.getAddress());
        } else if (properties.getLocalAddress() != null) {
            host = ownHost("cqflux.local-address", properties.getLocalAddress());
        } else {
            host = InetAddress.getLoopbackAddress(); // nothing beyond this host unless asked
        }
        if (cfg.getRegions().isEmpty()) {
            throw new CqfluxPropertyException("cqflux.server.regions", "{}",
                    new IllegalArgumentException("a server exposes at least one region (e.g."
                            + " cqflux.server.regions.data.size=64MB)"));
        }
        List<CqfluxServer.Spec> specs = new ArrayList<>();
        cfg.getRegions().forEach((name, r) -> specs.add(new CqfluxServer.Spec(name,
                r.getSize() == null ? 0 : r.getSize().toBytes(), r.getFile(), r.getAccess())));
        return new CqfluxServer(cqflux, new InetSocketAddress(host, port), specs, connectTimeout(properties),
                acceptOptions(cfg)).addressFrom(cfg.getAddress() != null ? "cqflux.server.address"
                        : properties.getLocalAddress() != null ? "cqflux.local-address" : null);
    }

    /**
     * The server's authenticator and limits, each value checked now so that a refusal names its
     * property; the secret itself is never shown in a message.
     */
    static java.util.function.UnaryOperator<AcceptOptions> acceptOptions(CqfluxServerProperties cfg) {
        java.util.List<java.util.function.UnaryOperator<AcceptOptions>> steps = new ArrayList<>();
        AcceptOptions probe = AcceptOptions.exposing();
        String secret = cfg.getAuth().getSharedSecret();
        if (secret == null) {
            // Unused without a secret, but checked: a later secret would meet it. The key is a
            // throwaway that authenticates nobody.
            set("cqflux.server.auth.max-skew", cfg.getAuth().getMaxSkew(),
                    () -> SharedSecretAuthenticator.of(new byte[16]).withMaxSkew(cfg.getAuth().getMaxSkew()));
        } else {
            SharedSecretAuthenticator a = checked("cqflux.server.auth.shared-secret",
                    "(" + secret.length() + " characters, not shown)",
                    () -> SharedSecretAuthenticator.of(secret.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            SharedSecretAuthenticator auth = checked("cqflux.server.auth.max-skew", cfg.getAuth().getMaxSkew(),
                    () -> a.withMaxSkew(cfg.getAuth().getMaxSkew()));
            steps.add(o -> o.authenticatedBy(auth));
        }
        if (cfg.getMaxConnections() != null) {
            int max = cfg.getMaxConnections();
            set("cqflux.server.max-connections", max, () -> probe.withMaxConnections(max));
            steps.add(o -> o.withMaxConnections(max));
        }
        int v4 = cfg.getPerAddressIpv4PrefixLength();
        int v6 = cfg.getPerAddressIpv6PrefixLength();
        set("cqflux.server.per-address-ipv4-prefix-length", v4, () -> probe.withMaxConnectionsPerAddress(1, v4, 128));
        set("cqflux.server.per-address-ipv6-prefix-length", v6, () -> probe.withMaxConnectionsPerAddress(1, 32, v6));
        if (cfg.getMaxConnectionsPerAddress() != null) {
            int max = cfg.getMaxConnectionsPerAddress();
            set("cqflux.server.max-connections-per-address", max, () -> probe.withMaxConnectionsPerAddress(max));
            steps.add(o -> o.withMaxConnectionsPerAddress(max, v4, v6));
        }
        int pending = cfg.getMaxPendingHandshakes();
        set("cqflux.server.max-pending-handshakes", pending, () -> probe.withMaxPendingHandshakes(pending));
        steps.add(o -> o.withMaxPendingHandshakes(pending));
        if (cfg.getHandshakeTimeout() != null) {
            Duration t = cfg.getHandshakeTimeout();
            set("cqflux.server.handshake-timeout", t, () -> probe.withHandshakeTimeout(t));
            steps.add(o -> o.withHandshakeTimeout(t));
        }
        Boolean scoped = cfg.getKeysScopedToConnection();
        if (scoped != null) { // unset: the options' default, scoped where the transport can
            steps.add(o -> o.withKeysScopedToConnection(scoped));
        }
        return o -> {
            AcceptOptions out = o;
            for (var step : steps) {
                out = step.apply(out);
            }
            return out;
        };
    }

    /**
     * Connects the peers at start; at stop waits for the requests the gate admitted (in a
     * reactive web application), drains, and disposes.
     *
     * @param cqflux the instance
     * @param peers the peers
     * @param properties the timeouts
     * @param gate the requests to wait for before the drain, when there is one
     * @return the lifecycle
     */
    @Bean
    @ConditionalOnMissingBean
    public CqfluxLifecycle cqfluxLifecycle(Cqflux cqflux, CqfluxPeers peers, CqfluxProperties properties,
            ObjectProvider<CqfluxRequestGate> gate) {
        return new CqfluxLifecycle(cqflux, peers, connectTimeout(properties), shutdownTimeout(properties),
                gate.getIfUnique());
    }

    /**
     * Readiness from the required peers' state.
     *
     * @param peers the peers
     * @param publisher the context
     * @return the readiness publisher
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "cqflux.readiness", matchIfMissing = true)
    public CqfluxReadiness cqfluxReadiness(CqfluxPeers peers, ApplicationEventPublisher publisher) {
        return new CqfluxReadiness(peers, publisher);
    }

    /**
     * The {@link org.springframework.core.io.buffer.DataBuffer} forms of write, durable write and
     * read, copying through the registered buffer pool ({@code cqflux.buffer-pool.*}), their
     * results handed to the Netty event loop that subscribed (WebFlux's request loop), else to
     * {@code Schedulers.parallel()}.
     *
     * @param cqflux the instance whose pool they lease from
     * @return the data-buffer operations
     */
    @Bean
    @ConditionalOnMissingBean
    public CqfluxDataBuffers cqfluxDataBuffers(Cqflux cqflux) {
        return new CqfluxDataBuffers(cqflux);
    }

    /**
     * The request gate of a reactive web application: refuses requests once it is shutting down,
     * and counts those in progress for the drain.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
    @ConditionalOnClass(name = "org.springframework.web.server.WebFilter")
    static class RequestGateConfiguration {
        /** The actuator's web endpoints, whose requests are never gated. */
        private static final String ACTUATOR = "org.springframework.boot.actuate.endpoint.web.WebEndpointResponse";

        /**
         * @param publisher the context (readiness REFUSING_TRAFFIC, when the gate closes)
         * @return the gate, closed before the web server's graceful shutdown
         */
        @Bean
        @ConditionalOnMissingBean
        CqfluxRequestGate cqfluxRequestGate(ApplicationEventPublisher publisher) {
            return new CqfluxRequestGate(publisher);
        }

        /**
         * @param gate the gate
         * @param environment where the actuator's base path is read
         * @return the filter, passing the actuator's requests through
         */
        @Bean
        @ConditionalOnMissingBean
        CqfluxRequestGateFilter cqfluxRequestGateFilter(CqfluxRequestGate gate, Environment environment) {
            List<String> passThrough = new ArrayList<>();
            if (ClassUtils.isPresent(ACTUATOR, CqfluxAutoConfiguration.class.getClassLoader())) {
                // Blank or "/": the actuator's paths cannot be told from the application's; gated.
                passThrough.add(environment.getProperty("management.endpoints.web.base-path", "/actuator"));
            }
            return new CqfluxRequestGateFilter(gate, passThrough);
        }
    }

    /**
     * The HTTP answers of cqflux's errors in a reactive web application, opt-in with
     * {@code cqflux.web.error-mapping.enabled=true}.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
    @ConditionalOnClass(name = "org.springframework.web.server.WebExceptionHandler")
    @ConditionalOnBooleanProperty(name = "cqflux.web.error-mapping.enabled")
    static class ErrorMappingConfiguration {
        /**
         * @param properties the Retry-After of a 503 for an absent peer, and whether 5xx details
         *     carry the message
         * @return the handler, ordered before Spring Boot's default one
         */
        @Bean
        @ConditionalOnMissingBean
        CqfluxErrorWebExceptionHandler cqfluxErrorWebExceptionHandler(CqfluxProperties properties) {
            java.time.Duration retryAfter = properties.getWeb().getErrorMapping().getRetryAfter();
            boolean includeMessage = properties.getWeb().getErrorMapping().isIncludeMessage();
            return checked("cqflux.web.error-mapping.retry-after", retryAfter,
                    () -> new CqfluxErrorWebExceptionHandler(retryAfter, includeMessage));
        }
    }

    /**
     * {@return {@code cqflux.local-address}, refused naming the property when this host has no
     * interface with it} It is the instance's own address, which the library's builder checks the
     * same way ({@code Cqflux.Builder.localAddress}); the exception names the property.
     */
    private static InetAddress ownHost(String property, String value) {
        InetAddress a = host(property, value);
        try {
            Cqflux.builder().localAddress(a); // the library's one check of an address of this host
        } catch (IllegalArgumentException e) {
            throw new CqfluxPropertyException(property, value, new IllegalArgumentException(a.getHostAddress()
                    + " is not an address of this host (no network interface has it)", e));
        }
        return a;
    }

    private static InetAddress host(String property, String value) {
        if (value.isBlank()) {
            // InetAddress.getByName("") is the loopback address: an empty value would bind there unasked.
            throw new CqfluxPropertyException(property, "'" + value + "'",
                    new IllegalArgumentException("the address is empty"));
        }
        try {
            return InetAddress.getByName(value);
        } catch (UnknownHostException e) {
            throw new CqfluxPropertyException(property, value,
                    new IllegalArgumentException("'" + value + "' does not resolve: " + e.getMessage(), e));
        }
    }
}
