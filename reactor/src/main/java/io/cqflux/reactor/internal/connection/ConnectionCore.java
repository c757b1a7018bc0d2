package io.cqflux.reactor.internal.connection;

import io.cqflux.core.Completion;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.Opcode;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.Transport;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.epoll.loop.Registration;
import io.cqflux.reactor.BufferPool;
import io.cqflux.reactor.CqfluxListener;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RefusalKind;
import io.cqflux.reactor.internal.op.OpMono;
import io.cqflux.reactor.internal.op.SpinThenParkSubscriber;
import io.cqflux.reactor.internal.resources.ApiAccess;
import io.cqflux.reactor.internal.resources.Instrumentation;
import io.cqflux.reactor.internal.resources.SetupThread;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import reactor.core.Exceptions;
import reactor.util.Logger;
import reactor.util.Loggers;

/*
 * Design: the life of a connection, and how it ends.
 *
 * One loop thread owns all of this (methods marked "any thread" hand over). Operations are
 * described by InFlightTable's design comment (contexts, credits); SendQueue drives them
 * (submit -> wait for credits, bounded queue -> post) and CompletionDispatch retires them
 * (completion -> signal), under the lifecycle below, which this class keeps.
 *
 *   CONNECTING --ESTABLISHED--> ESTABLISHED --(flushed completion)--> ENDING
 *        |                          |                                   |
 *        +------- terminal event, error completion, local close, deadline ------> ENDED --> CLOSED
 *
 * The end is known from whichever comes first: the transport's terminal event (CLOSED, LOST,
 * REJECTED, UNREACHABLE), an error completion (an error puts an RC queue pair in the error state,
 * ibv_poll_cq(3); libfabric's tcp endpoint drops the connection), a close by this side, the
 * operation deadline (a posted operation without a completion for `operationTimeout`: the peer
 * stopped answering), the keep-alive (an idle connection's peer gave no sign of life for its
 * misses; KeepAlive), or the loop letting go of the connection. A flushed completion
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
 *
 * The native close (Connection.close(): fi_shutdown and the fi_close of the endpoint and its CQs,
 * or rpma_conn_delete) runs on the instance's close thread where the transport allows it
 * (Transport.closesOffLoop()), so that a storm of closes costs the loop's other connections only
 * the loop's own part. What must hold, and how:
 *   - Before the hand-off the loop has let go of the connection: its CQs and event channel are
 *     out of epoll (their registrations closed on the loop, which takes effect at once), the
 *     state is CLOSED (nothing posts: canPost() is false, the deadlines and the keep-alive are
 *     stopped), and no completion is read from its CQs any more. What was still in them is
 *     discarded with the queues by the native close; every operation still in the in-flight
 *     table is released after it, as on the loop.
 *   - Nothing the NIC or the provider may still touch is freed before the native close returned:
 *     the close thread runs conn.close() alone and hands the rest back to the loop, which then
 *     releases the in-flight operations' regions and the posted receive buffers, frees the receive
 *     pool and the control words, and closes the peer's regions (the transport's own scratch is
 *     freed by its close, after its fi_close: DeferredArena).
 *   - closed (onDispose()) completes only in that hand-back, after the native close returned.
 *   - A server's registrations for remote access (its exposures) also go only after the native
 *     close, never at the let-go: on verbs and rxe a live queue pair answers a revoked key with a
 *     remote access error, so the peer's operations still in flight would fail with that instead
 *     of ending CLOSED or LOST by the disconnect, as the error model says they do.
 *   - The instance's shutdown waits for the queued closes after the loops ended and before it
 *     frees the transport (Shutdown); a close handed over once the close thread no longer takes
 *     any, or asked for after the loop ended (forceClose), runs where it is asked.
 *   - Idempotent: closeNative() runs once (state CLOSED), under this object's lock.
 *   - Bounded: closes have a thread of their own, so a close never waits behind a connect that
 *     holds the set-up thread; each close task is one connection's native close, and the queue
 *     holds at most the instance's connections.
 */

/**
 * The loop-side state of one connection: its lifecycle (the transitions, the end, the native
 * close; see the design comment at the top of this file), and the parts it is made of, each of
 * which reads the lifecycle through {@link #state()} and ends the connection through
 * {@link #end}: the {@link EventIntake} (the transport's events and the handshake, which
 * establish the connection through {@link #establish}), {@link Admission} (what an operation
 * must pass, the peer's regions), {@link SendQueue} (credits, queues, posting),
 * {@link CompletionDispatch}, {@link Deadlines}, {@link KeepAlive}, {@link Goodbye}, the
 * {@link Receiver}, {@link PeerViolations} (the peer's protocol), and the
 * {@link ConnectionMonitor} (events, completions, metrics).
 */
public final class ConnectionCore {
    private static final ApiAccess API = ApiAccess.get();

    private static final Logger LOG = Loggers.getLogger(ConnectionCore.class);

    /** Queued operations failed per loop task after the end. */
    public static final int FAIL_CHUNK = 1024;

    public enum State { CONNECTING, ESTABLISHED, ENDING, ENDED, CLOSED }

    public final EventLoop loop;
    public final Transport transport;
    public final Connection conn;
    public final ConnectionConfig config;
    public final String description;
    public final RdmaConnection api;
    /** The send side: the in-flight table, credits, the waiting queues, posting. */
    private final SendQueue sendQueue;
    /** The completions: retire and complete what was posted. */
    private final CompletionDispatch dispatch;
    /** What an operation must pass before it is queued, and the peer's regions. */
    public final Admission admission = new Admission(this);
    /** The shortest operationTimeout for which {@code SendQueue.post} stamps operations with the loop's unit clock. */
    public static final long COARSE_POST_CLOCK_FROM_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** How long an operation's {@code block()} spins before it parks ({@link SpinThenParkSubscriber}). */
    public final long blockSpinNanos;
    private final PeerControl control;
    /** The goodbye of an orderly close by this side. */
    private final Goodbye goodbye;
    /** Ends the connection when the peer breaks the control-word or credit protocol. */
    final PeerViolations violations;
    private final List<Registration> registrations = new ArrayList<>();
    /** Opened with raw private data: no hello, no control words, no transport handshake of its own. */
    public final boolean raw;
    private volatile State state = State.CONNECTING;
    private volatile Throwable terminal;
    private volatile boolean closedLocally;
    /**
     * {@link #closeAsync} was called (any thread), perhaps before its task ran on the loop: an
     * operation subscribed from then on fails with a {@link ResourceClosedException}, as one after
     * the close does, not with the end's verdict that the operations pending at the close get.
     */
    private volatile boolean closeRequested;
    private final Deadlines deadlines;
    /** The liveness check of an idle connection to a cqflux peer. */
    private final KeepAlive keepAlive;
    public final Receiver receiver;
    /** The owning instance's staging buffers (the byte[]/ByteBuffer forms). */
    public final BufferPool buffers;
    /** The owner's listeners ({@link CqfluxListener}). */
    public final Instrumentation instrumentation;
    /**
     * The owner's bookkeeping for a released connection (it forgets it), run just before
     * {@link #closed} completes, so that whoever sees {@code onDispose()} complete also sees the
     * connection forgotten.
     */
    private final Consumer<ConnectionCore> onReleased;
    /** What the connection shows to whoever watches it: events, completions, metrics. */
    public final ConnectionMonitor monitor;
    /** The transport's connection-management events and the handshake. */
    public final EventIntake intake;
    public final CompletableFuture<Void> closed = new CompletableFuture<>();
    /** The instance's close thread where the transport closes off the loop, else {@code null}. */
    private final SetupThread closes;
    /** The thread that ran the native close, once it returned (tests). */
    private volatile Thread nativeCloseThread;

    /**
     * A connection of an instance, not started yet ({@link #start}).
     *
     * @param loop the loop that owns it
     * @param transport the transport
     * @param conn the transport's connection
     * @param config the connection configuration
     * @param limits the instance's per-connection limits
     * @param control the connection's control words ({@link PeerControl#none()} for raw private data)
     * @param raw whether it was opened with raw private data (no hello)
     * @param buffers the instance's staging buffers
     * @param instrumentation the instance's listeners
     * @param onReleased the instance's bookkeeping once the connection is released
     * @param closes where its native close runs off the loop (the transport allows it), or
     *     {@code null} for the loop (see the design comment at the top of this file)
     */
    public ConnectionCore(EventLoop loop, Transport transport, Connection conn, ConnectionConfig config,
                   Limits limits, PeerControl control, boolean raw, BufferPool buffers,
                   Instrumentation instrumentation, Consumer<ConnectionCore> onReleased, SetupThread closes) {
        this.closes = closes;
        this.raw = raw;
        this.buffers = buffers;
        this.instrumentation = instrumentation;
        this.onReleased = onReleased;
        this.loop = loop;
        this.transport = transport;
        this.conn = conn;
        this.config = config;
        this.description = conn.description();
        int cqForSends = config.completionQueueSize()
                - (config.receiveCompletionQueueSize() == 0 ? config.receiveQueueSize() : 0);
        long operationTimeoutNanos = limits.operationTimeout().toNanos();
        this.sendQueue = new SendQueue(this,
                new InFlightTable(Math.min(config.sendQueueSize(), cqForSends), config.receiveQueueSize()), control,
                limits.pendingLimit(), operationTimeoutNanos >= COARSE_POST_CLOCK_FROM_NANOS);
        this.blockSpinNanos = limits.blockSpinNanos();
        this.receiver = new Receiver(this, sendQueue, config.receiveQueueSize(), limits.receiveBufferSize(),
                limits.notificationBacklog());
        // A peer with raw private data sends without credits: by default every receive is posted
        // ahead of demand (Receiver's class comment; ConnectOptions/AcceptOptions override it).
        receiver.prefetch(raw ? config.receiveQueueSize() : 0, raw);
        this.keepAlive = new KeepAlive(this, sendQueue, control,
                raw ? 0 : limits.keepAliveInterval().toNanos(), limits.keepAliveMisses());
        this.dispatch = new CompletionDispatch(this, sendQueue, control, receiver, keepAlive);
        this.goodbye = new Goodbye(this, sendQueue, control);
        this.deadlines = new Deadlines(this, sendQueue, control, operationTimeoutNanos);
        this.control = control;
        this.violations = new PeerViolations(this, control);
        this.monitor = new ConnectionMonitor(this, sendQueue, dispatch, deadlines, keepAlive, goodbye);
        this.intake = new EventIntake(this, control, monitor);
        this.api = API.newConnection(this);
    }

    // ---------------------------------------------------------------- lifecycle

    /**
     * Registers the queues and the event channel with the loop and waits for the handshake. Loop
     * thread.
     *
     * @param established called with the API object once established
     * @param failed called if the connection fails before that
     */
    public void start(Consumer<RdmaConnection> established, Consumer<Throwable> failed) {
        assert loop.inEventLoop();
        intake.await(established, failed);
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
                registrations.add(loop.register(cq, dispatch::onCompletion, lost));
            }
            registrations.add(loop.register(conn.events(), intake::onReadable, lost));
        } catch (RuntimeException e) {
            end(e, null);
            return;
        }
        deadlines.start();
        intake.poll();
    }

    /**
     * Loop thread: the handshake is done ({@link EventIntake}); the connection is ESTABLISHED and
     * its parts start (the deadlines, the credit grant of a side that never receives, the receive
     * prefetch, the keep-alive).
     *
     * @return whether it is still established: a part whose start failed ended it
     */
    boolean establish() {
        assert loop.inEventLoop();
        state = State.ESTABLISHED;
        deadlines.established();
        if (config.receiveQueueSize() == 0 && control.enabled()) {
            control.neverReceives(); // the peer's sends fail at once instead of waiting forever
            sendQueue.grant();
            if (state != State.ESTABLISHED) {
                return false; // the grant's post failed and ended the connection
            }
        }
        receiver.established(); // a receive prefetch is posted before anyone subscribes
        if (state != State.ESTABLISHED) {
            return false; // it failed and ended the connection
        }
        keepAlive.established();
        return true;
    }

    /** Any thread: closes the connection; completes {@link #closed} once its native objects are freed. */
    public CompletableFuture<Void> closeAsync() {
        closeRequested = true;
        runOnLoop(this::closeRequestedNow);
        return closed;
    }

    /**
     * Loop thread (or any once the loop is gone): carries out a close that {@link #closeAsync}
     * requested, once; a no-op after the end. Run by the close's own task, and by the first
     * operation of this connection that the loop takes from its task queue after the request
     * (SendQueue): the close task waits behind everything handed over before it, thousands of
     * operations under load, and none of them is worth posting once the close is asked for.
     */
    void closeRequestedNow() {
        if (state.compareTo(State.ENDED) < 0) {
            closedLocally = true;
            // An orderly close tells a cqflux peer so (the goodbye word), before the native
            // close; posted after every operation posted so far, it also completes after them.
            if (state == State.ESTABLISHED && control.enabled()) {
                goodbye.want();
            }
            end(new ConnectionException(ConnectionEvent.CLOSED, "connection " + description
                    + " closed by this side"), ConnectionEvent.CLOSED);
        }
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
    public void end(Throwable cause, ConnectionEvent event) {
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
        deadlines.stop();
        keepAlive.stop();
        if (event != null) {
            monitor.emit(event);
        }
        if (event == ConnectionEvent.LOST) {
            // Once per connection: what a service operator needs to see without debug logging.
            // A cause without a message (a subscriber's own exception) still names the connection.
            String m = cause.getMessage();
            LOG.warn(m != null && !m.isBlank() ? m : "connection " + description + " lost: " + cause);
        }
        Consumer<Throwable> failed = intake.takeFailed();
        if (failed != null) {
            safely(() -> failed.accept(cause));
        }
        sendQueue.forEachInFlight((ctx, o) -> {
            if (o instanceof OpMono op) {
                if (op.ownError() != null) {
                    op.fail(op.ownError());
                } else {
                    op.failOnConnectionEnd(cause);
                }
            }
        });
        // Staged operations still waiting for a pooled buffer: nothing of theirs is posted yet,
        // so they fail now, as queued operations do, and leave the pool's queue (a waiter holds
        // one of its maxWaiters places). One that registers after this saw the state ENDED.
        admission.failStaged(cause);
        safely(() -> receiver.terminate(closedLocally
                ? new ResourceClosedException("connection " + description + " was closed by this side") : cause));
        goodbye.startBounded(() -> afterDrain(this::finishEnd));
    }

    /**
     * Sets who is told when the peer breaks the protocol of the control words
     * ({@link RefusalKind#CONTROL_WORD}) or sends beyond its credits
     * ({@link RefusalKind#BEYOND_CREDITS}): an {@code RdmaServer}'s counters; before {@link #start}.
     *
     * @param listener run on the loop, once, before the connection ends
     */
    public void onPeerViolation(Consumer<RefusalKind> listener) {
        violations.listener(listener);
    }


    /** Loop thread: the goodbye write completed; an ended connection's teardown can go on. */
    void goodbyeCompleted() {
        if (goodbye.completed()) {
            afterDrain(this::finishEnd);
        }
    }

    /** {@return whether an ended connection's native close still waits for the goodbye} Loop thread. */
    boolean goodbyePending() {
        return goodbye.pending();
    }

    /**
     * Loop thread: the peer disconnected while this side's goodbye was pending, so no answer to
     * the goodbye write can come any more (see {@link EventIntake}): the teardown goes on
     * without it, as after the goodbye's bound.
     */
    void goodbyeUnanswerable() {
        if (state == State.ENDED && goodbye.pending()) {
            goodbye.drop();
            afterDrain(this::finishEnd);
        }
    }

    /** Loop thread: posts the goodbye write if one is wanted and a send credit is free. */
    void postGoodbye() {
        goodbye.post();
    }

    /**
     * After the loops ended (the entry point's shutdown): ends the connection if it has not
     * ended, fails what is queued and frees the native objects now, without waiting for a
     * goodbye. Any thread.
     *
     * @param cause what the subscribers get
     */
    public synchronized void forceClose(Throwable cause) {
        end(cause, ConnectionEvent.CLOSED);
        goodbye.drop();
        while (sendQueue.hasQueued()) {
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
            OpMono op = sendQueue.pollQueued();
            if (op == null) {
                sendQueue.noteWaiting();
                if (!goodbye.pending()) {
                    closeNative();
                }
                return;
            }
            // A durable write waiting for its flush has its write on the wire and a slot in the
            // table: its regions stay held until the native close.
            if (op.stage() == OpMono.NEW) {
                op.failUnpostedOnConnectionEnd(cause);
            } else if (op.ownError() != null) {
                op.fail(op.ownError());
            } else {
                op.failOnConnectionEnd(cause);
            }
        }
        afterDrain(this::finishEnd);
    }

    /**
     * Unregisters and frees the native connection, then releases what operations in flight held:
     * after the queue pair is destroyed nothing can touch their buffers any more. On the loop,
     * where the transport allows it, the native close is handed to the close thread and the rest
     * follows on the loop once it returned (see the design comment at the top of this file).
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
            safely(r::close); // on the loop: out of epoll when it returns
        }
        registrations.clear();
        if (closes != null && loop.inEventLoop()) {
            try {
                closes.execute(this::closeOffLoop);
                return;
            } catch (RuntimeException e) {
                // The close thread takes no more (the instance's shutdown is past its loops): here.
            }
        }
        released(closeConnection());
    }

    /**
     * The close thread: the native close, then the rest handed back to the loop (or after its
     * end), whatever the close threw: an error the JVM cannot go on from still releases what
     * cannot be touched any more, and keeps (leaks) the buffers the queue pair might still use.
     */
    private void closeOffLoop() {
        assert closes.inSetupThread() && state == State.CLOSED && registrations.isEmpty();
        boolean nativeClosed = false;
        try {
            nativeClosed = closeConnection();
        } finally {
            boolean ok = nativeClosed;
            runOnLoop(() -> released(ok));
        }
    }

    /** {@return whether the transport's connection was closed} Failures are logged. */
    private boolean closeConnection() {
        try {
            conn.close();
            nativeCloseThread = Thread.currentThread();
            return true;
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            // The queue pair may still be alive: keep every buffer it could touch (a leak,
            // reported) rather than free memory under the NIC.
            LOG.warn("connection " + description + ": closing the native connection failed; its buffers are"
                    + " kept (leaked) since the NIC may still use them", t);
            return false;
        }
    }

    /**
     * After the native close returned: releases what operations in flight held, frees the
     * receive pool and the control words, completes {@code events()} and {@link #closed}. The
     * loop, or any thread once the loop ended.
     */
    private synchronized void released(boolean nativeClosed) {
        loop.noteSetup("cqflux.connectionClose");
        if (nativeClosed) {
            loop.noteOperation("cqflux.connectionEnd"); // releases grant pooled buffers: subscriber code
            sendQueue.forEachInFlight((ctx, o) -> {
                if (o instanceof OpMono op) {
                    safely(op::releaseRegions);
                } else if (o instanceof ReceiveBuffer b) {
                    receiver.postedAtClose(b); // a shared pool's buffer is free again with its queue pair gone
                }
                sendQueue.forget(ctx);
            });
            loop.noteSetup("cqflux.connectionClose");
            safely(receiver::freePool);
            safely(control::close);
        } else {
            safely(receiver::finish);
        }
        sendQueue.clearInFlight();
        admission.closeRegions();
        loop.noteOperation("cqflux.connectionEnd"); // the subscribers of events() and closed
        monitor.completeEvents();
        dispatch.complete();
        // Before the completion, not as one of its dependents: CompletableFuture runs those in no
        // promised order, and onDispose()'s subscriber could see it before the owner forgot it.
        safely(() -> onReleased.accept(this));
        closed.complete(null);
    }

    /**
     * Runs a task after the current drain; if the loop no longer takes tasks, or drops it in a
     * forced shutdown, once the loop has ended.
     */
    private void afterDrain(Runnable task) {
        loop.executeLaterOrAfterTermination(task);
    }

    // ---------------------------------------------------------------- operations

    /** Any thread: hands an operation to the loop ({@link SendQueue#enqueue}). */
    public void enqueue(OpMono op) {
        sendQueue.enqueue(op);
    }

    /** Loop thread: queues or posts an operation handed over by {@link #enqueue}. */
    public void submit(OpMono op) {
        sendQueue.submit(op);
    }

    /** Loop thread: an operation was posted; its deadline is armed unless one is. */
    void operationPosted() {
        deadlines.posted();
    }

    /** Any thread: runs a task on the loop, inline when already there, or after the loop ended. */
    public void runOnLoop(Runnable task) {
        loop.executeOrAfterTermination(task);
    }

    /** {@return the lifecycle state} Any thread (a volatile read). */
    State state() {
        return state;
    }

    /** {@return what ended the connection, or null before its end} Any thread (a volatile read). */
    public Throwable terminal() {
        return terminal;
    }

    /** {@return whether receives (and operations) may be posted now} */
    public boolean canPost() {
        return state == State.ESTABLISHED;
    }

    /** Loop thread: the receive side could not keep what arrives; end loudly rather than drop it. */
    public void endOnReceiveOverflow(String why) {
        end(new ConnectionException(ConnectionEvent.LOST, "connection " + description + ": " + why),
                ConnectionEvent.LOST);
    }

    /** Loop thread: the receive side failed with no subscriber to tell (its prefetch). */
    public void endOnReceiveFailure(String what, RuntimeException cause) {
        end(new ConnectionException(ConnectionEvent.LOST, "connection " + description + ": " + what, cause),
                ConnectionEvent.LOST);
    }

    /**
     * An error completion. A flushed one (the connection is being torn down) makes the connection
     * ENDING and reads the event channel for the verdict; any other ends it LOST at once: an
     * error completion moves an RC queue pair to the error state (ibv_poll_cq(3)), and libfabric's
     * tcp provider drops the connection on a failed access.
     */
    void errorCompletion(Completion c, Opcode opcode) {
        if (state.compareTo(State.ENDED) >= 0) {
            return;
        }
        if (c.status() == CompletionStatus.WR_FLUSH_ERR) {
            if (state == State.ESTABLISHED) {
                state = State.ENDING;
                deadlines.ending();
                keepAlive.stop();
            }
            intake.poll(); // the terminal event may already be waiting
            return;
        }
        end(new ConnectionException(ConnectionEvent.LOST, "connection " + description + " lost: "
                + (opcode == null ? "an operation" : "a " + opcode) + " failed with " + c.status()
                + (c.errorText().isEmpty() ? "" : " (" + c.errorText() + ")")
                + "; an error completion ends the connection"), ConnectionEvent.LOST);
    }

    // ---------------------------------------------------------------- accessors

    public boolean isOpen() {
        return state.compareTo(State.ENDED) < 0;
    }

    /** {@return the thread that ran the native close once it returned, else {@code null} (tests)} */
    public Thread nativeCloseThread() {
        return nativeCloseThread;
    }

    /** {@return whether this side asked to close it ({@link #closeAsync}); any thread} */
    public boolean closeRequested() {
        return closeRequested;
    }

    /** {@return what ended the connection (what its pending operations got), or null while it is open; any thread} */
    public Throwable endCause() {
        return state.compareTo(State.ENDED) >= 0 ? terminal : null;
    }

    /** Runs a step of a close, logging (at WARN, under this class's logger) what it throws. */
    static void safely(Runnable r) {
        try {
            r.run();
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            LOG.warn("ignored failure while closing", t);
        }
    }
}
