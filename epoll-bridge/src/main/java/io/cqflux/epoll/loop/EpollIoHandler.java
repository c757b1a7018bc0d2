package io.cqflux.epoll.loop;

import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.internal.NativeErrors;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.Pollable;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Arrays;

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
 * Settled sources: work per turn follows what is ready. A source that accepts
 * Pollable.watchTouches promises that a yes of its prepareToSleep() stands until it calls the
 * loop back (a read, a post, a shutdown), and that whatever arrives meanwhile makes its fd
 * readable. Once it said yes it is settled: the sleep path does not ask it again (toAsk holds
 * only the unsettled sources), and when its poll is not cheap, spinning rounds do not poll it
 * (polled holds only the unsettled queues; a round with settled queues makes one epoll_wait(0)
 * over the whole set instead, whatever their number). A touch, or epoll reporting its fd, makes
 * it unsettled again. A spinning round settles an idle watched queue after QUIET_AFTER_EMPTY_POLLS
 * empty polls, asked on the quiet tick. So an idle connection costs nothing per turn in BLOCKING,
 * ADAPTIVE and BUSY_POLL alike; sources that do not watch are asked before every sleep as before,
 * and the quiet-queue rules below apply to them only. The fabric transport's reasoning for its
 * promise is in its TrywaitAnswer.
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
 * The end of a batch. A sink is called once per completion; runAfterBatch lets it put work off
 * to the end of the batch it is in (a writeAll stream sends its results and asks its source for
 * more once per batch, not once per completion). pollOnce runs that work right after the poll
 * returns, before the queue is polled again, so nothing put off waits for another turn; when the
 * poll failed, once the queue's owner has been told (so that the work, a stream asking for more,
 * finds the connection ended and posts nothing new; a fatal error drops it: the loop ends). Work
 * put off outside a batch is refused and done by the caller at once.
 *
 * Fairness. One turn gives each ready queue up to MAX_BATCHES_PER_TURN polls; a queue that never comes back short (a dying connection
 * failing every operation) would otherwise hold the thread while its neighbours wait. A queue
 * that the budget cut off with a full last batch goes on the cut-off list, and the next turn polls
 * it again first, without waiting for its fd: after the drain was stopped early, neither kind of
 * fd promises to signal what is left (the rpma CQ was re-armed for new completions only, and a
 * libfabric wait fd need not be readable for buffered data). Those polls count as work, so the
 * loop does not sleep while a queue on the list still delivers.
 */

/**
 * The I/O half of one {@link EventLoop} (Netty 4.2's IoHandler): owns the wait in
 * {@code epoll_wait}, the registered sources and the spin/sleep policy of the loop's
 * {@link io.cqflux.epoll.WaitStrategy}; drains completion queues in batches into their sinks and
 * runs the readiness handlers of other sources.
 *
 * <p>Thread safety: loop thread only, not thread-safe; its native memory (the poller's, the batch
 * scratch) is the loop's, freed by the loop when it ends.
 */
final class EpollIoHandler {

    /**
     * Native poll calls per completion queue per loop turn. A queue whose polls keep coming back
     * full (a dying connection failing 500,000 operations) used to be drained to the end while
     * every other source on the loop waited: a healthy neighbour stalled for seconds. After this
     * many batches the queue is cut off for the turn and polled again first thing in the next one;
     * the other ready sources and the tasks run in between. 16 is Netty's default
     * {@code maxMessagesPerRead} for the same job: enough batches to amortise a turn's
     * {@code epoll_wait} and acknowledge over, few enough that a neighbour waits at most 16 polls
     * per flooding queue (at the default batch of 32: 512 completions).
     */
    static final int MAX_BATCHES_PER_TURN = 16;
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
     * fd (see {@link #sleep()}): 16, as {@link #MAX_BATCHES_PER_TURN}, so a neighbour of a queue
     * that completes continuously waits at most 16 of its operations.
     */
    static final int MAX_SLEEPS_PUT_OFF = 16;
    /** Longest time the poll before sleeping may put sleeps off before the loop asks epoll. */
    static final long SLEEPS_PUT_OFF_NANOS = 1_000_000;
    final EventLoop loop;
    final EpollPoller poller;
    private final MemorySegment scratch;
    private final int batchSize;
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
    private boolean sourcesClosed;
    /** Queues that the per-turn budget cut off with completions left (each once; see LoopSource.cutOff). */
    private final ArrayDeque<LoopSource> cutOff = new ArrayDeque<>();
    /** Loop turns so far; a queue's batch budget is per turn. */
    long turn;
    /** A completion batch is being delivered to its sink ({@link #runAfterBatch}). */
    private boolean delivering;
    /** Work that sinks put off to the end of the batch being delivered ({@link #runAfterBatch}). */
    private final ArrayDeque<Runnable> afterBatch = new ArrayDeque<>();
    /** When a busy round last asked epoll about the non-queue sources ({@code System.nanoTime()}). */
    private long othersCheckedAt;
    /** A non-queue source was registered since the last ask: the next busy round asks at once. */
    private boolean othersDue;
    /** Sleeps put off in a row by the poll before sleeping (see {@link #sleep()}). */
    private int sleepsPutOff;
    /**
     * Sources to ask {@link Pollable#prepareToSleep()} before the next sleep: every source but the
     * settled ones (each once; see LoopSource.toAsk). Settled sources leave it when met; a touch
     * puts them back.
     */
    private final ArrayDeque<LoopSource> toAsk = new ArrayDeque<>();
    /** Queues a spinning round polls: every queue but the settled costly ones (LoopSource.polled). */
    LoopSource[] polled = new LoopSource[16];
    int polledCount;
    /** Entries of {@link #polled} that left it since the last compaction. */
    private boolean polledHoles;
    /** Settled queues whose poll is not cheap: a spinning round asks epoll about them instead. */
    int settledQueues;
    /** Watched queues whose poll is not cheap: a spinning round counts their empty polls. */
    int watchedCostly;
    /** A source was touched while {@link #prepareToSleep()} asked: the loop asks it before sleeping. */
    private boolean unsettledWhileAsking;
    /** Queues whose last drain delivered and whose poll is cheap (LoopSource.listedBeforeSleep). */
    private final ArrayDeque<LoopSource> pollBeforeSleepList = new ArrayDeque<>();

    EpollIoHandler(EventLoop loop, EpollPoller poller, MemorySegment scratch, int batchSize, int spinBudget,
            LoopCounters counters, BlockedLoopDetector detector, long blockedThresholdNanos, LoopTimer timers) {
        this.loop = loop;
        this.sources = new SourceTable(loop);
        this.poller = poller;
        this.scratch = scratch;
        this.batchSize = batchSize;
        this.spinBudget = spinBudget;
        this.counters = counters;
        this.detector = detector;
        this.blockedThresholdNanos = blockedThresholdNanos;
        this.timers = timers;
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
        work += drainCutOff();
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
     * Puts work off to the end of the batch being delivered (EventLoop.runAfterBatch).
     *
     * @return false when no batch is being delivered
     */
    boolean runAfterBatch(Runnable task) {
        if (!delivering) {
            return false;
        }
        afterBatch.add(task);
        return true;
    }

    /** The graceful shutdown's last drain: every queue until it comes back short, no budget. */
    void drainAllQueues() {
        for (LoopSource s : sources.queues()) {
            if (s.isActive()) {
                drainAll(s);
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
        int work = prepareToSleep();
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
                    work += drain(s);
                }
            }
        }
        return work;
    }

    /**
     * Calls {@link Pollable#prepareToSleep()} on every source; a source that says "not yet" is
     * polled (queue) or handled (other source) right away.
     *
     * @return 0 when the loop may sleep, else the work done
     */
    private int prepareToSleep() {
        assert loop.inEventLoop();
        int work = 0;
        unsettledWhileAsking = false;
        for (int i = toAsk.size(); i > 0; i--) {
            LoopSource s = toAsk.poll();
            s.toAsk = false;
            if (!s.isActive() || s.settled) {
                continue; // unregistered, or settled in a spinning round: a touch lists it again
            }
            boolean yes = askToSleep(s);
            if (!s.isActive()) {
                continue; // failed in prepareToSleep()
            }
            if (yes && s.watched) {
                settle(s);
                continue;
            }
            listToAsk(s);
            if (!yes) {
                if (s.cq != null) {
                    work += 1 + drain(s);
                } else {
                    handleReadable(s);
                    work++;
                }
            }
        }
        // A source touched during the asks (a handler posted) is listed but was not asked: one
        // more turn asks it before any sleep.
        return work == 0 && unsettledWhileAsking ? 1 : work;
    }

    /** Lists a source to be asked before the next sleep (once). */
    private void listToAsk(LoopSource s) {
        if (!s.toAsk) {
            s.toAsk = true;
            toAsk.add(s);
        }
    }

    /**
     * A watched source said yes: it is asked no more, and a costly queue is polled no more, until
     * it is touched or epoll reports its fd.
     */
    void settle(LoopSource s) {
        assert loop.inEventLoop();
        s.settled = true;
        if (s.cq != null && !s.cheapPoll && s.polled) {
            s.polled = false;
            polledHoles = true;
            settledQueues++;
        }
    }

    /** A settled source was touched or reported ready: asked before the next sleep, polled again. */
    private void unsettle(LoopSource s) {
        assert loop.inEventLoop();
        if (!s.settled || !s.isActive()) {
            return;
        }
        s.settled = false;
        s.emptyPolls = 0; // touched: an operation may be in flight
        if (s.cq != null && !s.cheapPoll && !s.polled) {
            settledQueues--;
            addPolled(s);
        }
        listToAsk(s);
        unsettledWhileAsking = true;
    }

    /** The listener a watched source calls when its yes stops standing. */
    private void touched(LoopSource s) {
        if (loop.inEventLoop()) {
            unsettle(s);
            return;
        }
        try {
            loop.execute(() -> unsettle(s));
        } catch (ResourceClosedException e) {
            // shutting down: nothing sleeps on the source any more
        }
    }

    private void addPolled(LoopSource s) {
        if (polledCount == polled.length) {
            polled = Arrays.copyOf(polled, polled.length * 2);
        }
        polled[polledCount++] = s;
        s.polled = true;
    }

    /** Drops the queues that left {@link #polled} (settled, unregistered); after a round, never inside one. */
    void compactPolled() {
        if (!polledHoles) {
            return;
        }
        polledHoles = false;
        int n = 0;
        for (int i = 0; i < polledCount; i++) {
            LoopSource s = polled[i];
            if (s.polled) {
                polled[n++] = s;
            }
        }
        Arrays.fill(polled, n, polledCount, null);
        polledCount = n;
    }

    boolean askToSleep(LoopSource s) {
        assert loop.inEventLoop();
        try {
            return s.pollable.prepareToSleep();
        } catch (Throwable t) {
            EventLoop.rethrowIfFatal(t);
            fail(s, "prepareToSleep", t);
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
                    unsettle(s);
                    if (acknowledge(s)) {
                        work += drain(s);
                    }
                } else if ((s.skippedTurn == turn || s.settled) && s.isActive()) {
                    // A quiet or settled queue that this busy round left unpolled, and whose fd is readable.
                    unsettle(s);
                    s.skippedTurn = -1;
                    work += spin.drainCountingEmpty(s);
                }
            } else if (others) {
                unsettle(s);
                // Busy: ask first, then handle ("A readable source in a busy round" above).
                boolean settled = !busy || askToSleep(s);
                if (s.isActive()) {
                    handleReadable(s);
                    if (!settled && s.isActive()) {
                        spin.queueAskAgain(s);
                    }
                }
                work++;
            }
        }
        return work;
    }

    private boolean acknowledge(LoopSource s) {
        assert loop.inEventLoop();
        try {
            s.cq.acknowledge();
            return true;
        } catch (Throwable t) {
            EventLoop.rethrowIfFatal(t);
            fail(s, "acknowledge", t);
            return false;
        }
    }

    /**
     * Polls the queues that {@link #MAX_BATCHES_PER_TURN} cut off in an earlier turn, each once
     * (with this turn's budget); one that is cut off again goes back on the list.
     *
     * @return completions delivered
     */
    private int drainCutOff() {
        assert loop.inEventLoop();
        int work = 0;
        for (int i = cutOff.size(); i > 0; i--) {
            LoopSource s = cutOff.poll();
            s.cutOff = false;
            if (s.isActive()) {
                work += drain(s);
            }
        }
        return work;
    }

    /**
     * Polls a queue until a batch comes back short or the queue has had its
     * {@link #MAX_BATCHES_PER_TURN} polls of this turn; in the latter case, while the last batch
     * was full, the queue goes on the cut-off list so that the next turn polls it again without
     * waiting for its fd.
     *
     * @return completions delivered
     */
    int drain(LoopSource s) {
        assert loop.inEventLoop();
        if (s.turn != turn) {
            s.turn = turn;
            s.pollsThisTurn = 0;
        }
        int total = 0;
        int n;
        do {
            if (s.pollsThisTurn == MAX_BATCHES_PER_TURN) {
                if (!s.cutOff) {
                    s.cutOff = true;
                    cutOff.add(s);
                }
                return total;
            }
            s.pollsThisTurn++;
            n = pollOnce(s);
            if (n < 0) {
                return total;
            }
            total += n;
        } while (n == batchSize && s.isActive());
        if (total > 0) {
            if (s.cheapPoll) {
                s.pollBeforeSleep = true;
                if (!s.listedBeforeSleep) {
                    s.listedBeforeSleep = true;
                    pollBeforeSleepList.add(s);
                }
            }
            s.emptyPolls = 0; // a queue that can be quiet counts its empty polls from here
        }
        return total;
    }

    /**
     * Polls a queue until a batch comes back short, with no budget: the graceful shutdown's last
     * drain, after which nothing else runs on the loop.
     *
     * @return completions delivered
     */
    private int drainAll(LoopSource s) {
        assert loop.inEventLoop();
        int total = 0;
        int n;
        do {
            n = pollOnce(s);
            if (n < 0) {
                return total;
            }
            total += n;
        } while (n == batchSize && s.isActive());
        return total;
    }

    /**
     * One native poll into the scratch batch, counted.
     *
     * @return the completions delivered, or -1 when the queue failed (it is unregistered)
     */
    private int pollOnce(LoopSource s) {
        assert loop.inEventLoop();
        assert !delivering : "a poll from inside a sink";
        int n;
        delivering = true;
        try {
            n = s.cq.poll(scratch, batchSize, s.sink);
        } catch (Throwable t) {
            delivering = false;
            if (t instanceof VirtualMachineError || t instanceof LinkageError) {
                // The loop ends (run() handles it): no subscriber code runs on the way out.
                afterBatch.clear();
                EventLoop.rethrowIfFatal(t);
            }
            // The queue's owner hears of its failure first (the reactive layer ends the
            // connection, so that the put-off work, a stream asking for more, posts nothing
            // new on it; a stream's failure sends its completed results first on its own).
            fail(s, "poll", t);
            runAfterBatchTasks();
            return -1;
        }
        delivering = false;
        if (n < 0 || n > batchSize) {
            fail(s, "poll", new IllegalStateException("poll returned " + n + ", outside [0, " + batchSize + "]"));
            runAfterBatchTasks();
            return -1;
        }
        runAfterBatchTasks();
        if (n > 0) {
            counters.batch(n);
            if (blockedThresholdNanos != 0) {
                detector.endUnit(BlockedLoopDetector.UNIT_BATCH, s, n);
            }
        }
        return n;
    }

    void handleReadable(LoopSource s) {
        assert loop.inEventLoop();
        try {
            s.onReadable.run();
        } catch (Throwable t) {
            EventLoop.rethrowIfFatal(t);
            EventLoop.LOG.log(System.Logger.Level.WARNING, "readiness handler of " + s + " threw; the loop goes on", t);
        }
        if (blockedThresholdNanos != 0) {
            detector.endUnit(BlockedLoopDetector.UNIT_HANDLER, s, 0);
        }
    }

    private void runAfterBatchTasks() {
        assert loop.inEventLoop();
        if (afterBatch.isEmpty()) {
            return;
        }
        try {
            Runnable r;
            while ((r = afterBatch.poll()) != null) {
                loop.safeRun(r);
            }
        } finally {
            // Only a fatal error (safeRun rethrows nothing else) leaves work here: the loop ends.
            afterBatch.clear();
        }
    }

    /** A queue or source that failed itself is dropped and its owner told. */
    void fail(LoopSource s, String call, Throwable t) {
        assert loop.inEventLoop();
        EventLoop.LOG.log(System.Logger.Level.ERROR, call + " of " + s + " failed; it is unregistered from event loop " + loop.name(), t);
        unregister(s, true);
    }

    /** Unregisters every source and runs its hook; no registration is accepted afterwards. */
    void closeSources() {
        assert loop.inEventLoop();
        sourcesClosed = true;
        for (LoopSource s : sources.all()) {
            try {
                unregister(s, true);
            } catch (Throwable t) {
                EventLoop.rethrowIfFatal(t);
                EventLoop.LOG.log(System.Logger.Level.WARNING, "unregistering " + s + " failed", t);
            }
        }
    }

    /** Adds a source to epoll; loop thread. */
    void add(LoopSource s) {
        assert loop.inEventLoop();
        if (sourcesClosed || loop.isTerminated()) {
            throw new ResourceClosedException("event loop " + loop.name() + " is shut down: " + s + " not registered");
        }
        if (s.phase != LoopSource.PENDING) {
            return; // closed before the hand-over ran
        }
        int fd = s.pollable.fd();
        if (fd < 0) {
            throw new IllegalArgumentException("source " + s.pollable + " has fd " + fd + " (must be >= 0)");
        }
        s.watched = watch(s);
        if (s.watched) {
            s.quietCapable = false; // settling replaces the quiet-queue rules for it
        }
        long id = sources.add(s);
        int e = poller.add(fd, id);
        if (e != 0) {
            sources.remove(s);
            unwatch(s);
            throw NativeErrors.errno("epoll_ctl", e, "EPOLL_CTL_ADD of fd " + fd + " (" + s.pollable + ")");
        }
        s.phase = LoopSource.ACTIVE;
        listToAsk(s);
        if (s.cq != null) {
            addPolled(s);
            if (s.watched && !s.cheapPoll) {
                watchedCostly++;
            }
        }
        if (s.cq == null) {
            othersDue = true; // a busy round asks about it at once, not after the interval
        }
    }

    /**
     * Removes a source; loop thread; idempotent.
     *
     * @param runHook whether to run the owner's hook (not when the owner asked)
     */
    void unregister(LoopSource s, boolean runHook) {
        assert loop.inEventLoop();
        if (s.phase == LoopSource.PENDING) {
            s.phase = LoopSource.REMOVED;
            s.removed.complete(null);
            return;
        }
        if (s.phase != LoopSource.ACTIVE) {
            return;
        }
        s.phase = LoopSource.REMOVED;
        sources.remove(s);
        if (s.watched) {
            if (s.settled && s.cq != null && !s.cheapPoll) {
                settledQueues--;
            }
            if (s.cq != null && !s.cheapPoll) {
                watchedCostly--;
            }
            s.settled = false;
            unwatch(s);
        }
        if (s.polled) {
            s.polled = false;
            polledHoles = true;
        }
        int fd = -1;
        try {
            fd = s.pollable.fd();
        } catch (RuntimeException e) {
            EventLoop.LOG.log(System.Logger.Level.DEBUG, "fd of " + s.pollable + " unavailable at unregistration", e);
        }
        if (fd >= 0) {
            int e = poller.delete(fd);
            if (e != 0) {
                // EBADF/ENOENT: the owner closed the fd first; epoll(7) drops a file description
                // from every set when its last fd is closed, so there is nothing left to remove.
                EventLoop.LOG.log(System.Logger.Level.DEBUG, "EPOLL_CTL_DEL of fd {0}: {1}", fd, NativeErrors.errnoName(e));
            }
        }
        s.removed.complete(null);
        if (runHook) {
            runHook(s);
        }
    }

    /** {@return whether the source accepted {@link Pollable#watchTouches}; one that throws is asked every sleep} */
    private boolean watch(LoopSource s) {
        try {
            return s.pollable.watchTouches(() -> touched(s));
        } catch (RuntimeException e) {
            EventLoop.LOG.log(System.Logger.Level.WARNING, "watchTouches of " + s + " threw; it is asked before every sleep", e);
            return false;
        }
    }

    private void unwatch(LoopSource s) {
        s.watched = false;
        try {
            s.pollable.watchTouches(null);
        } catch (RuntimeException e) {
            EventLoop.LOG.log(System.Logger.Level.DEBUG, "watchTouches(null) of " + s + " threw", e);
        }
    }

    void runHook(LoopSource s) {
        assert loop.inEventLoop();
        if (s.onShutdown == null || s.closeRequested) {
            return;
        }
        try {
            s.onShutdown.run();
        } catch (Throwable t) {
            EventLoop.rethrowIfFatal(t);
            EventLoop.LOG.log(System.Logger.Level.WARNING, "shutdown hook of " + s + " threw", t);
        }
    }


}
