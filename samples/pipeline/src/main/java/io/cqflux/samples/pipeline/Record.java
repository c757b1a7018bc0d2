package io.cqflux.samples.pipeline;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * One log record, encoded as it lies in a ring slot: {@code seq} (u64), {@code length} (u32),
 * {@code crc32c} (u32) over the first twelve bytes and the payload, then the payload. Little
 * endian, so that the bytes mean the same on any peer.
 *
 * @param seq the sequence number, from 0
 * @param bytes the encoded record: header and payload
 */
record Record(long seq, byte[] bytes) {
    /** Header bytes before the payload. */
    static final int HEADER = 16;

    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /**
     * Encodes a record.
     *
     * @param seq its sequence number
     * @param payload its payload
     * @param payloadLength bytes of {@code payload} to take
     * @return the record
     */
    static Record encode(long seq, byte[] payload, int payloadLength) {
        byte[] b = new byte[HEADER + payloadLength];
        MemorySegment s = MemorySegment.ofArray(b);
        s.set(LONG, 0, seq);
        s.set(INT, 8, payloadLength);
        System.arraycopy(payload, 0, b, HEADER, payloadLength);
        s.set(INT, 12, crc(b, payloadLength));
        return new Record(seq, b);
    }

    /** A generated record: its payload length (16..max) and bytes follow from its sequence number. */
    static Record generated(long seq, int maxPayload, byte[] scratch) {
        long h = mix(seq);
        int len = 16 + (int) Long.remainderUnsigned(h, maxPayload - 15);
        for (int i = 0; i < len; i += 8) {
            long w = mix(h + i);
            for (int k = 0; k < 8 && i + k < len; k++) {
                scratch[i + k] = (byte) (w >>> (8 * k));
            }
        }
        return encode(seq, scratch, len);
    }

    /** splitmix64's finaliser: cheap, well spread. */
    static long mix(long x) {
        long z = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E5L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    private static int crc(byte[] encoded, int payloadLength) {
        CRC32C c = new CRC32C();
        c.update(encoded, 0, 12);
        c.update(encoded, HEADER, payloadLength);
        return (int) c.getValue();
    }

    /**
     * Checks the record in a ring slot.
     *
     * @param slot the slot's memory
     * @param expectedSeq the sequence number the reader expects there
     * @param maxPayload the largest payload
     * @param scratch a buffer of at least a slot's size
     * @return null when the record is intact and in order, else what is wrong
     */
    static String check(MemorySegment slot, long expectedSeq, int maxPayload, byte[] scratch) {
        long seq = slot.get(LONG, 0);
        int len = slot.get(INT, 8);
        if (seq != expectedSeq) {
            return "record " + expectedSeq + ": found sequence " + seq + " in its slot ("
                    + (seq < expectedSeq ? "a stale or lost record" : "reordered or skipped") + ")";
        }
        if (len < 0 || len > maxPayload) {
            return "record " + seq + ": payload length " + len + " outside [0, " + maxPayload + "]";
        }
        MemorySegment.copy(slot, ValueLayout.JAVA_BYTE, 0, scratch, 0, HEADER + len);
        int want = slot.get(INT, 12);
        int got = crc(scratch, len);
        if (got != want) {
            return String.format("record %d: CRC32C %08x, the record says %08x (corrupted)", seq, got, want);
        }
        return null;
    }
}
