package io.cqflux.samples.pipeline;

import io.cqflux.core.ConnectionException;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * The peer's side: its ring is its own registered memory, which the writer fills. Each commit
 * notification (a write with immediate whose immediate is the low 32 bits of the new head, the
 * sequence number after the batch) lets it read the records from its tail up to that head, in
 * order, checking each one's sequence number and CRC32C; then it acknowledges its new tail to the
 * writer with a {@code send}, which frees those slots.
 *
 * <p>Why acknowledgements rather than the writer reading the consumer's tail with an RDMA read:
 * the writer learns of free slots the moment they are free, without polling (a read per batch
 * would cost a round trip even when the ring has room, and a full ring would have to be polled);
 * acknowledgements coalesce (only the latest tail is sent while one is in flight), and cqflux's
 * message credits hold the consumer's sends back if the writer stops receiving, so nothing on
 * either side grows without bound.
 */
final class Consumer {
    /**
     * Bytes before the first slot: the commit marker (the head word) at offset 0; in the writer's
     * staging mirror the same bytes hold the head words of the commits in flight.
     */
    static final int CONTROL = 256;

    private final Options o;
    private final MemorySegment ring;
    private final MemorySegment ackMem;
    private final Region ackSrc;
    private final Scheduler scheduler;
    private final int slotSize;
    private final byte[] scratch;
    private final Sinks.Many<Long> tails = Sinks.many().unicast().onBackpressureBuffer();
    private final Sinks.Empty<Void> failure = Sinks.empty();
    private volatile IllegalStateException firstFailure;
    private volatile long tail;
    private volatile long verifiedBytes;
    private volatile long notifications;

    Consumer(Options o, MemorySegment ring, MemorySegment ackMem, Region ackSrc, Scheduler scheduler) {
        this.o = o;
        this.ring = ring;
        this.ackMem = ackMem;
        this.ackSrc = ackSrc;
        this.scheduler = scheduler;
        this.slotSize = o.slotSize();
        this.scratch = new byte[slotSize];
    }

    /**
     * Serves one writer's connection: the server's handler.
     *
     * @param c the accepted connection
     * @return what ends with the connection
     */
    Mono<Void> serve(RdmaConnection c) {
        // The notification is decoded on the loop (its buffer is reposted right after); the
        // verification runs on the consumer's own thread, never on the event loop.
        Mono<Void> consume = c.receive(in -> in.hasImmediate() ? in.immediate() & 0xFFFF_FFFFL : -1L)
                .publishOn(scheduler, 32)
                .doOnNext(this::onCommit)
                // The writer closed in order: no more acknowledgements to send.
                .doOnComplete(tails::tryEmitComplete)
                .then();
        // One acknowledgement in flight at a time; while it is, only the latest tail is kept.
        Mono<Void> acks = tails.asFlux()
                .onBackpressureLatest()
                .concatMap(t -> Mono.defer(() -> {
                    ackMem.set(Record.LONG, 0, t);
                    return c.send(ackSrc, 0, 8);
                }), 1)
                // An acknowledgement that the writer's close overtook is no failure of the consumer.
                .onErrorResume(e -> e instanceof ConnectionException && c.isDisposed(), e -> Mono.empty())
                .then();
        return Mono.when(consume, acks).doOnError(e -> failure.tryEmitError(e));
    }

    /** {@return a Mono that only ever fails: with the consumer's first verification failure} */
    Mono<Void> failure() {
        return failure.asMono();
    }

    /** {@return records read and verified, in order} */
    long tail() {
        return tail;
    }

    /** {@return bytes of records (header and payload) verified} */
    long verifiedBytes() {
        return verifiedBytes;
    }

    /** {@return commit notifications handled} */
    long notifications() {
        return notifications;
    }

    private void onCommit(long immediate) {
        if (immediate < 0) {
            throw fail("a message without immediate data arrived where only commit notifications go");
        }
        long t = tail;
        if (o.consumerStopsAfter >= 0 && t >= o.consumerStopsAfter) {
            return; // the test hook: a consumer that stopped, without a word
        }
        // The head is within 2^32 of the tail (the ring is far smaller): widen the low 32 bits.
        long head = t + ((immediate - (t & 0xFFFF_FFFFL)) & 0xFFFF_FFFFL);
        if (head - t > o.ringSlots) {
            throw fail("commit notification for head " + head + " is more than the ring (" + o.ringSlots
                    + " slots) ahead of the consumer's tail " + t + ": a notification was lost or reordered");
        }
        long marker = ring.get(Record.LONG, 0);
        if (marker < head) {
            throw fail("the commit marker reads " + marker + " but the notification commits up to " + head);
        }
        long bytes = 0;
        for (long seq = t; seq < head; seq++) {
            MemorySegment slot = ring.asSlice(CONTROL + (seq % o.ringSlots) * slotSize, slotSize);
            if (seq == o.corruptRecord) {
                slot.set(ValueLayout.JAVA_BYTE, Record.HEADER, (byte) ~slot.get(ValueLayout.JAVA_BYTE, Record.HEADER));
            }
            String problem = Record.check(slot, seq, o.payload, scratch);
            if (problem != null) {
                throw fail(problem);
            }
            bytes += Record.HEADER + slot.get(Record.INT, 8);
        }
        verifiedBytes += bytes;
        notifications++;
        tail = head;
        if (o.consumerDelayMicros > 0) {
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(o.consumerDelayMicros));
        }
        tails.tryEmitNext(head);
    }

    private IllegalStateException fail(String what) {
        IllegalStateException e = new IllegalStateException("consumer: " + what);
        firstFailure = e;
        failure.tryEmitError(e);
        return e;
    }

    /** {@return the first verification failure, or null} */
    IllegalStateException firstFailure() {
        return firstFailure;
    }
}
