package io.cqflux.core.spi;

/**
 * Something the event loop watches with epoll: a file descriptor that becomes readable when the
 * native object has work, and the check to make before the loop sleeps on it.
 */
public interface Pollable {

    /** {@return the file descriptor to register (level-triggered, {@code EPOLLIN})} */
    int fd();

    /**
     * Called on the loop thread right before it blocks in {@code epoll_wait}, and by a spinning
     * loop before it runs the handler of a readable source and when it asks an idle queue that
     * {@linkplain CompletionQueue#canBeQuiet() can be quiet} whether it is; it may reset what
     * makes {@link #fd()} readable (a libfabric wait fd's signal), and it should not block (a
     * spinning loop's other sources wait meanwhile). Returns
     * {@code false} when work may be pending that the fd will not signal, so the loop must poll
     * again first. libfabric requires this ({@code fi_trywait(3)}: {@code FI_SUCCESS} before
     * blocking on a wait fd; {@code -FI_EAGAIN} means read the queue first; the fabric transport
     * may answer from its last call, see its {@code TrywaitAnswer}); librpma does not (its CQ is
     * re-armed by {@code rpma_cq_wait} before the drain).
     *
     * @return whether it is safe to sleep on {@link #fd()}
     */
    default boolean prepareToSleep() {
        return true;
    }

    /**
     * Offers the loop a way to stop asking this source {@link #prepareToSleep()} before every
     * sleep (and, for a completion queue whose poll is not {@linkplain
     * CompletionQueue#pollIsCheap() cheap}, to stop polling it in every spinning round): a source
     * that accepts promises that a "yes" of {@link #prepareToSleep()} stands, however old, until
     * it calls {@code touched} — which it must do, on the loop thread, whenever something ends
     * that yes (a read of the source, a post to its endpoint, a shutdown, an event it holds for
     * the loop) — and that anything arriving meanwhile makes {@link #fd()} readable. The loop then
     * asks and polls only the sources that epoll reported or that were touched since their last
     * yes, so an idle source costs nothing per loop turn. Called on the loop thread when the source
     * is registered, and with {@code null} when it is unregistered (drop the reference).
     *
     * @param touched what to call when a yes stops standing, or {@code null} to stop
     * @return whether the source keeps that promise (the default: no; it is then asked before
     *     every sleep, as the loop always did)
     */
    default boolean watchTouches(Runnable touched) {
        return false;
    }

    /**
     * The native source that serves this one, when owners share one fd (a libfabric event queue
     * bound to many endpoints); a shared source may have a single member (a connection's queue of
     * its own, served the same way). The loop then never registers this source's fd: it
     * registers the shared source once (counting the members registered with it, removing it
     * with the last one), calls {@link SharedSource#dispatch()} when its fd is readable, and runs
     * this member's handler whenever the member calls the {@code touched} callback that the loop
     * gives it through {@link #watchTouches} (which a member must accept): the member calls it
     * when something waits for its handler (an entry the dispatch routed to it, an event of its
     * own). So the work per wake-up follows the members that got something, however many share
     * the source. The loop does not ask a member {@link #prepareToSleep()}; it asks the shared
     * source. A member may be a {@link CompletionQueue} (libfabric endpoints that share one CQ):
     * its "handler" is then a drain through {@link CompletionQueue#poll}, which hands over what the
     * dispatch routed to it; the loop never polls it otherwise, not even when spinning.
     * Asked once, at registration.
     *
     * @return the shared source, or {@code null} (the default) when this source has its own fd
     */
    default SharedSource sharedBy() {
        return null;
    }
}
