package io.cqflux.test.network;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionException;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.zip.CRC32C;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Checksummed records of the network-fault tests and the tally of the durable writes that carry
 * them. Record {@code i} lives at offset {@code i * SIZE} on both sides; it holds its index, the
 * run's nonce, pseudo-random bytes drawn from both, and a CRC32C of everything before it in its
 * last four bytes, so a record found in the peer's memory is either exactly the one written or
 * visibly not.
 *
 * <p>The tally counts every signal each write's {@code Mono} delivers (a second terminal signal is
 * a failure of the library), how it ended, and when.
 */
final class Records {
    static final int SIZE = 512;

    private final long nonce;
    private final int capacity;
    private final AtomicIntegerArray signals;
    private final AtomicReferenceArray<Throwable> errors;
    private final AtomicLongArray startNanos;
    private final AtomicLongArray endNanos;
    private final AtomicInteger started = new AtomicInteger();
    private final AtomicInteger ended = new AtomicInteger();

    Records(long nonce, int capacity) {
        this.nonce = nonce;
        this.capacity = capacity;
        this.signals = new AtomicIntegerArray(capacity);
        this.errors = new AtomicReferenceArray<>(capacity);
        this.startNanos = new AtomicLongArray(capacity);
        this.endNanos = new AtomicLongArray(capacity);
    }

    /** {@return record {@code i}'s bytes} */
    byte[] expected(int i) {
        byte[] b = new byte[SIZE];
        ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        bb.putLong(i).putLong(nonce);
        SplittableRandom r = new SplittableRandom(nonce * 31 + i);
        for (int k = 16; k < SIZE - 4; k++) {
            b[k] = (byte) r.nextInt(256);
        }
        CRC32C crc = new CRC32C();
        crc.update(b, 0, SIZE - 4);
        bb.putInt(SIZE - 4, (int) crc.getValue());
        return b;
    }

    /** Writes records {@code [0, capacity)} into the local memory they are sent from. */
    void fill(MemorySegment local) {
        for (int i = 0; i < capacity; i++) {
            MemorySegment.copy(expected(i), 0, local, ValueLayout.JAVA_BYTE, (long) i * SIZE, SIZE);
        }
    }

    /** {@return whether {@code b[off, off + SIZE)} carries a record whose own checksum holds} */
    static boolean selfConsistent(byte[] b, int off) {
        CRC32C crc = new CRC32C();
        crc.update(b, off, SIZE - 4);
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getInt(off + SIZE - 4) == (int) crc.getValue();
    }

    /**
     * Wraps record {@code i}'s write so that every signal is counted; subscribe the result.
     *
     * @return the write, counted
     */
    Mono<Void> track(int i, Mono<Void> write) {
        started.incrementAndGet();
        startNanos.set(i, System.nanoTime());
        return write.doOnSuccess(v -> end(i, null)).doOnError(e -> end(i, e));
    }

    private void end(int i, Throwable e) {
        endNanos.set(i, System.nanoTime());
        if (e != null) {
            errors.set(i, e);
        }
        if (signals.incrementAndGet(i) == 1) {
            ended.incrementAndGet();
        }
    }

    int started() {
        return started.get();
    }

    int ended() {
        return ended.get();
    }

    /** {@return whether record {@code i}'s write completed (terminated without error)} */
    boolean succeeded(int i) {
        return signals.get(i) > 0 && errors.get(i) == null;
    }

    boolean failed(int i) {
        return errors.get(i) != null;
    }

    Throwable error(int i) {
        return errors.get(i);
    }

    /** {@return when each write was started ({@code System.nanoTime()}), by record} */
    long[] startNanos() {
        long[] r = new long[started.get()];
        for (int i = 0; i < r.length; i++) {
            r[i] = startNanos.get(i);
        }
        return r;
    }

    /**
     * Asserts that every started write ended exactly once, within {@code bound} of its start,
     * completed or failed with {@code ConnectionException(LOST)}; prints the longest as a FACT
     * line named {@code label}.
     */
    void assertEveryWriteEndedOnce(Duration bound, String label) {
        assertEquals(started(), ended(), "writes still pending: " + this);
        assertEquals(0, twice(), "a write signalled twice: " + this);
        assertNull(firstErrorOtherThan("ConnectionException(LOST)"),
                "a write failed otherwise than with ConnectionException(LOST): " + this);
        long[] starts = startNanos();
        long worst = 0;
        int worstAt = -1;
        for (int i = 0; i < starts.length; i++) {
            long took = endNanos(i) - starts[i];
            if (took > worst) {
                worst = took;
                worstAt = i;
            }
        }
        System.out.printf("FACT %s: record %d took %.0f ms (%s)%n", label, worstAt, worst / 1e6,
                outcome(worstAt < 0 ? null : error(worstAt)));
        assertTrue(worst <= bound.toNanos(), "record " + worstAt + " took " + worst / 1_000_000 + " ms to end, beyond "
                + bound.toMillis() + " ms: " + this);
    }

    /**
     * {@return the bytes of every started record as the peer holds them} Read over {@code fresh}
     * (a connection made after the fault) into {@code into}, 256 KiB per read.
     */
    byte[] readOver(RdmaConnection fresh, Region into, Duration timeout) {
        long used = (long) started() * SIZE;
        PeerRegion remote = fresh.remoteRegion(0);
        int chunk = 256 * 1024;
        Flux.range(0, (int) ((used + chunk - 1) / chunk))
                .concatMap(c -> fresh.read(into, (long) c * chunk, remote, (long) c * chunk,
                        Math.min(chunk, used - (long) c * chunk)))
                .then().block(timeout);
        return into.segment().asSlice(0, used).toArray(ValueLayout.JAVA_BYTE);
    }

    /**
     * Asserts that every completed write is in {@code memory} (the peer's own bytes) and in
     * {@code read} (the same read over a fresh connection), and that some write completed; prints
     * the tally as a FACT line named {@code fact}, followed by {@code extra}.
     *
     * @param owner whose memory it is, as the messages name it ("peer", "server")
     * @param memoryNote what the first message adds to "the owner's memory" (how it was taken)
     */
    void assertCompletedWritesLanded(String fact, String owner, String memoryNote, byte[] memory, byte[] read,
                                     String extra) {
        int missingInMemory = firstCompletedMissing(memory);
        int missingInRead = firstCompletedMissing(read);
        int[] v = verify(memory);
        System.out.printf("FACT %s: %s; in the %s's memory: completed and intact %d, completed and wrong %d,"
                + " failed but landed %d, failed and absent %d, failed and torn %d%s%n", fact, this, owner, v[0], v[1],
                v[2], v[3], v[4], extra);
        assertEquals(-1, missingInMemory, "a completed durable write is not in the " + owner + "'s memory" + memoryNote
                + ": record " + missingInMemory + "; " + this);
        assertEquals(-1, missingInRead, "a completed durable write is not in the " + owner + "'s memory (read over a"
                + " fresh connection): record " + missingInRead + "; " + this);
        assertTrue(v[0] > 0, "no write completed at all: the case proves nothing: " + this);
    }

    long endNanos(int i) {
        return endNanos.get(i);
    }

    /** {@return how many writes signalled more than once} */
    int twice() {
        int n = 0;
        for (int i = 0; i < started.get(); i++) {
            if (signals.get(i) > 1) {
                n++;
            }
        }
        return n;
    }

    /** {@return the latest termination among the writes started, in {@code System.nanoTime()}} */
    long lastEndNanos() {
        long last = 0;
        for (int i = 0; i < started.get(); i++) {
            last = Math.max(last, endNanos.get(i));
        }
        return last;
    }

    /** {@return each outcome's count: "ok", or the error's class and, for a ConnectionException, its event} */
    Map<String, Integer> outcomes() {
        Map<String, Integer> m = new TreeMap<>();
        for (int i = 0; i < started.get(); i++) {
            m.merge(signals.get(i) == 0 ? "pending" : outcome(errors.get(i)), 1, Integer::sum);
        }
        return m;
    }

    static String outcome(Throwable e) {
        if (e == null) {
            return "ok";
        }
        return e instanceof ConnectionException c ? "ConnectionException(" + c.event() + ")" : e.getClass().getSimpleName();
    }

    /** {@return the first failed write whose error is not {@code expected} (an {@link #outcome} string), or null} */
    String firstErrorOtherThan(String expected) {
        for (int i = 0; i < started.get(); i++) {
            Throwable e = errors.get(i);
            if (e != null && !outcome(e).equals(expected)) {
                return "record " + i + ": " + e;
            }
        }
        return null;
    }

    /**
     * Compares the peer's memory with what was written.
     *
     * @param peer the peer's region, from offset 0, covering every started record
     * @return {completed and intact, completed and wrong, failed but landed intact, failed and
     *     absent (zero), failed and torn (neither)}
     */
    int[] verify(byte[] peer) {
        int[] r = new int[5];
        for (int i = 0; i < started.get(); i++) {
            int off = i * SIZE;
            boolean intact = Arrays.equals(peer, off, off + SIZE, expected(i), 0, SIZE) && selfConsistent(peer, off);
            if (succeeded(i)) {
                r[intact ? 0 : 1]++;
            } else if (intact) {
                r[2]++;
            } else if (Arrays.equals(peer, off, off + SIZE, new byte[SIZE], 0, SIZE)) {
                r[3]++;
            } else {
                r[4]++;
            }
        }
        return r;
    }

    /** {@return the first completed record the peer's memory does not hold byte for byte, or -1} */
    int firstCompletedMissing(byte[] peer) {
        for (int i = 0; i < started.get(); i++) {
            int off = i * SIZE;
            if (succeeded(i) && !Arrays.equals(peer, off, off + SIZE, expected(i), 0, SIZE)) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public String toString() {
        return "started " + started() + ", ended " + ended() + ", twice " + twice() + ", outcomes " + outcomes();
    }
}
