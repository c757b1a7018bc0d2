package io.cqflux.core.spi;

/**
 * A native source that several loop-confined owners share, each of them a {@link Pollable} whose
 * {@link Pollable#sharedBy()} names it: one fd for many connections. All its members belong to
 * the one loop that registers it; it is registered once per loop however many members it has.
 * Its {@link #prepareToSleep()} and {@link #watchTouches} are those of the native source.
 *
 * <p>The price of sharing is a wider blast radius: a failure of the shared source is a failure of
 * every member on its loop. The loop retries a {@link #dispatch()} that throws on its next
 * wake-up, and only when it keeps failing does it drop the shared source together with all its
 * members (each owner's shutdown hook runs: every connection on that loop ends), where a source
 * of one's own would take down one connection.
 */
public interface SharedSource extends Pollable {

    /**
     * Reads what is pending on the native source, without blocking, and hands each entry to the
     * member it names, which then calls its {@code touched} callback (see
     * {@link Pollable#sharedBy()}); an entry for no current member is dropped. Called on the loop
     * thread when the fd is readable or the source said it is not safe to sleep.
     */
    void dispatch();

    /**
     * Whether the last {@link #dispatch()} read the native source to empty, or stopped at its
     * budget with entries possibly left. The graceful shutdown's last drain dispatches again
     * while this says no, draining the members between rounds, since no wake-up will come for
     * what is left; a dispatch whose whole budget went to entries of no current member (dropped)
     * still left the rest behind. Loop thread.
     *
     * @return true when the last dispatch read everything the source held (the default, right
     *     only for a source that reads without a budget: one whose dispatch stops at a budget
     *     must override this, or the last drain leaves what is past its budget)
     */
    default boolean lastReadEmptied() {
        return true;
    }

    /**
     * Remembers the first loop that registers this source and answers it from then on. Two loops
     * must never dispatch one native source (its entry buffer and routing are loop-confined), so a
     * loop that is answered another loop refuses the member. Called by a loop each time it
     * registers the source (with its first member there); thread-safe.
     *
     * @param loop the loop that registers the source
     * @return the loop that registered it first: {@code loop} on the first call
     */
    Object claimLoop(Object loop);
}
