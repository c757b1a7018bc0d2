package io.cqflux.epoll.loop;

import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.Pollable;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;

/*
 * Design.
 *
 * The sleep/wake protocol. Producers enqueue, then call EpollPoller.wakeup(), which writes the
 * eventfd only when the loop announced a sleep (one volatile read otherwise). Before it blocks, the
 * loop announces the sleep, then re-reads the queue tail (and the lifecycle state); both sides do
 * "store, then load" on volatiles, so (Dekker) either the loop sees the task and does not sleep, or
 * the producer sees the announcement and writes the eventfd, which is in the epoll set. Shutdown
 * requests use the same path.
 *
 * Completion queues. Level-triggered EPOLLIN, the registration id in epoll_event.data. On
 * readiness the loop calls acknowledge() first, then poll() until a batch comes back short or the
 * queue has had MAX_BATCHES_PER_TURN polls in this loop turn. For
 * librpma, acknowledge() is rpma_cq_wait(3): it consumes the channel event and re-arms the CQ
 * (ibv_req_notify_cq) before the drain, so a completion that lands during or after the drain
 * signals the fd again; one that landed before the re-arm is found by the drain. Arm-then-drain
 * therefore never loses a completion (drain-then-arm would: a completion between the last empty
 * poll and the arm would sit unsignalled). The price is the occasional empty wake-up, which
 * rpma_cq_wait(3) documents as normal. libfabric's wait fd has no such re-arm step: data can be
 * buffered in the provider without the fd being readable, so fi_trywait(3) must have said
 * FI_SUCCESS before blocking; it fails with -FI_EAGAIN when the queue has to be read first. That
 * is Pollable.prepareToSleep(), asked of every source before every sleep; any "no" turns the
 * sleep into another polling round. (The fabric transport answers it without the call for a
 * queue that nothing read, posted to or shut down since its last FI_SUCCESS, given under 1 ms
 * ago; its TrywaitAnswer says on which providers' behaviour that rests. The loop does not know.)
 * A sleep also waits for one more poll of every queue whose last drain delivered, when its poll
 * costs no system call (CompletionQueue.pollIsCheap(): librpma's
 * ibv_poll_cq reads a ring in user space): the sinks may have posted work, and a chained
 * operation's completion that is already in the ring is found without epoll_wait, the channel
 * read and the re-arm. "Short batch, so empty" is true of the ring when it was read, not after
 * the sinks ran. Only queues whose last drain delivered are asked, so an idle loop's sleep costs
 * nothing more; while the last look keeps finding completions it puts the sleep off, and after
 * MAX_SLEEPS_PUT_OFF (16) such sleeps in a row, or SLEEPS_PUT_OFF_NANOS (1 ms), the loop asks epoll
 * about every fd, so the other queues and the event channels are not starved; libfabric's tcp
 * queues are not cheap (fi_cq_read drives socket progress), and fi_trywait(3) already answers
 * for them. Busy rounds poll queues directly without acknowledging them (their fds may stay
 * readable; epoll is then only consulted for the other sources).
 *
 * ADAPTIVE after a wake-up. An adaptive loop spins for its budget of empty rounds, sleeps, and
 * spins again once something wakes it: a task, a completion, or any readable source fd, even one
 * whose drain delivered nothing. The last matters for libfabric's tcp provider: the target of a
 * read or write gets no completion (the transport does not ask for FI_RMA_EVENT, fi_cq(3)), but
 * its FI_WAIT_FD fd turns readable when the request's bytes arrive on the socket, and only its
 * fi_cq_read moves them (tcp has no progress thread). Counted as idle, that wake-up sent the
 * target's loop straight back to epoll_wait, so an ADAPTIVE pair paid an epoll wake-up per
 * operation on the passive side and sat between BUSY_POLL and BLOCKING. A wake-up by a fd therefore counts as
 * activity in sleep()'s result. BLOCKING is unaffected (its budget is 0).
 *
 * Busy rounds and the other sources. A busy round (BUSY_POLL always, ADAPTIVE while it spins)
 * polls the queues (all but the quiet ones, below) and runs the tasks straight from the
 * TaskQueue; neither needs a system call of the loop's own. What only epoll can tell is whether a
 * non-queue source (a connection's event channel, a listener) is readable, and asking costs an
 * epoll_wait(2) with timeout 0. Asked every round, that call was a large share of the loop's
 * system calls per operation (a C loop makes none of its own). So a busy round asks only when OTHERS_CHECK_INTERVAL_NANOS have passed since
 * the last ask, or when a source was registered since (othersDue: a new listener or channel is
 * asked at once). The bound: one ask returns at most EpollPoller.MAX_EVENTS (64) ready fds, and
 * it is over the whole epoll set, queue fds included; busy rounds never acknowledge a queue, so
 * its fd stays readable and takes an entry in every ask. With N readable fds a connection event
 * or an incoming connection request can therefore take ceil(N / 64) asks, each
 * OTHERS_CHECK_INTERVAL_NANOS plus a round apart: one interval plus one round when the loop has fewer
 * than 64 readable fds (the usual case: one queue or two per connection), proportionally more
 * beyond. Nothing starves: epoll_wait(2) moves the level-triggered entries it returns to the back
 * of its ready list, so successive asks go round all of them; the time check runs every round
 * whatever the queues deliver; and a long round (a flood of completions, a task budget) makes the
 * next one ask at once. (Asking about the other sources alone would need them in an epoll set of
 * their own, nested in the loop's: not done.) Completions, tasks and the sleep path are
 * unaffected: a loop that goes to sleep asks every source in prepareToSleep() and then waits on
 * all fds together.
 *
 * The drain itself (its per-turn budget, the cut-off list, the work put off to the end of a batch)
 * is QueueDrainer's; adding and removing sources (epoll_ctl, the hooks) is SourceRegistry's;
 * which sources are settled, asked before a sleep and polled by a spinning round is
 * SettledSources'.
 */

/**
 * The I/O half of one {@link EventLoop} (Netty 4.2's IoHandler): owns the wait in
 * {@code epoll_wait}, the registered sources and the spin/sleep policy of the loop's
 * {@link io.cqflux.epoll.WaitStrategy}; drains completion queues in batches into their sinks and
 * runs the readiness handlers of other sources. It keeps, per source, what the wait and the
 * spinning rounds need; its {@link SourceRegistry} adds and removes sources, its
 * {@link SettledSources} keeps which of them to ask before a sleep and to poll in a spinning
 * round, and its {@link QueueDrainer} polls a queue into its sink.
 *
 * <p>Thread safety: loop thread only, not thread-safe; its native memory (the poller's, the batch
 * scratch) is the loop's, freed by the loop when it ends.
 */
final class EpollIoHandler {

    /**
     * Longest time a busy round goes without asking epoll about the non-queue sources (event
     * channels, listeners); see "Busy rounds and the other sources" in the design comment. 50 µs
     * is a few operations' round trip on fabric/tcp and a fraction of what establishing or
     * ending a connection takes, so the delay it adds to a connection event is invisible, while
     * an 8-byte write loop asks once per several operations instead of several times per one.
     */
    static final long OTHERS_CHECK_INTERVAL_NANOS = 50_000;
    /**
     * Sleeps the poll before sleeping may put off in a row before the loop asks epoll about every
     * fd (see {@link #sleep()}): 16, as {@link QueueDrainer#MAX_BATCHES_PER_TURN}, so a neighbour of a queue
     * that completes continuously waits at most 16 of its operations.
     */
    static final int MAX_SLEEPS_PUT_OFF = 16;
    /** Longest time the poll before sleeping may put sleeps off before the loop asks epoll. */
    static final long SLEEPS_PUT_OFF_NANOS = 1_000_000;
    final EventLoop loop;
    final EpollPoller poller;
    /** Empty busy rounds before sleeping: 0 blocking, {@code Integer.MAX_VALUE} never. */
    private final int spinBudget;
    final LoopCounters counters;
    private final BlockedLoopDetector detector;
    /** {@link LoopConfig#blockedThreshold()} in nanoseconds; 0: off. */
    private final long blockedThresholdNanos;
    private final LoopTimer timers;
    /** The spinning round's policy: which queues to poll, which to leave to epoll. */
    final SpinRound spin = new SpinRound(this);
    /** Empty busy rounds in a row. */
    private int idle;

    // Registrations (loop thread only).
    final SourceTable sources;
    /** Adds and removes sources: epoll, the table, the hooks, the hand-over from other threads. */
    final SourceRegistry registry;
    /** The batched drain of the queues, its per-turn budget and the end-of-batch work. */
    final QueueDrainer drainer;
    /** Which sources are asked before a sleep and polled by a spinning round; the settling. */
    final SettledSources settled;
    /** The shared sources and their members (Pollable.sharedBy()). */
    final SharedSources shared;
    /** Loop turns so far; a queue's batch budget is per turn. */
    long turn;
    /** When a busy round last asked epoll about the non-queue sources ({@code System.nanoTime()}). */
    private long othersCheckedAt;
    /** A non-queue source was registered since the last ask: the next busy round asks at once. */
    private boolean othersDue;
    /** Sleeps put off in a row by the poll before sleeping (see {@link #sleep()}). */
    private int sleepsPutOff;
    /** Queues whose last drain delivered and whose poll is cheap (LoopSource.listedBeforeSleep). */
    private final ArrayDeque<LoopSource> pollBeforeSleepList = new ArrayDeque<>();

    EpollIoHandler(EventLoop loop, EpollPoller poller, MemorySegment scratch, int batchSize, int spinBudget,
            LoopCounters counters, BlockedLoopDetector detector, long blockedThresholdNanos, LoopTimer timers) {
        this.loop = loop;
        this.sources = new SourceTable(loop);
        this.poller = poller;
        this.spinBudget = spinBudget;
        this.counters = counters;
        this.detector = detector;
        this.blockedThresholdNanos = blockedThresholdNanos;
        this.timers = timers;
        this.registry = new SourceRegistry(this);
        this.settled = new SettledSources(this);
        this.shared = new SharedSources(this);
        this.drainer = new QueueDrainer(this, scratch, batchSize, counters, detector, blockedThresholdNanos);
    }

    /**
     * One turn of I/O after the loop's tasks and timers: the cut-off queues first, then a spinning
     * round or a sleep, as the wait strategy and the work so far decide.
     *
     * @param work what the turn's tasks and timers did (0: nothing)
     */
    void runIo(int work) {
        assert loop.inEventLoop();
        turn++;
        // Queues cut off by the budget last turn: their fds may not signal what is left
        // (rpma_cq_wait(3) re-armed the CQ for new completions only; a libfabric wait fd need
        // not be readable for buffered data, fi_trywait(3)), so they are polled here, before
        // the loop may sleep; while one still has work, `work` keeps the loop awake.
        work += drainer.drainCutOff();
        if (idle < spinBudget) {
            work += spin.pollQueues();
            work += spin.askAgain();
            if (sources.others().length > 0 && othersDue()) {
                int n = poller.selectNow();
                if (n > 0) {
                    work += dispatch(n, true);
                }
            }
            if (work == 0) {
                if (spinBudget != Integer.MAX_VALUE) {
                    idle++; // BUSY_POLL never counts, so it never reaches the sleep branch
                }
                SpinWait.pause();
            } else {
                idle = 0;
            }
        } else {
            if (work == 0) {
                work = sleep();
            } else {
                // Tasks ran: still service the fds that are ready, without blocking. Otherwise
                // a stream of tasks (a producer that never pauses, a task that re-queues itself
                // to retry a post) would keep the loop from ever reading its queues.
                int n = poller.selectNow();
                if (n > 0) {
                    work += dispatch(n, false);
                }
            }
            if (work > 0) {
                idle = 0; // activity: an adaptive loop goes back to spinning
            }
        }
    }

    /**
     * Whether this busy round (or a sleep put off by the poll before it) asks epoll about the
     * non-queue sources: when a source was registered since the last ask, or
     * {@link #OTHERS_CHECK_INTERVAL_NANOS} have passed.
     *
     * @return whether to call {@code epoll_wait(0)} now (the ask is then recorded as done)
     */
    boolean othersDue() {
        return othersDue(OTHERS_CHECK_INTERVAL_NANOS);
    }

    /**
     * {@link #othersDue()} with another interval.
     *
     * @param interval nanoseconds since the last ask after which to ask again
     * @return whether to call {@code epoll_wait(0)} now (the ask is then recorded as done)
     */
    private boolean othersDue(long interval) {
        assert loop.inEventLoop();
        // "Now" to within the turn, without another clock read per round when the detection is on.
        long now = loop.unitClock();
        if (!othersDue && now - othersCheckedAt < interval) {
            return false;
        }
        othersDue = false;
        othersCheckedAt = now;
        return true;
    }

    /**
     * One sleep: announce it, re-check for tasks, ask every source ({@code fi_trywait(3)}), block,
     * dispatch.
     *
     * @return the work found
     */
    private int sleep() {
        assert loop.inEventLoop();
        int again = pollBeforeSleep();
        if (again > 0) {
            // While the last look keeps finding completions (a pipeline completes continuously)
            // the loop never reaches epoll_wait: ask epoll about every fd after
            // MAX_SLEEPS_PUT_OFF sleeps put off in a row, or SLEEPS_PUT_OFF_NANOS, whichever
            // comes first, or one busy cheap queue starves the other queues and the event
            // channels for as long as it stays busy. Counted, not only timed: the ask costs
            // epoll_wait and, for the busy queue whose fd is readable, its re-arm
            // (rpma_cq_wait(3)); asked on a busy round's interval, an operation slower than that
            // interval paid both every time and lost what the last look saves.
            // One call decides and records the ask: a streak of MAX_SLEEPS_PUT_OFF asks at once
            // (interval 0), a shorter one once SLEEPS_PUT_OFF_NANOS have passed since the last.
            if (othersDue(++sleepsPutOff >= MAX_SLEEPS_PUT_OFF ? 0 : SLEEPS_PUT_OFF_NANOS)) {
                sleepsPutOff = 0;
                int n = poller.selectNow();
                if (n > 0) {
                    again += dispatch(n, false);
                }
            }
            return again;
        }
        sleepsPutOff = 0;
        poller.announceSleep();
        if (loop.hasTasks() || !loop.isRunning()) {
            poller.cancelSleep();
            return 1;
        }
        int work = settled.prepareToSleep();
        if (work > 0) {
            poller.cancelSleep();
            return work;
        }
        Runnable hook = loop.beforeSleep;
        if (hook != null) {
            hook.run();
        }
        int timeout = -1;
        if (!timers.isEmpty()) {
            long wait = timers.nanosUntilNext(System.nanoTime());
            if (wait == 0) {
                poller.cancelSleep();
                return 1; // a timer is due: the next turn runs it
            }
            // epoll_wait(2) counts whole milliseconds: rounded up, so the loop never wakes early.
            timeout = (int) Math.min(Integer.MAX_VALUE, (wait + 999_999) / 1_000_000);
        }
        int n = poller.sleep(timeout);
        if (blockedThresholdNanos != 0) {
            detector.restart(); // the sleep is not a blocked unit
        }
        if (n <= 0) {
            return 0; // EINTR
        }
        counters.wakeup();
        boolean bySource = false; // read before dispatch: its handlers may register sources
        for (int i = 0; i < n && !bySource; i++) {
            bySource = poller.readyId(i) != EpollPoller.WAKE_ID;
        }
        work = dispatch(n, false);
        if (work == 0) {
            counters.emptyWakeup();
            if (bySource) {
                return 1; // "ADAPTIVE after a wake-up" in the design comment: the loop spins again
            }
        }
        return work;
    }

    /**
     * Polls, once more, each queue whose last drain delivered and whose poll is cheap (see
     * "sleep/wake" in the design comment).
     *
     * @return completions delivered (0: the loop may go on towards the sleep)
     */
    private int pollBeforeSleep() {
        assert loop.inEventLoop();
        int work = 0;
        for (int i = pollBeforeSleepList.size(); i > 0; i--) {
            LoopSource s = pollBeforeSleepList.poll();
            s.listedBeforeSleep = false;
            if (s.pollBeforeSleep) {
                s.pollBeforeSleep = false;
                if (s.isActive()) {
                    work += drainer.drain(s);
                }
            }
        }
        return work;
    }

    /** A source entered epoll (SourceRegistry.add): the settled bookkeeping, and a busy round's ask. */
    void sourceAdded(LoopSource s) {
        assert loop.inEventLoop();
        settled.added(s);
        if (s.cq == null) {
            othersDue = true; // a busy round asks about it at once, not after the interval
        }
    }

    /** A cheap queue's drain delivered: the sleep path polls it once more first (pollBeforeSleep). */
    void listBeforeSleep(LoopSource s) {
        assert loop.inEventLoop();
        s.pollBeforeSleep = true;
        if (!s.listedBeforeSleep) {
            s.listedBeforeSleep = true;
            pollBeforeSleepList.add(s);
        }
    }

    boolean askToSleep(LoopSource s) {
        assert loop.inEventLoop();
        try {
            return s.pollable.prepareToSleep();
        } catch (Throwable t) {
            LoopLifecycle.rethrowIfFatal(t);
            registry.fail(s, "prepareToSleep", t);
            return true;
        }
    }

    /**
     * Handles ready entries of the epoll array, the non-queue sources included.
     *
     * @param n entries
     * @param busy a busy round: queues were polled already, do not acknowledge them
     * @return the work found
     */
    private int dispatch(int n, boolean busy) {
        return dispatch(n, busy, true);
    }

    /**
     * Handles ready entries of the epoll array.
     *
     * @param n entries
     * @param busy a busy round: queues were polled already (but the quiet ones it left), do not
     *     acknowledge them
     * @param others whether to handle the non-queue sources among them
     * @return the work found
     */
    int dispatch(int n, boolean busy, boolean others) {
        assert loop.inEventLoop();
        int work = 0;
        for (int i = 0; i < n; i++) {
            long id = poller.readyId(i);
            if (id == EpollPoller.WAKE_ID) {
                poller.consumeWakeup();
                if (loop.hasTasks()) {
                    work++;
                }
                continue;
            }
            LoopSource s = sources.lookup(id);
            if (s == null) {
                continue; // unregistered by a handler earlier in this batch
            }
            if (s.cq != null) {
                if (!busy) {
                    settled.unsettle(s);
                    if (drainer.acknowledge(s)) {
                        work += drainer.drain(s);
                    }
                } else if ((s.skippedTurn == turn || s.settled) && s.isActive()) {
                    // A quiet or settled queue that this busy round left unpolled, and whose fd is readable.
                    settled.unsettle(s);
                    s.skippedTurn = -1;
                    work += spin.drainCountingEmpty(s);
                }
            } else if (others) {
                settled.unsettle(s);
                // Busy: ask first, then handle ("A readable source in a busy round" above).
                boolean mayRest = !busy || askToSleep(s);
                if (s.isActive()) {
                    handleReadable(s);
                    if (!mayRest && s.isActive()) {
                        spin.queueAskAgain(s);
                    }
                }
                work++;
            }
        }
        return work;
    }

    void handleReadable(LoopSource s) {
        assert loop.inEventLoop();
        try {
            s.onReadable.run();
        } catch (Throwable t) {
            LoopLifecycle.rethrowIfFatal(t);
            EventLoop.LOG.log(System.Logger.Level.WARNING, "readiness handler of " + s + " threw; the loop goes on", t);
        }
        if (blockedThresholdNanos != 0) {
            detector.endUnit(BlockedLoopDetector.UNIT_HANDLER, s, 0);
        }
    }
}
