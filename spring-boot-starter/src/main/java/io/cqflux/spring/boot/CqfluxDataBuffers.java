package io.cqflux.spring.boot;

import io.cqflux.reactor.BufferLease;
import io.cqflux.reactor.BufferPool;
import io.cqflux.reactor.Cqflux;
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
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Spring {@link DataBuffer} forms of cqflux's write, durable write and read, for WebFlux code that
 * holds request and response bodies as data buffers. A bean of the starter, or of the application
 * ({@link #CqfluxDataBuffers(Cqflux)}).
 *
 * <p><b>One copy, or none.</b> RDMA moves bytes only from and to registered memory. A data buffer
 * from WebFlux (Netty's pooled buffers, heap buffers, a composite of several) is not registered,
 * so its readable bytes are <b>copied once</b>, piece by piece, straight into a leased buffer of
 * the {@link Cqflux}'s registered pool ({@link Cqflux#buffers()}, sized by
 * {@code cqflux.buffer-pool.*}), and the operation posts from that lease; reads come back through
 * the pool into a new data buffer (one copy too). Only a data buffer whose readable bytes are one
 * contiguous direct {@link ByteBuffer} lying inside a region given to {@link #zeroCopy(Region)} is
 * posted in place, without a copy. Nothing else is: a direct buffer elsewhere is still copied.
 *
 * <p><b>Threads.</b> An operation's outcome arrives on the connection's event loop, which serves
 * every connection on it. The Monos returned here hand their result to another thread first, so
 * that what follows in a WebFlux handler (the response's mapping, its encoding, a checksum) runs
 * there and not on the cqflux loop. By default ({@link #CqfluxDataBuffers(Cqflux)}, the starter's
 * bean) that is the Netty event loop the Mono was subscribed on, when it was (WebFlux on Reactor
 * Netty subscribes a handler there, and writes that request's response there anyway: one
 * wake-up of that loop per operation), and {@code Schedulers.parallel()} otherwise. A scheduler
 * given to {@link #CqfluxDataBuffers(Cqflux, Scheduler)} is used always;
 * {@code Schedulers.immediate()} leaves the result on the cqflux loop, for code that does next to
 * nothing with it. The copy into the pooled buffer runs where the lease is granted: on the
 * subscribing thread when a buffer is free, else on the thread that gave one back (often an
 * event loop), at most one pooled buffer's worth of bytes.
 *
 * <p><b>Ownership and cancellation.</b> These methods never release the caller's data buffer. Its
 * readable bytes are copied when a pooled buffer is granted, which may be after a wait (all
 * leased); on the zero-copy path the NIC reads them in place. So keep the data buffer unreleased
 * and unchanged until the returned Mono has terminated or been cancelled, then release it as
 * usual. The pooled buffer returns to the pool when the operation terminates at the NIC, never
 * when a subscriber cancels (the NIC may still read it): a client that goes away mid-request
 * cannot make the pool hand out a buffer that is still being read. With the zero-copy path the
 * NIC reads the caller's memory: after a cancellation, don't reuse that part of the region before
 * {@link Region#inFlight()} is back to zero.
 *
 * <p><b>Thread safety.</b> Thread-safe.
 */
public final class CqfluxDataBuffers {
    private final Cqflux cqflux;
    /** Where results are handed; null: the subscriber's Netty event loop, else {@code Schedulers.parallel()}. */
    private final Scheduler resultsOn;
    private final List<Region> zeroCopy = new CopyOnWriteArrayList<>();

    /**
     * Data-buffer operations leasing from {@code cqflux}'s pool, their results handed to the Netty
     * event loop that subscribed, else to {@code Schedulers.parallel()}, as the starter's bean does.
     *
     * @param cqflux the instance of the connections these methods are given
     */
    public CqfluxDataBuffers(Cqflux cqflux) {
        this.cqflux = Objects.requireNonNull(cqflux, "cqflux");
        this.resultsOn = null;
    }

    /**
     * Data-buffer operations leasing from {@code cqflux}'s pool.
     *
     * @param cqflux the instance of the connections these methods are given
     * @param resultsOn where the returned Monos signal their result, whichever thread subscribed
     *     ({@code Schedulers.immediate()}: on the cqflux event loop)
     */
    public CqfluxDataBuffers(Cqflux cqflux, Scheduler resultsOn) {
        this.cqflux = Objects.requireNonNull(cqflux, "cqflux");
        this.resultsOn = Objects.requireNonNull(resultsOn, "resultsOn");
    }

    /**
     * Declares a registered region whose memory the application wraps as data buffers (e.g. with
     * {@code DefaultDataBufferFactory.wrap(region.segment().asSlice(...).asByteBuffer())}), so that
     * writes from them are posted in place.
     *
     * @param region a region of the same {@link Cqflux}, with {@code WRITE_SRC}
     */
    public void zeroCopy(Region region) {
        zeroCopy.add(Objects.requireNonNull(region, "region"));
    }

    /**
     * Writes the readable bytes of {@code data} to the peer's memory (delivery, not durability).
     *
     * @param connection a connection of this {@link Cqflux}
     * @param dst the peer's region ({@code WRITE_DST})
     * @param dstOffset offset in {@code dst}
     * @param data the bytes, between 1 and the pool's buffer size of them (copy path)
     * @return a cold Mono; fails as the connection's write does, with an
     *     {@link IllegalArgumentException} naming both sizes when the data does not fit a pooled
     *     buffer, and with a {@link io.cqflux.core.QueueFullException} when too many wait for one
     */
    public Mono<Void> write(RdmaConnection connection, PeerRegion dst, long dstOffset, DataBuffer data) {
        return handOff(post(connection, dst, dstOffset, data, false));
    }

    /**
     * Writes the readable bytes of {@code data} durably: the Mono completes once the peer's
     * memory holds them at the flush level the region offers ({@link PeerRegion#strongestFlush()}).
     *
     * @param connection a connection of this {@link Cqflux}
     * @param dst the peer's region ({@code WRITE_DST})
     * @param dstOffset offset in {@code dst}
     * @param data the bytes, between 1 and the pool's buffer size of them (copy path)
     * @return a cold Mono; fails as the connection's durable write does
     */
    public Mono<Void> durableWrite(RdmaConnection connection, PeerRegion dst, long dstOffset, DataBuffer data) {
        return handOff(post(connection, dst, dstOffset, data, true));
    }

    /**
     * Reads {@code length} bytes of the peer's memory into a new data buffer of {@code factory}
     * (through a pooled registered buffer: one copy).
     *
     * @param connection a connection of this {@link Cqflux}
     * @param src the peer's region ({@code READ_SRC})
     * @param srcOffset offset in {@code src}
     * @param length bytes, between 1 and the pool's buffer size
     * @param factory where the result is allocated, e.g. the response's {@code bufferFactory()}
     * @return a cold Mono of the bytes; the subscriber owns (and releases) the data buffer
     */
    public Mono<DataBuffer> read(RdmaConnection connection, PeerRegion src, long srcOffset, int length,
                                 DataBufferFactory factory) {
        Objects.requireNonNull(connection, "connection");
        Objects.requireNonNull(factory, "factory");
        return handOff(connection.read(src, srcOffset, length).map(factory::wrap));
    }

    /**
     * The scheduler this class hands results to by default, for the calling thread: its Netty
     * event loop when it runs one (WebFlux on Reactor Netty: the request's own loop), else
     * {@code Schedulers.parallel()}. Call it where the request's Mono is subscribed (in
     * {@code Mono.defer}), e.g. for a request's timeout,
     * {@code Mono.defer(() -> op.timeout(limit, CqfluxDataBuffers.callerLoopOrParallel()))}: a timer
     * set and cancelled on the request's loop wakes no other thread. Disposing the loop's scheduler
     * does nothing: the loop is Netty's to end.
     *
     * @return the caller's Netty loop as a scheduler, or {@code Schedulers.parallel()}
     */
    public static Scheduler callerLoopOrParallel() {
        return CallerLoop.orElse(Schedulers.parallel());
    }

    /**
     * The result off the cqflux loop: to the given scheduler, or to the subscribing thread's
     * Netty loop, found when the Mono is subscribed (the result itself arrives on the cqflux loop).
     */
    private <T> Mono<T> handOff(Mono<T> result) {
        if (resultsOn != null) {
            return result.publishOn(resultsOn);
        }
        return Mono.defer(() -> result.publishOn(callerLoopOrParallel()));
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
            BufferPool pool = cqflux.buffers();
            int n = data.readableByteCount();
            if (n < 1 || n > pool.bufferSize()) {
                return Mono.error(new DataBufferSizeException("a data buffer of " + n + " bytes does not fit a"
                        + " pooled buffer: 1.." + pool.bufferSize() + " bytes (buffer size " + pool.bufferSize()
                        + ", cqflux.buffer-pool.buffer-size)"));
            }
            CopyGuard guard = new CopyGuard();
            return pool.acquire().flatMap(lease -> {
                if (!guard.compareAndSet(CopyGuard.WAITING, CopyGuard.COPYING)) {
                    lease.release(); // cancelled meanwhile: the data buffer may be released already
                    return Mono.empty();
                }
                try {
                    fill(lease, data, n);
                } catch (RuntimeException e) {
                    lease.release();
                    return Mono.error(e);
                } finally {
                    guard.set(CopyGuard.COPIED);
                }
                // The subscription takes the lease over: back to the pool when the NIC is done.
                return durable ? c.durableWrite(dst, dstOffset, lease, n) : c.write(dst, dstOffset, lease, n);
            }).doOnCancel(guard::cancel);
        });
    }

    /**
     * Keeps a cancel and the copy apart: the lease may be granted on another thread just as the
     * subscriber cancels, and a caller releases its data buffer once cancel returns. So cancel
     * waits out a copy in progress (one pooled buffer's worth of bytes), and a copy that has not
     * begun never begins.
     */
    @SuppressWarnings("serial")
    private static final class CopyGuard extends java.util.concurrent.atomic.AtomicInteger {
        static final int WAITING = 0;
        static final int COPYING = 1;
        static final int COPIED = 2;
        static final int CANCELLED = 3;

        void cancel() {
            while (!compareAndSet(WAITING, CANCELLED) && get() == COPYING) {
                Thread.onSpinWait();
            }
        }
    }

    /**
     * The one copy: each readable piece of {@code data} straight into the lease, in order, within
     * one iteration (its views are valid only then).
     */
    private static void fill(BufferLease lease, DataBuffer data, int n) {
        MemorySegment to = lease.segment();
        long at = 0;
        try (DataBuffer.ByteBufferIterator it = data.readableByteBuffers()) {
            while (it.hasNext()) {
                MemorySegment piece = MemorySegment.ofBuffer(it.next());
                if (at + piece.byteSize() > n) {
                    throw new IllegalStateException("the data buffer grew from " + n + " readable bytes while"
                            + " waiting for a pooled buffer; keep it unchanged until the write ends");
                }
                MemorySegment.copy(piece, 0, to, at, piece.byteSize());
                at += piece.byteSize();
            }
        }
        if (at != n) {
            throw new IllegalStateException("the data buffer shrank from " + n + " to " + at + " readable bytes"
                    + " while waiting for a pooled buffer; keep it unchanged until the write ends");
        }
    }

    /**
     * A data buffer refused for its size before anything was posted: the caller's value, as the
     * library's own argument checks refuse theirs, so that {@link CqfluxErrorWebExceptionHandler}
     * answers it {@code 400} (a request body above the pooled buffer is the HTTP client's).
     */
    static final class DataBufferSizeException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        DataBufferSizeException(String message) {
            super(message);
        }
    }
}
