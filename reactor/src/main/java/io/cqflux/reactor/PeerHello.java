package io.cqflux.reactor;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The private-data format that carries the server's exposed region descriptors to the client
 * in the accept: {@code 'C' 'Q' version count} then per region a big-endian {@code u16} length
 * and the transport's descriptor bytes. Parsed with bounds checks: malformed bytes are an
 * {@link IllegalArgumentException}, never a crash.
 */
final class RegionList {
    private static final byte M0 = 'C';
    private static final byte M1 = 'Q';
    private static final byte VERSION = 1;
    private static final int HEADER = 4;

    private RegionList() {
    }

    /**
     * Encodes descriptors.
     *
     * @param descriptors the regions' descriptors
     * @param max the transport's accept private-data limit
     * @return the bytes
     * @throws IllegalArgumentException when they do not fit {@code max} or are too many
     */
    static byte[] encode(List<byte[]> descriptors, int max) {
        if (descriptors.size() > 255) {
            throw new IllegalArgumentException(descriptors.size() + " exposed regions exceed the maximum 255");
        }
        int size = HEADER;
        for (byte[] d : descriptors) {
            if (d.length > 0xFFFF) {
                throw new IllegalArgumentException("region descriptor of " + d.length + " bytes exceeds 65535");
            }
            size += 2 + d.length;
        }
        if (descriptors.isEmpty()) {
            size = 0;
        }
        if (size > max) {
            throw new IllegalArgumentException("the descriptors of " + descriptors.size() + " exposed regions need "
                    + size + " bytes of accept private data, above the transport's maximum " + max
                    + ": expose fewer regions");
        }
        if (size == 0) {
            return new byte[0];
        }
        ByteBuffer b = ByteBuffer.allocate(size);
        b.put(M0).put(M1).put(VERSION).put((byte) descriptors.size());
        for (byte[] d : descriptors) {
            b.putShort((short) d.length).put(d);
        }
        return b.array();
    }

    /**
     * Decodes descriptors. Trailing bytes (transports may pad private data) are ignored.
     *
     * @param data the peer's private data; empty means no regions
     * @return the descriptors
     * @throws IllegalArgumentException on malformed data
     */
    static List<byte[]> decode(byte[] data) {
        List<byte[]> out = new ArrayList<>();
        if (data == null || data.length == 0) {
            return out;
        }
        if (data.length < HEADER || data[0] != M0 || data[1] != M1) {
            // A transport may hand back zero padding when the peer sent nothing.
            for (byte x : data) {
                if (x != 0) {
                    throw new IllegalArgumentException("peer private data of " + data.length
                            + " bytes is not a cqflux region list (bad magic)");
                }
            }
            return out;
        }
        if (data[2] != VERSION) {
            throw new IllegalArgumentException("region list version " + data[2] + " is not the supported " + VERSION);
        }
        int count = data[3] & 0xFF;
        int pos = HEADER;
        for (int i = 0; i < count; i++) {
            if (pos + 2 > data.length) {
                throw new IllegalArgumentException("region list truncated at region " + i + " of " + count
                        + " (offset " + pos + " of " + data.length + ")");
            }
            int len = ((data[pos] & 0xFF) << 8) | (data[pos + 1] & 0xFF);
            pos += 2;
            if (len > data.length - pos) {
                throw new IllegalArgumentException("region " + i + " descriptor length " + len + " exceeds the "
                        + (data.length - pos) + " bytes left");
            }
            byte[] d = new byte[len];
            System.arraycopy(data, pos, d, 0, len);
            out.add(d);
            pos += len;
        }
        return out;
    }
}
