package io.cqflux.transport.fabric;

import io.cqflux.transport.fabric.ffm.fi_ops_fabric;
import java.lang.foreign.MemorySegment;

/**
 * The last {@code fi_trywait} answer of one completion or event queue, and whether it may stand
 * for the loop's next sleep without another call.
 *
 * <p>fi_trywait(3) wants {@code FI_SUCCESS} "prior to blocking on a native wait object", and a
 * loop that asked every source before every sleep made one call per idle connection per sleep
 * (on tcp each runs the provider's progress, an {@code epoll_wait} of its own). An answer of
 * {@code FI_SUCCESS} now stands while the queue is not touched ({@link #clear}: read, posted to,
 * shut down). The man page does not promise that this is safe (blocking without a fresh
 * {@code FI_SUCCESS} is "provider specific"): it rests on what libfabric 1.17 does, read in its
 * source, so only that version caches, and only where this was read:
 * <ul>
 *   <li>tcp (1.17's tcpx), CQs and EQs. The wait fd is an epoll set holding the bound endpoints'
 *       sockets and a signal fd; fi_trywait resets the signal first, then runs the queue's
 *       progress and each endpoint's try function, which says {@code -FI_EAGAIN} while the
 *       endpoint's user-space receive buffer holds bytes and otherwise arms {@code POLLOUT} on
 *       the socket exactly while sends wait in the provider ({@code tcpx_update_epoll}). After
 *       {@code FI_SUCCESS}, everything that could need a later call reaches the fd without one:
 *       bytes from the peer make the socket readable; a completion written by anyone signals
 *       ({@code ofi_cq_signal}); a send that the provider starts and cannot finish (a read
 *       response or a delivery acknowledgement behind a full socket buffer) signals both of the
 *       endpoint's CQ wait objects in {@code tcpx_tx_queue_insert} "if they need to add
 *       POLLOUT", and one queued behind it finds {@code POLLOUT} already armed. Nothing in
 *       the provider moves without a call into it (tcp has no progress thread). So the answer
 *       stands, however old, until the queue is touched or its fd turns readable; what the
 *       trust interval below bounds is only a loop that asks again on its own
 *       ({@code FabricTrywaitTest} drives a response larger than the socket buffers through a
 *       queue woken only by its fd).</li>
 *   <li>verbs, CQs only: after a completion the channel fd stays readable until
 *       {@code fi_trywait} consumes the event and re-arms the CQ, and a wake-up drains the
 *       queue, which clears the answer. Its EQs ask every time.</li>
 * </ul>
 * A loop that {@linkplain #watch watches} the answer is told when a standing {@code FI_SUCCESS}
 * is cleared, and asks no more until then ({@code Pollable.watchTouches}). Loop-confined, like
 * its queue.
 */
final class TrywaitAnswer {

    /** How long an untouched queue's {@code FI_SUCCESS} stands: 1 ms. */
    static final long TRUST_NANOS = 1_000_000;
    /** The libfabric version whose providers were read for this: 1.17. */
    private static final int READ_VERSION = (1 << 16) | 17;

    private final boolean cached;
    private long trustNanos = TRUST_NANOS;
    private boolean ok;
    private long at;
    private int calls;
    /** Told when a standing FI_SUCCESS is cleared (the loop's touch listener), or {@code null}. */
    private Runnable onClear;

    private TrywaitAnswer(boolean cached) {
        this.cached = cached;
    }

    /**
     * @param provider the fabric provider's name
     * @return the answer of one of its CQs
     */
    static TrywaitAnswer ofCompletionQueue(String provider) {
        return new TrywaitAnswer(FabricLibrary.libraryVersion() == READ_VERSION
                && ("tcp".equals(provider) || "verbs".equals(provider)));
    }

    /**
     * @param provider the fabric provider's name
     * @return the answer of one of its EQs
     */
    static TrywaitAnswer ofEventQueue(String provider) {
        return new TrywaitAnswer(FabricLibrary.libraryVersion() == READ_VERSION && "tcp".equals(provider));
    }

    /**
     * Before a sleep: the answer that stands (FI_SUCCESS, untouched, recent), or a new
     * {@code fi_trywait(fabric, fids, 1)}, recorded as of the moment it was asked.
     *
     * @param transport the queue's transport (the fabric and its trywait op)
     * @param fids the one-element fid array naming the queue
     * @param what the queue, for the error message of a failed call
     * @return whether it is safe to block on the queue's fd (false: {@code -FI_EAGAIN}, read it first)
     */
    boolean ask(FabricTransport transport, MemorySegment fids, String what) {
        if (stands()) {
            return true;
        }
        long asked = System.nanoTime(); // the answer is as old as the call
        int rc = fi_ops_fabric.trywait.invoke(transport.trywaitFp, transport.fabric(), fids, 1);
        boolean sleepOk = FabricLibrary.result("fi_trywait", rc, what) != FabricLibrary.AGAIN;
        calls++;
        ok = cached && sleepOk;
        at = asked;
        return sleepOk;
    }

    /** {@return whether the last answer was {@code FI_SUCCESS}, may be cached, and still stands (untouched, recent)} */
    boolean stands() {
        return ok && System.nanoTime() - at < trustNanos;
    }

    /**
     * {@return whether the last answer was {@code FI_SUCCESS}, may be cached, and nothing touched
     * the queue since, however old it is} No native call and no clock read: a spinning loop asks
     * it of each idle queue every round ({@code CompletionQueue.quiet()}), and {@link #ask}s from
     * time to time, which renews an answer that has aged.
     */
    boolean untouched() {
        return ok;
    }

    /** The queue was read, posted to or shut down: the next sleep calls {@code fi_trywait} again. */
    void clear() {
        if (ok) {
            ok = false;
            Runnable r = onClear;
            if (r != null) {
                r.run();
            }
        }
    }

    /**
     * Watches the answer for the loop ({@code Pollable.watchTouches}).
     *
     * @param listener called when a standing FI_SUCCESS is cleared, or {@code null} to stop
     * @return whether the answers may stand at all: the listener is kept only then
     */
    boolean watch(Runnable listener) {
        if (!cached) {
            return false;
        }
        onClear = listener;
        return listener != null;
    }

    /** {@return whether this queue's answers may stand at all (provider and version)} */
    boolean caches() {
        return cached;
    }

    /**
     * Tests: how long an answer stands ({@link #TRUST_NANOS} unless set).
     *
     * @param nanos the interval
     */
    void trustFor(long nanos) {
        trustNanos = nanos;
    }

    /** {@return the fi_trywait calls made (tests: FabricTrywaitTest)} */
    int calls() {
        return calls;
    }
}
