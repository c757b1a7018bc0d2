package io.cqflux.spring.boot;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The server side, {@code cqflux.server.*} ({@link CqfluxProperties#getServer()}): a cqflux server
 * started with the application, exposing regions, and which clients it serves.
 */
public class CqfluxServerProperties {
    /** Listen on this port (0: a free one, on fabric; rpma binds only the port given); setting it turns the server on. */
    private Integer port;

    /** Listen on this address; unset: cqflux.local-address, or the loopback address. */
    private String address;

    /** The exposed regions, in the order declared: a client's remoteRegion(0) is the first. */
    private Map<String, ExposedRegion> regions = new LinkedHashMap<>();

    /** Authenticated accept: which clients are served. */
    private final Auth auth = new Auth();

    /** At most this many connections (established plus handshaking); unset: unbounded. */
    private Integer maxConnections;

    /** At most this many connections (established plus handshaking) from one IP address; unset: unbounded. */
    private Integer maxConnectionsPerAddress;

    /**
     * The bits of a client's IPv4 address that name its network for max-connections-per-address
     * (1-32; 32: each address alone). Checked always, used only with max-connections-per-address.
     */
    private int perAddressIpv4PrefixLength = 32;

    /**
     * The bits of a client's IPv6 address that name its network for max-connections-per-address
     * (1-128; 128: each address alone; 64 bounds each /64, what one IPv6 host usually holds).
     * Checked always, used only with max-connections-per-address.
     */
    private int perAddressIpv6PrefixLength = 128;

    /** At most this many handshakes in progress; more are rejected at once. */
    private int maxPendingHandshakes = io.cqflux.reactor.AcceptOptions.DEFAULT_MAX_PENDING_HANDSHAKES;

    /** How long a handshake (the authentication included) may take; unset: cqflux.connect-timeout. */
    private Duration handshakeTimeout;

    /**
     * Whether each accepted connection's keys work on that connection only (a libfabric domain per
     * connection). Unset, the default: where the transport can (fabric on tcp and verbs), and on a
     * transport that cannot (rpma, fabric on another provider) the server starts with keys of the
     * instance and says so at WARNING. true: required, the server fails to start where the
     * transport cannot. false: off, for a trusted single-tenant server or one that hands regions out
     * by their raw descriptor, which a scoped connection cannot reach
     * (AcceptOptions.withKeysScopedToConnection).
     */
    private Boolean keysScopedToConnection;

    /** Created by the binder. */
    public CqfluxServerProperties() {
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

    /** @return the bound on connections from one IP address, or null for none */
    public Integer getMaxConnectionsPerAddress() {
        return maxConnectionsPerAddress;
    }

    /** @param maxConnectionsPerAddress the bound on connections from one IP address */
    public void setMaxConnectionsPerAddress(Integer maxConnectionsPerAddress) {
        this.maxConnectionsPerAddress = maxConnectionsPerAddress;
    }

    /** @return the bits of an IPv4 address that name its network for the bound per address */
    public int getPerAddressIpv4PrefixLength() {
        return perAddressIpv4PrefixLength;
    }

    /** @param length the bits of an IPv4 address that name its network for the bound per address */
    public void setPerAddressIpv4PrefixLength(int length) {
        this.perAddressIpv4PrefixLength = length;
    }

    /** @return the bits of an IPv6 address that name its network for the bound per address */
    public int getPerAddressIpv6PrefixLength() {
        return perAddressIpv6PrefixLength;
    }

    /** @param length the bits of an IPv6 address that name its network for the bound per address */
    public void setPerAddressIpv6PrefixLength(int length) {
        this.perAddressIpv6PrefixLength = length;
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

    /** @return whether keys are scoped to their connection: required, off, or unset (where the transport can) */
    public Boolean getKeysScopedToConnection() {
        return keysScopedToConnection;
    }

    /** @param keysScopedToConnection true: required; false: off; null: where the transport can */
    public void setKeysScopedToConnection(Boolean keysScopedToConnection) {
        this.keysScopedToConnection = keysScopedToConnection;
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
}
