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
import io.cqflux.reactor.BufferPool;
import io.cqflux.reactor.CqfluxListener;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RefusalKind;
import io.cqflux.reactor.internal.op.OpMono;
import io.cqflux.reactor.internal.op.StagedSubscription;
import io.cqflux.reactor.internal.op.SpinThenParkSubscriber;
import io.cqflux.reactor.internal.resources.ApiAccess;
import io.cqflux.reactor.internal.resources.Instrumentation;
import io.cqflux.reactor.internal.resources.SetupThread;
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
 * otherwise), and defers the rest to the Teardown's loop tasks after the current drain: queued
 * operations failed a chunk per task, the goodbye's wait, the native close (off the loop where
 * the transport allows it), then the release of what operations in flight held. Teardown's
 * design comment says what must hold there.
 */

/**
 * The loop-side state of one connection: its lifecycle (the transitions and the end; see the
 * design comment at the top of this file), and the parts it is made of, each of
 * which reads the lifecycle through {@link #state()} and ends the connection through
 * {@link #end}: the {@link EventIntake} (the transport's events and the handshake, which
 * establish the connection through {@link #establish}), {@link Admission} (what an operation
 * must pass, the peer's regions), {@link SendQueue} (credits, queues, posting),
 * {@link CompletionDispatch}, {@link Deadlines}, {@link KeepAlive}, {@link Goodbye}, the
 * {@link Teardown} (what follows the end, the native close), the
 * {@link Receiver}, {@link PeerViolations} (the peer's protocol), and the
 * {@link ConnectionMonitor} (events, completions, metrics).
 */
public final class ConnectionCore {
    private static final ApiAccess API = ApiAccess.get();

    private static final Logger LOG = Loggers.getLogger(ConnectionCore.class);

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
    /** What the connection shows to whoever watches it: events, completions, metrics. */
    public final ConnectionMonitor monitor;
    /** The transport's connection-management events and the handshake. */
    public final EventIntake intake;
    /** What follows the end: the queued operations' failures, the goodbye's wait, the native close, the release. */
    final Teardown teardown;
    /** Completes once the native objects are freed and what they held is released ({@link Teardown}). */
    public final CompletableFuture<Void> closed;

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
     *     {@code null} for the loop (see Teardown's design comment)
     */
    public ConnectionCore(EventLoop loop, Transport transport, Connection conn, ConnectionConfig config,
                   Limits limits, PeerControl control, boolean raw, BufferPool buffers,
                   Instrumentation instrumentation, Consumer<ConnectionCore> onReleased, SetupThread closes) {
        this.raw = raw;
        this.buffers = buffers;
        this.instrumentation = instrumentation;
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
        this.teardown = new Teardown(this, sendQueue, receiver, control, dispatch, goodbye, closes, onReleased);
        this.closed = teardown.closed();
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
                teardown.registered(loop.register(cq, dispatch::onCompletion, lost));
            }
            teardown.registered(loop.register(conn.events(), intake::onReadable, lost));
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
            teardown.afterDrain();
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
        teardown.startGoodbye();
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


    /**
     * After the loops ended (the entry point's shutdown): ends the connection if it has not
     * ended, fails what is queued and frees the native objects now, without waiting for a
     * goodbye ({@link Teardown#forceClose}). Any thread.
     *
     * @param cause what the subscribers get
     */
    public void forceClose(Throwable cause) {
        teardown.forceClose(cause);
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

    /**
     * Any thread: whether a staged message (one that copies through the instance's buffer pool)
     * must first wait, without a buffer, for the peer's credit and the messages before it
     * ({@link MessageHold}).
     */
    public boolean holdsStagedMessages() {
        return sendQueue.holdsStagedMessages();
    }

    /** Any thread: holds a staged message back until the peer can take it; the loop releases it. */
    public void holdStaged(StagedSubscription<?> s) {
        sendQueue.hold().hold(s);
    }

    /** Any thread: a held staged message left before its release. */
    public void dropHeld(StagedSubscription<?> s) {
        sendQueue.hold().drop(s);
    }

    /** Any thread: a staged message released from the hold ended before it reached the send queue. */
    public void heldGone() {
        sendQueue.hold().gone();
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

    /**
     * The native close begins: the state turns CLOSED, once. {@link Teardown} only, under its lock.
     *
     * @return whether it began now, {@code false} when it had already begun
     */
    boolean closing() {
        if (state == State.CLOSED) {
            return false;
        }
        state = State.CLOSED;
        return true;
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
        return teardown.nativeCloseThread();
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
