package io.cqflux.spring.boot;

import io.cqflux.core.QueueFullException;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import reactor.core.publisher.Mono;

/**
 * Registered staging slots, one region each, until the library's buffer pool is wired in. A slot
 * comes back when its operation's Mono terminates; a cancelled one is parked until its region has
 * nothing in flight (the NIC finished with it), never reused before.
 */
final class SlotStaging implements CqfluxDataBuffers.Staging {
    private final Cqflux cqflux;
    private final int count;
    private final int size;
    private final Queue<Region> free = new ConcurrentLinkedQueue<>();
    private final Queue<Region> parked = new ConcurrentLinkedQueue<>();
    private volatile boolean made;

    SlotStaging(Cqflux cqflux, int count, int size) {
        this.cqflux = cqflux;
        this.count = count;
        this.size = size;
    }

    private synchronized void make() {
        if (made) {
            return;
        }
        // Arena.global(): the regions' memory lives as long as the JVM; Cqflux deregisters them.
        Arena arena = Arena.global();
        for (int i = 0; i < count; i++) {
            free.add(cqflux.register(arena.allocate(size, 64), RegionAccess.WRITE_SRC, RegionAccess.READ_DST));
        }
        made = true;
    }

    private Region take() {
        if (!made) {
            make();
        }
        Region r = free.poll();
        if (r == null) {
            for (int i = parked.size(); i > 0; i--) {
                Region p = parked.poll();
                if (p == null) {
                    break;
                }
                if (p.inFlight() == 0) {
                    return p;
                }
                parked.add(p);
            }
            throw new QueueFullException("all " + count + " staging buffers of " + size + " B are in use", count);
        }
        return r;
    }

    private <T> Mono<T> with(int length, java.util.function.Function<Region, Mono<T>> op) {
        if (length < 1 || length > size) {
            return Mono.error(new IllegalArgumentException("length " + length + " is outside [1, " + size
                    + "] (cqflux.buffer-pool.buffer-size)"));
        }
        return Mono.defer(() -> {
            Region r = take();
            return op.apply(r)
                    .doOnSuccess(v -> free.add(r))
                    .doOnError(e -> free.add(r))
                    .doOnCancel(() -> parked.add(r));
        });
    }

    @Override
    public Mono<Void> write(RdmaConnection c, PeerRegion dst, long dstOffset, ByteBuffer data, boolean durable) {
        int n = data.remaining();
        return with(n, r -> {
            MemorySegment.copy(MemorySegment.ofBuffer(data), 0, r.segment(), 0, n);
            return durable ? c.durableWrite(dst, dstOffset, r, 0, n) : c.write(dst, dstOffset, r, 0, n);
        });
    }

    @Override
    public Mono<byte[]> read(RdmaConnection c, PeerRegion src, long srcOffset, int length) {
        return this.<byte[]>with(length, r -> c.read(r, 0, src, srcOffset, length)
                .then(Mono.fromSupplier(() -> r.segment().asSlice(0, length).toArray(ValueLayout.JAVA_BYTE))));
    }
}
