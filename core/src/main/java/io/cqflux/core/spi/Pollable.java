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
}
