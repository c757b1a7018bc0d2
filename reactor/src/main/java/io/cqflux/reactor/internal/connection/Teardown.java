package io.cqflux.reactor.internal.connection;

import static io.cqflux.reactor.internal.connection.ConnectionCore.safely;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.spi.Connection;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.epoll.loop.Registration;
import io.cqflux.reactor.internal.connection.ConnectionCore.State;
import io.cqflux.reactor.internal.op.OpMono;
import io.cqflux.reactor.internal.resources.SetupThread;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import reactor.core.Exceptions;
import reactor.util.Logger;
import reactor.util.Loggers;

/*
 * Design: what follows the end, and the native close.
 *
 * The end (ConnectionCore's design comment) fails every subscriber of an operation in flight at
 * once and defers the rest to this class's loop tasks, which run after the current drain, so
 * that no native object is ever destroyed inside its own poll: queued operations are failed a
 * chunk per task (one dying connection with a huge backlog never stalls its neighbours), then
 * the native connection is closed (once this side's goodbye completed or was given up: Goodbye),
 * and only then are the slots, credits and region references of operations that never completed
 * released (the NIC may use their buffers until the queue pair is gone).
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
 *   - Idempotent: closeNative() runs once (the state turns CLOSED), under this object's lock.
 *   - Bounded: closes have a thread of their own, so a close never waits behind a connect that
 *     holds the set-up thread; each close task is one connection's native close, and the queue
 *     holds at most the instance's connections.
 */

/**
 * What follows a connection's end: the queued operations failed a chunk per loop task, the
 * goodbye's wait, the loop's let-go of the connection, the native close (on the close thread
 * where the transport allows it), and the release of what operations in flight held; completes
 * {@link #closed()} last. See the design comment at the top of this file. Loop tasks, except
 * the native close (on the close thread, {@code closeOffLoop}) and, once the loop ended,
 * {@link #forceClose}, {@code finishEnd} and {@code released} (any thread).
 */
final class Teardown {
    private static final Logger LOG = Loggers.getLogger(ConnectionCore.class);

    /** Queued operations failed per loop task after the end. */
    static final int FAIL_CHUNK = 1024;

    private final ConnectionCore core;
    private final EventLoop loop;
    private final Connection conn;
    private final String description;
    private final SendQueue sendQueue;
    private final Receiver receiver;
    private final PeerControl control;
    private final CompletionDispatch dispatch;
    private final Goodbye goodbye;
    /** The instance's close thread where the transport closes off the loop, else {@code null}. */
    private final SetupThread closes;
    /**
     * The owner's bookkeeping for a released connection (it forgets it), run just before
     * {@link #closed} completes, so that whoever sees {@code onDispose()} complete also sees the
     * connection forgotten.
     */
    private final Consumer<ConnectionCore> onReleased;
    /** The connection's sources in the loop's epoll: closed at the let-go. */
    private final List<Registration> registrations = new ArrayList<>();
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    /** The thread that ran the native close, once it returned (tests). */
    private volatile Thread nativeCloseThread;

    Teardown(ConnectionCore core, SendQueue sendQueue, Receiver receiver, PeerControl control,
             CompletionDispatch dispatch, Goodbye goodbye, SetupThread closes, Consumer<ConnectionCore> onReleased) {
        this.core = core;
        this.loop = core.loop;
        this.conn = core.conn;
        this.description = core.description;
        this.sendQueue = sendQueue;
        this.receiver = receiver;
        this.control = control;
        this.dispatch = dispatch;
        this.goodbye = goodbye;
        this.closes = closes;
        this.onReleased = onReleased;
    }

    /** {@return completes once the native objects are freed and what they held is released} */
    CompletableFuture<Void> closed() {
        return closed;
    }

    /** {@return the thread that ran the native close once it returned, else {@code null} (tests)} */
    Thread nativeCloseThread() {
        return nativeCloseThread;
    }

    /** Loop thread, at the start: one of the connection's sources is in the loop's epoll until the let-go. */
    void registered(Registration r) {
        registrations.add(r);
    }

    /**
     * Runs the teardown's next step after the current drain; if the loop no longer takes tasks,
     * or drops it in a forced shutdown, once the loop has ended.
     */
    void afterDrain() {
        loop.executeLaterOrAfterTermination(this::finishEnd);
    }

    /** Loop thread, from the end: posts the goodbye if one is wanted; the teardown goes on after its bound. */
    void startGoodbye() {
        goodbye.startBounded(this::afterDrain);
    }

    /** Loop thread: posts the goodbye write if one is wanted and a send credit is free. */
    void postGoodbye() {
        goodbye.post();
    }

    /** Loop thread: the goodbye write completed; an ended connection's teardown can go on. */
    void goodbyeCompleted() {
        if (goodbye.completed()) {
            afterDrain();
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
        if (core.state() == State.ENDED && goodbye.pending()) {
            goodbye.drop();
            afterDrain();
        }
    }

    /**
     * After the loops ended (the entry point's shutdown): ends the connection if it has not
     * ended, fails what is queued and frees the native objects now, without waiting for a
     * goodbye. Any thread.
     *
     * @param cause what the subscribers get
     */
    synchronized void forceClose(Throwable cause) {
        core.end(cause, ConnectionEvent.CLOSED);
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
        Throwable cause = core.terminal();
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
        afterDrain();
    }

    /**
     * Unregisters and frees the native connection, then releases what operations in flight held:
     * after the queue pair is destroyed nothing can touch their buffers any more. On the loop,
     * where the transport allows it, the native close is handed to the close thread and the rest
     * follows on the loop once it returned (see the design comment at the top of this file).
     */
    private synchronized void closeNative() {
        if (!core.closing()) {
            return;
        }
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
        assert closes.inSetupThread() && core.state() == State.CLOSED && registrations.isEmpty();
        boolean nativeClosed = false;
        try {
            nativeClosed = closeConnection();
        } finally {
            boolean ok = nativeClosed;
            core.runOnLoop(() -> released(ok));
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
        core.admission.closeRegions();
        loop.noteOperation("cqflux.connectionEnd"); // the subscribers of events() and closed
        core.monitor.completeEvents();
        dispatch.complete();
        // Before the completion, not as one of its dependents: CompletableFuture runs those in no
        // promised order, and onDispose()'s subscriber could see it before the owner forgot it.
        safely(() -> onReleased.accept(core));
        closed.complete(null);
    }
}
