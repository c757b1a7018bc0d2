package io.cqflux.reactor.internal.connection;

import io.cqflux.core.spi.Connection;
import io.cqflux.reactor.internal.connection.ConnectionCore.State;
import io.cqflux.reactor.internal.resources.LibraryTimer;
import java.util.concurrent.TimeUnit;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The goodbye of an orderly close by this side: a write of the peer's goodbye word
 * ({@link PeerControl}), posted after every earlier operation so that it also completes after
 * them, and before the native close, so that a cqflux peer reports CLOSED rather than LOST. It
 * waits for a send credit like any operation, and at most {@link #boundMillis()}: a peer that
 * stopped answering never completes it, and then the native connection is freed without it. A
 * peer's disconnect ends the wait at once (its queue pair answers nothing any more: EventIntake).
 *
 * <p>Its two flags are written on the loop only, and only while the connection closes; they are
 * volatile because {@code disposeNow}'s waiting thread reads them to say what the release still
 * waits for ({@link #describePending}). {@code inFlight} is set before {@code wanted} is cleared,
 * and read after it.
 */
final class Goodbye {
    private static final Logger LOG = Loggers.getLogger(ConnectionCore.class);

    private final ConnectionCore core;
    private final SendQueue sendQueue;
    private final PeerControl control;
    private final Connection conn;
    private final String description;
    private final long boundMillis;
    /** A close by this side wants the goodbye written before the native close. */
    private volatile boolean wanted;
    /** The goodbye write is posted and not yet completed. */
    private volatile boolean inFlight;

    Goodbye(ConnectionCore core, SendQueue sendQueue, PeerControl control) {
        this.core = core;
        this.sendQueue = sendQueue;
        this.control = control;
        this.conn = core.conn;
        this.description = core.description;
        this.boundMillis = Math.min(core.config.timeout().toMillis(), 1000);
    }

    /** {@return how long the native close waits for the goodbye write: the shorter of 1 s and the connect timeout} */
    long boundMillis() {
        return boundMillis;
    }

    /** Loop thread: this side closes an established connection to a cqflux peer: say goodbye first. */
    void want() {
        wanted = true;
    }

    /** {@return whether the native close still waits for the goodbye (wanted, or posted and not completed)} */
    boolean pending() {
        return wanted || inFlight;
    }

    /** The native close no longer waits for it (the bound passed, the peer disconnected, or a forced close). */
    void drop() {
        wanted = false;
        inFlight = false;
    }

    /**
     * Loop thread, from the end: posts the goodbye if one is wanted, and gives up on it after
     * {@link #boundMillis()}, running {@code teardown} then.
     *
     * @param teardown what the native close waited for the goodbye to run
     */
    void startBounded(Runnable teardown) {
        if (!wanted) {
            return;
        }
        post();
        Runnable giveUp = () -> core.runOnLoop(() -> {
            if (pending()) {
                drop();
                teardown.run();
            }
        });
        LibraryTimer.schedule(giveUp, boundMillis, TimeUnit.MILLISECONDS);
    }

    /**
     * Loop thread: the goodbye write completed.
     *
     * @return whether the native close waited for it and can go on
     */
    boolean completed() {
        inFlight = false;
        return core.state() == State.ENDED;
    }

    /** Loop thread: posts the goodbye write if a send credit is free; otherwise a returning credit posts it. */
    void post() {
        if (!wanted || inFlight || core.state() == State.CLOSED) {
            return;
        }
        SendQueue.Posted p;
        try {
            p = sendQueue.postControl(SendQueue.Internal.GOODBYE, ctx -> control.postGoodbye(conn, ctx));
        } catch (RuntimeException e) {
            LOG.warn("connection " + description + ": posting the goodbye failed; the peer will report the end"
                    + " as LOST", e);
            p = SendQueue.Posted.REFUSED;
        }
        if (p == SendQueue.Posted.YES) {
            inFlight = true; // before wanted is cleared: describePending reads them the other way round
            wanted = false;
        } else if (p == SendQueue.Posted.REFUSED) {
            wanted = false; // the queue refused it: close without (the peer will say LOST)
        }
    }

    /**
     * {@return what an ended connection's release waits for on the goodbye's side, or null when
     * it does not wait for the goodbye}; any thread, a snapshot
     */
    String describePending() {
        boolean w = wanted; // first: post() sets inFlight before it clears wanted
        boolean f = inFlight;
        String then = " (awaited at most " + boundMillis + " ms, then the native connection is freed without it)";
        if (w) {
            return "the close task ran; the goodbye write to the peer waits for a send credit held by an"
                    + " operation in flight" + then;
        }
        if (f) {
            return "the close task ran; the goodbye write to the peer is posted and has not completed yet" + then;
        }
        return null;
    }
}
