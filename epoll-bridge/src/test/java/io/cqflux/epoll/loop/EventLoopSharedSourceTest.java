package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.NativeCallException;
import io.cqflux.core.spi.Pollable;
import io.cqflux.core.spi.SharedSource;
import io.cqflux.epoll.WaitStrategy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Sources that share one native source (Pollable.sharedBy(), a libfabric EQ bound to many
 * endpoints): the shared fd is in epoll once, with the first member, and leaves with the last;
 * a wake-up runs the handlers of the members that got something and of no other; a member's own
 * touch runs its handler without the fd; a loop that shuts down tells every member.
 */
class EventLoopSharedSourceTest {

    private static final int MEMBERS = 50;

    @ParameterizedTest
    @ValueSource(strings = {"BLOCKING", "BUSY_POLL"})
    void aWakeUp_runsOnlyTheMembersThatGotSomething(String strategy) {
        try (TestShared shared = new TestShared();
             EventLoop loop = EventLoop.start(new LoopConfig("shared-" + strategy, strategy(strategy), 32, null))) {
            List<TestMember> members = shared.members(MEMBERS);
            members.forEach(m -> loop.register(m, m::handle)); // one fd, 50 members: no EEXIST
            Await.until(() -> members.stream().allMatch(m -> m.runs.get() >= 1), "the first run of every member");
            int[] before = members.stream().mapToInt(m -> m.runs.get()).toArray();
            for (int i = 1; i <= 100; i++) {
                shared.post(7);
                int want = i;
                Await.until(() -> members.get(7).handled.get() == want, "event " + want + " of member 7");
            }
            for (int i = 0; i < MEMBERS; i++) {
                if (i != 7) {
                    assertEquals(before[i], members.get(i).runs.get(), "runs of member " + i
                            + " while member 7 got 100 events");
                }
            }
        }
    }

    /**
     * A member may be a completion queue (libfabric endpoints sharing one CQ): it is drained when
     * the dispatch routed entries to it, in order, and never polled otherwise, not even by a
     * spinning loop (it is in no table of queues); its neighbours are not polled for its entries.
     */
    @ParameterizedTest
    @ValueSource(strings = {"BLOCKING", "BUSY_POLL"})
    void completionQueueMembers_areDrainedWhenTheDispatchRoutesToThem_andPolledNoOtherTime(String strategy) {
        try (TestShared shared = new TestShared();
             EventLoop loop = EventLoop.start(new LoopConfig("shared-cq-" + strategy, strategy(strategy), 32, null))) {
            List<TestQueue> queues = new ArrayList<>();
            List<List<Long>> got = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                TestQueue q = shared.queue();
                List<Long> into = java.util.Collections.synchronizedList(new ArrayList<>());
                queues.add(q);
                got.add(into);
                loop.register(q, c -> into.add(c.context()));
            }
            Await.until(() -> queues.stream().allMatch(q -> q.polls.get() >= 1), "the first drain of every queue");
            int[] before = queues.stream().mapToInt(q -> q.polls.get()).toArray();
            for (int i = 1; i <= 100; i++) {
                shared.postQueue(3, i);
                int want = i;
                Await.until(() -> got.get(3).size() == want, "completion " + want + " of queue 3");
            }
            List<Long> expected = new ArrayList<>();
            for (long i = 1; i <= 100; i++) {
                expected.add(i);
            }
            assertEquals(expected, got.get(3), "queue 3's completions, in order");
            for (int i = 0; i < queues.size(); i++) {
                if (i != 3) {
                    assertEquals(before[i], queues.get(i).polls.get(), "polls of queue " + i
                            + " while queue 3 got 100 completions");
                    assertEquals(List.of(), got.get(i), "completions of queue " + i);
                }
            }
        }
    }

    @Test
    void aGracefulShutdown_readsTheSharedSourceOnceMore_andDrainsItsQueueMembers() {
        try (TestShared shared = new TestShared()) {
            EventLoop loop = EventLoop.start(new LoopConfig("shared-cq-last", WaitStrategy.BLOCKING, 32, null));
            TestQueue q = shared.queue();
            ConcurrentLinkedQueue<Long> delivered = new ConcurrentLinkedQueue<>();
            loop.register(q, c -> delivered.add(c.context()));
            Await.until(() -> q.polls.get() >= 1, "the queue's first drain");
            CompletableFuture<Void> release = Await.blockLoop(loop);
            shared.queueInbox.add(new long[] {0, 41}); // in the shared source, never signalled
            shared.queueInbox.add(new long[] {0, 42});
            CompletableFuture<Void> terminated = loop.shutdownGracefully(java.time.Duration.ofSeconds(30));
            release.complete(null);
            Await.done(terminated, "graceful termination");
            assertEquals(List.of(41L, 42L), List.copyOf(delivered), "the last drain delivered what the source held");
        }
    }

    /** A dispatch that reads a bounded batch (CompletionGroup's) leaves the rest: the last drain reads again. */
    @Test
    void aGracefulShutdown_dispatchesAgainWhileADispatchRoutedSomething() {
        try (TestShared shared = new TestShared()) {
            EventLoop loop = EventLoop.start(new LoopConfig("shared-cq-last-batches", WaitStrategy.BLOCKING, 32, null));
            TestQueue q = shared.queue();
            ConcurrentLinkedQueue<Long> delivered = new ConcurrentLinkedQueue<>();
            loop.register(q, c -> delivered.add(c.context()));
            Await.until(() -> q.polls.get() >= 1, "the queue's first drain");
            CompletableFuture<Void> release = Await.blockLoop(loop);
            shared.perDispatch = 2;
            List<Long> held = new ArrayList<>();
            for (long i = 1; i <= 7; i++) {
                shared.queueInbox.add(new long[] {0, i}); // in the shared source, never signalled
                held.add(i);
            }
            CompletableFuture<Void> terminated = loop.shutdownGracefully(java.time.Duration.ofSeconds(30));
            release.complete(null);
            Await.done(terminated, "graceful termination");
            assertEquals(held, List.copyOf(delivered), "the last drain delivered all the source held, two per dispatch");
        }
    }

    /**
     * A bounded dispatch whose whole budget went to a closed member's late entries (dropped) has
     * routed nothing, yet left live entries: the last drain reads again while the source says its
     * read did not empty it, and drains the members after each read.
     */
    @Test
    void aGracefulShutdown_readsPastDispatchesThatRoutedNothing_andDrainsBetweenThem() {
        try (TestShared shared = new TestShared()) {
            EventLoop loop = EventLoop.start(new LoopConfig("shared-cq-last-dropped", WaitStrategy.BLOCKING, 32,
                    null));
            TestQueue q = shared.queue();
            ConcurrentLinkedQueue<Long> delivered = new ConcurrentLinkedQueue<>();
            loop.register(q, c -> delivered.add(c.context()));
            Await.until(() -> q.polls.get() >= 1, "the queue's first drain");
            CompletableFuture<Void> release = Await.blockLoop(loop);
            shared.perDispatch = 2;
            for (long i = 1; i <= 4; i++) {
                shared.queueInbox.add(new long[] {-1, 100 + i}); // a closed member's, never signalled
            }
            List<Long> held = new ArrayList<>();
            for (long i = 1; i <= 7; i++) {
                shared.queueInbox.add(new long[] {0, i});
                held.add(i);
            }
            CompletableFuture<Void> terminated = loop.shutdownGracefully(java.time.Duration.ofSeconds(30));
            release.complete(null);
            Await.done(terminated, "graceful termination");
            assertEquals(held, List.copyOf(delivered), "the live entries behind the dropped ones were delivered");
            assertTrue(q.mostBuffered <= 2, "the member was drained after each dispatch, held at most one"
                    + " dispatch's entries: " + q.mostBuffered);
        }
    }

    @Test
    void aMemberThatTouchesItself_runsWithoutTheSharedFd() {
        try (TestShared shared = new TestShared();
             EventLoop loop = EventLoop.start(new LoopConfig("shared-touch", WaitStrategy.BLOCKING, 32, null))) {
            List<TestMember> members = shared.members(3);
            members.forEach(m -> loop.register(m, m::handle));
            Await.until(() -> members.stream().allMatch(m -> m.runs.get() >= 1), "the first run of every member");
            int before = members.get(2).runs.get();
            loop.execute(() -> members.get(2).own()); // its own event (a CLOSED it reports itself)
            Await.until(() -> members.get(2).handled.get() == 1, "member 2's own event");
            assertTrue(members.get(2).runs.get() > before);
            assertEquals(0, members.get(0).handled.get() + members.get(1).handled.get());
        }
    }

    @Test
    void theLastMemberToLeave_takesTheSharedFdOutOfEpoll() {
        try (TestShared shared = new TestShared();
             EventLoop loop = EventLoop.start(new LoopConfig("shared-leave", WaitStrategy.BLOCKING, 32, null))) {
            List<TestMember> members = shared.members(3);
            List<Registration> regs = new ArrayList<>();
            members.forEach(m -> regs.add(loop.register(m, m::handle)));
            regs.get(0).close();
            regs.get(1).close();
            // One member left: the shared fd is still in epoll, so registering it directly fails.
            assertThrows(NativeCallException.class, () -> registerOnLoop(loop, shared.fd));
            regs.get(2).close();
            Registration direct = registerOnLoop(loop, shared.fd); // out of epoll with the last member
            direct.close();
        }
    }

    @Test
    void aLoopThatShutsDown_tellsEveryMember() {
        AtomicInteger hooks = new AtomicInteger();
        try (TestShared shared = new TestShared()) {
            EventLoop loop = EventLoop.start(new LoopConfig("shared-shutdown", WaitStrategy.BLOCKING, 32, null));
            List<TestMember> members = shared.members(5);
            members.forEach(m -> loop.register(m, m::handle, hooks::incrementAndGet));
            Await.roundTrip(loop);
            loop.close();
            assertEquals(5, hooks.get(), "shutdown hooks of the members");
        }
    }

    @Test
    void aMemberOnAnotherLoop_isRefusedNamingBothLoops() {
        try (TestShared shared = new TestShared();
             EventLoop a = EventLoop.start(new LoopConfig("shared-a", WaitStrategy.BLOCKING, 32, null));
             EventLoop b = EventLoop.start(new LoopConfig("shared-b", WaitStrategy.BLOCKING, 32, null))) {
            List<TestMember> members = shared.members(2);
            a.register(members.get(0), members.get(0)::handle);
            Await.until(() -> members.get(0).runs.get() >= 1, "member 0 registered on loop a");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> registerOnLoop(b, members.get(1)));
            assertTrue(e.getMessage().contains("shared-a") && e.getMessage().contains("shared-b"), e.getMessage());
            shared.post(0);
            Await.until(() -> members.get(0).handled.get() == 1, "member 0's event on its own loop");
            assertEquals(0, members.get(1).runs.get(), "runs of the refused member");
        }
    }

    @Test
    void aDispatchThatFailsOnce_isRetriedAndTheMembersGoOn() {
        AtomicInteger hooks = new AtomicInteger();
        try (TestShared shared = new TestShared();
             EventLoop loop = EventLoop.start(new LoopConfig("shared-retry", WaitStrategy.BLOCKING, 32, null))) {
            List<TestMember> members = shared.members(3);
            members.forEach(m -> loop.register(m, m::handle, hooks::incrementAndGet));
            Await.until(() -> members.stream().allMatch(m -> m.runs.get() >= 1), "the first run of every member");
            shared.failuresLeft.set(SharedSources.MAX_FAILURES - 1);
            shared.post(1);
            Await.until(() -> members.get(1).handled.get() == 1, "member 1's event after the failed dispatches");
            assertEquals(0, shared.failuresLeft.get(), "failed dispatches left");
            shared.failuresLeft.set(SharedSources.MAX_FAILURES - 1); // in a row again: the count restarted
            shared.post(2);
            Await.until(() -> members.get(2).handled.get() == 1, "member 2's event after the failed dispatches");
            assertEquals(0, hooks.get(), "members dropped");
        }
    }

    @Test
    void aDispatchThatKeepsFailing_dropsEveryMember() {
        AtomicInteger hooks = new AtomicInteger();
        try (TestShared shared = new TestShared();
             EventLoop loop = EventLoop.start(new LoopConfig("shared-failing", WaitStrategy.BLOCKING, 32, null))) {
            List<TestMember> members = shared.members(4);
            members.forEach(m -> loop.register(m, m::handle, hooks::incrementAndGet));
            Await.until(() -> members.stream().allMatch(m -> m.runs.get() >= 1), "the first run of every member");
            shared.failuresLeft.set(Integer.MAX_VALUE);
            shared.post(0);
            Await.until(() -> hooks.get() == 4, "the shutdown hooks of every member");
            Registration direct = registerOnLoop(loop, shared.fd); // the shared fd left epoll
            direct.close();
        }
    }

    /** Registers on the loop thread, so that epoll's refusal is thrown rather than logged. */
    private static Registration registerOnLoop(EventLoop loop, Pollable p) {
        CompletableFuture<Registration> f = new CompletableFuture<>();
        loop.execute(() -> {
            try {
                f.complete(loop.register(p, () -> { }));
            } catch (RuntimeException e) {
                f.completeExceptionally(e);
            }
        });
        try {
            return f.join();
        } catch (java.util.concurrent.CompletionException e) {
            throw (RuntimeException) e.getCause();
        }
    }

    private static WaitStrategy strategy(String name) {
        return switch (name) {
            case "BLOCKING" -> WaitStrategy.BLOCKING;
            case "BUSY_POLL" -> WaitStrategy.BUSY_POLL;
            default -> throw new IllegalArgumentException(name);
        };
    }

    /** A shared eventfd whose entries name a member by index. */
    private static final class TestShared implements SharedSource, AutoCloseable {
        final EventfdTestSource fd = new EventfdTestSource();
        final ConcurrentLinkedQueue<Integer> inbox = new ConcurrentLinkedQueue<>();
        final List<TestMember> members = new ArrayList<>();

        List<TestMember> members(int n) {
            for (int i = 0; i < n; i++) {
                members.add(new TestMember(this));
            }
            return members;
        }

        /** An entry for member {@code i}; any thread. */
        void post(int i) {
            inbox.add(i);
            fd.signal();
        }

        final List<TestQueue> queues = new ArrayList<>();
        final ConcurrentLinkedQueue<long[]> queueInbox = new ConcurrentLinkedQueue<>();
        /** Queue entries one dispatch routes at most (a bounded read, like CompletionGroup's). */
        volatile int perDispatch = Integer.MAX_VALUE;

        TestQueue queue() {
            TestQueue q = new TestQueue(this);
            queues.add(q);
            return q;
        }

        /** A completion of context {@code context} for queue member {@code i}; any thread. */
        void postQueue(int i, long context) {
            queueInbox.add(new long[] {i, context});
            fd.signal();
        }

        /** Dispatches that throw before reading anything (a failing fi_eq_read). */
        final AtomicInteger failuresLeft = new AtomicInteger();
        private final AtomicReference<Object> loop = new AtomicReference<>();

        @Override
        public Object claimLoop(Object l) {
            loop.compareAndSet(null, l);
            return loop.get();
        }

        @Override
        public void dispatch() {
            if (failuresLeft.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0) {
                throw new IllegalStateException("test: dispatch fails");
            }
            fd.consume();
            Integer i;
            while ((i = inbox.poll()) != null) {
                members.get(i).deliver();
            }
            long[] q;
            int read = 0;
            for (; read < perDispatch && (q = queueInbox.poll()) != null; read++) {
                if (q[0] >= 0) { // an entry of index -1 is a closed member's: dropped
                    queues.get((int) q[0]).deliver(q[1]);
                }
            }
            lastReadEmptied = read < perDispatch;
        }

        private volatile boolean lastReadEmptied = true;

        @Override
        public boolean lastReadEmptied() {
            return lastReadEmptied;
        }

        @Override
        public int fd() {
            return fd.fd();
        }

        @Override
        public boolean prepareToSleep() {
            return inbox.isEmpty() && queueInbox.isEmpty();
        }

        @Override
        public void close() {
            fd.close();
        }
    }

    /** A member: counts what was routed to it and what its handler took. Loop thread. */
    private static final class TestMember implements Pollable {
        final TestShared shared;
        final AtomicInteger runs = new AtomicInteger();
        final AtomicInteger handled = new AtomicInteger();
        private int queued;
        private Runnable touched;

        TestMember(TestShared shared) {
            this.shared = shared;
        }

        void deliver() {
            queued++;
            if (touched != null) {
                touched.run();
            }
        }

        void own() {
            deliver();
        }

        void handle() {
            runs.incrementAndGet();
            handled.addAndGet(queued);
            queued = 0;
        }

        @Override
        public SharedSource sharedBy() {
            return shared;
        }

        @Override
        public int fd() {
            return shared.fd();
        }

        @Override
        public boolean watchTouches(Runnable t) {
            touched = t;
            return true;
        }
    }

    /** A completion-queue member: hands over what the dispatch routed to it, counting its polls. Loop thread. */
    private static final class TestQueue implements io.cqflux.core.spi.CompletionQueue {
        final TestShared shared;
        final AtomicInteger polls = new AtomicInteger();
        private final java.util.ArrayDeque<Long> routed = new java.util.ArrayDeque<>();
        private Runnable touched;

        TestQueue(TestShared shared) {
            this.shared = shared;
        }

        /** The most entries routed to it and not yet polled at any time. */
        int mostBuffered;

        void deliver(long context) {
            routed.add(context);
            mostBuffered = Math.max(mostBuffered, routed.size());
            if (touched != null) {
                touched.run();
            }
        }

        @Override
        public int poll(java.lang.foreign.MemorySegment scratch, int max, io.cqflux.core.spi.CompletionSink sink) {
            polls.incrementAndGet();
            int n = 0;
            Long c;
            while (n < max && (c = routed.poll()) != null) {
                sink.onCompletion(io.cqflux.core.CompletionRecord.builder(c, io.cqflux.core.CompletionStatus.SUCCESS)
                        .opcode(io.cqflux.core.Opcode.WRITE).build());
                n++;
            }
            return n;
        }

        @Override
        public void acknowledge() {
            throw new AssertionError("a member is never acknowledged: the shared source is read");
        }

        @Override
        public SharedSource sharedBy() {
            return shared;
        }

        @Override
        public int fd() {
            return shared.fd();
        }

        @Override
        public boolean watchTouches(Runnable t) {
            touched = t;
            return true;
        }

        @Override
        public void close() {
        }
    }
}
