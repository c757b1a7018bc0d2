package io.cqflux.core;

import java.util.Objects;

/**
 * An immutable completion: a {@link Completion#snapshot() snapshot} of a flyweight view, or one
 * built directly (tests, error synthesis). Thread-safe. It keeps the error-entry rule of
 * {@link Completion}: on a failed completion only context, status, queue pair and vendor error
 * (and the error details) may be read.
 */
public final class CompletionRecord extends Completion {
    private final long context;
    private final CompletionStatus status;
    private final int vendorError;
    private final int queuePair;
    private final Opcode opcode;
    private final long byteLength;
    private final long flags;
    private final boolean hasImmediate;
    private final int immediate;
    private final int sourceQueuePair;
    private final int pkeyIndex;
    private final int slid;
    private final int serviceLevel;
    private final int dlidPathBits;
    private final long bufferAddress;
    private final long tag;
    private final int errorNumber;
    private final long overflowLength;
    private final String errorText;

    private CompletionRecord(Builder b) {
        this.context = b.context;
        this.status = Objects.requireNonNull(b.status, "status");
        this.vendorError = b.vendorError;
        this.queuePair = b.queuePair;
        this.opcode = b.status == CompletionStatus.SUCCESS ? Objects.requireNonNull(b.opcode, "opcode") : b.opcode;
        this.byteLength = b.byteLength;
        this.flags = b.flags;
        this.hasImmediate = b.hasImmediate;
        this.immediate = b.immediate;
        this.sourceQueuePair = b.sourceQueuePair;
        this.pkeyIndex = b.pkeyIndex;
        this.slid = b.slid;
        this.serviceLevel = b.serviceLevel;
        this.dlidPathBits = b.dlidPathBits;
        this.bufferAddress = b.bufferAddress;
        this.tag = b.tag;
        this.errorNumber = b.errorNumber;
        this.overflowLength = b.overflowLength;
        this.errorText = b.errorText == null ? "" : b.errorText;
    }

    static CompletionRecord copyOf(Completion c) {
        return builder(c).build();
    }

    /**
     * Starts a record as a copy of a completion (for instance to state the opcode of what was
     * posted where the device reports another: an emulated flush completes as a read).
     *
     * @param c the completion, possibly a flyweight
     * @return a builder holding every field of {@code c}
     */
    public static Builder builder(Completion c) {
        Builder b = builder(c.context(), c.status()).vendorError(c.vendorError()).queuePair(c.queuePair())
                .error(c.errorNumber(), c.overflowLength(), c.errorText());
        if (c.isSuccess()) {
            b.opcode(c.rawOpcode()).byteLength(c.rawByteLength()).flags(c.rawFlags())
                    .sourceQueuePair(c.rawSourceQueuePair()).pkeyIndex(c.rawPkeyIndex()).slid(c.rawSlid())
                    .serviceLevel(c.rawServiceLevel()).dlidPathBits(c.rawDlidPathBits())
                    .bufferAddress(c.rawBufferAddress()).tag(c.rawTag());
            if (c.rawHasImmediate()) {
                b.immediate(c.rawImmediate());
            }
        }
        return b;
    }

    /**
     * Starts a record.
     *
     * @param context the operation context
     * @param status the status
     * @return a builder
     */
    public static Builder builder(long context, CompletionStatus status) {
        return new Builder(context, status);
    }

    @Override
    public CompletionRecord snapshot() {
        return this;
    }

    @Override public long context() { return context; }
    @Override public CompletionStatus status() { return status; }
    @Override public int vendorError() { return vendorError; }
    @Override public int queuePair() { return queuePair; }
    @Override public int errorNumber() { return errorNumber; }
    @Override public long overflowLength() { return overflowLength; }
    @Override public String errorText() { return errorText; }
    @Override protected Opcode rawOpcode() { return opcode; }
    @Override protected long rawByteLength() { return byteLength; }
    @Override protected long rawFlags() { return flags; }
    @Override protected boolean rawHasImmediate() { return hasImmediate; }
    @Override protected int rawImmediate() { return immediate; }
    @Override protected int rawSourceQueuePair() { return sourceQueuePair; }
    @Override protected int rawPkeyIndex() { return pkeyIndex; }
    @Override protected int rawSlid() { return slid; }
    @Override protected int rawServiceLevel() { return serviceLevel; }
    @Override protected int rawDlidPathBits() { return dlidPathBits; }
    @Override protected long rawBufferAddress() { return bufferAddress; }
    @Override protected long rawTag() { return tag; }

    @Override
    public boolean equals(Object o) {
        return o instanceof CompletionRecord r && r.context == context && r.status == status
                && r.vendorError == vendorError && r.queuePair == queuePair && r.opcode == opcode
                && r.byteLength == byteLength && r.flags == flags && r.hasImmediate == hasImmediate
                && r.immediate == immediate && r.errorNumber == errorNumber
                && r.overflowLength == overflowLength && r.errorText.equals(errorText)
                && r.sourceQueuePair == sourceQueuePair && r.bufferAddress == bufferAddress && r.tag == tag;
    }

    @Override
    public int hashCode() {
        return Objects.hash(context, status, opcode, byteLength, immediate, errorNumber);
    }

    /** Builds a {@link CompletionRecord}. Not thread-safe. */
    public static final class Builder {
        private final long context;
        private final CompletionStatus status;
        private int vendorError;
        private int queuePair;
        private Opcode opcode;
        private long byteLength;
        private long flags;
        private boolean hasImmediate;
        private int immediate;
        private int sourceQueuePair;
        private int pkeyIndex;
        private int slid;
        private int serviceLevel;
        private int dlidPathBits;
        private long bufferAddress;
        private long tag;
        private int errorNumber;
        private long overflowLength;
        private String errorText = "";

        private Builder(long context, CompletionStatus status) {
            this.context = context;
            this.status = status;
        }

        /** @param v vendor error @return this */
        public Builder vendorError(int v) { this.vendorError = v; return this; }
        /** @param v queue pair number @return this */
        public Builder queuePair(int v) { this.queuePair = v; return this; }
        /** @param v opcode (required on success) @return this */
        public Builder opcode(Opcode v) { this.opcode = v; return this; }
        /** @param v byte length @return this */
        public Builder byteLength(long v) { this.byteLength = v; return this; }
        /** @param v raw flags @return this */
        public Builder flags(long v) { this.flags = v; return this; }
        /** @param v immediate data, host byte order @return this */
        public Builder immediate(int v) { this.hasImmediate = true; this.immediate = v; return this; }
        /** @param v source queue pair @return this */
        public Builder sourceQueuePair(int v) { this.sourceQueuePair = v; return this; }
        /** @param v partition key index @return this */
        public Builder pkeyIndex(int v) { this.pkeyIndex = v; return this; }
        /** @param v source LID @return this */
        public Builder slid(int v) { this.slid = v; return this; }
        /** @param v service level @return this */
        public Builder serviceLevel(int v) { this.serviceLevel = v; return this; }
        /** @param v DLID path bits @return this */
        public Builder dlidPathBits(int v) { this.dlidPathBits = v; return this; }
        /** @param v receive buffer address @return this */
        public Builder bufferAddress(long v) { this.bufferAddress = v; return this; }
        /** @param v tag @return this */
        public Builder tag(long v) { this.tag = v; return this; }

        /**
         * Sets the error details of an error entry.
         *
         * @param errorNumber the errno-style number ({@link Completion#errorNumber()})
         * @param overflowLength overflow length
         * @param text the library's text
         * @return this
         */
        public Builder error(int errorNumber, long overflowLength, String text) {
            this.errorNumber = errorNumber;
            this.overflowLength = overflowLength;
            this.errorText = text;
            return this;
        }

        /** @param text error text @return this */
        public Builder errorText(String text) { this.errorText = text; return this; }

        /** @return the record */
        public CompletionRecord build() {
            return new CompletionRecord(this);
        }
    }
}
