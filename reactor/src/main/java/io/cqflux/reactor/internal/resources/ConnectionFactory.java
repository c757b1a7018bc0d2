package io.cqflux.reactor.internal.resources;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.internal.Checks;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.Transport;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.reactor.BufferPool;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import io.cqflux.reactor.internal.connection.Limits;
import io.cqflux.reactor.internal.connection.PeerControl;
import io.cqflux.reactor.internal.connection.PeerHello;
import io.cqflux.reactor.internal.op.LoopSafeMono;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * How an instance makes connections: it connects (a hello or raw private data in the request,
 * the transport's connect on a loop of the group, the connection's start there), adopts the
 * connections its servers accept, encodes this side's hello, and keeps every connection until
 * its release (what the shutdown closes). Thread-safe; a connect's native work runs on the set-up
 * thread where the transport allows it, else on its loop (see {@link Connect}).
 */
public final class ConnectionFactory {
    private static final ApiAccess API = ApiAccess.get();

    private final Object owner;
    private final Transport transport;
    private final ConnectionConfig config;
    private final Limits limits;
    private final LoopGroup loops;
    private final BufferPool buffers;
    private final Instrumentation instrumentation;
    /** The owner's shutdown flag: read here, set by the owner. */
    private final AtomicBoolean closing;
    private final Set<ConnectionCore> connections = ConcurrentHashMap.newKeySet();
    /** Where connects and accepts make their native part, where the transport allows it. */
    private final SetupThread setups;
    /** Where connections are closed natively, where the transport allows it (ConnectionCore). */
    private final SetupThread closes;

    /**
     * @param owner the instance, for messages
     * @param transport its transport
     * @param config its connection configuration
     * @param limits its per-connection limits
     * @param loops its loops
     * @param buffers its staging buffers
     * @param instrumentation its listeners
     * @param closing its shutdown flag (read only here)
     * @param setups its set-up thread
     * @param closes its close thread
     */
    public ConnectionFactory(Object owner, Transport transport, ConnectionConfig config, Limits limits, LoopGroup loops,
                             BufferPool buffers, Instrumentation instrumentation, AtomicBoolean closing,
                             SetupThread setups, SetupThread closes) {
        this.setups = setups;
        this.closes = closes;
        this.owner = owner;
        this.transport = transport;
        this.config = config;
        this.limits = limits;
        this.loops = loops;
        this.buffers = buffers;
        this.instrumentation = instrumentation;
        this.closing = closing;
    }

    /** {@return the instance's set-up thread} */
    public SetupThread setups() {
        return setups;
    }

    /** {@return the instance's close thread} */
    public SetupThread closes() {
        return closes;
    }

    /** {@return the connections not released yet (live view)} */
    public Set<ConnectionCore> connections() {
        return connections;
    }

    private void checkOpen() {
        if (closing.get()) {
            throw new ResourceClosedException(owner + " is disposed");
        }
    }

    /**
     * {@return a cold Mono of a connection to {@code address}: {@code Cqflux.connect}'s, which also
     * tells {@code releases} (when not null) of each connection it starts, for the peer pools}
     *
     * @param address the server
     * @param regionList the regions the hello exposes (ignored with raw private data)
     * @param raw raw private data to send instead of a hello, or null
     * @param receivePrefetch receives to keep posted ahead of demand, or -1 for the default
     *     (ConnectOptions.withReceivePrefetch)
     * @param credentials asked once per connect for the credentials its hello carries to the
     *     server's authenticator (ConnectOptions.credentials), or null for none
     * @param endOnReceiveOverflow end a raw connection when every receive buffer holds an untaken
     *     message (ConnectOptions.withEndOnReceiveOverflow), or leave the peer's next send to wait
     * @param releases told of each new connection's release future, or null
     */
    public Mono<RdmaConnection> connect(InetSocketAddress address, List<Region> regionList, byte[] raw,
                                        int receivePrefetch, Supplier<byte[]> credentials, boolean endOnReceiveOverflow,
                                        Consumer<CompletableFuture<Void>> releases) {
        Mono<RdmaConnection> m = Mono.create(sink -> {
            AtomicReference<ConnectionCore> ref = new AtomicReference<>();
            AtomicBoolean handedOver = new AtomicBoolean();
            EventLoop loop;
            try {
                checkOpen();
                loop = loops.next();
            } catch (RuntimeException e) {
                sink.error(e);
                return;
            }
            Connect c = new Connect(address, regionList, raw, receivePrefetch, credentials, endOnReceiveOverflow,
                    releases, loop, sink, ref, handedOver);
            Runnable build = c::build;
            sink.onCancel(() -> {
                if (handedOver.compareAndSet(false, true)) {
                    ConnectionCore core = ref.get();
                    if (core != null) {
                        core.closeAsync();
                    } else if (transport.connectsOffLoop()) {
                        // Cancelled (or timed out) while its native part may still run: the
                        // connects queued behind it need not wait for that (SetupThread).
                        setups.giveUp(build);
                    }
                }
            });
            if (transport.connectsOffLoop()) {
                try {
                    setups.execute(build);
                    return;
                } catch (RuntimeException e) {
                    sink.error(new ResourceClosedException("cqflux is closed: cannot connect to " + address));
                    return;
                }
            }
            try {
                loop.executeOrAfterTermination(c::onLoop);
            } catch (RuntimeException e) {
                sink.error(new ResourceClosedException("cqflux is closed: cannot connect to " + address));
            }
        });
        Duration t = config.timeout();
        // A connection that establishes just as its subscriber cancels (or the timeout fires) is
        // discarded by Mono.create or dropped by the timeout or the subscriber, never handed to
        // anyone: close it rather than leak it (the discard hook here, LoopSafeMono's hand-over
        // for the drops).
        return LoopSafeMono.of(m.timeout(t, Mono.defer(() -> Mono.error(new ConnectionException(ConnectionEvent.UNREACHABLE,
                "connect to " + address + " timed out after " + t.toMillis() + " ms"))))
                .doOnDiscard(RdmaConnection.class, RdmaConnection::dispose), RdmaConnection.class, RdmaConnection::dispose);
    }

    /**
     * One connect's steps. The native part ({@link #nativePart}: the control words'
     * registration, the hello, the transport's connect) runs on the instance's set-up thread
     * where the transport allows it ({@link #build}), else on the loop ({@link #onLoop}); the
     * adoption and the start run on the connection's loop ({@link #start}), which from then on
     * alone touches the connection: the loop's task queue carries it over (happens-before).
     *
     * <p>What must hold on cancellation (the subscriber's or the timeout's, which claim
     * {@code handedOver}): cancelled while queued, nothing native is made; cancelled while the
     * native part runs, it finishes (on a worker of its own: the set-up thread's queue goes on
     * without it, SetupThread#giveUp), sends nothing to the server if it is not past the
     * credentials yet, and else the loop ends the connection once made, through its own close, as for
     * one cancelled while establishing. Until {@link #start} nothing of it is registered with the
     * loop and no receive is posted, so nothing the NIC may touch is freed early. When the
     * instance is closing by the time the loop would adopt it, it is closed there and then instead
     * (the shutdown waits for the set-up thread before it frees the transport).
     */
    private final class Connect {
        private final InetSocketAddress address;
        private final List<Region> regionList;
        private final byte[] raw;
        private final int receivePrefetch;
        private final Supplier<byte[]> credentials;
        private final boolean endOnReceiveOverflow;
        private final Consumer<CompletableFuture<Void>> releases;
        private final EventLoop loop;
        private final MonoSink<RdmaConnection> sink;
        private final AtomicReference<ConnectionCore> ref;
        private final AtomicBoolean handedOver;

        Connect(InetSocketAddress address, List<Region> regionList, byte[] raw, int receivePrefetch,
                Supplier<byte[]> credentials, boolean endOnReceiveOverflow, Consumer<CompletableFuture<Void>> releases,
                EventLoop loop, MonoSink<RdmaConnection> sink, AtomicReference<ConnectionCore> ref,
                AtomicBoolean handedOver) {
            this.address = address;
            this.regionList = regionList;
            this.raw = raw;
            this.receivePrefetch = receivePrefetch;
            this.credentials = credentials;
            this.endOnReceiveOverflow = endOnReceiveOverflow;
            this.releases = releases;
            this.loop = loop;
            this.sink = sink;
            this.ref = ref;
            this.handedOver = handedOver;
        }

        private ResourceClosedException closed() {
            return new ResourceClosedException("cqflux is closed: cannot connect to " + address);
        }

        /** Set-up thread: the native part, then the hand-over to the loop. */
        void build() {
            assert setups.inSetupThread() : "a connect's set-up runs on " + setups;
            if (handedOver.get()) {
                return; // cancelled while queued: nothing native exists
            }
            if (closing.get()) {
                fail(closed());
                return;
            }
            Built b = nativePart();
            if (b == null) {
                return;
            }
            try {
                loop.executeOrAfterTermination(() -> start(b));
            } catch (RuntimeException e) {
                b.release();
                fail(closed());
            }
        }

        /**
         * Signals a failed connect on the connection's loop, as its success is (the subscriber is
         * signalled on the loop thread: docs/architecture.md), so that a subscriber which blocks in
         * onError holds up that loop, never the set-up thread every connect and accept of the
         * instance waits for. Where the loop no longer takes tasks the error is signalled once it
         * ended, or here when it already has ({@code executeOrAfterTermination}).
         */
        private void fail(Throwable e) {
            Runnable signal = () -> {
                loop.noteOperation("cqflux.connect"); // subscriber code: reported if it blocks
                sink.error(e);
            };
            if (loop.inEventLoop()) {
                signal.run(); // a subscriber's throw from onError is its own: no second signal
                return;
            }
            try {
                loop.executeOrAfterTermination(signal);
                return;
            } catch (RuntimeException x) {
                // Not handed over: signalled still, on this thread.
            }
            sink.error(e);
        }

        /** Loop thread, for a transport whose connect may not leave it: all of it there. */
        void onLoop() {
            loop.noteSetup("cqflux.connect"); // the library's own work: not a blocked-loop WARN
            if (handedOver.get()) {
                return;
            }
            if (closing.get()) {
                // A hand-over that the loop dropped in its shutdown runs after it ended.
                loop.noteOperation("cqflux.connect"); // subscriber code: reported if it blocks
                sink.error(closed());
                return;
            }
            Built b = nativePart();
            if (b != null) {
                start(b);
            }
        }

        /** {@return the transport's connection and its control words, or null once the sink failed} */
        private Built nativePart() {
            PeerControl control = null;
            try {
                byte[] cred = null;
                byte[] requestData = raw;
                boolean tells = false;
                if (raw != null) {
                    control = PeerControl.none();
                    checkRawConnectData(raw);
                } else {
                    control = PeerControl.register(transport);
                    cred = credentials == null ? new byte[0] : credentials.get();
                    if (cred == null) {
                        throw new IllegalArgumentException("the credentials supplier returned null");
                    }
                    // Checked before anything native is made, with parameters as long as the
                    // connection's own, which the transport hands the hello below. A hello with
                    // no room for them goes without, and its connection shares no queue.
                    PeerHello h = hello(parametersTemplate(), regionList, control, cred);
                    requestData = h.encode(transport.maxConnectPrivateData());
                    tells = h.carriesParameters(transport.maxConnectPrivateData());
                }
                if (handedOver.get()) {
                    // Given up on meanwhile (the credentials can take their time): nothing is sent
                    // to the server for it.
                    control.close();
                    return null;
                }
                if (!tells) {
                    // The loop that serves it: its affinity.
                    return new Built(transport.connect(address, config, requestData, loop), control);
                }
                PeerControl words = control;
                byte[] c = cred;
                return new Built(transport.connectWithHello(address, config,
                        p -> hello(p, regionList, words, c).encode(transport.maxConnectPrivateData()), loop), control);
            } catch (RuntimeException e) {
                if (control != null) {
                    control.close();
                }
                fail(e); // inline on the loop, else handed to it
                return null;
            }
        }

        /** The connection's loop: adopts what the native part made and starts it. */
        private void start(Built b) {
            if (closing.get()) {
                // The instance is shutting down (the loop may have ended: this may run after it).
                b.release();
                sink.error(closed());
                return;
            }
            if (loop.endedOnFatalError()) {
                // The loop ended on a fatal error while the native part ran (this runs after its
                // end: on the loop's thread as it ends, or on the one that handed it over; an end
                // by shutdown is the instance closing, above): nothing will adopt it.
                b.release();
                sink.error(new ConnectionException(ConnectionEvent.LOST, "connect to " + address + ": its event loop "
                        + loop.name() + " ended before it could start the connection (on a fatal error that code"
                        + " running on it threw; the log names it)"));
                return;
            }
            assert loop.inEventLoop() : "a connection is adopted on its loop " + loop.name();
            loop.noteSetup("cqflux.connect");
            ConnectionCore core = adopt(loop, b.spi, config, b.control, raw != null);
            if (receivePrefetch >= 0) {
                core.receiver.prefetch(receivePrefetch, raw != null); // ConnectOptions.withReceivePrefetch
            }
            core.receiver.endOnOverflow(endOnReceiveOverflow);
            ref.set(core);
            // A PeerPool keeps the release of every connection it starts, a cancelled one's too.
            if (releases != null) {
                releases.accept(core.closed);
            }
            if (handedOver.get()) {
                core.end(new ResourceClosedException("connect to " + address + " cancelled"), null);
                return;
            }
            core.start(c -> {
                if (handedOver.compareAndSet(false, true)) {
                    sink.success(c);
                }
            }, sink::error);
        }
    }

    /** What a connect's native part made: nothing of it is known to a loop yet. */
    private record Built(Connection spi, PeerControl control) {
        /** Frees it where no loop will: the connection first (it uses the control words' memory). */
        void release() {
            try {
                spi.close();
            } finally {
                control.close();
            }
        }
    }

    /**
     * {@return a new connection of the instance, registered until it is released}
     *
     * @param loop the loop that will own it
     * @param spi the transport's connection
     * @param cfg its configuration
     * @param control its control words
     * @param raw whether it was opened with raw private data
     */
    public ConnectionCore adopt(EventLoop loop, Connection spi, ConnectionConfig cfg, PeerControl control, boolean raw) {
        ConnectionCore core = newConnection(loop, spi, cfg, control, raw);
        adopt(core);
        return core;
    }

    /**
     * Builds the loop-side state of a connection without making it known to anyone: plain Java
     * objects, nothing native, nothing of its loop's (its timers, its registrations) until
     * {@link ConnectionCore#start}. Any thread, so that an accept's set-up thread can build it
     * beside the native part and hand it to the loop with the rest (the task queue's
     * happens-before publishes it); one never adopted ({@link #adopt(ConnectionCore)}) is
     * garbage and holds nothing.
     *
     * @param loop the loop that will own it
     * @param spi the transport's connection
     * @param cfg its configuration
     * @param control its control words
     * @param raw whether it was opened with raw private data
     */
    public ConnectionCore newConnection(EventLoop loop, Connection spi, ConnectionConfig cfg, PeerControl control,
                                        boolean raw) {
        return new ConnectionCore(loop, transport, spi, cfg, limits, control, raw, buffers,
                instrumentation, connections::remove, transport.closesOffLoop() ? closes : null);
    }

    /**
     * Counts a connection built by {@link #newConnection} among the instance's open ones (its
     * shutdown closes it from then on). On the loop that adopts it, before its start.
     */
    public void adopt(ConnectionCore core) {
        connections.add(core);
    }

    /**
     * {@return parameters as long as this transport's connections' own
     * (Transport#connectionParametersTemplate), for a hello's size, or {@code null} where they
     * have none}
     */
    public byte[] parametersTemplate() {
        byte[] t = transport.connectionParametersTemplate();
        return t.length > 0 ? t : null;
    }

    /**
     * This side's hello: the exposed regions (each must still be open), the transport's handshake,
     * the connection's control words and the credentials for the server's authenticator (empty
     * for none).
     *
     * @throws ResourceClosedException when an exposed region is closed
     * @throws IllegalArgumentException when it does not fit {@code max}
     */
    public byte[] hello(List<Region> exposed, PeerControl control, byte[] credentials, int max) {
        return hello(null, exposed, control, credentials).encode(max);
    }

    /**
     * As {@link #hello(List, PeerControl, byte[], int)}, not yet encoded, with the connection's own
     * parameters ({@link io.cqflux.core.spi.Transport#connectWithHello}), or {@code null} for none.
     */
    private PeerHello hello(byte[] parameters, List<Region> exposed, PeerControl control, byte[] credentials) {
        List<byte[]> descriptors = new ArrayList<>();
        for (int i = 0; i < exposed.size(); i++) {
            Region r = exposed.get(i);
            API.checkRegisteredWith(r, transport, "exposed region " + i);
            if (!r.isOpen()) {
                throw new ResourceClosedException("exposed " + r + " is closed");
            }
            // The peer would write and read it by RDMA: freed memory must not be handed out
            // (the registration does not keep the arena open).
            Checks.local("exposed #" + i, API.nativeRegion(r), null);
            descriptors.add(API.nativeRegion(r).descriptor());
        }
        return PeerHello.of(transport, parameters, descriptors, control, limits.receiveBufferSize(), credentials);
    }

    /**
     * A server's hello for one accepted connection: the descriptors of that connection's own
     * registrations of the exposed regions, the transport's handshake and its control words.
     *
     * @throws IllegalArgumentException when it does not fit {@code max}
     */
    public byte[] acceptHello(List<byte[]> descriptors, PeerControl control, int max) {
        return acceptHello(null, descriptors, control).encode(max);
    }

    /**
     * As {@link #acceptHello(List, PeerControl, int)}, not yet encoded, with the accepted
     * connection's own parameters ({@link io.cqflux.core.spi.ConnectionRequest#acceptWithHello}),
     * or {@code null} for none.
     */
    public PeerHello acceptHello(byte[] parameters, List<byte[]> descriptors, PeerControl control) {
        return PeerHello.of(transport, parameters, descriptors, control, limits.receiveBufferSize(), new byte[0]);
    }

    /**
     * Encodes a hello with control words registered for the purpose and freed at once, so that
     * a hello that cannot be sent (over {@code max}, a closed or foreign region) fails the call
     * that would send it many times (every accept of a server, every connect of a pool).
     */
    public void checkHelloFits(List<Region> exposed, int max) {
        checkHelloFits(exposed, new byte[0], max);
    }

    /** As {@link #checkHelloFits(List, int)}, for a hello that carries credentials of that length (empty: none). */
    public void checkHelloFits(List<Region> exposed, byte[] credentials, int max) {
        try (PeerControl probe = PeerControl.register(transport)) {
            hello(exposed, probe, credentials, max);
        }
    }

    /**
     * Refuses a connect request that cannot be sent: raw private data over the transport's limit,
     * or a hello over it (fixed credentials included) or exposing a region that is closed or of
     * another instance.
     *
     * @param raw the raw private data, or {@code null} for a cqflux hello
     * @param exposed the hello's regions (unused with raw private data)
     * @param fixedCredentialsLength the length of the hello's fixed credentials, 0 for none
     * @throws IllegalArgumentException when the request is over the limit or names a region of
     *     another instance
     * @throws ResourceClosedException when an exposed region is closed
     */
    public void checkConnectRequest(byte[] raw, List<Region> exposed, int fixedCredentialsLength) {
        if (raw != null) {
            checkRawConnectData(raw);
        } else {
            // Fixed credentials travel in every hello: their length is known now. A supplier's
            // are asked for at each connect only, and checked there.
            checkHelloFits(exposed, new byte[fixedCredentialsLength], transport.maxConnectPrivateData());
        }
    }

    /** Refuses raw connect private data over the transport's limit, naming both. */
    public void checkRawConnectData(byte[] raw) {
        if (raw.length > transport.maxConnectPrivateData()) {
            throw new IllegalArgumentException("raw private data of " + raw.length + " bytes exceeds"
                    + " the transport's maximum " + transport.maxConnectPrivateData() + " for a connect ("
                    + transport.name() + ")");
        }
    }
}
