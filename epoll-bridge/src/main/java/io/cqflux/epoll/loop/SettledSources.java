package io.cqflux.epoll.loop;

import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.Pollable;
import java.util.ArrayDeque;
import java.util.Arrays;

/*
 * Design.
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
 * and the quiet-queue rules (SpinRound) apply to them only. The fabric transport's reasoning for its
 * promise is in its TrywaitAnswer.
 */

/**
 * The settled-source bookkeeping of one {@link EpollIoHandler}: which sources the sleep path
 * still asks {@link Pollable#prepareToSleep()} ({@link #prepareToSleep()}), which queues a
 * spinning round still polls ({@link #polled}), and the settling and unsettling of the sources
 * that accepted {@link Pollable#watchTouches}.
 *
 * <p>Thread safety and lifetime: loop thread only (but {@link #touched}, which hands over from
 * any thread); lives as long as its loop and holds no native memory.
 */
final class SettledSources {

    private final EpollIoHandler io;
    private final EventLoop loop;
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

    SettledSources(EpollIoHandler io) {
        this.io = io;
        this.loop = io.loop;
    }

    /**
     * Calls {@link Pollable#prepareToSleep()} on every source; a source that says "not yet" is
     * polled (queue) or handled (other source) right away.
     *
     * @return 0 when the loop may sleep, else the work done
     */
    int prepareToSleep() {
        assert loop.inEventLoop();
        int work = 0;
        unsettledWhileAsking = false;
        for (int i = toAsk.size(); i > 0; i--) {
            LoopSource s = toAsk.poll();
            s.toAsk = false;
            if (!s.isActive() || s.settled) {
                continue; // unregistered, or settled in a spinning round: a touch lists it again
            }
            boolean yes = io.askToSleep(s);
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
                    work += 1 + io.drainer.drain(s);
                } else {
                    io.handleReadable(s);
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

    /** A source entered epoll (SourceRegistry.add): asked before the next sleep, a queue polled. */
    void added(LoopSource s) {
        assert loop.inEventLoop();
        listToAsk(s);
        if (s.cq != null) {
            addPolled(s);
            if (s.watched && !s.cheapPoll) {
                watchedCostly++;
            }
        }
    }

    /** A source left epoll (SourceRegistry.unregister): its settled and polled counts go. */
    void removed(LoopSource s) {
        assert loop.inEventLoop();
        if (s.watched) {
            if (s.settled && s.cq != null && !s.cheapPoll) {
                settledQueues--;
            }
            if (s.cq != null && !s.cheapPoll) {
                watchedCostly--;
            }
            s.settled = false;
        }
        if (s.polled) {
            s.polled = false;
            polledHoles = true;
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
    void unsettle(LoopSource s) {
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

    /** The listener a watched source calls when its yes stops standing; any thread. */
    void touched(LoopSource s) {
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
}
