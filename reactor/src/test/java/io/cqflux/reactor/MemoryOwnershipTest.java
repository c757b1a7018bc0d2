package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ResourceClosedException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * Who may touch a caller's memory, and when, through the public API on fabric/tcp: a staged
 * write's ByteBuffer of a confined arena whose copy waits for a pooled buffer, memory freed under
 * a region that is then exposed, and a {@code writeAll} started after this side's close.
 */
class MemoryOwnershipTest {

    private static final Duration T = Duration.ofSeconds(10);

    /**
     * The copy into a leased buffer is made when the lease is granted, on the thread that grants
     * it (here the one that releases the pool's only buffer), which may not read a confined
     * arena's memory: the bytes are taken at subscription instead, on the arena's own thread.
     */
    @Test
    void aConfinedByteBuffersStagedWrite_thatWaitsForAPooledBuffer_completesWithItsBytes() throws Exception {
        try (FaultRig rig = new FaultRig(b -> b, b -> b.bufferPool(1, 4096)); Arena confined = Arena.ofConfined()) {
            MemorySegment seg = confined.allocate(64);
            seg.fill((byte) 7);
            ByteBuffer bb = seg.asByteBuffer();
            BufferLease held = rig.client.buffers().acquire().block(T);
            CompletableFuture<Void> w = rig.conn.write(rig.remote(), 128, bb).toFuture();
            seg.fill((byte) 9); // after the subscription: the write carries what the buffer held then
            Thread release = new Thread(held::release);
            release.start();
            release.join();
            w.get(T.toMillis(), TimeUnit.MILLISECONDS);
            assertEquals((byte) 7, rig.serverRegion.segment().get(ValueLayout.JAVA_BYTE, 128 + 63));
            assertTrue(FaultRig.await(() -> rig.client.buffers().leased() == 0, T), "the lease came back");
        }
    }

    /** Another thread's confined memory cannot be read at subscription either: refused, naming why. */
    @Test
    void anotherThreadsConfinedByteBuffer_isRefusedAtSubscription_namingTheArena() throws Exception {
        try (FaultRig rig = new FaultRig()) {
            CompletableFuture<ByteBuffer> foreign = new CompletableFuture<>();
            CompletableFuture<Void> done = new CompletableFuture<>();
            Thread owner = new Thread(() -> {
                try (Arena confined = Arena.ofConfined()) {
                    foreign.complete(confined.allocate(64).asByteBuffer());
                    done.join();
                }
            });
            owner.start();
            try {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> rig.conn.write(rig.remote(), 0, foreign.get(T.toMillis(), TimeUnit.MILLISECONDS)).block(T));
                assertTrue(e.getMessage().contains("confined arena of another thread"), e.getMessage());
            } finally {
                done.complete(null);
                owner.join();
            }
        }
    }

    /**
     * A ByteBuffer whose arena was closed is refused at subscription, naming that, for a write and a
     * send alike; before, it failed only at the lease's copy with a bare "Already closed".
     */
    @Test
    void aByteBufferOfAClosedArena_isRefusedAtSubscription_namingIt() {
        try (FaultRig rig = new FaultRig()) {
            ByteBuffer freed;
            try (Arena shared = Arena.ofShared()) {
                freed = shared.allocate(64).asByteBuffer();
            }
            for (reactor.core.publisher.Mono<?> m : java.util.List.of(rig.conn.write(rig.remote(), 0, freed),
                    rig.conn.send(freed))) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> m.block(T));
                assertTrue(e.getMessage().contains("memory was freed"), e.getMessage());
            }
            assertEquals(0, rig.client.buffers().leased(), "no lease was taken");
        }
    }

    /**
     * A region whose memory was freed (its arena closed, against the docs' rule) would hand the
     * peer freed memory to write: a connect or bind that exposes it fails before anything is sent,
     * as its local use does; a server whose exposed region's memory was freed later refuses each
     * connect, naming that.
     */
    @Test
    void exposingARegionWhoseMemoryWasFreed_failsTheConnectAndTheBind_andAServerSaysWhy() {
        try (FaultRig rig = new FaultRig()) {
            Arena a = Arena.ofShared();
            Region freed = rig.client.register(a.allocate(4096), FaultRig.ALL);
            a.close();
            ResourceClosedException c = assertThrows(ResourceClosedException.class,
                    () -> rig.client.connect(rig.srv.address(), ConnectOptions.exposing(freed)).block(T));
            assertTrue(c.getMessage().contains("was freed"), c.getMessage());
            ResourceClosedException b = assertThrows(ResourceClosedException.class,
                    () -> rig.client.bind(new InetSocketAddress(FaultRig.LO, 0), freed).block(T));
            assertTrue(b.getMessage().contains("was freed"), b.getMessage());
            freed.close();

            Arena s = Arena.ofShared();
            Region exposed = rig.server.register(s.allocate(4096), FaultRig.ALL);
            RdmaServer srv = rig.server.bind(new InetSocketAddress(FaultRig.LO, 0), exposed).block(T);
            srv.connections().subscribe();
            s.close();
            RuntimeException refused = assertThrows(RuntimeException.class,
                    () -> rig.client.connect(srv.address()).block(T));
            assertTrue(String.valueOf(refused.getMessage()).contains("was freed"), String.valueOf(refused));
            exposed.close();
        }
    }

    /** As every operation started after this side's close: {@code ResourceClosedException}, not the end's replay. */
    @Test
    void writeAllAfterThisSidesClose_failsWithResourceClosedException() {
        try (FaultRig rig = new FaultRig()) {
            PeerRegion r = rig.remote();
            rig.conn.disposeNow(T);
            Throwable one = assertThrows(RuntimeException.class, () -> rig.conn.writeAll(
                    Flux.just(new WriteRequest(r, 0, rig.local, 0, 8, false))).blockLast(T));
            assertInstanceOf(ResourceClosedException.class, one);
            Throwable never = assertThrows(RuntimeException.class, () -> rig.conn.writeAll(Flux.never()).blockLast(T));
            assertInstanceOf(ResourceClosedException.class, never);
        }
    }
}
