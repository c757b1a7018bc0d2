package io.cqflux.transport.fabric;

import io.cqflux.transport.fabric.ffm.fi_ops_fabric;
import java.lang.foreign.MemorySegment;

/**
 * The last {@code fi_trywait} answer of one completion or event queue, and whether it may stand
 * for the loop's next sleep without another call.
 *
 * <p>fi_trywait(3) wants {@code FI_SUCCESS} "prior to blocking on a native wait object", and the
 * loop asks every source before every sleep. On tcp each call runs the provider's progress, an
 * {@code epoll_wait} of its own, so a BLOCKING loop serving one busy and 16 idle connections made
 * 60.8 of them per chained write (docs/performance.md, "Two costs at the native boundary"). An
 * answer of {@code FI_SUCCESS} now stands while the queue is not touched ({@link #clear}: read,
 * posted to, shut down) and was given less than {@link #TRUST_NANOS} ago. The man page does not
 * promise that this is safe (blocking without a fresh {@code FI_SUCCESS} is "provider specific"):
 * it rests on what libfabric 1.17 does, read in its source, so only that version caches, and only
 * where this was read:
 * <ul>
 *   <li>tcp (1.17's tcpx), CQs and EQs: a completion or event written after the call signals the
 *       queue's wait fd, and the signal stays up until this queue's next {@code fi_trywait} or
 *       read. But the call also asks epoll for the socket's writability when sends wait in the
 *       provider's user-space buffer ({@code tcpx_update_epoll}), and its own progress can queue
 *       more there afterwards (an acknowledgement behind a full socket buffer), which the fd then
 *       does not announce. That could stall the sleep right after the call before the cache too,
 *       but any wake-up's next sleep asked again; now only a sleep after a wake-up that comes
 *       {@link #TRUST_NANOS} or more after the call does. (The bound is not a timer: a loop that
 *       nothing wakes stays asleep either way.)</li>
 *   <li>verbs, CQs only: after a completion the channel fd stays readable until
 *       {@code fi_trywait} consumes the event and re-arms the CQ, and a wake-up drains the
 *       queue, which clears the answer. Its EQs ask every time.</li>
 * </ul>
 * A spinning loop uses the same answer to leave an idle completion queue unpolled until its fd
 * is readable ({@code CompletionQueue.quiet()}), and renews it through {@link #ask} as a sleep
 * does, so the bound above holds for it too. Loop-confined, like its queue.
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
        ok = false;
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
