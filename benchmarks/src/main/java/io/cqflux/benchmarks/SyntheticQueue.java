package io.cqflux.benchmarks;

import io.cqflux.core.Completion;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.Opcode;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.CompletionSink;
import io.cqflux.epoll.ffm.libc_h;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A completion source with no NIC behind it: a counter of pending completions plus an eventfd
 * that signals them, so that the event loop's own cost (wake-up, acknowledge, batched drain,
 * dispatch to the sink) can be measured apart from any transport.
 *
 * <p>{@link #poll} writes each entry into the loop's scratch array the way a transport's
 * native drain would ({@code wr_id} at 0, {@code status} at 8, like {@code struct ibv_wc}) and
 * hands the sink a flyweight that reads it back, so the per-entry memory traffic is there too.
 *
 * <p>Threading: {@link #produce} from one producer thread; everything else on the loop thread.
 * Lifetime: {@link #close()} after the loop unregistered it; idempotent.
 */
final class SyntheticQueue implements CompletionQueue {

    private static final long ENTRY = 48; // sizeof(struct ibv_wc)

    private final Arena arena = Arena.ofShared();
    private final int fd;
    private final MemorySegment producerWord; // the producer's 8-byte eventfd value, written once per burst
    private final MemorySegment loopWord;     // the loop's read buffer for acknowledge()
    private final AtomicLong pending = new AtomicLong();
    private final Entry flyweight = new Entry();
    private long sequence;
    private boolean closed;

    SyntheticQueue() {
        // eventfd(2): a write adds to the counter and makes the fd readable, a read resets it.
        fd = libc_h.eventfd(0, libc_h.EFD_NONBLOCK() | libc_h.EFD_CLOEXEC());
        if (fd < 0) {
            arena.close();
            throw new IllegalStateException("eventfd(0, EFD_NONBLOCK|EFD_CLOEXEC) returned " + fd);
        }
        producerWord = arena.allocate(ValueLayout.JAVA_LONG);
        producerWord.set(ValueLayout.JAVA_LONG, 0, 1L);
        loopWord = arena.allocate(ValueLayout.JAVA_LONG);
    }

    /**
     * Makes {@code n} completions pending and signals the fd. Producer thread only.
     *
     * @param n how many, at least 1
     */
    void produce(long n) {
        if (n < 1) {
            throw new IllegalArgumentException("burst " + n + " is below 1");
        }
        pending.addAndGet(n);
        libc_h.write(fd, producerWord, 8L);
    }

    @Override
    public int fd() {
        return fd;
    }

    @Override
    public void acknowledge() {
        // Nonblocking read: EAGAIN after a spurious wake-up is fine.
        libc_h.read(fd, loopWord, 8L);
    }

    @Override
    public boolean prepareToSleep() {
        return pending.get() == 0;
    }

    @Override
    public int poll(MemorySegment scratch, int max, CompletionSink sink) {
        long available = pending.get();
        int n = (int) Math.min(available, max);
        if (n == 0) {
            return 0;
        }
        pending.addAndGet(-n);
        for (int i = 0; i < n; i++) {
            long off = i * ENTRY;
            scratch.set(ValueLayout.JAVA_LONG_UNALIGNED, off, ++sequence);
            scratch.set(ValueLayout.JAVA_INT_UNALIGNED, off + 8, 0);
        }
        for (int i = 0; i < n; i++) {
            flyweight.at(scratch, i * ENTRY);
            sink.onCompletion(flyweight);
        }
        return n;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            libc_h.close(fd);
            arena.close();
        }
    }

    /** The flyweight view of one scratch entry. */
    private static final class Entry extends Completion {
        private MemorySegment base = MemorySegment.NULL;
        private long offset;

        void at(MemorySegment segment, long off) {
            base = segment;
            offset = off;
        }

        @Override
        public long context() {
            return base.get(ValueLayout.JAVA_LONG_UNALIGNED, offset);
        }

        @Override
        public CompletionStatus status() {
            return base.get(ValueLayout.JAVA_INT_UNALIGNED, offset + 8) == 0
                    ? CompletionStatus.SUCCESS : CompletionStatus.GENERAL_ERR;
        }

        @Override
        public int vendorError() {
            return 0;
        }

        @Override
        public int queuePair() {
            return 0;
        }

        @Override
        public int errorNumber() {
            return 0;
        }

        @Override
        public long overflowLength() {
            return 0;
        }

        @Override
        public String errorText() {
            return "";
        }

        @Override
        protected Opcode rawOpcode() {
            return Opcode.WRITE;
        }

        @Override
        protected long rawByteLength() {
            return 0;
        }

        @Override
        protected long rawFlags() {
            return 0;
        }

        @Override
        protected boolean rawHasImmediate() {
            return false;
        }

        @Override
        protected int rawImmediate() {
            return 0;
        }
    }
}
