package io.cqflux.samples.pipeline;

import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * The writer's view of the peer's ring: which slots it may fill. A batch reserves slots up to
 * {@code consumed + slots}; {@code consumed} advances when the peer's consumer acknowledges what it
 * has read (a {@code send} of its tail). So the writer never overwrites a record the consumer has
 * not read, and a reservation that finds the ring full waits (without a thread) for an
 * acknowledgement: that wait is where a fast producer is slowed to the consumer's and the link's
 * pace. One reservation at a time (the pipeline reserves batch after batch with {@code concatMap}).
 */
final class RingGate {
    private final long slots;
    private long reserved;
    private long consumed;
    private long waits;
    private MonoSink<Long> waiter;
    private int waiterCount;

    RingGate(long slots) {
        this.slots = slots;
    }

    /**
     * Reserves the next {@code n} slots.
     *
     * @param n slots, at most the ring's size
     * @return a Mono of the first reserved sequence number, once the slots are free
     */
    Mono<Long> reserve(int n) {
        return Mono.create(sink -> {
            long first;
            synchronized (this) {
                if (waiter != null) {
                    sink.error(new IllegalStateException("one reservation at a time"));
                    return;
                }
                if (reserved + n - consumed > slots) {
                    waits++;
                    waiter = sink;
                    waiterCount = n;
                    return;
                }
                first = reserved;
                reserved += n;
            }
            sink.success(first);
        });
    }

    /**
     * Records the consumer's acknowledgement and wakes a reservation that now fits.
     *
     * @param tail every record before this sequence number has been consumed
     */
    void acknowledge(long tail) {
        MonoSink<Long> wake = null;
        long first = 0;
        synchronized (this) {
            if (tail <= consumed) {
                return;
            }
            if (tail > reserved) {
                throw new IllegalStateException("the consumer acknowledged " + tail + " but only " + reserved
                        + " records were written");
            }
            consumed = tail;
            if (waiter != null && reserved + waiterCount - consumed <= slots) {
                wake = waiter;
                first = reserved;
                reserved += waiterCount;
                waiter = null;
            }
        }
        if (wake != null) {
            wake.success(first);
        }
    }

    /** {@return slots written or reserved and not yet consumed} */
    synchronized long occupied() {
        return reserved - consumed;
    }

    /** {@return records the consumer acknowledged} */
    synchronized long consumed() {
        return consumed;
    }

    /** {@return how many reservations had to wait for the consumer} */
    synchronized long waits() {
        return waits;
    }
}
