package io.cqflux.samples.webflux;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;

/**
 * How a record sits in its slot of the storage peer's memory: a 24-byte header, then the payload.
 *
 * <pre>
 * offset 0  int  magic 0x43515244 ("CQRD"); 0 means an empty slot
 *        4  int  payload length
 *        8  long record id (the slot's own id: a record written to the wrong slot fails its check)
 *       16  int  CRC32C of bytes 4..16 and of the payload
 *       20  int  0
 *       24  ...  payload
 * </pre>
 * Little-endian. A reader proves the bytes it got by recomputing the CRC: a torn or misplaced
 * record does not verify.
 */
final class RecordFormat {
    static final int MAGIC = 0x43515244;
    static final int HEADER = 24;

    /** What a slot holds. */
    enum Check { EMPTY, OK, CORRUPT }

    private RecordFormat() {
    }

    /** {@return the header of a record of {@code id} with this payload, ready to precede it} */
    static byte[] header(long id, ByteBuffer payload) {
        return header(id, DefaultDataBufferFactory.sharedInstance.wrap(payload.duplicate()));
    }

    /**
     * {@return the header of a record of {@code id} whose payload is the readable bytes of
     * {@code payload}} The checksum reads them where they are (each piece of a composite in turn),
     * without a copy.
     */
    static byte[] header(long id, DataBuffer payload) {
        ByteBuffer h = ByteBuffer.allocate(HEADER).order(ByteOrder.LITTLE_ENDIAN);
        h.putInt(0, MAGIC).putInt(4, payload.readableByteCount()).putLong(8, id);
        CRC32C crc = new CRC32C();
        crc.update(h.array(), 4, 12);
        try (DataBuffer.ByteBufferIterator it = payload.readableByteBuffers()) {
            while (it.hasNext()) {
                crc.update(it.next());
            }
        }
        h.putInt(16, (int) crc.getValue());
        return h.array();
    }

    /**
     * Checks a slot's bytes.
     *
     * @param slot the whole slot (header and room for the payload)
     * @param id the slot's record id
     * @return EMPTY, OK, or CORRUPT (wrong magic, id, length or checksum)
     */
    static Check check(ByteBuffer slot, long id) {
        ByteBuffer s = slot.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int magic = s.getInt(0);
        if (magic == 0) {
            return Check.EMPTY;
        }
        int length = s.getInt(4);
        if (magic != MAGIC || s.getLong(8) != id || length < 0 || length > s.capacity() - HEADER) {
            return Check.CORRUPT;
        }
        CRC32C crc = new CRC32C();
        crc.update(s.slice(4, 12));
        crc.update(s.slice(HEADER, length));
        return (int) crc.getValue() == s.getInt(16) ? Check.OK : Check.CORRUPT;
    }

    /** {@return the payload of a slot that checked OK} */
    static ByteBuffer payload(ByteBuffer slot) {
        int length = slot.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(4);
        return slot.slice(HEADER, length);
    }

    /** {@link #check(ByteBuffer, long)} on a slot of native memory. */
    static Check check(MemorySegment slot, long id) {
        return check(slot.asByteBuffer(), id);
    }

    /** {@return whether the slot's first word is zero (nothing ever written)} */
    static boolean empty(MemorySegment slot) {
        return slot.get(ValueLayout.JAVA_INT_UNALIGNED, 0) == 0;
    }
}
