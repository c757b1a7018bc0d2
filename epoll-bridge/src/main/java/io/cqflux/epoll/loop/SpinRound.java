package io.cqflux.epoll.loop;

import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.Pollable;
import java.util.ArrayDeque;

/*
 * Design.
 *
 * A readable source in a busy round. A libfabric wait fd stays readable after its events were
 * read, until fi_trywait(3) resets its signal (util_wait_fd_try): a loop that never sleeps would
 * find every connection's event queue readable at every ask and run its handler each time. So a
 * busy round asks the source prepareToSleep() first, then runs the handler. An event that comes
 * after the reset signals again; one that was there before it is the handler's to read, and when
 * the answer was "not yet" (something was there) the next round asks again and runs the handler
 * again while the answer stays so (askAgain), in case the handler left some of it unread: the
 * reset took away the readiness that would have brought the loop back.
 *
 * Busy rounds and quiet queues. These rules are for queues that can be quiet but do not watch
 * their touches (Pollable.watchTouches); a watched queue settles instead (see "Settled sources"
 * in EpollIoHandler), which is what the fabric transport's queues do on libfabric 1.17, where
 * the rules below were first written for them. Polling a queue whose poll is not cheap costs system calls
 * (libfabric's tcp provider: fi_cq_read runs socket progress, an epoll_wait of its own): a busy
 * round that polled every queue of one busy connection and 16 idle ones would make 17 of them
 * (benchmarks/results/README.md, "Spinning loops and idle connections", has the figures). A queue whose
 * poll is not cheap and that CompletionQueue.canBeQuiet() (asked once: fabric's on libfabric 1.17
 * tcp, whose fi_trywait answers TrywaitAnswer keeps) may be left unpolled while it is quiet (CompletionQueue.quiet():
 * its last prepareToSleep() said the fd will signal whatever comes, and nothing has read it,
 * posted to it or shut it down since). The rules, while the loop has two or more such queues:
 *   - Once QUIET_AFTER_EMPTY_POLLS (256) busy polls in a row found a queue empty, it is asked
 *     prepareToSleep() on the next quiet tick (every QUIET_TICK_NANOS, 100 µs, one tick for
 *     all queues, so that idle queues turn quiet in the same round), provided the round before
 *     found at least one other queue quiet or idle that long (quietCandidates): a yes makes it
 *     quiet, a "not yet" keeps it polled and asked again on the next tick. A lone idle queue is
 *     not asked at all, since a single quiet queue would be polled anyway. 256 rounds outlast an
 *     operation in flight, whose completion would otherwise wait for an epoll_wait before its
 *     poll; an idle queue pays them once after its last activity.
 *   - When a round left two or more quiet queues, one epoll_wait(0) over the whole set stands for
 *     their polls, and a quiet queue whose fd is readable is drained in the same round. The other
 *     sources it finds ready are handled only when they are due anyway (othersDue). A single
 *     quiet queue is polled after all: its poll costs what the ask would, without a system call
 *     before what came (a connection with a separate receive queue, idle beside its send queue).
 *   - On each tick a round asks each quiet queue prepareToSleep() again, which answers from the
 *     transport's standing answer and calls fi_trywait again once that is older than
 *     TrywaitAnswer's trust interval (1 ms); a "not yet" has the queue polled at once.
 * The same rule as a sleep, so a quiet queue loses nothing a sleeping loop would not, within the
 * same bound. A readable quiet queue beyond the 64 entries one ask returns waits for a later
 * round (epoll_wait(2) goes round its ready list). Cheap queues (librpma's, verbs') and queues
 * that cannot be quiet are polled every round, and are asked nothing outside the sleep path.
 */

/**
 * The spinning round of one {@link EpollIoHandler} (BUSY_POLL always, ADAPTIVE while it spins):
 * which queues a round polls, which it leaves to one {@code epoll_wait(0)}, and which sources it
 * asks again; the counterpart of Netty's select strategy.
 *
 * <p>Thread safety: loop thread only, not thread-safe.
 */
final class SpinRound {

    /**
     * Busy polls in a row that must find a queue that can be quiet empty before a busy round asks
     * it {@link Pollable#prepareToSleep()} (on tcp a {@code fi_trywait(3)}), whose yes makes it
     * {@link CompletionQueue#quiet()}: 256, a few hundred microseconds of rounds, so that a queue
     * waiting for the completion of an operation in flight stays polled (the completion of a
     * quiet queue waits for an {@code epoll_wait} before its poll), while an idle queue pays those
     * polls once after its last activity.
     */
    static final int QUIET_AFTER_EMPTY_POLLS = 256;
    /**
     * The tick on which a spinning round asks {@link Pollable#prepareToSleep()} of the queues that
     * have been idle long enough and of the quiet ones, the latter to renew an answer their
     * transport no longer trusts (fabric: after 1 ms): every 100 µs. One tick for all, so that
     * idle queues turn quiet in the same round, and no clock read per queue.
     */
    static final long QUIET_TICK_NANOS = 100_000;
    private final EpollIoHandler io;
    /** Non-queue sources that a spinning round asks again (each once; see LoopSource.askAgain). */
    private final ArrayDeque<LoopSource> askAgain = new ArrayDeque<>();
    /** The last quiet tick of a spinning round ({@link #unitClock()}; see QUIET_TICK_NANOS). */
    private long quietTickAt;
    /**
     * Queues that the last skipping round found quiet or idle long enough to be asked: a tick asks
     * an idle queue only while this is two or more, since a lone quiet queue is polled anyway.
     */
    private int quietCandidates;

    SpinRound(EpollIoHandler io) {
        this.io = io;
    }

    /**
     * Busy round: every queue polled directly, no acknowledge; while the loop has two or more
     * queues that can be quiet, two or more quiet ones are left to one {@code epoll_wait(0)}
     * ("Busy rounds and quiet queues" in the design comment).
     */
    int pollQueues() {
        assert io.loop.inEventLoop();
        if (io.sources.quietCapableQueues() >= 2 || io.settled.watchedCostly > 0) {
            return pollQueuesSkippingQuiet();
        }
        // The usual loop without costly watched queues (RDMA queues): kept as small as it always
        // was, so that the JIT compiles the busy round's hottest path as before.
        int work = 0;
        for (int i = 0; i < io.settled.polledCount; i++) {
            LoopSource s = io.settled.polled[i];
            if (s.polled && s.isActive()) {
                work += io.drainer.drain(s);
            }
        }
        io.settled.compactPolled();
        return work;
    }

    /** {@link #pollQueues()} while the loop has two or more queues that can be quiet. */
    private int pollQueuesSkippingQuiet() {
        assert io.loop.inEventLoop();
        boolean tick = false;
        long now = io.loop.unitClock();
        if (now - quietTickAt >= QUIET_TICK_NANOS) {
            quietTickAt = now;
            tick = true;
        }
        int work = 0;
        int skipped = 0;
        int candidates = 0;
        // An idle queue is asked only where another could turn quiet with it (last round's count).
        boolean askIdle = tick && quietCandidates >= 2;
        LoopSource lastSkipped = null;
        for (int i = 0; i < io.settled.polledCount; i++) {
            LoopSource s = io.settled.polled[i];
            if (!s.polled || !s.isActive()) {
                continue;
            }
            if (s.watched && !s.cheapPoll) {
                // Idle long enough: asked on the tick; a yes settles it, and epoll then stands for
                // its polls until it is touched or its fd turns readable.
                if (tick && s.emptyPolls >= QUIET_AFTER_EMPTY_POLLS) {
                    boolean yes = io.askToSleep(s);
                    if (!s.isActive()) {
                        continue;
                    }
                    if (yes) {
                        io.settled.settle(s);
                        continue;
                    }
                }
                work += drainCountingEmpty(s);
                continue;
            }
            if (!s.quietCapable) {
                work += io.drainer.drain(s);
                continue;
            }
            boolean quiet = isQuiet(s);
            if (!s.isActive()) {
                continue; // failed in quiet()
            }
            boolean skip;
            if (quiet) {
                // The tick renews its answer (prepareToSleep answers from the transport's last
                // call while it trusts that, and calls again after); a "not yet" has it polled.
                skip = !tick || io.askToSleep(s);
            } else {
                if (s.skippedTurn == io.turn - 1) {
                    s.emptyPolls = 0; // quiet last round, touched since (a post): work in flight
                }
                // Idle long enough: asked on the tick, so that idle queues turn quiet together,
                // and only beside another candidate (a round skips only when it leaves two or more).
                skip = askIdle && s.emptyPolls >= QUIET_AFTER_EMPTY_POLLS && io.askToSleep(s) && s.isActive()
                        && isQuiet(s);
            }
            if (!s.isActive()) {
                continue; // failed in prepareToSleep() or quiet()
            }
            if (skip) {
                s.skippedTurn = io.turn;
                skipped++;
                lastSkipped = s;
            } else {
                work += drainCountingEmpty(s);
            }
            if (skip || s.emptyPolls >= QUIET_AFTER_EMPTY_POLLS) {
                candidates++;
            }
        }
        quietCandidates = candidates;
        io.settled.compactPolled();
        if (skipped == 1) {
            // A single quiet queue: its poll costs what the ask would, and finds what came
            // without an epoll_wait before it.
            lastSkipped.skippedTurn = -1;
            work += drainCountingEmpty(lastSkipped);
            skipped = 0;
        }
        if (skipped > 1 || io.settled.settledQueues > 0) {
            // One ask about every fd stands for the polls of all the quiet and settled queues; the
            // other sources it finds ready are handled only when they are due anyway.
            io.counters.quietSkips(skipped + io.settled.settledQueues);
            boolean others = io.sources.others().length > 0 && io.othersDue();
            int n = io.poller.selectNow();
            if (n > 0) {
                work += io.dispatch(n, true, others);
            }
        }
        return work;
    }

    /**
     * Drains a queue that can be quiet and counts a poll that found it empty towards
     * {@link #QUIET_AFTER_EMPTY_POLLS} (a delivery, in any path, restarts the count in
     * {@link QueueDrainer#drain}); a cut-off (full batches) or a failure does not count.
     *
     * @return completions delivered
     */
    int drainCountingEmpty(LoopSource s) {
        assert io.loop.inEventLoop();
        int n = io.drainer.drain(s);
        if (s.cutOff) {
            s.emptyPolls = 0;
        } else if (n == 0 && s.isActive() && s.emptyPolls < QUIET_AFTER_EMPTY_POLLS) {
            s.emptyPolls++;
        }
        return n;
    }

    /** {@return {@link CompletionQueue#quiet()} of a queue that can be quiet; one that throws is failed (and inactive)} */
    private boolean isQuiet(LoopSource s) {
        assert io.loop.inEventLoop();
        try {
            return s.cq.quiet();
        } catch (Throwable t) {
            LoopLifecycle.rethrowIfFatal(t);
            io.registry.fail(s, "quiet", t);
            return false;
        }
    }

    /**
     * Asks again the sources whose handler a spinning round ran while their prepareToSleep said
     * "not yet", and runs the handler again for each that still says so ("A readable source in a
     * busy round" in the design comment).
     *
     * @return the handlers run
     */
    int askAgain() {
        assert io.loop.inEventLoop();
        if (askAgain.isEmpty()) {
            return 0;
        }
        int work = 0;
        for (int i = askAgain.size(); i > 0; i--) {
            LoopSource s = askAgain.poll();
            s.askAgain = false;
            if (s.isActive() && !io.askToSleep(s) && s.isActive()) {
                io.handleReadable(s);
                work++;
                queueAskAgain(s);
            }
        }
        return work;
    }

    void queueAskAgain(LoopSource s) {
        assert io.loop.inEventLoop();
        if (!s.askAgain) {
            s.askAgain = true;
            askAgain.add(s);
        }
    }
}
