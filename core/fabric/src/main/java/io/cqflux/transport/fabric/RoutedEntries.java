package io.cqflux.transport.fabric;

import io.cqflux.core.Completion;
import io.cqflux.core.CompletionRecord;
import io.cqflux.core.spi.CompletionSink;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.Opcode;

/**
 * The entries a {@link CompletionGroup}'s dispatch routed to one member and its poll has not
 * handed over yet, in queue order: a ring that grows by doubling. A success entry is copied into
 * the ring's arrays and handed over through one flyweight {@link Completion}; an error entry is
 * kept as its {@link CompletionRecord}. Filled under the group's read lock, drained by the
 * member's poll, both on the loop thread.
 */
final class RoutedEntries {
    private long[] contexts = new long[8];
    private long[] flags = new long[8];
    private long[] lengths = new long[8];
    private long[] buffers = new long[8];
    /** Bit 32 set: the entry has an immediate, the low 32 bits. */
    private long[] immediates = new long[8];
    private Opcode[] opcodes = new Opcode[8];
    private CompletionRecord[] errors = new CompletionRecord[8];
    private int head;
    private int count;
    private final View view = new View();

    /** Copies one entry, whose context the group already stripped of the member's slot. */
    void add(Completion c, long context) {
        if (count == contexts.length) {
            grow();
        }
        int i = (head + count) & (contexts.length - 1);
        contexts[i] = context;
        if (c.isSuccess()) {
            errors[i] = null;
            opcodes[i] = c.opcode();
            flags[i] = c.flags();
            lengths[i] = c.byteLength();
            buffers[i] = c.bufferAddress();
            immediates[i] = c.hasImmediate() ? (1L << 32) | Integer.toUnsignedLong(c.immediate()) : 0;
        } else {
            errors[i] = CompletionRecord.builder(context, c.status()).vendorError(c.vendorError())
                    .error(c.errorNumber(), c.overflowLength(), c.errorText()).build();
        }
        count++;
    }

    /** {@return how many entries wait} */
    int size() {
        return count;
    }

    /**
     * Hands up to {@code max} entries to {@code sink}, oldest first.
     *
     * @return how many it handed over
     */
    int drain(int max, CompletionSink sink) {
        int n = 0;
        while (n < max && count > 0) {
            int i = head;
            head = (head + 1) & (contexts.length - 1);
            count--;
            n++;
            CompletionRecord e = errors[i];
            if (e != null) {
                errors[i] = null;
                sink.onCompletion(e);
            } else {
                view.at(i);
                sink.onCompletion(view);
            }
        }
        return n;
    }

    private void grow() {
        int n = contexts.length * 2;
        contexts = unwrap(contexts, n);
        flags = unwrap(flags, n);
        lengths = unwrap(lengths, n);
        buffers = unwrap(buffers, n);
        immediates = unwrap(immediates, n);
        Opcode[] o = new Opcode[n];
        CompletionRecord[] e = new CompletionRecord[n];
        for (int k = 0; k < count; k++) {
            int from = (head + k) & (opcodes.length - 1);
            o[k] = opcodes[from];
            e[k] = errors[from];
        }
        opcodes = o;
        errors = e;
        head = 0;
    }

    private long[] unwrap(long[] a, int n) {
        long[] b = new long[n];
        for (int k = 0; k < count; k++) {
            b[k] = a[(head + k) & (a.length - 1)];
        }
        return b;
    }

    /** A flyweight over one ring slot of a success entry. */
    private final class View extends Completion {
        private int i;

        void at(int index) {
            i = index;
        }

        @Override
        public long context() {
            return contexts[i];
        }

        @Override
        public CompletionStatus status() {
            return CompletionStatus.SUCCESS;
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
            return opcodes[i];
        }

        @Override
        protected long rawByteLength() {
            return lengths[i];
        }

        @Override
        protected long rawFlags() {
            return flags[i];
        }

        @Override
        protected boolean rawHasImmediate() {
            return (immediates[i] & (1L << 32)) != 0;
        }

        @Override
        protected int rawImmediate() {
            return (int) immediates[i];
        }

        @Override
        protected long rawBufferAddress() {
            return buffers[i];
        }
    }
}
