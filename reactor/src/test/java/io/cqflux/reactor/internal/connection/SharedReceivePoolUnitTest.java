package io.cqflux.reactor.internal.connection;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.Transport;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The shared pool's own bookkeeping, on a stand-in transport whose registrations are plain memory. */
class SharedReceivePoolUnitTest {

    /** Registrations the stand-in transport made, to see them closed. */
    private final List<StubRegion> registered = new ArrayList<>();

    private final class StubRegion implements LocalRegion {
        private final MemorySegment memory;
        private boolean open = true;

        StubRegion(MemorySegment memory) {
            this.memory = memory;
        }

        @Override
        public MemorySegment segment() {
            return memory;
        }

        @Override
        public Set<RegionAccess> access() {
            return Set.of(RegionAccess.RECV);
        }

        @Override
        public byte[] descriptor() {
            return new byte[0];
        }

        @Override
        public byte[] rawDescriptor() {
            return new byte[0];
        }

        @Override
        public boolean isOpen() {
            return open;
        }

        @Override
        public void close() {
            open = false;
        }
    }

    /** What the stand-in transport's next registrations throw; null: they succeed. */
    private Throwable failRegistrations;

    private Transport transport() {
        return (Transport) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Transport.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("register")) {
                        if (failRegistrations != null) {
                            throw failRegistrations;
                        }
                        StubRegion r = new StubRegion((MemorySegment) args[0]);
                        registered.add(r);
                        return r;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    @Test
    void take_fromFourThreadsAtOnce_neverHandsOneBufferToTwoTakers_andEveryOneComesBack() throws Exception {
        SharedReceivePool pool = SharedReceivePool.allocate(transport(), 64, 64);
        AtomicIntegerArray held = new AtomicIntegerArray(pool.capacity());
        AtomicReference<String> wrong = new AtomicReference<>();
        int threads = 4;
        int rounds = 200_000;
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                List<ReceiveBuffer> mine = new ArrayList<>();
                for (int i = 0; i < rounds; i++) {
                    // Hold up to 20 at a time: 4 x 20 > 64, so takers also meet an empty pool.
                    ReceiveBuffer b = mine.size() < 20 ? pool.take() : null;
                    if (b != null) {
                        if (!held.compareAndSet(b.index, 0, 1)) {
                            wrong.compareAndSet(null, "buffer " + b.index + " handed to two takers");
                        }
                        mine.add(b);
                    } else if (!mine.isEmpty()) {
                        ReceiveBuffer g = mine.remove(mine.size() - 1);
                        held.set(g.index, 0);
                        pool.give(g);
                    }
                }
                for (ReceiveBuffer g : mine) {
                    held.set(g.index, 0);
                    pool.give(g);
                }
            });
            ts.add(th);
            th.start();
        }
        go.countDown();
        for (Thread th : ts) {
            th.join(60_000);
            assertFalse(th.isAlive(), "a taker is still running after 60 s");
        }
        assertNull(wrong.get());
        assertEquals(pool.capacity(), pool.free());
    }

    @Test
    void take_onAnEmptyPoolAtItsBound_returnsNull_andAWaiterIsWokenByTheNextGive() {
        SharedReceivePool pool = SharedReceivePool.allocate(transport(), 2, 64, 2);
        ReceiveBuffer a = pool.take();
        ReceiveBuffer b = pool.take();
        assertNotNull(a);
        assertNotNull(b);
        assertTrue(a.index != b.index);
        assertNull(pool.take());
        int[] woken = {0};
        pool.await(() -> woken[0]++);
        assertEquals(0, woken[0], "woken with nothing free");
        pool.give(a);
        assertEquals(1, woken[0], "not woken by the give");
        pool.give(b);
        assertEquals(1, woken[0], "woken twice for one wait");
        assertEquals(2, pool.capacity(), "grew beyond its bound");
    }

    @Test
    void await_onAnEmptyPoolBelowItsBound_growsIt_andWakesTheWaiter() {
        SharedReceivePool pool = SharedReceivePool.allocate(transport(), 8, 64, 24);
        for (int i = 0; i < 8; i++) {
            assertNotNull(pool.take());
        }
        assertNull(pool.take());
        int[] woken = {0};
        pool.await(() -> woken[0]++);
        assertEquals(1, woken[0], "a waiter on an empty pool below its bound was not woken");
        assertEquals(16, pool.capacity(), "the pool did not grow for its waiter");
        assertEquals(0, pool.waiting());
    }

    @Test
    void grow_wakesAsManyWaitersAsItAddsBuffers_notOne() {
        SharedReceivePool pool = SharedReceivePool.allocate(transport(), 8, 64, 24);
        for (int i = 0; i < 8; i++) {
            pool.take();
        }
        // Registrations fail while three connections find it empty: they wait.
        failRegistrations = new IllegalStateException("registration refused");
        int[] woken = new int[4];
        for (int i = 0; i < 4; i++) {
            int k = i;
            pool.await(() -> woken[k]++);
        }
        assertEquals(0, woken[0] + woken[1] + woken[2] + woken[3], "woken with nothing free");
        assertEquals(4, pool.failedGrowths(), "each waiter's request for a chunk failed and was counted");
        assertEquals(4, pool.waiting());
        failRegistrations = null;
        pool.ensureRoom(); // the server's next accept: one chunk of 8, four waiters
        assertEquals(16, pool.capacity());
        assertEquals(List.of(1, 1, 1, 1), List.of(woken[0], woken[1], woken[2], woken[3]),
                "every waiter is woken by a chunk with room for all of them");
        assertEquals(0, pool.waiting());
    }

    /**
     * Connections on several loops: a chunk's wake-ups all go to connections that each take one
     * buffer, all of them before any looks whether buffers are left. The one still waiting is then
     * reached through passOn's growth, not left with an empty pool and nobody to grow it.
     */
    @Test
    void passOn_afterWokenConnectionsTookTheLastBuffers_growsForTheOneStillWaiting() {
        SharedReceivePool pool = SharedReceivePool.allocate(transport(), 8, 64, 24);
        for (int i = 0; i < 8; i++) {
            pool.take();
        }
        failRegistrations = new IllegalStateException("registration refused");
        List<Integer> handedToTheirLoops = new java.util.ArrayList<>();
        for (int i = 0; i < 9; i++) {
            int k = i;
            pool.await(() -> handedToTheirLoops.add(k));
        }
        failRegistrations = null;
        pool.ensureRoom(); // one chunk of 8 for nine waiters
        assertEquals(16, pool.capacity());
        assertEquals(8, handedToTheirLoops.size(), "a chunk of 8 wakes 8");
        assertEquals(1, pool.waiting());
        for (int i = 0; i < 8; i++) {
            assertNotNull(pool.take(), "woken connection " + i + " takes its buffer");
        }
        for (int i = 0; i < 8; i++) {
            pool.passOn(); // each looks only after all took: the pool is empty
        }
        assertEquals(9, handedToTheirLoops.size(), "the ninth waiter was left with an empty pool that may grow");
        assertEquals(24, pool.capacity());
        assertEquals(0, pool.waiting());
    }

    @Test
    void passOn_rightAfterAFailedRegistration_doesNotTryAgain_untilOneSucceeds() {
        SharedReceivePool pool = SharedReceivePool.allocate(transport(), 8, 64, 24);
        for (int i = 0; i < 8; i++) {
            pool.take();
        }
        failRegistrations = new IllegalStateException("registration refused");
        pool.await(() -> { });
        assertEquals(1, pool.failedGrowths());
        pool.passOn();
        pool.passOn();
        assertEquals(1, pool.failedGrowths(), "a failing registration retried on every hand-off");
        failRegistrations = null;
        pool.ensureRoom();
        assertEquals(0, pool.waiting(), "the next successful growth woke the waiter");
    }

    @Test
    void grow_whoseMemoryCannotBeAllocated_failsTheRequestNotTheThread() {
        SharedReceivePool pool = SharedReceivePool.allocate(transport(), 8, 64);
        for (int i = 0; i < 6; i++) {
            pool.take();
        }
        failRegistrations = new OutOfMemoryError("no native memory");
        IllegalStateException e = assertThrows(IllegalStateException.class, pool::ensureRoom);
        assertTrue(e.getMessage().contains((8 * 64) + " bytes"), e.getMessage());
        assertEquals(1, pool.failedGrowths());
        assertEquals(8, pool.capacity());
        failRegistrations = null;
        pool.ensureRoom();
        assertEquals(16, pool.capacity(), "a later request grows it");
    }

    @Test
    void cancel_ofAWaitingConnection_leavesTheQueue_andIsNotWoken() {
        SharedReceivePool pool = SharedReceivePool.allocate(transport(), 2, 64, 2);
        ReceiveBuffer a = pool.take();
        pool.take();
        int[] woken = {0, 0};
        Runnable closed = () -> woken[0]++;
        pool.await(closed);
        pool.await(() -> woken[1]++);
        assertEquals(2, pool.waiting());
        pool.cancel(closed);
        assertEquals(1, pool.waiting(), "the closed connection is still queued");
        pool.give(a);
        assertEquals(0, woken[0], "a closed connection was woken");
        assertEquals(1, woken[1], "the buffer given back went to the closed connection, not the open one");
    }

    @Test
    void checkChunkBytes_beyondTheBound_failsNamingBothValuesAndTheBound() {
        int buffers = 1 << 19;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SharedReceivePool.checkChunkBytes(buffers, 4096));
        assertTrue(e.getMessage().contains(buffers + " buffers of 4096 bytes")
                && e.getMessage().contains(Long.toString(SharedReceivePool.MAX_CHUNK_BYTES)), e.getMessage());
        SharedReceivePool.checkChunkBytes(512, 4096);
    }

    @Test
    void give_ofABufferAlreadyFree_failsNamingIt() {
        SharedReceivePool pool = SharedReceivePool.allocate(transport(), 4, 64);
        ReceiveBuffer b = pool.take();
        pool.give(b);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> pool.give(b));
        assertTrue(e.getMessage().contains("buffer " + b.index), e.getMessage());
    }

    @Test
    void ensureRoom_registersAChunkWhileLessThanHalfAChunkIsFree_andBuffersNameTheirChunk() {
        SharedReceivePool pool = SharedReceivePool.allocate(transport(), 8, 64);
        assertEquals(8, pool.capacity());
        List<ReceiveBuffer> taken = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            taken.add(pool.take());
        }
        pool.ensureRoom(); // 3 free, below 4: one more chunk
        assertEquals(16, pool.capacity());
        assertEquals(2, registered.size());
        pool.ensureRoom(); // 11 free: nothing
        assertEquals(16, pool.capacity());
        for (int i = 0; i < 11; i++) {
            taken.add(pool.take());
        }
        assertNull(pool.take());
        for (ReceiveBuffer b : taken) {
            StubRegion chunk = registered.get(b.index / 8);
            assertEquals(chunk, b.region, "buffer " + b.index + "'s region");
            assertEquals((long) (b.index % 8) * 64, b.offset, "buffer " + b.index + "'s offset");
        }
    }

    @Test
    void release_byTheLastHolder_deregistersEveryChunk() {
        SharedReceivePool pool = SharedReceivePool.allocate(transport(), 2, 64);
        pool.take();
        pool.take();
        pool.ensureRoom();
        assertEquals(2, registered.size());
        pool.retain(); // a connection
        pool.release(); // the server
        assertTrue(registered.stream().allMatch(StubRegion::isOpen), "freed while a connection holds it");
        pool.release(); // the connection
        assertTrue(registered.stream().noneMatch(StubRegion::isOpen), "a chunk is still registered");
    }

    @Test
    void allocate_withAChunkOutsideItsBounds_failsNamingTheValueAndTheBound() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SharedReceivePool.allocate(transport(), 0, 64));
        assertTrue(e.getMessage().contains("0 buffers") && e.getMessage().contains("[1, "), e.getMessage());
    }
}
