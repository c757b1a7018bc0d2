package io.cqflux.transport.fabric;

/**
 * The last {@code fi_trywait} answer of one completion or event queue, and whether it may stand
 * for the next sleep of the loop without another call.
 *
 * <p>fi_trywait(3) wants {@code FI_SUCCESS} "prior to blocking on a native wait object", and the
 * loop asks every source before every sleep. On tcp each call runs the provider's progress, an
 * {@code epoll_wait} of its own, so a BLOCKING loop serving one busy and 16 idle connections made
 * 60.8 of them per chained write (docs/performance.md, "Two costs at the native boundary"). An
 * answer of {@code FI_SUCCESS} now stands while the queue is not touched ({@link #clear}: read,
 * posted to, shut down) and for at most {@link #TRUST_NANOS}. The man page does not promise this
 * (blocking without a fresh {@code FI_SUCCESS} is "provider specific"): it rests on what the two
 * providers this transport is used with do (libfabric 1.17), so only they cache.
 * <ul>
 *   <li>tcp: a completion or event written after the call signals the queue's wait fd, and the
 *       signal stays up until the next {@code fi_trywait} or progress clears it. But the call
 *       also asks the socket's writability of epoll when sends wait in the provider's user-space
 *       buffer ({@code tcpx_update_epoll}), and its own progress can queue more there afterwards
 *       (an acknowledgement or a read response behind a full socket buffer): nothing then wakes
 *       the loop when the socket drains. Before the cache, the next sleep's call asked again;
 *       {@link #TRUST_NANOS} keeps that, at the first sleep after it.</li>
 *   <li>verbs: after a completion the channel fd stays readable until {@code fi_trywait}
 *       consumes the event and re-arms the CQ, and a wake-up drains the queue, which clears the
 *       answer.</li>
 * </ul>
 * Loop-confined, like its queue.
 */
final class TrywaitAnswer {

    /** How long an untouched queue's {@code FI_SUCCESS} stands: 1 ms. */
    static final long TRUST_NANOS = 1_000_000;

    private final boolean cached;
    private boolean ok;
    private long at;
    private int calls;

    /** @param provider the fabric provider's name: only tcp and verbs cache (see the class comment) */
    TrywaitAnswer(String provider) {
        this.cached = "tcp".equals(provider) || "verbs".equals(provider);
    }

    /** {@return whether the last answer stands for this sleep: FI_SUCCESS, untouched, recent} */
    boolean stands() {
        return ok && System.nanoTime() - at < TRUST_NANOS;
    }

    /**
     * Records the answer of a call just made.
     *
     * @param sleepOk whether it was {@code FI_SUCCESS}
     * @return {@code sleepOk}
     */
    boolean record(boolean sleepOk) {
        calls++;
        ok = cached && sleepOk;
        if (ok) {
            at = System.nanoTime();
        }
        return sleepOk;
    }

    /** The queue was read, posted to or shut down: the next sleep calls {@code fi_trywait} again. */
    void clear() {
        ok = false;
    }

    /** {@return the fi_trywait calls made (tests: FabricTrywaitTest)} */
    int calls() {
        return calls;
    }
}
