package io.cqflux.benchmarks;

import io.cqflux.core.Completion;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.Opcode;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.CompletionSink;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The completion ring. Posts on the loop thread append to plain arrays; completions made on
 * another thread (a receive the peer's send landed in) come through a concurrent queue and an
 * eventfd write.
 */
final class SynQueue implements CompletionQueue {
    // Scratch layout of one entry, as a native drain would have written it.
    private static final long CONTEXT = 0;
    private static final long STATUS = 8;
    private static final long OPCODE = 12;
    private static final long LENGTH = 16;
    private static final long IMMEDIATE = 24;
    private static final long HAS_IMMEDIATE = 28;
    private static final long ENTRY = 32;
    private static final CompletionStatus[] STATUSES = CompletionStatus.values();
    private static final Opcode[] OPCODES = Opcode.values();

    private final SynSignal signal = new SynSignal();
    private final int mask;
    private final long[] contexts;
    private final int[] statuses;
    private final int[] opcodes;
    private final long[] lengths;
    private final int[] immediates;
    private final boolean[] hasImmediates;
    private long head;
    private long tail;
    private final ConcurrentLinkedQueue<long[]> inbound = new ConcurrentLinkedQueue<>();
    private final Entry flyweight = new Entry();

    SynQueue(int capacity) {
        mask = capacity - 1;
        contexts = new long[capacity];
        statuses = new int[capacity];
        opcodes = new int[capacity];
        lengths = new long[capacity];
        immediates = new int[capacity];
        hasImmediates = new boolean[capacity];
        SyntheticTransport.QUEUES.add(this);
    }

    /** Loop thread: a posted work request completed; an unsignaled success reports nothing. */
    void complete(long context, CompletionStatus status, Opcode opcode, long length, boolean signaled) {
        if (signaled || status != CompletionStatus.SUCCESS) {
            append(context, status.ordinal(), opcode.ordinal(), length, false, 0);
        }
    }

    /** Any thread: a receive completed. */
    void completeFromAnyThread(long context, CompletionStatus status, Opcode opcode, long length,
                               boolean hasImmediate, int immediate) {
        inbound.add(new long[] {context, status.ordinal(), opcode.ordinal(), length, hasImmediate ? 1 : 0,
                immediate});
        signal.signal();
    }

    private void append(long context, int status, int opcode, long length, boolean hasImmediate, int immediate) {
        if (tail - head > mask) {
            throw new IllegalStateException("synthetic completion queue overrun (" + (mask + 1) + " entries)");
        }
        int i = (int) tail & mask;
        contexts[i] = context;
        statuses[i] = status;
        opcodes[i] = opcode;
        lengths[i] = length;
        hasImmediates[i] = hasImmediate;
        immediates[i] = immediate;
        tail++;
    }

    /** Any thread: wakes a loop sleeping on this queue (a release of the drain benchmark's gate). */
    void wake() {
        signal.signal();
    }

    @Override
    public int fd() {
        return signal.fd();
    }

    @Override
    public void acknowledge() {
        signal.clear();
    }

    @Override
    public boolean prepareToSleep() {
        return SyntheticTransport.held || head == tail && inbound.isEmpty();
    }

    @Override
    public int poll(MemorySegment scratch, int max, CompletionSink sink) {
        if (SyntheticTransport.held) {
            return 0;
        }
        SyntheticTransport.notePoll();
        for (long[] e; tail - head <= mask && (e = inbound.poll()) != null; ) {
            append(e[0], (int) e[1], (int) e[2], e[3], e[4] != 0, (int) e[5]);
        }
        int n = (int) Math.min(tail - head, max);
        if (n == 0) {
            return 0;
        }
        // Fill the batch first, then dispatch, as a native drain does: a sink that posts
        // appends behind what this batch took.
        for (int k = 0; k < n; k++) {
            int i = (int) (head + k) & mask;
            long off = k * ENTRY;
            scratch.set(ValueLayout.JAVA_LONG_UNALIGNED, off + CONTEXT, contexts[i]);
            scratch.set(ValueLayout.JAVA_INT_UNALIGNED, off + STATUS, statuses[i]);
            scratch.set(ValueLayout.JAVA_INT_UNALIGNED, off + OPCODE, opcodes[i]);
            scratch.set(ValueLayout.JAVA_LONG_UNALIGNED, off + LENGTH, lengths[i]);
            scratch.set(ValueLayout.JAVA_INT_UNALIGNED, off + IMMEDIATE, immediates[i]);
            scratch.set(ValueLayout.JAVA_INT_UNALIGNED, off + HAS_IMMEDIATE, hasImmediates[i] ? 1 : 0);
        }
        head += n;
        for (int k = 0; k < n; k++) {
            flyweight.at(scratch, k * ENTRY);
            sink.onCompletion(flyweight);
        }
        return n;
    }

    @Override
    public void close() {
        SyntheticTransport.QUEUES.remove(this);
        signal.close();
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
            return base.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + CONTEXT);
        }

        @Override
        public CompletionStatus status() {
            return STATUSES[base.get(ValueLayout.JAVA_INT_UNALIGNED, offset + STATUS)];
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
            return status() == CompletionStatus.SUCCESS ? "" : "synthetic " + status();
        }

        @Override
        protected Opcode rawOpcode() {
            return OPCODES[base.get(ValueLayout.JAVA_INT_UNALIGNED, offset + OPCODE)];
        }

        @Override
        protected long rawByteLength() {
            return base.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + LENGTH);
        }

        @Override
        protected long rawFlags() {
            return 0;
        }

        @Override
        protected boolean rawHasImmediate() {
            return base.get(ValueLayout.JAVA_INT_UNALIGNED, offset + HAS_IMMEDIATE) != 0;
        }

        @Override
        protected int rawImmediate() {
            return base.get(ValueLayout.JAVA_INT_UNALIGNED, offset + IMMEDIATE);
        }
    }
}
