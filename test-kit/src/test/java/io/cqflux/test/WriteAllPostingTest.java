package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.epoll.LoopStats;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.WriteRequest;
import io.cqflux.reactor.WriteResult;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

/**
 * Where writeAll posts from: requests that upstream emits on another thread wait in their slots
 * and one loop task posts them all (a hand-over per burst), rather than one hand-over per write.
 */
class WriteAllPostingTest {
    static final Duration T = Duration.ofSeconds(10);

    private static long tasks(LoopbackPeer peer) {
        return peer.client().loopStats().stream().mapToLong(LoopStats::tasks).sum();
    }

    @Test
    void writeAll_requestsEmittedOffTheLoop_arePostedByOneLoopTaskPerBurst_inOrder_withEveryByteAtThePeer()
            throws Exception {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            // writeAll's window is half the send credits: N requests fit in it at once.
            int N = Math.min(64, conn.sendCredits() / 2);
            assertTrue(N >= 16, "window " + N);
            for (int i = 0; i < N; i++) {
                local.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 8L * i, 1000L + i);
            }
            // Hold the client's loop inside a completion, so that every request below is emitted
            // (on this thread) while the loop cannot run a task: a hand-over per write would queue
            // N tasks, a hand-over per burst queues one.
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CompletableFuture<Void> holder = conn.write(remote, 8L * N, local, 0, 8)
                    .doOnSuccess(v -> {
                        held.countDown();
                        await(release);
                    }).toFuture();
            assertTrue(held.await(T.toMillis(), TimeUnit.MILLISECONDS), "the loop is held");
            long before = tasks(peer);
            CompletableFuture<List<WriteResult>> results;
            try {
                // Flux.range emits every request on this thread, inside subscribe (all fit the window).
                results = conn.writeAll(Flux.range(0, N).map(i -> new WriteRequest(remote, 8L * i, local, 8L * i, 8,
                        false))).collectList().toFuture();
            } finally {
                release.countDown();
            }
            holder.get(T.toMillis(), TimeUnit.MILLISECONDS);
            List<WriteResult> got = results.get(T.toMillis(), TimeUnit.MILLISECONDS);
            long handOvers = tasks(peer) - before;

            assertEquals(N, got.size());
            for (int i = 0; i < N; i++) {
                assertEquals(i, got.get(i).sequence(), "results in request order");
                assertEquals(8L * i, got.get(i).request().remoteOffset());
            }
            long[] atPeer = new long[N];
            long[] sent = new long[N];
            for (int i = 0; i < N; i++) {
                atPeer[i] = peer.exposed().segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * i);
                sent[i] = 1000L + i;
            }
            assertArrayEquals(sent, atPeer, "every write's bytes at the peer");
            // One post task, plus whatever periodic work (the connection's deadline check, at
            // most every 10 ms) ran meanwhile; one hand-over per write would be N or more.
            assertTrue(handOvers >= 1 && handOvers < 8, "loop tasks while posting " + N + " writes: " + handOvers);
        }
    }

    @Test
    void writeAll_cancelledWhileItsRequestsWaitToBePosted_postsNone_andDiscardsEachOnce() throws Exception {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region local = peer.local();
            int n = Math.min(64, conn.sendCredits() / 2);
            for (int i = 0; i < n; i++) {
                local.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 8L * i, 7000L + i);
            }
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CompletableFuture<Void> holder = conn.write(remote, 8L * n, local, 0, 8)
                    .doOnSuccess(v -> {
                        held.countDown();
                        await(release);
                    }).toFuture();
            assertTrue(held.await(T.toMillis(), TimeUnit.MILLISECONDS), "the loop is held");
            List<WriteRequest> discarded = new CopyOnWriteArrayList<>();
            Disposable d;
            try {
                // Every request is emitted here and waits for the held loop; the cancel comes first.
                d = conn.writeAll(Flux.range(0, n).map(i -> new WriteRequest(remote, 8L * i, local, 8L * i, 8, false)))
                        .doOnDiscard(WriteRequest.class, discarded::add)
                        .subscribe();
                d.dispose();
            } finally {
                release.countDown();
            }
            holder.get(T.toMillis(), TimeUnit.MILLISECONDS);
            // The loop's post task (if it runs) finds nothing to post; a round trip through the
            // connection shows the loop got past it.
            conn.write(remote, 8L * (n + 1), local, 0, 8).block(T);
            assertEquals(n, discarded.size(), "each request taken, never posted, discarded");
            assertEquals(n, discarded.stream().distinct().count(), "each once");
            for (int i = 0; i < n; i++) {
                assertEquals(0L, peer.exposed().segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * i),
                        "nothing of request " + i + " reached the peer");
            }
        }
    }

    private static void await(CountDownLatch l) {
        try {
            if (!l.await(T.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("never released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
