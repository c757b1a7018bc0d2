package io.cqflux.spring.boot;

import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import reactor.core.publisher.Mono;

/**
 * Spring {@link DataBuffer} forms of cqflux's write, durable write and read, for WebFlux code that
 * holds request and response bodies as data buffers. A bean of the starter, or of the application
 * ({@link #CqfluxDataBuffers()}).
 *
 * <p><b>Copy or zero-copy.</b> RDMA moves bytes only from and to registered memory. A data buffer
 * from WebFlux (Netty's pooled buffers, or heap buffers) is not registered, so its readable bytes
 * are <b>copied</b> into a buffer of the {@link io.cqflux.reactor.Cqflux}'s registered pool
 * ({@link io.cqflux.reactor.Cqflux#buffers()}, sized by {@code cqflux.buffer-pool.*}) through the
 * {@code ByteBuffer} forms of {@link RdmaConnection}, and the operation posts from there; reads come
 * back through the pool into a new data buffer. Only a data buffer whose readable bytes are one
 * contiguous direct {@link ByteBuffer} lying inside a region given to {@link #zeroCopy(Region)} is
 * posted in place, without a copy. Nothing else is: a direct buffer elsewhere is still copied.
 *
 * <p><b>Ownership and cancellation.</b> These methods never release the caller's data buffer.
 * On the copy path its readable bytes are copied to the heap when the returned Mono is subscribed
 * (a data buffer's {@code ByteBuffer} views may be used only while it iterates them), and from
 * there into a pooled buffer once one is granted, which may be after a wait (all leased); on the
 * zero-copy path the NIC reads them in place. So keep the data buffer unreleased and unchanged
 * until the returned Mono has terminated or been cancelled, then release it as usual. The pooled buffer returns to the pool when the operation
 * terminates at the NIC, never when a subscriber cancels (the NIC may still read it): a client that
 * goes away mid-request cannot make the pool hand out a buffer that is still being read. With the
 * zero-copy path the NIC reads the caller's memory: after a cancellation, don't reuse that part
 * of the region before {@link Region#inFlight()} is back to zero.
 *
 * <p><b>Thread safety.</b> Thread-safe.
 */
public final class CqfluxDataBuffers {
    private final Staging staging;
    private final List<Region> zeroCopy = new CopyOnWriteArrayList<>();

    /** Data-buffer operations staging through each connection's {@code Cqflux} buffer pool, as the starter's bean does. */
    public CqfluxDataBuffers() {
        this(new PoolStaging());
    }

    CqfluxDataBuffers(Staging staging) {
        this.staging = Objects.requireNonNull(staging, "staging");
    }

    /**
     * Declares a registered region whose memory the application wraps as data buffers (e.g. with
     * {@code DefaultDataBufferFactory.wrap(region.segment().asSlice(...).asByteBuffer())}), so that
     * writes from them are posted in place.
     *
     * @param region a region of the same {@link io.cqflux.reactor.Cqflux}, with {@code WRITE_SRC}
     */
    public void zeroCopy(Region region) {
        zeroCopy.add(Objects.requireNonNull(region, "region"));
    }

    /**
     * Writes the readable bytes of {@code data} to the peer's memory (delivery, not durability).
     *
     * @param connection the connection
     * @param dst the peer's region ({@code WRITE_DST})
     * @param dstOffset offset in {@code dst}
     * @param data the bytes, between 1 and the pool's buffer size of them (copy path)
     * @return a cold Mono; fails as the connection's write does, with an
     *     {@link IllegalArgumentException} naming both sizes when the data does not fit a pooled
     *     buffer, and with a {@link io.cqflux.core.QueueFullException} when too many wait for one
     */
    public Mono<Void> write(RdmaConnection connection, PeerRegion dst, long dstOffset, DataBuffer data) {
        return post(connection, dst, dstOffset, data, false);
    }

    /**
     * Writes the readable bytes of {@code data} durably: the Mono completes once the peer's
     * memory holds them at the flush level the region offers ({@link PeerRegion#strongestFlush()}).
     *
     * @param connection the connection
     * @param dst the peer's region ({@code WRITE_DST})
     * @param dstOffset offset in {@code dst}
     * @param data the bytes, between 1 and the pool's buffer size of them (copy path)
     * @return a cold Mono; fails as the connection's durable write does
     */
    public Mono<Void> durableWrite(RdmaConnection connection, PeerRegion dst, long dstOffset, DataBuffer data) {
        return post(connection, dst, dstOffset, data, true);
    }

    /**
     * Reads {@code length} bytes of the peer's memory into a new data buffer of {@code factory}
     * (through a pooled registered buffer: one copy).
     *
     * @param connection the connection
     * @param src the peer's region ({@code READ_SRC})
     * @param srcOffset offset in {@code src}
     * @param length bytes, between 1 and the pool's buffer size
     * @param factory where the result is allocated, e.g. the response's {@code bufferFactory()}
     * @return a cold Mono of the bytes; the subscriber owns (and releases) the data buffer
     */
    public Mono<DataBuffer> read(RdmaConnection connection, PeerRegion src, long srcOffset, int length,
                                 DataBufferFactory factory) {
        Objects.requireNonNull(factory, "factory");
        return staging.read(connection, src, srcOffset, length).map(factory::wrap);
    }

    private Mono<Void> post(RdmaConnection c, PeerRegion dst, long dstOffset, DataBuffer data, boolean durable) {
        Objects.requireNonNull(c, "connection");
        Objects.requireNonNull(data, "data");
        return Mono.defer(() -> {
            // A data buffer's ByteBuffer views are valid only while its iterator is open
            // (DataBuffer.readableByteBuffers()): decide on the zero-copy path inside it, and let
            // nothing but a copy of the bytes out of it.
            try (DataBuffer.ByteBufferIterator it = data.readableByteBuffers()) {
                ByteBuffer first = it.hasNext() ? it.next() : null;
                if (first != null && !it.hasNext() && first.isDirect()) {
                    MemorySegment seg = MemorySegment.ofBuffer(first);
                    for (Region r : zeroCopy) {
                        long at = seg.address() - r.segment().address();
                        if (r.isOpen() && at >= 0 && at + seg.byteSize() <= r.size()) {
                            // Posted from the region itself, not from the view.
                            return durable ? c.durableWrite(dst, dstOffset, r, at, seg.byteSize())
                                    : c.write(dst, dstOffset, r, at, seg.byteSize());
                        }
                    }
                }
            }
            return staging.write(c, dst, dstOffset, gather(data), durable);
        });
    }

    private static ByteBuffer gather(DataBuffer data) {
        byte[] all = new byte[data.readableByteCount()];
        data.toByteBuffer(data.readPosition(), ByteBuffer.wrap(all), 0, all.length);
        return ByteBuffer.wrap(all);
    }

    /** How the copy path reaches registered memory. */
    interface Staging {
        Mono<Void> write(RdmaConnection c, PeerRegion dst, long dstOffset, ByteBuffer data, boolean durable);

        Mono<byte[]> read(RdmaConnection c, PeerRegion src, long srcOffset, int length);
    }
}
