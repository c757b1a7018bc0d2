package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.Completion;
import io.cqflux.epoll.WaitStrategy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * A spinning loop with two or more queues whose poll is not cheap leaves the quiet ones
 * ({@code CompletionQueue.quiet()}) to one {@code epoll_wait(0)} per round instead of polling
 * each ("Busy rounds and quiet queues" in EventLoop's design comment). The queues here are test
 * doubles that keep their sleep answers as the fabric transport keeps fi_trywait's; a cheap queue
 * registered beside them is polled in every round, so its poll count counts the rounds.
 */
class EventLoopQuietQueueTest {

    /** Rounds the loop is let run while a test watches what it polls. */
    private static final long ROUNDS = 20_000;

    @Test
    void idleCostlyQueues_turnQuiet_andAreNoLongerPolledEveryRound() {
        List<EventfdTestCompletionQueue> idle = costlyQueues(3, true);
        EventfdTestCompletionQueue rounds = new EventfdTestCompletionQueue("rounds", true);
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-idle", WaitStrategy.BUSY_POLL, 32, null))) {
            idle.forEach(q -> loop.register(q, (Completion c) -> { }));
            loop.register(rounds, (Completion c) -> { });
            for (EventfdTestCompletionQueue q : idle) {
                Await.until(() -> q.sleepAsks.get() > 0, q + " asked whether it may be slept on");
            }
            Await.roundTrip(loop); // every queue has been asked: each is quiet from here on
            long[] before = polls(idle);
            long start = rounds.polls.get();
            Await.until(() -> rounds.polls.get() - start >= ROUNDS, ROUNDS + " busy rounds");
            for (int i = 0; i < idle.size(); i++) {
                assertEquals(before[i], idle.get(i).polls.get(), idle.get(i) + " polled while quiet");
            }
            for (EventfdTestCompletionQueue q : idle) {
                assertEquals(1, q.sleepAsks.get(), q + " asked again although nothing touched it");
            }
        } finally {
            closeAll(idle, rounds);
        }
    }

    @Test
    void quietQueue_whoseFdSignals_isDrained_andTurnsQuietAgainAfterItsEmptyPolls() {
        List<EventfdTestCompletionQueue> qs = costlyQueues(2, true);
        EventfdTestCompletionQueue q = qs.get(0);
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-signal", WaitStrategy.BUSY_POLL, 32, null))) {
            List<Long> seen = new CopyOnWriteArrayList<>();
            loop.register(q, (Completion c) -> seen.add(c.context()));
            loop.register(qs.get(1), (Completion c) -> { });
            Await.until(() -> q.sleepAsks.get() > 0, "the queue asked whether it may be slept on");
            Await.roundTrip(loop);
            long asks = q.sleepAsks.get();
            for (long ctx = 1; ctx <= 100; ctx++) {
                q.add(ctx); // signals the eventfd, as a completion signals a libfabric wait fd
                long want = ctx;
                Await.until(() -> seen.size() == want, "completion " + want + " of a quiet queue");
                Await.until(() -> q.quiet(), "the queue quiet again after " + want);
            }
            assertEquals(LongStream.rangeClosed(1, 100).boxed().toList(), seen);
            assertTrue(q.sleepAsks.get() - asks >= 100, "each delivery made the queue polled until it was asked again");
            assertEquals(0, q.acknowledged.get(), "busy rounds do not acknowledge");
        } finally {
            closeAll(qs);
        }
    }

    @Test
    void aLoneCostlyQueue_isPolledEveryRound_andNeverAsked() {
        EventfdTestCompletionQueue lone = costlyQueues(1, true).get(0);
        EventfdTestCompletionQueue rounds = new EventfdTestCompletionQueue("rounds", true);
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-lone", WaitStrategy.BUSY_POLL, 32, null))) {
            loop.register(lone, (Completion c) -> { });
            loop.register(rounds, (Completion c) -> { });
            Await.roundTrip(loop);
            long start = rounds.polls.get();
            long loneStart = lone.polls.get();
            Await.until(() -> rounds.polls.get() - start >= ROUNDS, ROUNDS + " busy rounds");
            long loneDelta = lone.polls.get() - loneStart;
            assertTrue(loneDelta >= ROUNDS - 10, "the lone costly queue was polled " + loneDelta + " times in "
                    + ROUNDS + "+ rounds: an ask would cost what its poll costs");
            assertEquals(0, lone.sleepAsks.get(), "a busy loop with one costly queue asks it nothing");
        } finally {
            closeAll(List.of(lone), rounds);
        }
    }

    @Test
    void costlyQueuesThatNeverTurnQuiet_areAskedOnlyAFewTimes_andPolledEveryRound() {
        // quiet() stays false (the default): a transport that keeps no sleep answer.
        List<EventfdTestCompletionQueue> qs = costlyQueues(2, false);
        EventfdTestCompletionQueue rounds = new EventfdTestCompletionQueue("rounds", true);
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-never", WaitStrategy.BUSY_POLL, 32, null))) {
            qs.forEach(q -> loop.register(q, (Completion c) -> { }));
            loop.register(rounds, (Completion c) -> { });
            Await.roundTrip(loop);
            long start = rounds.polls.get();
            long[] before = polls(qs);
            Await.until(() -> rounds.polls.get() - start >= ROUNDS, ROUNDS + " busy rounds");
            for (int i = 0; i < qs.size(); i++) {
                EventfdTestCompletionQueue q = qs.get(i);
                assertTrue(q.polls.get() - before[i] >= ROUNDS - 10, q + " not polled every round");
                assertEquals(EventLoop.QUIET_MISSES, q.sleepAsks.get(), q + " asked after it proved it is never quiet");
            }
        } finally {
            closeAll(qs, rounds);
        }
    }

    @Test
    void aQueueThatSaysNotYet_staysPolled_andIsAskedAgainAfterAsManyEmptyPolls() {
        List<EventfdTestCompletionQueue> qs = costlyQueues(2, true);
        EventfdTestCompletionQueue busy = qs.get(0);
        busy.sleepAllowed(false); // fi_trywait's -FI_EAGAIN: read the queue first
        EventfdTestCompletionQueue rounds = new EventfdTestCompletionQueue("rounds", true);
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-notyet", WaitStrategy.BUSY_POLL, 32, null))) {
            qs.forEach(q -> loop.register(q, (Completion c) -> { }));
            loop.register(rounds, (Completion c) -> { });
            Await.roundTrip(loop);
            long start = rounds.polls.get();
            long polls0 = busy.polls.get();
            long asks0 = busy.sleepAsks.get();
            Await.until(() -> rounds.polls.get() - start >= ROUNDS, ROUNDS + " busy rounds");
            long polls = busy.polls.get() - polls0;
            long asks = busy.sleepAsks.get() - asks0;
            assertTrue(polls >= ROUNDS - 10, "a queue that is not quiet is polled every round: " + polls);
            long expected = polls / EventLoop.QUIET_AFTER_EMPTY_POLLS;
            assertTrue(Math.abs(asks - expected) <= 2, asks + " asks in " + polls + " polls, expected about " + expected);
        } finally {
            closeAll(qs, rounds);
        }
    }

    @Test
    void readableSourceInABusyLoop_isAskedBeforeItsHandler_soASignalThatOutlivesTheReadIsHandledOnce() {
        // Two costly idle queues make every round ask epoll (the quiet ones' stand-in), so a
        // source whose fd stayed readable would have its handler run in every round.
        List<EventfdTestCompletionQueue> qs = costlyQueues(2, true);
        EventfdTestSource events = new EventfdTestSource();
        events.resetOnAsk(); // a libfabric EQ: readable until fi_trywait resets its signal
        try (EventLoop loop = EventLoop.start(new LoopConfig("quiet-other", WaitStrategy.BUSY_POLL, 32, null))) {
            AtomicLong handled = new AtomicLong();
            qs.forEach(q -> loop.register(q, (Completion c) -> { }));
            loop.register(events, handled::incrementAndGet); // reads nothing: the fd is not consumed
            for (EventfdTestCompletionQueue q : qs) {
                Await.until(q::quiet, q + " quiet");
            }
            for (int i = 1; i <= 3; i++) {
                events.signal();
                long want = i;
                Await.until(() -> handled.get() >= want, "event " + want + " handled");
                // Rounds in which the same signal would have been handled again.
                Await.roundTrip(loop);
                Await.roundTrip(loop);
                assertEquals(want, handled.get(), "a signal the handler did not consume was handled again");
                assertTrue(events.sleepAsks.get() >= want, "the source was asked before its handler ran");
            }
        } finally {
            events.close();
            closeAll(qs);
        }
    }

    private static List<EventfdTestCompletionQueue> costlyQueues(int n, boolean keepsQuietAnswers) {
        List<EventfdTestCompletionQueue> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            EventfdTestCompletionQueue q = new EventfdTestCompletionQueue("costly-" + i, false);
            if (keepsQuietAnswers) {
                q.keepQuietAnswers();
            }
            out.add(q);
        }
        return out;
    }

    private static long[] polls(List<EventfdTestCompletionQueue> qs) {
        long[] out = new long[qs.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = qs.get(i).polls.get();
        }
        return out;
    }

    private static void closeAll(List<EventfdTestCompletionQueue> qs, EventfdTestCompletionQueue... more) {
        qs.forEach(EventfdTestCompletionQueue::close);
        for (EventfdTestCompletionQueue q : more) {
            q.close();
        }
    }
}
