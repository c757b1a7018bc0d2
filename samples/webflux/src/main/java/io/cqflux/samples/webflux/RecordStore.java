package io.cqflux.samples.webflux;

import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.spring.boot.CqfluxDataBuffers;
import io.cqflux.spring.boot.CqfluxPeer;
import io.cqflux.spring.boot.CqfluxPeers;
import io.cqflux.spring.boot.CqfluxPropertyException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Service;
import org.springframework.web.server.ResponseStatusException;
import reactor.core.publisher.Mono;

/**
 * Records in the storage peer's memory: {@link #put} is one durable RDMA write of header and
 * payload into the record's slot, {@link #get} one RDMA read of the slot, checked before it is
 * answered. Everything around the RDMA (connection, reconnects, registered buffers, metrics) is
 * the starter's.
 */
@Service
public class RecordStore {
    private static final Logger LOG = LoggerFactory.getLogger(RecordStore.class);

    private final CqfluxPeer store;
    private final CqfluxDataBuffers buffers;
    private final RecordsProperties props;
    /** The size of the last peer region found too small for records.slots, so that each is logged once. */
    private final AtomicLong smallRegionLogged = new AtomicLong(-1);

    /**
     * @param peers the configured peers; this service uses {@code store}
     * @param buffers the DataBuffer forms of the RDMA operations
     * @param props slot layout and timeout
     * @param cqflux the starter's instance, whose registered buffers carry every record
     * @throws CqfluxPropertyException when {@code records.slot-size} exceeds
     *     {@code cqflux.buffer-pool.buffer-size}: a {@code GET} reads a whole slot through one
     *     registered buffer, so every read would fail
     */
    public RecordStore(CqfluxPeers peers, CqfluxDataBuffers buffers, RecordsProperties props, Cqflux cqflux) {
        int bufferSize = cqflux.buffers().bufferSize();
        if (props.slotSize() > bufferSize) {
            throw new CqfluxPropertyException("records.slot-size", props.slotSize(), new IllegalArgumentException(
                    "a record's slot is read and written through one registered buffer, and"
                            + " cqflux.buffer-pool.buffer-size is " + bufferSize + ": set records.slot-size to at most "
                            + bufferSize + ", or cqflux.buffer-pool.buffer-size to at least " + props.slotSize()));
        }
        this.store = peers.get("store");
        this.buffers = buffers;
        this.props = props;
        // Each time the peer is (again) up: say once if its region holds fewer slots than records.slots.
        store.states().filter(s -> s == CqfluxPeer.State.UP)
                .concatMap(s -> store.withConnection(c -> Mono.just(c.remoteRegion(0).size()))
                        .onErrorResume(e -> Mono.empty()))
                .subscribe(this::regionSeen, e -> { });
    }

    /** {@return the most bytes a record's payload may have: the slot less the header} */
    public int maxPayload() {
        return props.slotSize() - RecordFormat.HEADER;
    }

    /**
     * Checks an id against {@code records.slots}, before any body is read or anything posted.
     *
     * @param id a record id
     * @throws ResponseStatusException {@code 400} naming the id and the bound
     */
    public void checkId(long id) {
        if (id < 0 || id >= props.slots()) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "record id " + id + " is outside " + idBound());
        }
    }

    /** {@return the ids of {@code records.slots}, as {@code [0, slots)}} */
    public String idBound() {
        return "[0, " + props.slots() + ")";
    }

    /**
     * Writes a record durably.
     *
     * @param id the record's id, 0..slots-1 (and within the peer's region)
     * @param payload its bytes, at most {@link #maxPayload()}
     * @return a Mono that completes once the peer's memory holds the record; a {@code 400} for an
     *     id outside {@code records.slots} or the peer's region, a {@code 413} for a payload over
     *     the bound, both before anything is posted
     */
    public Mono<Void> put(long id, ByteBuffer payload) {
        return put(id, DefaultDataBufferFactory.sharedInstance.wrap(payload.duplicate()));
    }

    /**
     * Writes a record durably from a request body's buffers, with one copy: header and payload go
     * as one data buffer (a composite, for Netty's buffers) that {@link CqfluxDataBuffers} copies
     * piece by piece into a registered buffer. The caller keeps and releases {@code payload}.
     *
     * @param id the record's id, 0..slots-1 (and within the peer's region)
     * @param payload its bytes, at most {@link #maxPayload()}; left unreleased
     * @return as {@link #put(long, ByteBuffer)}
     */
    public Mono<Void> put(long id, DataBuffer payload) {
        return Mono.defer(() -> {
            checkId(id);
            int length = payload.readableByteCount();
            if (length > maxPayload()) {
                return Mono.error(new ResponseStatusException(HttpStatus.PAYLOAD_TOO_LARGE, "a record holds at most "
                        + maxPayload() + " bytes, not " + length));
            }
            DataBuffer header = payload.factory().wrap(RecordFormat.header(id, payload));
            // The record as one data buffer, header then payload. Netty's factory joins without a
            // copy (a composite that owns its parts, released with it): the payload is retained
            // for it, so that releasing the record leaves the caller's reference to the caller.
            DataBuffer record = payload.factory().join(List.of(header, DataBufferUtils.retain(payload)));
            return onSlot(id, (c, region, offset) -> buffers.durableWrite(c, region, offset, record))
                    .doFinally(s -> DataBufferUtils.release(record));
        });
    }
    /**
     * Reads a record and proves it: magic, id, length and CRC32C.
     *
     * @param id the record's id
     * @return its payload; empty when the slot holds none; a {@code 500} when it does not verify;
     *     a {@code 400} for an id outside {@code records.slots} or the peer's region
     */
    public Mono<ByteBuffer> get(long id) {
        return Mono.defer(() -> {
            checkId(id);
            return onSlot(id, (c, region, offset) -> buffers.read(c, region, offset, props.slotSize(),
                            DefaultDataBufferFactory.sharedInstance))
                    .flatMap(buf -> {
                        ByteBuffer slot = view(buf);
                        return switch (RecordFormat.check(slot, id)) {
                            case EMPTY -> Mono.empty();
                            case OK -> Mono.just(RecordFormat.payload(slot));
                            case CORRUPT -> Mono.error(new ResponseStatusException(HttpStatus.INTERNAL_SERVER_ERROR,
                                    "record " + id + " does not verify (checksum, id or length)"));
                        };
                    });
        });
    }

    /**
     * The slot's bytes without a copy where they are one piece, as the read's data buffer is (an
     * array that {@link DefaultDataBufferFactory} wrapped: nothing to release, so the view may
     * outlive the iterator); a copy only for a buffer in several pieces.
     */
    private static ByteBuffer view(DataBuffer buf) {
        int n = buf.readableByteCount();
        try (DataBuffer.ByteBufferIterator it = buf.readableByteBuffers()) {
            ByteBuffer first = it.next().slice();
            if (!it.hasNext() && first.remaining() == n) {
                return first;
            }
        }
        ByteBuffer copy = ByteBuffer.allocate(n);
        buf.toByteBuffer(buf.readPosition(), copy, 0, n);
        return copy;
    }

    /**
     * One operation on a record's slot; a slot beyond the region the peer exposed is refused first.
     * Its timeout's timer is set on the request's own Netty loop, where the result is handed too
     * (on {@code Schedulers.parallel()}, the default, it would wake a parallel worker per request).
     */
    private <T> Mono<T> onSlot(long id, SlotWork<T> work) {
        long offset = id * props.slotSize();
        return Mono.defer(() -> slot(id, offset, work).timeout(props.timeout(), CqfluxDataBuffers.callerLoopOrParallel()));
    }

    private <T> Mono<T> slot(long id, long offset, SlotWork<T> work) {
        return store.withConnection(c -> {
            PeerRegion region = c.remoteRegion(0);
            regionSeen(region.size());
            long peerSlots = region.size() / props.slotSize();
            if (id >= peerSlots) {
                // The library would refuse the operation too, but as an IllegalArgumentException
                // (a 500): the peer's smaller region is this request's bound, a client error.
                return Mono.error(new ResponseStatusException(HttpStatus.BAD_REQUEST, "record id " + id
                        + " is outside [0, " + peerSlots + "): the storage peer's region holds " + peerSlots
                        + " slots of " + props.slotSize() + " bytes"));
            }
            return work.apply(c, region, offset);
        });
    }

    /** Logs, once per size, a peer region that holds fewer slots than {@code records.slots}. */
    private void regionSeen(long regionSize) {
        long wanted = (long) props.slots() * props.slotSize();
        if (regionSize < wanted && smallRegionLogged.get() != regionSize
                && smallRegionLogged.getAndSet(regionSize) != regionSize) {
            LOG.warn("the storage peer {} exposes {} bytes: {} slots of {} bytes, fewer than records.slots={};"
                            + " ids from {} on are answered 400", store.address(), regionSize,
                    regionSize / props.slotSize(), props.slotSize(), props.slots(), regionSize / props.slotSize());
        }
    }

    @FunctionalInterface
    private interface SlotWork<T> {
        Mono<T> apply(RdmaConnection c, PeerRegion region, long offset);
    }
}
