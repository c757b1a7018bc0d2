package io.cqflux.reactor.internal.connection;

import io.cqflux.reactor.internal.op.OpMono;
import io.cqflux.reactor.internal.op.StagedSubscription;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One connection's staged messages ({@code send(byte[])} and its kin) held back, without a
 * staging buffer, while messages wait for the peer's receive credits in its {@link SendQueue}.
 *
 * <p>Why. A staged message takes its buffer from the instance's pool before it reaches the send
 * queue. Waiting there for a peer that takes no messages, it would keep that buffer, and once such
 * messages held every buffer, every staged operation of every connection of the instance would
 * wait for one. So while a message waits, or the peer has no receive credit, the next staged ones
 * wait here instead, in order, counted against pendingLimit, and leave one at a time: the next
 * once no message waits, the peer has a credit (re-read every millisecond while it has none, as
 * for a waiting message) and the one released before reached the send queue ({@link #reached})
 * or ended without reaching it ({@link #gone}). A peer that takes no messages then keeps none of
 * the pool's buffers but those of a burst that asked for them just as its credits ran out:
 * whether to hold is decided at subscription, off the loop, on mirrors, and a staging that is in
 * the pool's queue keeps its place there, so that the messages of a connection keep their order
 * (the pool's queue and the hold are each in order, and a staging is held only behind every one
 * of its connection's that is held or released). A released one leases and copies on the loop (the pool grants it there when
 * a buffer is free): the price of the hold, paid only by messages that had to wait. A message to
 * a peer that posts no receives fails from here, without a buffer.
 *
 * <p>After the loop has ended, its tasks run on the calling thread (ConnectionCore#runOnLoop):
 * the connection is ended then, and what is held has failed with it.
 *
 * <p>Threads. The queue and the release are the loop's; {@link #hold}, {@link #drop} and
 * {@link #gone} come from any thread and hand their part to the loop. {@link #anyHeld} is read on
 * any thread: it counts a staging from the moment it asks to be held until it reaches the send
 * queue or ends, so that one subscribed after it is held behind it, even before the loop took the
 * first in and while a released one is on its way. Each
 * staging leaves the hold once, by its own compare-and-set (StagedSubscription's hold states):
 * released here, refused here, or dropped by its cancel or its connection's end.
 */
final class MessageHold {
    private final ConnectionCore core;
    private final SendQueue queue;
    /** Held stagings, in order (loop only); a set, so that one that leaves is removed at once. */
    private final LinkedHashSet<StagedSubscription<?>> held = new LinkedHashSet<>(4);
    /**
     * Stagings that asked to be held and have not reached the send queue nor ended: a staged
     * message subscribed, or offered a buffer, while one is counted here is held behind it, even
     * before the loop took the first in or while a released one is on its way (read on any thread).
     */
    private final AtomicInteger holding = new AtomicInteger();
    /** Whether a staging released from the hold has not reached the send queue yet (loop only). */
    private boolean released;
    /** Whether {@link #release} runs: the release of one can reach the send queue inline (loop only). */
    private boolean releasing;

    MessageHold(ConnectionCore core, SendQueue queue) {
        this.core = core;
        this.queue = queue;
    }

    /** Any thread: {@return whether a staging is held, on its way into the hold, or released and on its way out} */
    boolean anyHeld() {
        return holding.get() > 0;
    }

    /** Loop thread: {@return how many stagings wait here: held, or released and not at the send queue yet} */
    int waiting() {
        return held.size() + (released ? 1 : 0);
    }

    /** Any thread: holds a staged message back until the peer can take it and no message waits before it. */
    void hold(StagedSubscription<?> s) {
        holding.incrementAndGet();
        core.runOnLoop(() -> admit(s));
    }

    /** Loop thread: takes a staged message in, or refuses it past pendingLimit as a waiting operation is. */
    private void admit(StagedSubscription<?> s) {
        if (!s.isHeld()) {
            return; // left before it got here (cancelled, failed): drop counted it out
        }
        // Nothing ahead of it and a credit for it: it is released at once and, like any operation
        // that can go out at once, is not refused here (the send queue refuses it if it stays).
        boolean atOnce = queue.noMessageWaits() && held.isEmpty() && !released && queue.messageMayGoElsePoll();
        if (!atOnce && queue.waitingOperations() >= queue.pendingLimit()) {
            if (s.leaveHoldRefused()) {
                holding.decrementAndGet(); // counted out before its subscriber hears of it
                queue.countRefusal();
                s.refuseHeld(queue.queueFull());
            }
            return;
        }
        held.add(s);
        queue.noteWaiting();
    }

    /** Any thread: a held staged message left before its release (cancelled, failed). */
    void drop(StagedSubscription<?> s) {
        holding.decrementAndGet();
        core.runOnLoop(() -> {
            held.remove(s);
            queue.mirrorWaiting();
        });
    }

    /** Any thread: a staged message released from the hold ended before it reached the send queue. */
    void gone() {
        holding.decrementAndGet();
        core.runOnLoop(() -> {
            released = false;
            releaseIfNoMessageWaits();
        });
    }

    /** Loop thread: an operation reached the send queue; one released from here frees the way for the next. */
    void reached(OpMono op) {
        if (op.stagedBy != null && op.stagedBy.reachedQueue()) {
            holding.decrementAndGet();
            released = false;
        }
    }

    /** Loop thread: releases held stagings while no message waits and the peer has a credit (SendQueue#noteWaiting). */
    void releaseIfNoMessageWaits() {
        if (!released && !held.isEmpty() && queue.noMessageWaits() && queue.messageMayGoElsePoll()) {
            release();
        }
    }

    /**
     * Releases held stagings, one at a time: while no message waits, the peer has a credit and
     * the one released before has reached the send queue. A release asks the pool for a buffer,
     * which can bring the message to the send queue inline; this loop, not a nested call, goes on.
     */
    private void release() {
        if (releasing) {
            return;
        }
        releasing = true;
        try {
            while (!released && queue.noMessageWaits() && !held.isEmpty() && queue.messageMayGoElsePoll()) {
                Iterator<StagedSubscription<?>> first = held.iterator();
                StagedSubscription<?> s = first.next();
                first.remove();
                if (queue.peerNeverReceives()) {
                    // Its message could never be received: it fails now, without a buffer (the
                    // count first, so that the subscriber who hears of it sees it gone).
                    queue.mirrorWaiting();
                    if (s.leaveHoldRefused()) {
                        holding.decrementAndGet();
                        s.refuseHeld(queue.neverReceived(s.spec.kind.opcode));
                    }
                    continue;
                }
                released = true;
                if (!s.releaseFromHold()) {
                    released = false; // left meanwhile (drop counted it out): the next
                }
                // A released one stays counted in holding until it reaches the send queue or
                // ends (reached, gone): a staging subscribed meanwhile is held behind it.
            }
        } finally {
            releasing = false;
            queue.mirrorWaiting();
        }
    }
}
