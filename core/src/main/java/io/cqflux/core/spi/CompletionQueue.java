package io.cqflux.core.spi;

import java.lang.foreign.MemorySegment;

/**
 * A native completion queue as the event loop drives it. Confined to the loop thread that
 * registered it, except {@link #close()} which the owner calls after unregistering.
 *
 * <p>The loop's cycle: on readiness of {@link #fd()} it calls {@link #acknowledge()}, then
 * {@link #poll} until fewer than {@code max} entries come back; before sleeping it calls
 * {@link #prepareToSleep()} (and, for a queue whose {@link #pollIsCheap()}, polls it once more
 * when its last drain delivered). A busy-polling loop calls {@link #poll} without waiting for the
 * fd and never calls {@link #acknowledge()}; for a queue that {@link #canBeQuiet()} and whose
 * poll is not cheap it also asks
 * {@link #prepareToSleep()} outside the sleep path and may leave the queue unpolled while it is
 * {@link #quiet()}, until its fd is readable. A queue that accepts
 * {@link Pollable#watchTouches} is handled by that promise instead: after a yes it is neither
 * asked nor (when its poll is not cheap) polled until it reports a touch or its fd is readable,
 * and {@link #quiet()} is not consulted.
 */
public interface CompletionQueue extends Pollable, AutoCloseable {

    /** Bytes per entry the loop must provide in its scratch batch, for every transport. */
    int MAX_ENTRY_BYTES = 64;

    /**
     * Acknowledges the notification that made the fd readable and re-arms the queue so that the
     * next completion signals again (librpma: {@code rpma_cq_wait(3)}; an empty or spurious
     * notification is normal and not an error). A no-op where the fd needs no acknowledgement.
     */
    void acknowledge();

    /**
     * Reads up to {@code max} completions into {@code scratch} and hands each to {@code sink},
     * in queue order.
     *
     * @param scratch loop-owned native memory of at least {@code max * MAX_ENTRY_BYTES} bytes,
     *     allocated once per loop
     * @param max the batch size
     * @param sink receives each completion
     * @return how many completions were delivered; 0 when the queue was empty
     * @throws io.cqflux.core.CqfluxException when the queue itself failed (overrun, device
     *     error): fatal for the queue
     */
    int poll(MemorySegment scratch, int max, CompletionSink sink);

    /**
     * Whether {@link #poll} only reads memory the device writes: no system call, no software
     * progress engine. A sleeping loop then polls such a queue once more before it sleeps, when
     * its last drain delivered completions: the sinks may have posted work (a chained operation
     * posts its successor from its predecessor's completion), and a completion that is already
     * there is found without the sleep, the wake-up and the re-arm. A librpma CQ is such a queue
     * ({@code rpma_cq_get_wc(3)} is {@code ibv_poll_cq(3)}, a read of the CQ ring mapped into
     * the process; also on rxe); libfabric's tcp provider is not (its {@code fi_cq_read(3)}
     * drives socket progress with system calls of its own).
     *
     * @return {@code true} when a poll is cheap enough to try before every sleep
     */
    default boolean pollIsCheap() {
        return false;
    }

    /**
     * Whether a spinning loop may leave this queue unpolled until its {@link #fd()} turns
     * readable: its last {@link #prepareToSleep()} said the fd will signal whatever comes, and
     * nothing has read the queue, posted to it or shut it down since. A loop that spins over
     * several queues whose {@link #pollIsCheap() poll is not cheap} then asks epoll once per round
     * about all such quiet queues instead of polling each, when two or more are quiet (a single
     * one is polled; libfabric's tcp provider: one
     * {@code fi_cq_read(3)}, a progress call with an {@code epoll_wait} of its own, per idle
     * connection per round), and asks each {@link #prepareToSleep()} again from time to time,
     * which answers from its last call for as long as its transport trusts that answer. Asked on
     * the loop thread, in every such round: it must make no native call.
     *
     * <p>What "loses nothing" rests on is the transport's: the fabric transport's answer rests on
     * libfabric 1.17's providers and is trusted for 1 ms at a time (its {@code TrywaitAnswer}
     * says why), so a spinning loop may, as a sleeping one may, notice some provider progress up
     * to that much later.
     *
     * @return {@code true} only when skipping polls until the fd is readable loses nothing;
     *     {@code false} (the default) keeps the queue polled in every spinning round
     */
    default boolean quiet() {
        return false;
    }

    /**
     * Whether {@link #quiet()} can ever be true, asked once, on the thread that registers the
     * queue. A spinning loop asks {@link #prepareToSleep()} of an idle queue only when it can and
     * its poll is not {@linkplain #pollIsCheap() cheap} (a cheap poll costs less than any ask):
     * for any other queue that stays the sleeping loop's question. Default {@code false}.
     *
     * @return whether this queue keeps its sleep answers (fabric: libfabric 1.17's tcp and verbs
     *     providers)
     */
    default boolean canBeQuiet() {
        return false;
    }

    /** Destroys the queue if its owner owns it; idempotent. */
    @Override
    void close();
}
