package io.cqflux.reactor.internal.server;

import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.epoll.loop.LoopTimer;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.RefusalKind;
import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.Disposable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * What an {@link RdmaServer} admits and counts: the limits on connections, on connections from one
 * address and on pending handshakes ({@link AcceptOptions#withMaxConnections},
 * {@link AcceptOptions#withMaxConnectionsPerAddress}, {@link AcceptOptions#withMaxPendingHandshakes})
 * applied to each new request, each request's handshake from arrival to establishment or end,
 * and the counters {@link RdmaServer#stats()} reads. Refusals and timeouts are logged at WARN,
 * at most once a second per kind, so that a flood of refused requests is not a flood of lines.
 */
public final class ServerAdmission {
    /** The server's logger: what is refused is the server's to say. */
    private static final Logger LOG = Loggers.getLogger(RdmaServer.class);

    private final InetSocketAddress address;
    private final int maxConnections;
    private final int maxPending;
    private final int maxPerAddress;
    /** The bits of a client's IPv4 and IPv6 address that name its network for {@link #maxPerAddress}. */
    private final int ipv4Prefix;
    private final int ipv6Prefix;
    /**
     * Connections and handshakes by the client network they came from (a single address unless
     * the bound names prefixes), while there are any: an entry goes with its last slot. Taken on
     * the server's loop at admission, given back from any thread. A request whose address the
     * transport cannot tell is not counted (one bucket for all of them would turn the bound into a
     * bound on the whole server): said once, at WARN.
     */
    private final ConcurrentHashMap<ClientNetwork, Integer> perAddress = new ConcurrentHashMap<>();
    /** Whether the server said that a request's address was unknown to its bound per address. */
    private final java.util.concurrent.atomic.AtomicBoolean unknownAddressSaid =
            new java.util.concurrent.atomic.AtomicBoolean();
    /** Requests taken from the listener and not yet established or ended. */
    private final AtomicInteger pending = new AtomicInteger();
    /** Established connections not yet released. */
    private final AtomicInteger established = new AtomicInteger();
    /** Per-connection registrations of exposed regions that are live. */
    private final AtomicInteger liveExposures = new AtomicInteger();
    /** This server's counts by {@link RefusalKind}, and the instance's, which outlive the server. */
    private final Counts counts = new Counts();
    private final Counts instanceCounts;
    /** One per kind, as docs/security.md says: a flood of one kind does not hide another's line. */
    private final RateLimitedWarn connectionsWarn = new RateLimitedWarn();
    private final RateLimitedWarn pendingWarn = new RateLimitedWarn();
    private final RateLimitedWarn perAddressWarn = new RateLimitedWarn();
    private final RateLimitedWarn authWarn = new RateLimitedWarn();
    private final RateLimitedWarn timeoutWarn = new RateLimitedWarn();
    private final RateLimitedWarn helloWarn = new RateLimitedWarn();
    private final RateLimitedWarn controlWarn = new RateLimitedWarn();

    ServerAdmission(InetSocketAddress address, int maxConnections, int maxPending, int maxPerAddress,
                    int ipv4Prefix, int ipv6Prefix, Counts instanceCounts) {
        this.instanceCounts = instanceCounts;
        this.address = address;
        this.maxConnections = maxConnections;
        this.maxPending = maxPending;
        this.maxPerAddress = maxPerAddress;
        this.ipv4Prefix = ipv4Prefix;
        this.ipv6Prefix = ipv6Prefix;
    }

    /**
     * Applies the limits to a new request before anything is done for it: over either, it is
     * counted and logged (rate-limited), and the caller rejects it (the client's connect fails
     * with REJECTED).
     *
     * @return null when the request is admitted, else the reason for its client: which limit,
     *     without the server's figures (those go to the log)
     */
    String admit(ConnectionRequest req) {
        if (pending.get() >= maxPending) {
            count(RefusalKind.MAX_PENDING);
            pendingWarn.warn("rejecting a connection request on " + address + " from " + peerOf(req) + ": "
                    + pending.get() + " handshakes in progress, the maximum (AcceptOptions.withMaxPendingHandshakes "
                    + maxPending + ")");
            return "too many handshakes in progress; try again later";
        }
        if (pending.get() + established.get() >= maxConnections) {
            count(RefusalKind.MAX_CONNECTIONS);
            connectionsWarn.warn("rejecting a connection request on " + address + " from " + peerOf(req) + ": "
                    + (pending.get() + established.get()) + " connections, the maximum"
                    + " (AcceptOptions.withMaxConnections " + maxConnections + ")");
            return "the server has its maximum of connections; try again later";
        }
        return admitFromItsAddress(req);
    }

    /** {@link #admit}'s bound per address: null when {@code req} is within it (or not counted). */
    private String admitFromItsAddress(ConnectionRequest req) {
        ClientNetwork n = maxPerAddress == Integer.MAX_VALUE ? null : networkOf(req);
        int held = n == null ? 0 : perAddress.getOrDefault(n, 0);
        if (held < maxPerAddress) {
            return null;
        }
        count(RefusalKind.MAX_PER_ADDRESS);
        boolean single = n.prefix() == (n.ipv6() ? 128 : 32);
        perAddressWarn.warn("rejecting a connection request on " + address + " from " + peerOf(req) + ": " + held
                + " connections from " + (single ? "that address" : "its network " + n) + ", the maximum"
                + " (AcceptOptions.withMaxConnectionsPerAddress " + maxPerAddress + ")");
        return "too many connections from your address; try again later";
    }

    /** {@return the request's peer as text, or "an unknown address"} */
    static String peerOf(ConnectionRequest req) {
        InetSocketAddress a = requester(req);
        return a == null ? "an unknown address" : a.toString();
    }

    /** {@return the address a request came from, or null where the transport cannot tell it (or fails to)} */
    private static InetSocketAddress requester(ConnectionRequest req) {
        try {
            return req.peerAddress();
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * {@return the handshake of an admitted request, counted as pending until it ends, and against
     * its address until its connection is released or it ends without one} The server's loop,
     * right after {@link #admit}: nothing else takes a slot of an address meanwhile.
     */
    Handshake handshake(ConnectionRequest req) {
        Runnable giveBack = null;
        ClientNetwork a = maxPerAddress == Integer.MAX_VALUE ? null : networkOf(req);
        if (a != null) {
            perAddress.merge(a, 1, Integer::sum);
            giveBack = () -> perAddress.computeIfPresent(a, (k, n) -> n > 1 ? n - 1 : null);
        }
        return new Handshake(req, pending, giveBack);
    }

    /**
     * {@return the client network a request came from, or null when the transport cannot tell its
     * address} The bound per address is on: an unknown one is said once.
     */
    private ClientNetwork networkOf(ConnectionRequest req) {
        InetSocketAddress a = requester(req);
        if (a == null || a.getAddress() == null) {
            if (unknownAddressSaid.compareAndSet(false, true)) {
                LOG.warn("the server on " + address + " cannot tell where a connection request came from (its"
                        + " transport gave no IP address), so AcceptOptions.withMaxConnectionsPerAddress does not"
                        + " count it, nor any other such request; the server's other bounds apply");
            }
            return null;
        }
        return ClientNetwork.of(a.getAddress(), ipv4Prefix, ipv6Prefix);
    }

    /** {@return how many connections and handshakes the network of address {@code a} holds now (tests)} */
    int fromAddress(java.net.InetAddress a) {
        return a == null ? 0 : perAddress.getOrDefault(ClientNetwork.of(a, ipv4Prefix, ipv6Prefix), 0);
    }

    /** {@return the count of live per-connection exposures, which each connection's ExposureSet keeps} */
    AtomicInteger liveExposures() {
        return liveExposures;
    }

    /** A handshake was established: the connection counts until {@link #released()}. */
    void established() {
        established.incrementAndGet();
    }

    /** An established connection was released. */
    void released() {
        established.decrementAndGet();
    }

    /** The authenticator refused a request (or gave no decision); {@code message} is logged, rate-limited. */
    void refusedByAuthenticator(String message) {
        count(RefusalKind.AUTHENTICATOR);
        authWarn.warn(message);
    }

    /** A handshake timed out; {@code message} is logged, rate-limited. */
    void timedOut(String message) {
        count(RefusalKind.HANDSHAKE_TIMEOUT);
        timeoutWarn.warn(message);
    }

    /** A request's private data was not a hello; {@code message} is logged, rate-limited. */
    void malformedHello(String message) {
        count(RefusalKind.MALFORMED_HELLO);
        helloWarn.warn(message);
    }

    /** A connection was ended for what its peer did (ConnectionCore logs each end itself, LOST at WARN). */
    void peerViolation(RefusalKind kind) {
        count(kind);
        controlWarn.warn("a peer of " + address + (kind == RefusalKind.CONTROL_WORD
                ? " wrote what no cqflux peer can into its connection's control words"
                : " sent messages beyond the receive credits it was granted") + "; that connection was ended");
    }

    private void count(RefusalKind k) {
        counts.add(k);
        instanceCounts.add(k);
    }

    /** {@return the counters, read one after another} */
    RdmaServer.Stats stats() {
        return stats(established.get(), pending.get(), liveExposures.get(), counts);
    }

    /**
     * {@return the counters of a server, or of an instance's servers together}
     *
     * @param connections established connections not yet released
     * @param pending handshakes in progress
     * @param exposures live per-connection registrations
     * @param c the refusal counts
     */
    public static RdmaServer.Stats stats(int connections, int pending, int exposures, Counts c) {
        return new RdmaServer.Stats(connections, pending, exposures, c.get(RefusalKind.MAX_CONNECTIONS),
                c.get(RefusalKind.MAX_PENDING), c.get(RefusalKind.AUTHENTICATOR), c.get(RefusalKind.HANDSHAKE_TIMEOUT),
                c.get(RefusalKind.MALFORMED_HELLO), c.get(RefusalKind.CONTROL_WORD),
                c.get(RefusalKind.BEYOND_CREDITS), c.get(RefusalKind.MAX_PER_ADDRESS));
    }

    /** {@return the connections, handshakes and exposures this server holds now: 0 1 2 of an int[3]} */
    int[] live() {
        return new int[] {established.get(), pending.get(), liveExposures.get()};
    }

    /** Monotonic counts by {@link RefusalKind}; any thread. */
    public static final class Counts {
        private final java.util.concurrent.atomic.AtomicLongArray n =
                new java.util.concurrent.atomic.AtomicLongArray(RefusalKind.values().length);

        void add(RefusalKind k) {
            n.incrementAndGet(k.ordinal());
        }

        long get(RefusalKind k) {
            return n.get(k.ordinal());
        }
    }

    /** One request's way from arrival to establishment or end; counted as pending until then. */
    static final class Handshake {
        static final int PENDING = 0;
        static final int ESTABLISHED = 1;
        static final int ENDED = 2;
        static final int TIMED_OUT = 3;

        final ConnectionRequest req;
        final long arrived = System.nanoTime();
        private final AtomicInteger pending;
        /** Gives its address's slot back (withMaxConnectionsPerAddress), once; null without the bound. */
        private final java.util.concurrent.atomic.AtomicReference<Runnable> addressSlot;
        /** Its timeout; the loop that set it only (the server's, or the accepted connection's). */
        private LoopTimer.Timeout timer;
        /** The authenticator's subscription, or null. Server loop only. */
        private Disposable decision;
        private final AtomicInteger state = new AtomicInteger(PENDING);
        /** Whether the client's hello told its connection's parameters (PeerHello); set on the server's loop. */
        private volatile boolean peerToldParameters;

        private Handshake(ConnectionRequest req, AtomicInteger pending, Runnable giveBackAddressSlot) {
            this.req = req;
            this.pending = pending;
            this.addressSlot = giveBackAddressSlot == null ? null
                    : new java.util.concurrent.atomic.AtomicReference<>(giveBackAddressSlot);
            pending.incrementAndGet();
        }

        /** The client's hello told its connection's parameters: its accept may tell the server's. */
        void peerToldParameters(boolean told) {
            peerToldParameters = told;
        }

        /** {@return whether the client's hello told its connection's parameters} */
        boolean peerToldParameters() {
            return peerToldParameters;
        }

        /** Gives the address's slot back, the first time only. */
        private void releaseAddressSlot() {
            if (addressSlot != null) {
                Runnable r = addressSlot.getAndSet(null);
                if (r != null) {
                    r.run();
                }
            }
        }

        /** Sets its timeout. The loop whose timer it is only. */
        void timeout(LoopTimer.Timeout t) {
            timer = t;
        }

        /** Cancels its timeout, if one was set. The loop that set it only. */
        void cancelTimeout() {
            if (timer != null) {
                timer.cancel();
                timer = null;
            }
        }

        /** {@return whether it is neither established nor ended yet} */
        boolean pending() {
            return state.get() == PENDING;
        }

        /** Keeps the authenticator's subscription, for {@link #dropDecision()}. Server loop only. */
        void decision(Disposable d) {
            decision = d;
        }

        /** Disposes the authenticator's subscription, if any: a decision that never comes holds nothing. */
        void dropDecision() {
            if (decision != null) {
                decision.dispose();
            }
        }

        /** {@return whether it was pending and is established now} */
        boolean establish() {
            if (state.compareAndSet(PENDING, ESTABLISHED)) {
                pending.decrementAndGet();
                return true;
            }
            return false;
        }

        /**
         * {@return whether it was pending and has timed out now} Its timer acts only when this
         * wins, so that an establishment that won first is never undone.
         */
        boolean timeOut() {
            if (state.compareAndSet(PENDING, TIMED_OUT)) {
                pending.decrementAndGet();
                releaseAddressSlot();
                return true;
            }
            return false;
        }

        /**
         * Ends it: a handshake that never got its connection, or the released connection of one
         * that did; {@return the state it was in}
         */
        int end() {
            int prev = state.getAndSet(ENDED);
            if (prev == PENDING) {
                pending.decrementAndGet();
            }
            releaseAddressSlot();
            return prev;
        }

        /** Ends a handshake that never got a connection. */
        void done() {
            end();
        }
    }

    /**
     * A WARN at most once a second per kind, telling how many were left out since: a flood of
     * refused requests must not become a flood of log lines.
     */
    private static final class RateLimitedWarn {
        private final AtomicLong last = new AtomicLong(System.nanoTime() - 2_000_000_000L);
        private final AtomicLong suppressed = new AtomicLong();

        void warn(String message) {
            long now = System.nanoTime();
            long l = last.get();
            if (now - l >= 1_000_000_000L && last.compareAndSet(l, now)) {
                long n = suppressed.getAndSet(0);
                LOG.warn(message + (n > 0 ? " (" + n + " more like it not logged since the last)" : ""));
            } else {
                suppressed.incrementAndGet();
            }
        }
    }
}
