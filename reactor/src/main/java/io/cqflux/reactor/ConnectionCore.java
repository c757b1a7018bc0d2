package io.cqflux.reactor;

import io.cqflux.core.Completion;
import io.cqflux.core.CompletionRecord;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.Opcode;
import io.cqflux.core.OperationFailedException;
import io.cqflux.core.QueueFullException;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.Transport;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.epoll.loop.Registration;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;

/*
 * Design: the life of a connection, and how it ends.
 *
 * One loop thread owns all of this (methods marked "any thread" hand over). Operations are
 * described by InFlightTable's design comment (contexts, credits); this class drives them:
 * submit -> wait for credits (bounded queue) -> post -> completion -> signal.
 *
 *   CONNECTING --ESTABLISHED--> ESTABLISHED --(flushed completion)--> ENDING
 *        |                          |                                   |
 *        +------- terminal event, error completion, local close, deadline ------> ENDED --> CLOSED
 *
 * The end is known from whichever comes first: the transport's terminal event (CLOSED, LOST,
 * REJECTED, UNREACHABLE), an error completion (an error puts an RC queue pair in the error state,
 * ibv_poll_cq(3); libfabric's tcp endpoint drops the connection), a close by this side, the
 * operation deadline (a posted operation without a completion for `operationTimeout`: the peer
 * stopped answering), or the loop letting go of the connection. A flushed completion
 * (WR_FLUSH_ERR: the connection is being torn down) makes the connection ENDING: nothing more is
 * posted, new operations wait, and the transport's event decides between CLOSED and LOST; if it
 * does not come within the connect timeout, LOST.
 *
 * end() runs once: it emits the event on events(), fails every subscriber of an operation in
 * flight with the ConnectionException at once (CLOSED for an orderly close by either side, LOST
 * otherwise), and defers the rest to loop tasks that run after the current drain, so that no
 * native object is ever destroyed inside its own poll: queued operations are failed a chunk per
 * task (one dying connection with a huge backlog never stalls its neighbours), then the native
 * connection is closed, and only then are the slots, credits and region references of operations
 * that never completed released (the NIC may use their buffers until the queue pair is gone).
 */

/**
 * The loop-side state of one connection: the in-flight table and credits, the bounded queue of
 * operations waiting for a credit, the receive side, and the connection's lifecycle (see the
 * design comment at the top of this file).
 */
final class ConnectionCore {
    private static final Logger LOG = Loggers.getLogger(ConnectionCore.class);

    /** Queued operations failed per loop task after the end. */
    static final int FAIL_CHUNK = 1024;

    enum State { CONNECTING, ESTABLISHED, ENDING, ENDED, CLOSED }

    final EventLoop loop;
    final Transport transport;
    final Connection conn;
    final ConnectionConfig config;
    final String description;
    final RdmaConnection api;
    private final InFlightTable table;
    private final int pendingLimit;
    private final long operationTimeoutNanos;
    /** The shortest operationTimeout for which {@link #post} stamps operations with the loop's unit clock. */
    static final long COARSE_POST_CLOCK_FROM_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Whether {@link #post} stamps {@code postedAt} with the loop's unit clock (see there). */
    private final boolean coarsePostClock;
    /** How long an operation's {@code block()} spins before it parks ({@link SpinThenParkSubscriber}). */
    final long blockSpinNanos;
    private final ArrayDeque<OpMono> waiting = new ArrayDeque<>();
    /** Messages waiting for a credit from the peer's receiver (PeerControl), in order. */
    private final ArrayDeque<OpMono> messages = new ArrayDeque<>();
    private final PeerControl control;
    private boolean creditPollScheduled;
    /*
     * The goodbye's two flags are written on the loop only, and only while the connection closes;
     * they are volatile because disposeNow's waiting thread reads them to say what the release
     * still waits for (releasePending).
     */
    /** A close by this side wants the goodbye written before the native close. */
    private volatile boolean goodbyeWanted;
    /** The goodbye write is posted and not yet completed. */
    private volatile boolean goodbyeInFlight;
    private long startedAt;
    private final List<Registration> registrations = new ArrayList<>();
    private volatile List<PeerRegion> peerRegions = List.of();
    /**
     * The peer's receive buffer size from its hello (PeerHello), 0 where it did not tell it (an
     * older cqflux, a hello with no room left, raw private data): a message longer than it would
     * fail the peer's receive and end the connection, so it is refused before posting.
     */
    private volatile int peerReceiveBufferSize;
    /** The peer's private data as delivered, once established. */
    private volatile byte[] peerData = new byte[0];
    /** Opened with raw private data: no hello, no control words, no transport handshake of its own. */
    final boolean raw;
    /** Peer regions made from raw descriptors ({@link RdmaConnection#remoteRegion(byte[], io.cqflux.core.RegionAccess...)}); guarded by itself. */
    private final List<PeerRegion> foreignRegions = new ArrayList<>();
    /** Set under {@link #foreignRegions}' lock when the native connection is closed. */
    private boolean foreignClosed;
    private volatile int maxInFlight;
    /** Send credits in use by posted operations; a volatile mirror for metrics. */
    private volatile int inFlightOps;
    /** Operations waiting for a credit (either queue); a volatile mirror for metrics. */
    private volatile int waitingOps;
    private volatile long staleCompletions;
    private boolean retryScheduled;
    private volatile State state = State.CONNECTING;
    private volatile Throwable terminal;
    private volatile boolean closedLocally;
    /**
     * {@link #closeAsync} was called (any thread), perhaps before its task ran on the loop: an
     * operation subscribed from then on fails with a {@link ResourceClosedException}, as one after
     * the close does, not with the end's verdict that the operations pending at the close get.
     */
    private volatile boolean closeRequested;
    /** {@code System.nanoTime()} when the connection became ENDING. */
    private long endingSince;
    private Consumer<RdmaConnection> onEstablished;
    private Consumer<Throwable> onFailed;
    private Disposable deadlines;
    final Receiver receiver;
    /** The owning instance's staging buffers (the byte[]/ByteBuffer forms); set by {@link Cqflux#adopt} before publication. */
    BufferPool buffers;
    /** The owner's listeners ({@link CqfluxListener}); set by {@link Cqflux} right after construction. */
    Instrumentation instrumentation = Instrumentation.NONE;
    /**
     * The owner's bookkeeping for a released connection (it forgets it); set by {@link Cqflux#adopt}
     * before publication, run just before {@link #closed} completes, so that whoever sees
     * {@code onDispose()} complete also sees the connection forgotten.
     */
    Runnable onReleased = () -> { };
    /** Established and reported opened: a listener added later is told of it ({@link Instrumentation#add}). */
    volatile boolean announced;
    /**
     * Per added listener (the key is {@link Instrumentation}'s registration, compared by
     * identity), the state of its opened/closed notices for this connection.
     */
    final java.util.Map<Object, java.util.concurrent.atomic.AtomicInteger> notices =
            new java.util.concurrent.ConcurrentHashMap<>();
    /** Operations refused for the pending limit; written on the loop only, read anywhere. */
    private volatile long rejections;
    /**
     * Staged operations ({@link StagedMono}: the byte[]/ByteBuffer forms) of this connection
     * waiting for a pooled buffer; any thread. The end withdraws and fails them
     * ({@link #failEverything}), the one place that does.
     */
    private final java.util.Set<StagedMono.Staged<?>> stagedWaiters =
            java.util.concurrent.ConcurrentHashMap.newKeySet();

    /*
     * The metrics mirrors (inFlightOps, maxInFlight, waitingOps) are written by the loop with
     * opaque stores through these handles: a volatile store per operation and completion was a
     * full fence each time on the hot path (issue 13), for gauges that need no ordering.
     */
    private static final java.lang.invoke.VarHandle MIRROR_IN_FLIGHT;
    private static final java.lang.invoke.VarHandle MIRROR_MAX_IN_FLIGHT;
    private static final java.lang.invoke.VarHandle MIRROR_WAITING;

    static {
        try {
            java.lang.invoke.MethodHandles.Lookup l = java.lang.invoke.MethodHandles.lookup();
            MIRROR_IN_FLIGHT = l.findVarHandle(ConnectionCore.class, "inFlightOps", int.class);
            MIRROR_MAX_IN_FLIGHT = l.findVarHandle(ConnectionCore.class, "maxInFlight", int.class);
            MIRROR_WAITING = l.findVarHandle(ConnectionCore.class, "waitingOps", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Sinks.Many<ConnectionEvent> events = Sinks.many().replay().all();
    private final Sinks.Many<CompletionRecord> completions = Sinks.many().multicast().directBestEffort();
    final AtomicInteger monitors = new AtomicInteger();
    final CompletableFuture<Void> closed = new CompletableFuture<>();

    ConnectionCore(EventLoop loop, Transport transport, Connection conn, ConnectionConfig config,
                   Limits limits, PeerControl control, boolean raw) {
        this.raw = raw;
        this.loop = loop;
        this.transport = transport;
        this.conn = conn;
        this.config = config;
        this.description = conn.description();
        int cqForSends = config.completionQueueSize()
                - (config.receiveCompletionQueueSize() == 0 ? config.receiveQueueSize() : 0);
        this.table = new InFlightTable(Math.min(config.sendQueueSize(), cqForSends), config.receiveQueueSize());
        this.pendingLimit = limits.pendingLimit();
        this.operationTimeoutNanos = limits.operationTimeout().toNanos();
        this.coarsePostClock = operationTimeoutNanos >= COARSE_POST_CLOCK_FROM_NANOS;
        this.blockSpinNanos = limits.blockSpinNanos();
        this.receiver = new Receiver(this, config.receiveQueueSize(), limits.receiveBufferSize(),
                limits.notificationBacklog());
        // A peer with raw private data sends without credits: by default every receive is posted
        // ahead of demand (Receiver's class comment; ConnectOptions/AcceptOptions override it).
        receiver.prefetch(raw ? config.receiveQueueSize() : 0, raw);
        this.api = new RdmaConnection(this);
        this.control = control;
    }

    /** Control writes the connection posts for itself: they take a table slot and a send credit like an operation. */
    private enum Internal { GRANT, GOODBYE }

    /**
     * The per-connection limits a {@link Cqflux} applies.
     *
     * @param pendingLimit operations that may wait for a credit
     * @param receiveBufferSize bytes per receive buffer
     * @param notificationBacklog notifications kept for an absent receiver
     * @param operationTimeout how long a posted operation may go without a completion
     * @param blockSpinNanos how long an operation's {@code block()} spins before it parks, 0 for
     *     not at all ({@link Cqflux.Builder#blockSpin})
     */
    record Limits(int pendingLimit, int receiveBufferSize, int notificationBacklog, Duration operationTimeout,
                  long blockSpinNanos) {
    }

    // ---------------------------------------------------------------- lifecycle

    /**
     * Registers the queues and the event channel with the loop and waits for the handshake. Loop
     * thread.
     *
     * @param established called with the API object once established
     * @param failed called if the connection fails before that
     */
    void start(Consumer<RdmaConnection> established, Consumer<Throwable> failed) {
        assert loop.inEventLoop();
        this.onEstablished = established;
        this.onFailed = failed;
        this.startedAt = System.nanoTime();
        try {
            // The hook: the loop let go of a source on its own (shutdown, fatal error, a queue that
            // failed): nothing would complete what is pending any more, so end it all now.
            // When this side's close was asked for first (a Cqflux shutdown whose budget ran out
            // before the loop ran the close task, disposeNow(Duration.ZERO) say), that is still
            // a close by this side: CLOSED, as the shutdown's forceClose would say, not LOST.
            Runnable lost = () -> {
                if (closeRequested) {
                    closedLocally = true;
                    end(new ConnectionException(ConnectionEvent.CLOSED, "connection " + description
                            + " closed by this side (its event loop " + loop.name() + " stopped before the goodbye)"),
                            ConnectionEvent.CLOSED);
                } else {
                    end(new ConnectionException(ConnectionEvent.LOST, "connection " + description
                            + ": its event loop " + loop.name() + " stopped serving it"), ConnectionEvent.LOST);
                }
            };
            for (CompletionQueue cq : conn.completionQueues()) {
                registrations.add(loop.register(cq, this::onCompletion, lost));
            }
            registrations.add(loop.register(conn.events(), this::onEventsReadable, lost));
        } catch (RuntimeException e) {
            end(e, null);
            return;
        }
        long period = Math.clamp(Math.min(operationTimeoutNanos, config.timeout().toNanos()) / 4,
                TimeUnit.MILLISECONDS.toNanos(10), TimeUnit.SECONDS.toNanos(1));
        deadlines = LibraryTimer.schedulePeriodically(() -> runOnLoop(this::checkDeadlines),
                period, period, TimeUnit.NANOSECONDS);
        onEvents();
    }

    /**
     * The event channel's readiness handler: the library's own work (the handshake, the hello),
     * so a slow one is not a blocked-loop WARN; subscriber code it runs (the established
     * callback, the end's failures) is named before it runs and reported again.
     */
    private void onEventsReadable() {
        loop.noteSetup("cqflux.connectionEvent");
        onEvents();
    }

    private void onEvents() {
        ConnectionEvent e;
        while (state.compareTo(State.ENDED) < 0) {
            try {
                e = conn.events().nextEvent();
            } catch (RuntimeException ex) {
                end(new ConnectionException(ConnectionEvent.LOST, description + ": event channel failed", ex),
                        ConnectionEvent.LOST);
                return;
            }
            if (e == null) {
                return;
            }
            onEvent(e);
        }
    }

    private void onEvent(ConnectionEvent e) {
        if (e == ConnectionEvent.ESTABLISHED) {
            if (state != State.CONNECTING) {
                return;
            }
            try {
                peerData = conn.peerPrivateData();
            } catch (RuntimeException ex) {
                end(new ConnectionException(ConnectionEvent.LOST, "connection " + description
                        + ": reading the peer's private data failed", ex), ConnectionEvent.LOST);
                return;
            }
            if (!raw) {
                try {
                    PeerHello.Accepted hello = PeerHello.accept(transport, conn, control);
                    peerReceiveBufferSize = hello.receiveBufferSize();
                    peerRegions = hello.regions();
                } catch (RuntimeException ex) {
                    end(new ConnectionException(ConnectionEvent.LOST, "connection " + description
                            + ": the peer's private data is not a usable cqflux hello, so the connection is closed: "
                            + ex.getMessage(), ex), ConnectionEvent.LOST);
                    return;
                }
            }
            state = State.ESTABLISHED;
            if (config.receiveQueueSize() == 0 && control.enabled()) {
                control.neverReceives(); // the peer's sends fail at once instead of waiting forever
                grant();
                if (state != State.ESTABLISHED) {
                    return; // the grant's post failed and ended the connection: nothing to announce
                }
            }
            receiver.established(); // a receive prefetch is posted before anyone subscribes
            if (state != State.ESTABLISHED) {
                return; // it failed and ended the connection
            }
            instrumentation.opened(this);
            Emissions.guarded(() -> events.tryEmitNext(e));
            Consumer<RdmaConnection> cb = onEstablished;
            onEstablished = null;
            onFailed = null;
            if (cb != null) {
                loop.noteOperation("cqflux.established"); // subscriber code: reported if it blocks
                safely(() -> cb.accept(api));
            }
            return;
        }
        if (e == ConnectionEvent.CLOSED && control.enabled() && !control.peerSaidGoodbye()) {
            // The transport reports a peer process that died like an orderly close (its kernel
            // closes the socket or the RDMA CM id): a cqflux peer that closes in order says
            // goodbye first (PeerControl), so one that did not is lost.
            end(new ConnectionException(ConnectionEvent.LOST, "connection " + description + " lost: the peer"
                    + " ended it without an orderly close (its process died or stopped serving it)"),
                    ConnectionEvent.LOST);
            return;
        }
        String what = switch (e) {
            case CLOSED -> "closed by the peer";
            case LOST -> "lost";
            case REJECTED -> "refused: nothing listens at that address, or the server rejected the request";
            case UNREACHABLE -> "peer unreachable";
            default -> e.name();
        };
        end(new ConnectionException(e, "connection " + description + " " + what), e);
    }

    /** Any thread: closes the connection; completes {@link #closed} once its native objects are freed. */
    CompletableFuture<Void> closeAsync() {
        closeRequested = true;
        runOnLoop(() -> {
            if (state.compareTo(State.ENDED) < 0) {
                closedLocally = true;
                // An orderly close tells a cqflux peer so (the goodbye word), before the native
                // close; posted after every earlier operation, it also completes after them.
                goodbyeWanted = state == State.ESTABLISHED && control.enabled();
                end(new ConnectionException(ConnectionEvent.CLOSED, "connection " + description
                        + " closed by this side"), ConnectionEvent.CLOSED);
            }
        });
        return closed;
    }

    /**
     * Ends the connection, once: emits {@code event}, fails every subscriber of an operation in
     * flight and of the receive side at once, and defers the rest (queued operations a chunk at a
     * time, then the native close and the release of what operations in flight held) to loop
     * tasks after the current drain. Loop thread, or any thread once the loop is gone.
     *
     * @param cause what the subscribers get
     * @param event the event to emit on {@code events()}, or {@code null}
     */
    void end(Throwable cause, ConnectionEvent event) {
        if (state.compareTo(State.ENDED) >= 0) {
            return;
        }
        terminal = cause; // before the volatile state: checkOpen() on another thread reads both
        state = State.ENDED;
        instrumentation.closed(this);
        try {
            failEverything(cause, event);
        } finally {
            // Scheduled after the subscribers were failed (a close that runs at once, after the
            // loop ended, must not free what they still refer to) and whatever a subscriber's
            // callback threw: the queued operations are failed and the native objects freed.
            afterDrain(this::finishEnd);
        }
    }

    private void failEverything(Throwable cause, ConnectionEvent event) {
        loop.noteOperation("cqflux.connectionEnd"); // subscriber code (the failures) runs here
        if (deadlines != null) {
            deadlines.dispose();
        }
        if (event != null) {
            Emissions.guarded(() -> events.tryEmitNext(event));
        }
        if (event == ConnectionEvent.LOST) {
            // Once per connection: what a service operator needs to see without debug logging.
            // A cause without a message (a subscriber's own exception) still names the connection.
            String m = cause.getMessage();
            LOG.warn(m != null && !m.isBlank() ? m : "connection " + description + " lost: " + cause);
        }
        Consumer<Throwable> failed = onFailed;
        onFailed = null;
        onEstablished = null;
        if (failed != null) {
            safely(() -> failed.accept(cause));
        }
        table.forEach((ctx, o) -> {
            if (o instanceof OpMono op) {
                op.fail(op.ownError != null ? op.ownError : cause);
            }
        });
        // Staged operations still waiting for a pooled buffer: nothing of theirs is posted yet,
        // so they fail now, as queued operations do, and leave the pool's queue (a waiter holds
        // one of its maxWaiters places). One that registers after this saw the state ENDED.
        for (StagedMono.Staged<?> s : stagedWaiters) {
            safely(() -> s.connectionEnded(cause));
        }
        safely(() -> receiver.terminate(closedLocally
                ? new ResourceClosedException("connection " + description + " was closed by this side") : cause));
        if (goodbyeWanted) {
            postGoodbye();
            // Bounded: a peer that stopped answering never completes the write.
            long bound = goodbyeBoundMillis();
            Runnable giveUp = () -> runOnLoop(() -> {
                if (goodbyeWanted || goodbyeInFlight) {
                    goodbyeWanted = false;
                    goodbyeInFlight = false;
                    afterDrain(this::finishEnd);
                }
            });
            LibraryTimer.schedule(giveUp, bound, TimeUnit.MILLISECONDS);
        }
    }


    /** {@return how long the native close waits for the goodbye write: the shorter of 1 s and the connect timeout} */
    private long goodbyeBoundMillis() {
        return Math.min(config.timeout().toMillis(), 1000);
    }

    /**
     * {@return what the release of this connection still waits for, for the error of
     * {@link RdmaConnection#disposeNow}: the close task not run yet (its loop busy or blocked), the
     * goodbye write (waiting for a send credit, or posted and not completed: bounded by
     * {@link #goodbyeBoundMillis}), or the teardown after it on the loop}; any thread, a snapshot
     * that the loop may have moved past already
     */
    String releasePending() {
        State s = state;
        if (s.compareTo(State.ENDED) < 0) {
            return "the native connection is not freed yet: its loop " + loop.name() + " has not run the close task"
                    + " (it is busy or blocked)";
        }
        if (s == State.ENDED) {
            // goodbyeWanted first: postGoodbye sets goodbyeInFlight before it clears goodbyeWanted.
            boolean wanted = goodbyeWanted;
            boolean inFlight = goodbyeInFlight;
            String then = " (awaited at most " + goodbyeBoundMillis() + " ms, then the native connection is freed"
                    + " without it)";
            if (wanted) {
                return "the close task ran; the goodbye write to the peer waits for a send credit held by an"
                        + " operation in flight" + then;
            }
            if (inFlight) {
                return "the close task ran; the goodbye write to the peer is posted and has not completed yet" + then;
            }
            return "the close task ran; its loop " + loop.name() + " has not finished the teardown (failing the queued"
                    + " operations, freeing the native connection): it is busy or blocked";
        }
        return "the native connection is freed; its loop " + loop.name() + " is running the last releases";
    }

    /** Posts the goodbye write if a send credit is free; otherwise a returning credit posts it. */
    private void postGoodbye() {
        if (!goodbyeWanted || goodbyeInFlight || state == State.CLOSED) {
            return;
        }
        Posted p;
        try {
            p = postControl(Internal.GOODBYE, ctx -> control.postGoodbye(conn, ctx));
        } catch (RuntimeException e) {
            LOG.warn("connection " + description + ": posting the goodbye failed; the peer will report the end"
                    + " as LOST", e);
            p = Posted.REFUSED;
        }
        if (p == Posted.YES) {
            goodbyeInFlight = true; // before goodbyeWanted is cleared: releasePending reads them the other way round
            goodbyeWanted = false;
        } else if (p == Posted.REFUSED) {
            goodbyeWanted = false; // the queue refused it: close without (the peer will say LOST)
        }
    }

    /** What became of a control write. */
    private enum Posted { YES, NO_CREDIT, REFUSED }

    /**
     * Posts one of the connection's own control writes under a table slot and a send credit,
     * giving both back when it is not posted (refused, or the post threw: rethrown).
     */
    private Posted postControl(Internal kind, java.util.function.LongPredicate post) {
        if (!table.tryTakeCredits(1)) {
            return Posted.NO_CREDIT;
        }
        long ctx = table.acquire(kind);
        boolean ok = false;
        try {
            ok = post.test(ctx);
        } finally {
            if (!ok) {
                table.release(ctx);
                table.returnCredits(1);
            }
            noteInFlight();
        }
        return ok ? Posted.YES : Posted.REFUSED;
    }

    /**
     * After the loops ended (the entry point's shutdown): ends the connection if it has not
     * ended, fails what is queued and frees the native objects now, without waiting for a
     * goodbye. Any thread.
     *
     * @param cause what the subscribers get
     */
    synchronized void forceClose(Throwable cause) {
        end(cause, ConnectionEvent.CLOSED);
        goodbyeWanted = false;
        goodbyeInFlight = false;
        while (!waiting.isEmpty() || !messages.isEmpty()) {
            finishEnd();
        }
        closeNative();
    }

    /**
     * Fails the queued operations a chunk at a time, then closes the native connection. Loop
     * task (synchronized for the one case that is not: {@link #forceClose} after the loop ended).
     */
    private synchronized void finishEnd() {
        // A task of its own: it fails queued operations (subscriber code), then closes natively.
        loop.noteOperation("cqflux.connectionEnd");
        Throwable cause = terminal;
        for (int i = 0; i < FAIL_CHUNK; i++) {
            OpMono op = waiting.poll();
            if (op == null) {
                op = messages.poll();
            }
            if (op == null) {
                noteWaiting();
                if (!goodbyeWanted && !goodbyeInFlight) {
                    closeNative();
                }
                return;
            }
            // A durable write waiting for its flush has its write on the wire and a slot in the
            // table: its regions stay held until the native close.
            if (op.stage == OpMono.NEW) {
                op.failUnposted(cause);
            } else {
                op.fail(cause);
            }
        }
        afterDrain(this::finishEnd);
    }

    /**
     * Unregisters and frees the native connection, then releases what operations in flight held:
     * after the queue pair is destroyed nothing can touch their buffers any more.
     */
    private synchronized void closeNative() {
        if (state == State.CLOSED) {
            return;
        }
        state = State.CLOSED;
        // The library's own teardown (deregistration, the native close, freeing regions): a slow
        // one is not a blocked-loop WARN about subscriber code. The releases of what operations
        // held (a pooled buffer goes to a waiter) and the completion of events() and closed run
        // subscriber code: named as such around them.
        loop.noteSetup("cqflux.connectionClose");
        for (Registration r : registrations) {
            safely(r::close);
        }
        registrations.clear();
        boolean nativeClosed;
        try {
            conn.close();
            nativeClosed = true;
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            // The queue pair may still be alive: keep every buffer it could touch (a leak,
            // reported) rather than free memory under the NIC.
            nativeClosed = false;
            LOG.warn("connection " + description + ": closing the native connection failed; its buffers are"
                    + " kept (leaked) since the NIC may still use them", t);
        }
        if (nativeClosed) {
            loop.noteOperation("cqflux.connectionEnd"); // releases grant pooled buffers: subscriber code
            table.forEach((ctx, o) -> {
                if (o instanceof OpMono op) {
                    safely(op::releaseRegions);
                }
                table.release(ctx);
            });
            loop.noteSetup("cqflux.connectionClose");
            safely(receiver::freePool);
            safely(control::close);
        } else {
            safely(receiver::finish);
        }
        inFlightOps = 0;
        for (PeerRegion p : peerRegions) {
            safely(() -> p.nativeRegion().close());
        }
        List<PeerRegion> foreign;
        synchronized (foreignRegions) {
            foreignClosed = true;
            foreign = List.copyOf(foreignRegions);
            foreignRegions.clear();
        }
        for (PeerRegion p : foreign) {
            safely(() -> p.nativeRegion().close());
        }
        loop.noteOperation("cqflux.connectionEnd"); // the subscribers of events() and closed
        Emissions.guarded(events::tryEmitComplete);
        Emissions.guarded(completions::tryEmitComplete);
        // Before the completion, not as one of its dependents: CompletableFuture runs those in no
        // promised order, and onDispose()'s subscriber could see it before the owner forgot it.
        safely(onReleased);
        closed.complete(null);
    }

    /**
     * Runs a task after the current drain; if the loop no longer takes tasks, or drops it in a
     * forced shutdown, once the loop has ended.
     */
    private void afterDrain(Runnable task) {
        loop.executeLaterOrAfterTermination(task);
    }

    /**
     * The deadlines: a posted operation without a completion for {@code operationTimeout} ends
     * the connection LOST (the peer stopped answering; fi_cq(3) and ibv_poll_cq(3) promise no
     * completion otherwise); an ENDING connection whose terminal event does not come within the
     * connect timeout ends LOST. Loop thread, from a periodic task.
     */
    private void checkDeadlines() {
        long now = System.nanoTime();
        if (state == State.ENDING && now - endingSince > config.timeout().toNanos()) {
            if (control.enabled() && control.peerSaidGoodbye()) {
                end(new ConnectionException(ConnectionEvent.CLOSED, "connection " + description
                        + " closed by the peer"), ConnectionEvent.CLOSED);
            } else {
                end(new ConnectionException(ConnectionEvent.LOST, "connection " + description + " lost: its"
                        + " operations were flushed and no end was reported within " + config.timeout().toMillis()
                        + " ms"), ConnectionEvent.LOST);
            }
            return;
        }
        if (state == State.CONNECTING && now - startedAt > config.timeout().toNanos()) {
            // A server-side connection whose client vanished mid-handshake would wait forever.
            end(new ConnectionException(ConnectionEvent.UNREACHABLE, "connection " + description + " was not"
                    + " established within " + config.timeout().toMillis() + " ms"), ConnectionEvent.UNREACHABLE);
            return;
        }
        if (state != State.ESTABLISHED || table.creditsInUse() == 0) {
            return;
        }
        long[] longest = {0};
        table.forEach((ctx, o) -> {
            if (o instanceof OpMono op && op.stage != OpMono.NEW) {
                longest[0] = Math.max(longest[0], now - op.postedAt);
            }
        });
        if (longest[0] > operationTimeoutNanos) {
            end(new ConnectionException(ConnectionEvent.LOST, "connection " + description + " lost: an operation"
                    + " posted " + TimeUnit.NANOSECONDS.toMillis(longest[0]) + " ms ago has no completion"
                    + " (operationTimeout " + TimeUnit.NANOSECONDS.toMillis(operationTimeoutNanos)
                    + " ms): the peer stopped answering"), ConnectionEvent.LOST);
        }
    }

    // ---------------------------------------------------------------- operations

    /** Any thread: throws if the connection can no longer take operations. */
    void checkOpen() {
        if (closeRequested) {
            throw closedByThisSide();
        }
        if (state.compareTo(State.ENDED) >= 0) {
            if (terminal instanceof ConnectionException ce) {
                throw new ConnectionException(ce.event(), ce.getMessage());
            }
            throw closedByThisSide();
        }
    }

    /**
     * {@return the refusal of an operation or a {@code receive()} on a connection this side
     * closed} Whether it did is {@link #closeRequested} alone: {@link #closedLocally} is set (by
     * the close task, or the lost hook) only after {@link #closeAsync} set it.
     */
    private ResourceClosedException closedByThisSide() {
        return new ResourceClosedException("connection " + description + " is closed");
    }

    /**
     * Any thread: makes a peer region from the transport's own descriptor, owned by this
     * connection (closed with it).
     *
     * @throws ResourceClosedException when the connection is closed (the region is not kept)
     */
    PeerRegion foreignRegion(byte[] rawDescriptor, java.util.Set<io.cqflux.core.RegionAccess> access) {
        checkOpen();
        io.cqflux.core.spi.RemoteRegion r = transport.remoteRegion(rawDescriptor, access);
        PeerRegion p = new PeerRegion(r, -1);
        synchronized (foreignRegions) {
            if (!foreignClosed) {
                foreignRegions.add(p);
                return p;
            }
        }
        r.close();
        throw new ResourceClosedException("connection " + description + " is closed");
    }

    /** Loop thread: applies a peer configuration descriptor ({@link Connection#applyPeerHandshake(byte[])}). */
    void applyPeerConfiguration(byte[] descriptor) {
        assert loop.inEventLoop();
        checkOpen();
        if (state == State.CONNECTING) {
            throw new IllegalStateException("connection " + description + " is not established");
        }
        conn.applyPeerHandshake(descriptor);
    }

    /** Refuses a message longer than the peer's receive buffer, where the peer told its size. */
    void checkMessageLength(OpKind kind, long length) {
        int max = peerReceiveBufferSize;
        if (max > 0 && length > max && kind.carriesDataToReceiveBuffer()) {
            throw new IllegalArgumentException("a " + kind.opcode + " of " + length + " bytes exceeds the peer's"
                    + " receive buffer of " + max + " bytes (its receiveBufferSize) on connection " + description
                    + ": the peer's receive would fail and end the connection; split the message");
        }
    }

    /** Any thread: checks that a peer region came from this connection. */
    void checkOwns(PeerRegion region) {
        if (peerRegions.contains(region)) {
            return;
        }
        boolean foreign;
        synchronized (foreignRegions) {
            foreign = foreignRegions.contains(region);
        }
        if (!foreign) {
            throw new IllegalArgumentException(region + " is not a region of the peer of " + description);
        }
    }

    /**
     * Any thread: a staged operation starts waiting for a pooled buffer; the end fails it
     * ({@link StagedMono.Staged#connectionEnded}).
     *
     * @return false when the connection has ended (then it is not kept and must not wait)
     */
    boolean addStagedWaiter(StagedMono.Staged<?> s) {
        stagedWaiters.add(s);
        // Added before the state is read, while the end writes the state before it reads the
        // set (both volatile): an operation either sees the end here or is seen by it.
        if (state.compareTo(State.ENDED) >= 0) {
            stagedWaiters.remove(s);
            return false;
        }
        return true;
    }

    /** Any thread: a staged operation stopped waiting (leased, cancelled, refused, failed). */
    void removeStagedWaiter(StagedMono.Staged<?> s) {
        stagedWaiters.remove(s);
    }

    /** Any thread: hands an operation to the loop. */
    void enqueue(OpMono op) {
        if (loop.inEventLoop()) {
            submit(op);
            return;
        }
        // A hand-over the loop refuses or drops in a forced shutdown still runs, after the loop
        // ended: the connection is ENDED by then (the loop's hooks end it), so the op fails.
        // The operation is its own task (OpMono.run): no capturing lambda per hand-over.
        loop.executeLaterOrAfterTermination(op);
    }

    /** Any thread: runs a task on the loop, inline when already there, or after the loop ended. */
    void runOnLoop(Runnable task) {
        loop.executeOrAfterTermination(task);
    }

    /** Loop thread: queues or posts an operation handed over by {@link #enqueue}. */
    void submit(OpMono op) {
        enqueueOrPost(op);
        noteWaiting();
    }

    private void noteWaiting() {
        int w = waiting.size() + messages.size();
        if (w != (int) MIRROR_WAITING.getOpaque(this)) {
            MIRROR_WAITING.setOpaque(this, w); // a metrics mirror, as in noteInFlight
        }
    }

    private void enqueueOrPost(OpMono op) {
        State s = state;
        if (s == State.CONNECTING || s.compareTo(State.ENDED) >= 0) {
            Throwable t = s == State.CONNECTING
                    ? new IllegalStateException("connection " + description + " is not established") : terminal;
            op.failUnposted(t);
            return;
        }
        // ESTABLISHED or ENDING: ENDING posts nothing, its operations wait for the end's verdict.
        if (waiting.size() + messages.size() >= pendingLimit) {
            rejections++; // NOSONAR: written by the loop thread only
            op.failUnposted(new QueueFullException("connection " + description + ": " + pendingLimit
                    + " operations already wait for a send-queue credit (pendingLimit " + pendingLimit
                    + ", send queue " + table.creditLimit()
                    + "); apply backpressure or raise Cqflux.Builder.pendingLimit", pendingLimit));
        } else if (op.kind.isMessage(transport) && control.enabled()) {
            // A message waits for the peer's credit in its own queue, so that it never holds up
            // the operations behind it.
            messages.add(op);
            pumpMessages();
        } else if (s == State.ESTABLISHED && waiting.isEmpty() && table.tryTakeCredits(op.kind.credits)) {
            post(op);
        } else {
            waiting.add(op);
        }
    }

    /**
     * Posts waiting messages while the peer's receiver has granted credits and a send credit is
     * free; a starved sender re-reads its credit word in 1 ms (PeerControl). Loop thread.
     */
    private void pumpMessages() {
        while (state == State.ESTABLISHED) {
            OpMono op = messages.peek();
            if (op == null) {
                return;
            }
            if (op.cancelled) {
                messages.poll();
                op.discard();
                op.releaseRegions();
                continue;
            }
            if (!control.mayPost()) {
                if (control.peerNeverReceives()) {
                    failMessagesToAPeerThatNeverReceives();
                    return;
                }
                scheduleCreditPoll();
                return;
            }
            if (!table.tryTakeCredits(op.kind.credits)) {
                return; // a returning credit pumps again
            }
            messages.poll();
            if (!post(op)) {
                // back at the head of `waiting` (post() did that): take it back in order
                waiting.remove(op);
                messages.addFirst(op);
                return;
            }
            // Counted only when it really went out: post() discards an op cancelled (from another
            // thread) since the check above, and fails one whose post threw; neither took a
            // receive of the peer, and counting it would lose that credit for good.
            if (op.stage != OpMono.NEW) {
                control.consume();
            }
        }
    }

    /** The peer said it can never post a receive: every message waiting for its credit fails now. Loop thread. */
    private void failMessagesToAPeerThatNeverReceives() {
        OpMono op;
        while ((op = messages.poll()) != null) {
            if (op.cancelled) {
                op.discard();
                op.releaseRegions();
            } else {
                op.failUnposted(new IllegalStateException("the peer of connection " + description + " posts no"
                        + " receives (its receiveQueueSize is 0): a " + op.kind.opcode + " to it could never be received"));
            }
        }
    }

    private void scheduleCreditPoll() {
        if (creditPollScheduled) {
            return;
        }
        creditPollScheduled = true;
        LibraryTimer.schedule(() -> runOnLoop(() -> {
            creditPollScheduled = false;
            pumpMessages();
            noteWaiting();
        }), 1, TimeUnit.MILLISECONDS);
    }

    /** Loop thread: the receiver posted receives; tell a cqflux peer (its credits). */
    void receivesPosted(int n) {
        control.receivesPosted(n);
        grant();
    }

    private void grant() {
        if (state != State.ESTABLISHED || !control.grantPending()) {
            return;
        }
        try {
            if (postControl(Internal.GRANT, ctx -> control.postGrant(conn, ctx)) == Posted.REFUSED) {
                scheduleRetry();
            }
        } catch (RuntimeException e) {
            end(new ConnectionException(ConnectionEvent.LOST, "connection " + description
                    + ": posting a receive credit failed", e), ConnectionEvent.LOST);
        }
    }

    /**
     * Posts an operation whose credits are taken. Loop thread.
     *
     * @return false when the transport's queue was momentarily full (the op is back at the head
     *     of the waiting queue with its credits returned, and a retry is scheduled)
     */
    private boolean post(OpMono op) {
        assert loop.inEventLoop();
        int k = op.kind.credits;
        if (op.cancelled) {
            // Cancelled while waiting: never posted, so nothing of it is in flight.
            table.returnCredits(k);
            op.discard();
            op.releaseRegions();
            return true;
        }
        long ctx = table.acquire(op);
        op.context = ctx;
        // With an operationTimeout of a second or more (the default is 30 s), the loop's unit
        // clock rather than a clock read per operation (issue 13: a tenth of the Java path). It is
        // behind by the current unit's time so far, which makes an operation look that much
        // older: only a loop held by one unit of work for about the timeout could end the
        // connection LOST early, and such a loop holds back every completion anyway. A shorter
        // timeout reads the clock.
        op.postedAt = coarsePostClock ? loop.unitClock() : System.nanoTime();
        noteInFlight();
        boolean ok;
        try {
            ok = op.postFirst(conn, ctx);
        } catch (RuntimeException e) {
            table.release(ctx);
            table.returnCredits(k);
            noteInFlight();
            op.failUnposted(e); // the post threw, so nothing was posted
            return true;
        }
        if (!ok) {
            table.release(ctx);
            table.returnCredits(k);
            noteInFlight();
            op.context = -1;
            waiting.addFirst(op);
            scheduleRetry();
            return false;
        }
        if (op.kind.twoPart()) {
            op.stage = OpMono.SECOND_PENDING;
            return postSecond(op);
        }
        op.stage = OpMono.POSTED;
        return true;
    }

    private boolean postSecond(OpMono op) {
        boolean ok;
        try {
            ok = op.postSecond(conn, op.context);
        } catch (RuntimeException e) {
            // The unsignaled first part is in flight and nothing signaled will ever retire it:
            // its slot and credits could only come back when the connection closes, so end it
            // now (the subscriber, and everything else pending, learns why).
            op.stage = OpMono.POSTED;
            end(new ConnectionException(ConnectionEvent.LOST, "connection " + description
                    + ": posting the second half of a " + op.kind + " failed; the connection is closed", e),
                    ConnectionEvent.LOST);
            return true;
        }
        if (!ok) {
            waiting.addFirst(op);
            scheduleRetry();
            return false;
        }
        op.stage = OpMono.POSTED;
        return true;
    }

    private void noteInFlight() {
        int inUse = table.creditsInUse();
        // Metrics mirrors, read by other threads: opaque stores (no fence on the per-operation
        // path; a reader sees the value soon, which is all a gauge needs), and only on change.
        if (inUse != (int) MIRROR_IN_FLIGHT.getOpaque(this)) {
            MIRROR_IN_FLIGHT.setOpaque(this, inUse);
        }
        if (inUse > (int) MIRROR_MAX_IN_FLIGHT.getOpaque(this)) {
            MIRROR_MAX_IN_FLIGHT.setOpaque(this, inUse);
        }
    }

    private void scheduleRetry() {
        if (retryScheduled) {
            return;
        }
        retryScheduled = true;
        try {
            loop.execute(() -> {
                retryScheduled = false;
                drainWaiting();
            });
        } catch (RuntimeException e) {
            retryScheduled = false;
        }
    }

    private void drainWaiting() {
        drainOperations();
        grant();
        pumpMessages();
        noteWaiting();
    }

    private void drainOperations() {
        while (state == State.ESTABLISHED) {
            OpMono op = waiting.peek();
            if (op == null) {
                return;
            }
            if (op.stage == OpMono.SECOND_PENDING) {
                waiting.poll();
                if (!postSecond(op)) {
                    return;
                }
                continue;
            }
            if (!table.tryTakeCredits(op.kind.credits)) {
                return;
            }
            waiting.poll();
            if (!post(op)) {
                return;
            }
        }
    }

    /** {@return whether receives (and operations) may be posted now} */
    boolean canPost() {
        return state == State.ESTABLISHED;
    }

    /** Loop thread: a context for a receive buffer (see {@link InFlightTable}). */
    long acquireReceiveContext(Receiver.Buffer b) {
        long ctx = table.acquire(b);
        noteInFlight();
        return ctx;
    }

    /** Loop thread: gives back a receive context whose post failed. */
    void releaseReceiveContext(long ctx) {
        table.release(ctx);
        noteInFlight();
    }

    /**
     * {@return null when {@code receive()} may attach; otherwise what its subscriber gets: a
     * {@link ResourceClosedException} after a close by this side, else the connection's end}
     */
    Throwable receiveRefusal() {
        if (closeRequested) {
            return closedByThisSide();
        }
        return state.compareTo(State.ENDED) < 0 ? null : terminal;
    }

    /** Loop thread: the receive side could not keep what arrives; end loudly rather than drop it. */
    void endOnReceiveOverflow(String why) {
        end(new ConnectionException(ConnectionEvent.LOST, "connection " + description + ": " + why),
                ConnectionEvent.LOST);
    }

    /** Loop thread: the receive side failed with no subscriber to tell (its prefetch). */
    void endOnReceiveFailure(String what, RuntimeException cause) {
        end(new ConnectionException(ConnectionEvent.LOST, "connection " + description + ": " + what, cause),
                ConnectionEvent.LOST);
    }

    // ---------------------------------------------------------------- completions

    /** The completion sink: loop thread, once per entry of a drained batch. */
    void onCompletion(Completion c) {
        long ctx = c.context();
        Object o = table.lookup(ctx);
        if (monitors.get() != 0) {
            monitor(c, o, ctx);
        }
        if (o instanceof OpMono op) {
            onOperationCompletion(c, op, ctx);
        } else if (o instanceof Internal w) {
            table.release(ctx);
            table.returnCredits(1);
            noteInFlight();
            if (w == Internal.GRANT) {
                control.grantDone();
            } else {
                goodbyeInFlight = false;
                if (state == State.ENDED) {
                    afterDrain(this::finishEnd);
                }
            }
            if (!c.isSuccess()) {
                onError(c, Opcode.WRITE);
            }
            drainWaiting();
            postGoodbye();
        } else if (o instanceof Receiver.Buffer b) {
            table.release(ctx);
            noteInFlight();
            if (!c.isSuccess()) {
                onError(c, Opcode.RECEIVE);
            }
            receiver.onCompletion(c, b);
        } else if (c.isSuccess() && c.opcode().isReceive()) {
            // A write-with-immediate notification that consumed no posted receive: libfabric's
            // tcp provider reports FI_REMOTE_CQ_DATA of fi_writedata this way, with context 0.
            receiver.onNotification(c);
        } else {
            staleCompletions++;
            if (!c.isSuccess()) {
                onError(c, null);
            }
        }
    }

    private void onOperationCompletion(Completion c, OpMono op, long ctx) {
        OpKind kind = op.kind;
        if (InFlightTable.isPart(ctx)) {
            // The unsignaled half reports only errors; the slot stays until the signaled half.
            // The connection ends first (LOST, before any subscriber code runs and could close it
            // in order), and this operation fails with its own error.
            if (!c.isSuccess()) {
                if (c.status() != CompletionStatus.WR_FLUSH_ERR) {
                    op.ownError = new OperationFailedException(c.snapshot(), kind.partOpcode(), description);
                }
                onError(c, kind.partOpcode());
                if (op.ownError != null) {
                    op.fail(op.ownError);
                }
            }
            return;
        }
        if (!c.isSuccess() && c.status() == CompletionStatus.WR_FLUSH_ERR) {
            // Flushed because the connection is going down: the operation stays in the table
            // (the end fails it with the verdict, CLOSED or LOST) and nothing more is posted.
            onError(c, kind.opcode);
            return;
        }
        // Retire first: a subscriber that posts again from its callback finds the credit free.
        table.release(ctx);
        table.returnCredits(kind.credits);
        noteInFlight();
        try {
            op.releaseRegions();
        } catch (RuntimeException e) {
            // a region's deregistration failed: its owner hears nothing better from here
            LOG.warn("connection " + description + ": releasing an operation's region failed", e);
        }
        // Names the subscriber code about to run for the loop's blocked-loop report (a plain store).
        loop.noteOperation(OperationKind.of(kind).sequenceName());
        if (c.isSuccess()) {
            op.complete();
            drainWaiting();
            postGoodbye();
        } else {
            // The connection ends first (LOST: an error completion), then the subscriber hears of
            // its own error: nothing it does in its callback can turn the end into an orderly one.
            onError(c, kind.opcode);
            op.fail(new OperationFailedException(c.snapshot(), kind.opcode, description));
        }
    }

    /**
     * An error completion. A flushed one (the connection is being torn down) makes the connection
     * ENDING and reads the event channel for the verdict; any other ends it LOST at once: an
     * error completion moves an RC queue pair to the error state (ibv_poll_cq(3)), and libfabric's
     * tcp provider drops the connection on a failed access.
     */
    private void onError(Completion c, Opcode opcode) {
        if (state.compareTo(State.ENDED) >= 0) {
            return;
        }
        if (c.status() == CompletionStatus.WR_FLUSH_ERR) {
            if (state == State.ESTABLISHED) {
                state = State.ENDING;
                endingSince = System.nanoTime();
            }
            onEvents(); // the terminal event may already be waiting
            return;
        }
        end(new ConnectionException(ConnectionEvent.LOST, "connection " + description + " lost: "
                + (opcode == null ? "an operation" : "a " + opcode) + " failed with " + c.status()
                + (c.errorText().isEmpty() ? "" : " (" + c.errorText() + ")")
                + "; an error completion ends the connection"), ConnectionEvent.LOST);
    }

    private void monitor(Completion c, Object owner, long ctx) {
        try {
            Opcode posted = owner instanceof OpMono op
                    ? (InFlightTable.isPart(ctx) ? op.kind.partOpcode() : op.kind.opcode) : null;
            CompletionRecord r = c.snapshot();
            if (posted != null && r.isSuccess() && r.opcode() != posted) {
                // What was posted, not what the device reports (an emulated flush completes as a
                // read, librpma's atomic write as a write).
                r = CompletionRecord.builder(r).opcode(posted).build();
            }
            CompletionRecord record = r;
            Emissions.guarded(() -> completions.tryEmitNext(record));
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            LOG.warn("completion monitor threw", t);
        }
    }

    // ---------------------------------------------------------------- monitoring and accessors

    Flux<CompletionRecord> completions() {
        return completions.asFlux()
                .doOnSubscribe(s -> monitors.incrementAndGet())
                .doFinally(s -> monitors.decrementAndGet());
    }

    Flux<ConnectionEvent> events() {
        return events.asFlux();
    }

    byte[] peerPrivateData() {
        return peerData.clone();
    }

    List<PeerRegion> peerRegions() {
        return peerRegions;
    }

    boolean isOpen() {
        return state.compareTo(State.ENDED) < 0;
    }

    /** {@return whether this side asked to close it ({@link #closeAsync}); any thread} */
    boolean closeRequested() {
        return closeRequested;
    }

    /** {@return what ended the connection (what its pending operations got), or null while it is open; any thread} */
    Throwable endCause() {
        return state.compareTo(State.ENDED) >= 0 ? terminal : null;
    }

    int creditLimit() {
        return table.creditLimit();
    }

    int waitingOps() {
        return waitingOps;
    }

    int inFlightOps() {
        return inFlightOps;
    }

    int maxInFlight() {
        return maxInFlight;
    }

    long rejections() {
        return rejections;
    }

    long staleCompletions() {
        return staleCompletions;
    }

    private static void safely(Runnable r) {
        try {
            r.run();
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            LOG.warn("ignored failure while closing", t);
        }
    }
}
