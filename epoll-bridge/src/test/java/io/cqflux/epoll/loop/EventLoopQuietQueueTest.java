package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.Completion;
import io.cqflux.epoll.WaitStrategy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * A spinning loop with two or more queues that can be quiet leaves two or more quiet ones
 * ({@code CompletionQueue.quiet()}) to one {@code epoll_wait(0)} per round instead of polling
 * each ("Busy rounds and quiet queues" in SpinRound's design comment). The queues here are test
 * doubles that keep their sleep answers as the fabric transport keeps fi_trywait's; a cheap queue
 * registered beside them is polled in every round, so its poll count counts the rounds. Counters
 * compared with each other are read together in a loop task, between two rounds.
 */
class EventLoopQuietQueueTest {

    /** Rounds the loop is let run while a test watches what it polls. */
    private static final long ROUNDS = 20_000;

    @Test
    void idleQueues_turnQuiet_andAreNoLongerPolled() {
        List<EventfdTestCompletionQueue> idle = quietCapable(3);
        EventfdTestCompletionQueue rounds = new EventfdTestCompletionQueue("rounds", true);
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-idle", WaitStrategy.BUSY_POLL, 32, null))) {
            registerIdle(loop, idle, rounds);
            awaitQuiet(loop, idle);
            long[] before = snapshot(loop, rounds.polls::get, idle.get(0).polls::get, idle.get(1).polls::get,
                    idle.get(2).polls::get, () -> loop.stats().quietSkips());
            long[] after = afterRounds(loop, rounds, idle.get(0).polls::get, idle.get(1).polls::get,
                    idle.get(2).polls::get, () -> loop.stats().quietSkips());
            for (int i = 0; i < idle.size(); i++) {
                assertEquals(before[i + 1], after[i + 1], idle.get(i) + " polled while quiet");
                // Quiet after QUIET_AFTER_EMPTY_POLLS empty polls: one fi_trywait, and no more
                // while nothing touches it (the double's answer never ages unless told to).
                assertEquals(1, idle.get(i).nativeAsks.get(), idle.get(i) + " asked again");
            }
            assertEquals(3 * (after[0] - before[0]), after[4] - before[4], "LoopStats.quietSkips: three polls saved per round");
        } finally {
            closeAll(idle, rounds);
        }
    }

    @Test
    void quietQueue_whoseFdSignals_isDrained_andTurnsQuietAgainAfterItsEmptyPolls() {
        List<EventfdTestCompletionQueue> qs = quietCapable(2);
        EventfdTestCompletionQueue q = qs.get(0);
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-signal", WaitStrategy.BUSY_POLL, 32, null))) {
            List<Long> seen = new CopyOnWriteArrayList<>();
            loop.register(q, (Completion c) -> seen.add(c.context()));
            loop.register(qs.get(1), (Completion c) -> { });
            awaitQuiet(loop, qs);
            long asks = q.nativeAsks.get();
            for (long ctx = 1; ctx <= 50; ctx++) {
                // Both quiet between two rounds: the round leaves both and asks epoll.
                awaitQuiet(loop, qs);
                q.add(ctx); // signals the eventfd, as a completion signals a libfabric wait fd
                long want = ctx;
                Await.until(() -> seen.size() == want, "completion " + want + " of a quiet queue");
                Await.until(q::quiet, "the queue quiet again after " + want);
            }
            assertEquals(LongStream.rangeClosed(1, 50).boxed().toList(), seen);
            assertTrue(q.nativeAsks.get() - asks >= 50, "each delivery made the queue polled until it was asked again");
            assertEquals(0, q.acknowledged.get(), "busy rounds do not acknowledge");
        } finally {
            closeAll(qs);
        }
    }

    @Test
    void aQuietQueueWhoseAnswerAged_isAskedAgainWithoutBeingPolled_andPolledWhenTheAnswerIsNotYet() {
        List<EventfdTestCompletionQueue> qs = quietCapable(2);
        EventfdTestCompletionQueue q = qs.get(0);
        EventfdTestCompletionQueue rounds = new EventfdTestCompletionQueue("rounds", true);
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-aged", WaitStrategy.BUSY_POLL, 32, null))) {
            registerIdle(loop, qs, rounds);
            awaitQuiet(loop, qs);
            long polls = q.polls.get();
            long asks = q.nativeAsks.get();
            for (int i = 1; i <= 5; i++) {
                q.age();
                long want = asks + i;
                Await.until(() -> q.nativeAsks.get() >= want, "aged answer " + i + " renewed");
            }
            afterRounds(loop, rounds);
            assertEquals(asks + 5, q.nativeAsks.get(), "one fi_trywait per aged answer");
            assertEquals(polls, q.polls.get(), "renewing an aged answer polls nothing");
            // An aged answer renewed as "not yet" (fi_trywait's -FI_EAGAIN) has the queue polled.
            q.sleepAllowed(false);
            q.age();
            Await.until(() -> q.polls.get() > polls, "the queue polled after its renewed answer said not yet");
        } finally {
            closeAll(qs, rounds);
        }
    }

    @Test
    void aSingleQuietQueue_isPolledAfterAll_asItsPollCostsWhatTheAskWould() {
        // A connection with a separate receive queue: the send queue busy (never quiet here),
        // the receive queue idle. Leaving the idle one to epoll would cost what its poll costs.
        List<EventfdTestCompletionQueue> qs = quietCapable(2);
        qs.get(0).sleepAllowed(false);
        EventfdTestCompletionQueue idle = qs.get(1);
        EventfdTestCompletionQueue rounds = new EventfdTestCompletionQueue("rounds", true);
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-single", WaitStrategy.BUSY_POLL, 32, null))) {
            registerIdle(loop, qs, rounds);
            Await.until(() -> idle.nativeAsks.get() > 0, "the idle queue asked whether it may be slept on");
            long[] before = snapshot(loop, rounds.polls::get, idle.polls::get);
            long[] after = afterRounds(loop, rounds, idle.polls::get);
            assertEquals(after[0] - before[0], after[1] - before[1], "the one quiet queue polled in every round");
        } finally {
            closeAll(qs, rounds);
        }
    }

    @Test
    void aLoneQueueThatCanBeQuiet_isPolledEveryRound_andNeverAsked() {
        EventfdTestCompletionQueue lone = quietCapable(1).get(0);
        EventfdTestCompletionQueue rounds = new EventfdTestCompletionQueue("rounds", true);
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-lone", WaitStrategy.BUSY_POLL, 32, null))) {
            loop.register(lone, (Completion c) -> { });
            loop.register(rounds, (Completion c) -> { });
            long[] before = snapshot(loop, rounds.polls::get, lone.polls::get);
            long[] after = afterRounds(loop, rounds, lone.polls::get);
            assertEquals(after[0] - before[0], after[1] - before[1], "the lone queue polled in every round");
            assertEquals(0, lone.sleepAsks.get(), "a busy loop with one such queue asks it nothing");
        } finally {
            closeAll(List.of(lone), rounds);
        }
    }

    @Test
    void anIdleQueueBesideABusyOne_isPolledEveryRound_andNeverAsked() {
        // A connection with a separate receive queue, its send queue always completing: the idle
        // receive queue could only ever be the one quiet queue, which a round polls anyway, so
        // asking it (a fi_trywait per tick on tcp) would buy nothing.
        List<EventfdTestCompletionQueue> qs = quietCapable(2);
        EventfdTestCompletionQueue busy = qs.get(0);
        EventfdTestCompletionQueue idle = qs.get(1);
        busy.completeOnEveryPoll(); // never found empty
        EventfdTestCompletionQueue rounds = new EventfdTestCompletionQueue("rounds", true);
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-beside-busy", WaitStrategy.BUSY_POLL, 32, null))) {
            registerIdle(loop, qs, rounds);
            long[] before = snapshot(loop, rounds.polls::get, idle.polls::get);
            long[] after = afterRounds(loop, rounds, idle.polls::get);
            afterRounds(loop, rounds); // many quiet ticks
            assertEquals(after[0] - before[0], after[1] - before[1], "the idle queue polled in every round");
            assertEquals(0, idle.sleepAsks.get(), "the idle queue asked with no other that could turn quiet");
            assertEquals(0, busy.sleepAsks.get(), "the busy queue asked");
            assertEquals(0, loop.stats().quietSkips(), "polls skipped");
        } finally {
            closeAll(qs, rounds);
        }
    }

    @Test
    void costlyQueuesThatCannotBeQuiet_areNeverAsked_andPolledEveryRound() {
        // canBeQuiet() false (the default): a transport that keeps no sleep answer, or a wrapper
        // such as the test kit's faulty queue, whose prepareToSleep may wait for a held completion.
        List<EventfdTestCompletionQueue> qs = List.of(new EventfdTestCompletionQueue("plain-0", false),
                new EventfdTestCompletionQueue("plain-1", false));
        EventfdTestCompletionQueue rounds = new EventfdTestCompletionQueue("rounds", true);
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-never", WaitStrategy.BUSY_POLL, 32, null))) {
            registerIdle(loop, qs, rounds);
            long[] before = snapshot(loop, rounds.polls::get, qs.get(0).polls::get, qs.get(1).polls::get);
            long[] after = afterRounds(loop, rounds, qs.get(0).polls::get, qs.get(1).polls::get);
            for (int i = 0; i < qs.size(); i++) {
                assertEquals(after[0] - before[0], after[i + 1] - before[i + 1], qs.get(i) + " polled in every round");
                assertEquals(0, qs.get(i).sleepAsks.get(), qs.get(i) + " asked outside the sleep path");
            }
        } finally {
            closeAll(qs, rounds);
        }
    }

    @Test
    void aQueueThatSaysNotYet_staysPolled_andIsAskedAgainOnEachTickOnly() {
        List<EventfdTestCompletionQueue> qs = quietCapable(2);
        EventfdTestCompletionQueue busy = qs.get(0);
        busy.sleepAllowed(false); // fi_trywait's -FI_EAGAIN: read the queue first
        EventfdTestCompletionQueue rounds = new EventfdTestCompletionQueue("rounds", true);
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-notyet", WaitStrategy.BUSY_POLL, 32, null))) {
            registerIdle(loop, qs, rounds);
            Await.until(() -> busy.sleepAsks.get() > 0, "the idle queue asked whether it may be slept on");
            long t0 = System.nanoTime();
            long[] before = snapshot(loop, rounds.polls::get, busy.polls::get, busy.sleepAsks::get);
            long[] after = afterRounds(loop, rounds, busy.polls::get, busy.sleepAsks::get);
            long elapsed = System.nanoTime() - t0;
            long asks = after[2] - before[2];
            assertEquals(after[0] - before[0], after[1] - before[1], "a queue that is not quiet is polled in every round");
            long ticks = elapsed / EventLoop.QUIET_TICK_NANOS + 2;
            assertTrue(asks >= 1 && asks <= ticks, asks + " asks in " + elapsed / 1000 + " µs: at most one per tick (" + ticks + ")");
        } finally {
            closeAll(qs, rounds);
        }
    }

    @Test
    void idleQueuesThatWentIdleInDifferentRounds_turnQuietTogether_andAgainAfterOneOfThemDelivered() {
        // A busy queue registered first, then two idle ones, one by one: their empty polls start
        // in different rounds, and a round skips only when it leaves two or more quiet queues.
        EventfdTestCompletionQueue busy = quietCapable(1).get(0);
        busy.sleepAllowed(false);
        EventfdTestCompletionQueue rounds = new EventfdTestCompletionQueue("rounds", true);
        List<EventfdTestCompletionQueue> idle = quietCapable(2);
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-sync", WaitStrategy.BUSY_POLL, 32, null))) {
            loop.register(busy, (Completion c) -> { });
            loop.register(rounds, (Completion c) -> { });
            Await.roundTrip(loop);
            loop.register(idle.get(0), (Completion c) -> { });
            afterRounds(loop, rounds);
            loop.register(idle.get(1), (Completion c) -> { });
            for (int pass = 0; pass < 2; pass++) {
                awaitQuiet(loop, idle);
                long[] before = snapshot(loop, rounds.polls::get, idle.get(0).polls::get, idle.get(1).polls::get);
                long[] after = afterRounds(loop, rounds, idle.get(0).polls::get, idle.get(1).polls::get);
                assertEquals(before[1], after[1], idle.get(0) + " polled while quiet (pass " + pass + ")");
                assertEquals(before[2], after[2], idle.get(1) + " polled while quiet (pass " + pass + ")");
                if (pass == 0) {
                    idle.get(0).add(7); // delivered through the round's epoll_wait; the pair must regroup
                    Await.until(() -> idle.get(0).polls.get() > before[1], "the completion polled");
                }
            }
        } finally {
            closeAll(idle, busy, rounds);
        }
    }

    @Test
    void queuesThatCanBeQuiet_countedOutWhenClosed_leaveTheLastOnePolledAndUnasked() {
        List<EventfdTestCompletionQueue> qs = quietCapable(3);
        EventfdTestCompletionQueue rounds = new EventfdTestCompletionQueue("rounds", true);
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-count", WaitStrategy.BUSY_POLL, 32, null))) {
            List<Registration> regs = new ArrayList<>();
            qs.forEach(q -> regs.add(loop.register(q, (Completion c) -> { })));
            loop.register(rounds, (Completion c) -> { });
            awaitQuiet(loop, qs);
            regs.get(0).close();
            regs.get(1).close();
            EventfdTestCompletionQueue last = qs.get(2);
            afterRounds(loop, rounds); // the last one's answer is not renewed any more: polled, it is read
            long asks = last.sleepAsks.get();
            long[] before = snapshot(loop, rounds.polls::get, last.polls::get);
            long[] after = afterRounds(loop, rounds, last.polls::get);
            assertEquals(after[0] - before[0], after[1] - before[1], "the one queue left polled in every round");
            assertEquals(asks, last.sleepAsks.get(), "a loop with one such queue asks it nothing");
        } finally {
            closeAll(qs, rounds);
        }
    }

    @Test
    void aQueueWhoseQuietOrAskThrows_isFailedOnce_andNeverTouchedAgain_whileTheOthersStayQuiet() {
        List<EventfdTestCompletionQueue> qs = quietCapable(4);
        EventfdTestCompletionQueue rounds = new EventfdTestCompletionQueue("rounds", true);
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-fail", WaitStrategy.BUSY_POLL, 32, null))) {
            AtomicLong[] hooks = {new AtomicLong(), new AtomicLong(), new AtomicLong(), new AtomicLong()};
            for (int i = 0; i < qs.size(); i++) {
                AtomicLong hook = hooks[i];
                loop.register(qs.get(i), (Completion c) -> { }, hook::incrementAndGet);
            }
            loop.register(rounds, (Completion c) -> { });
            awaitQuiet(loop, qs);
            EventfdTestCompletionQueue badQuiet = qs.get(0);
            EventfdTestCompletionQueue badAsk = qs.get(1);
            badQuiet.failQuiet(new IllegalStateException("test: quiet() fails"));
            badAsk.failAsks(new IllegalStateException("test: prepareToSleep() fails")); // on the next tick
            Await.until(() -> hooks[0].get() == 1 && hooks[1].get() == 1, "both failed queues let go of");
            long[] before = snapshot(loop, badQuiet.polls::get, badQuiet.sleepAsks::get, badAsk.polls::get,
                    badAsk.sleepAsks::get, qs.get(2).polls::get, qs.get(3).polls::get);
            long[] after = afterRounds(loop, rounds, badQuiet.polls::get, badQuiet.sleepAsks::get, badAsk.polls::get,
                    badAsk.sleepAsks::get, qs.get(2).polls::get, qs.get(3).polls::get);
            for (int i = 0; i < 4; i++) {
                assertEquals(before[i], after[i + 1], "a failed queue touched again (counter " + i + ")");
            }
            assertEquals(before[4], after[5], qs.get(2) + " polled: the two left are quiet and skipped");
            assertEquals(before[5], after[6], qs.get(3) + " polled: the two left are quiet and skipped");
            assertEquals(1, hooks[0].get(), "hook of the queue whose quiet() threw");
            assertEquals(1, hooks[1].get(), "hook of the queue whose prepareToSleep() threw");
            assertEquals(0, hooks[2].get() + hooks[3].get(), "the healthy queues' hooks");
        } finally {
            closeAll(qs, rounds);
        }
    }

    @Test
    void aSourceThatStaysReadable_besideQuietQueues_isHandledOncePerCheckOfTheOtherSources_notPerRound() {
        List<EventfdTestCompletionQueue> qs = quietCapable(2);
        EventfdTestSource stuck = new EventfdTestSource(); // readable for good; its ask says yes
        EventfdTestCompletionQueue rounds = new EventfdTestCompletionQueue("rounds", true);
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-due", WaitStrategy.BUSY_POLL, 32, null))) {
            AtomicLong handled = new AtomicLong();
            registerIdle(loop, qs, rounds);
            loop.register(stuck, handled::incrementAndGet);
            awaitQuiet(loop, qs);
            stuck.signal();
            Await.until(() -> handled.get() > 0, "the readable source handled");
            long t0 = System.nanoTime();
            long[] before = snapshot(loop, rounds.polls::get, handled::get);
            long[] after = afterRounds(loop, rounds, handled::get);
            long elapsed = System.nanoTime() - t0;
            long times = after[1] - before[1];
            long checks = elapsed / EventLoop.OTHERS_CHECK_INTERVAL_NANOS + 2;
            assertTrue(times <= checks, times + " handler runs in " + (after[0] - before[0]) + " rounds and "
                    + elapsed / 1000 + " µs: more than one per " + EventLoop.OTHERS_CHECK_INTERVAL_NANOS / 1000 + " µs");
        } finally {
            stuck.close();
            closeAll(qs, rounds);
        }
    }

    @Test
    void readableSourceInABusyLoop_isAskedBeforeItsHandler_soASignalThatOutlivesTheReadIsHandledOnce() {
        // Two idle queues that can be quiet make every round ask epoll, so a source whose fd
        // stayed readable would have its handler run at every ask of the other sources.
        List<EventfdTestCompletionQueue> qs = quietCapable(2);
        EventfdTestSource events = new EventfdTestSource();
        events.resetOnAsk(); // a libfabric EQ: readable until fi_trywait resets its signal
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-other", WaitStrategy.BUSY_POLL, 32, null))) {
            AtomicLong handled = new AtomicLong();
            AtomicBoolean handlerBeforeAsk = new AtomicBoolean();
            qs.forEach(q -> loop.register(q, (Completion c) -> { }));
            loop.register(events, () -> { // reads nothing: the fd is not consumed
                if (events.signalled()) {
                    handlerBeforeAsk.set(true); // the ask that resets the signal did not come first
                }
                handled.incrementAndGet();
            });
            awaitQuiet(loop, qs);
            for (int i = 1; i <= 3; i++) {
                events.signal();
                long want = i;
                Await.until(() -> handled.get() >= want, "event " + want + " handled");
                // Long enough for several asks of the other sources (every 50 µs).
                long until = System.nanoTime() + 2 * EventLoop.OTHERS_CHECK_INTERVAL_NANOS + 1_000_000;
                Await.until(() -> System.nanoTime() - until > 0, "a few asks of the other sources");
                assertEquals(want, handled.get(), "a signal the handler did not consume was handled again");
            }
            assertFalse(handlerBeforeAsk.get(), "a handler ran without a prepareToSleep before it");
        } finally {
            events.close();
            closeAll(qs);
        }
    }

    @Test
    void aHandlerThatLeavesEventsUnread_isRunAgainWhileTheSourceSaysNotYet() {
        // The ask before the handler resets the fd's signal, so events a handler leaves would
        // not make the fd readable again: the next rounds ask again and run it again.
        List<EventfdTestCompletionQueue> qs = quietCapable(2);
        EventfdTestSource events = new EventfdTestSource();
        events.resetOnAsk();
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-leftover", WaitStrategy.BUSY_POLL, 32, null))) {
            AtomicLong taken = new AtomicLong();
            qs.forEach(q -> loop.register(q, (Completion c) -> { }));
            loop.register(events, () -> {
                if (events.takeOne()) { // one event per call, however many are there
                    taken.incrementAndGet();
                }
            });
            awaitQuiet(loop, qs);
            events.post(5);
            Await.until(() -> taken.get() == 5, "five events taken one per handler call");
        } finally {
            events.close();
            closeAll(qs);
        }
    }

    private static List<EventfdTestCompletionQueue> quietCapable(int n) {
        List<EventfdTestCompletionQueue> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("quiet-capable-" + i, false);
            q.keepQuietAnswers();
            out.add(q);
        }
        return out;
    }

    /** Registers the queues, and last the cheap queue that counts the rounds, with sinks that ignore what comes. */
    private static void registerIdle(EventLoop loop, List<EventfdTestCompletionQueue> qs, EventfdTestCompletionQueue rounds) {
        qs.forEach(q -> loop.register(q, (Completion c) -> { }));
        loop.register(rounds, (Completion c) -> { });
    }

    /** Waits until the queues are all quiet between two rounds (read in a loop task). */
    private static void awaitQuiet(EventLoop loop, List<EventfdTestCompletionQueue> qs) {
        Await.until(() -> snapshot(loop, () -> qs.stream().allMatch(EventfdTestCompletionQueue::quiet) ? 1 : 0)[0] == 1,
                qs + " quiet together");
    }

    /** {@return the counters, read together in a loop task: between two rounds} */
    private static long[] snapshot(EventLoop loop, LongSupplier... counters) {
        CompletableFuture<long[]> f = new CompletableFuture<>();
        loop.execute(() -> {
            long[] v = new long[counters.length];
            for (int i = 0; i < v.length; i++) {
                v[i] = counters[i].getAsLong();
            }
            f.complete(v);
        });
        return Await.done(f, "a snapshot on the loop thread");
    }

    /** Lets the loop run {@link #ROUNDS} more rounds; {@return the rounds and the counters, read together after} */
    private static long[] afterRounds(EventLoop loop, EventfdTestCompletionQueue rounds, LongSupplier... counters) {
        long start = rounds.polls.get();
        Await.until(() -> rounds.polls.get() - start >= ROUNDS, ROUNDS + " busy rounds");
        LongSupplier[] all = new LongSupplier[counters.length + 1];
        all[0] = rounds.polls::get;
        System.arraycopy(counters, 0, all, 1, counters.length);
        return snapshot(loop, all);
    }

    private static void closeAll(List<EventfdTestCompletionQueue> qs, EventfdTestCompletionQueue... more) {
        qs.forEach(EventfdTestCompletionQueue::close);
        for (EventfdTestCompletionQueue q : more) {
            q.close();
        }
    }
}
