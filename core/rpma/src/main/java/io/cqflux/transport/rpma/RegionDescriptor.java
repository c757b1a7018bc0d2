package io.cqflux.transport.rpma;

import io.cqflux.core.RegionAccess;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;

/**
 * The bytes a peer needs to address a local region: a 3-byte header, then librpma's own
 * descriptor ({@code rpma_mr_get_descriptor(3)}).
 *
 * <pre>
 *   byte 0   magic/version 0xC1
 *   byte 1   RegionAccess bits (RPMA_MR_USAGE_*) the owner registered
 *   byte 2   n = length of librpma's descriptor (21 in librpma 1.2)
 *   byte 3.. librpma's descriptor (n bytes)
 * </pre>
 *
 * <p>Why the header: librpma has no getter for a remote region's usage (only its size and flush
 * type), but the transport must refuse an operation the peer's region does not allow before
 * posting; and {@code rpma_mr_remote_from_descriptor} trusts its input, so the length is checked
 * against the size the local library produces before any byte reaches it. 24 bytes fit into
 * connect (56) and accept (196) private data.
 */
record RegionDescriptor(Set<RegionAccess> access, byte[] nativeDescriptor) {

    static final int MAGIC = 0xC1;
    static final int HEADER = 3;

    /**
     * @param access the accesses
     * @param nativeDescriptor librpma's bytes
     * @return the encoded descriptor
     */
    static byte[] encode(Set<RegionAccess> access, byte[] nativeDescriptor) {
        if (nativeDescriptor.length > 255) {
            throw new IllegalArgumentException("native descriptor of " + nativeDescriptor.length + " bytes exceeds 255");
        }
        byte[] b = new byte[HEADER + nativeDescriptor.length];
        b[0] = (byte) MAGIC;
        b[1] = (byte) RegionAccess.bits(access);
        b[2] = (byte) nativeDescriptor.length;
        System.arraycopy(nativeDescriptor, 0, b, HEADER, nativeDescriptor.length);
        return b;
    }

    /**
     * Parses and bounds-checks a peer's descriptor.
     *
     * @param bytes the bytes
     * @param expectedNativeSize {@code rpma_mr_get_descriptor_size} of this library
     * @return the parsed descriptor
     * @throws IllegalArgumentException when the bytes are malformed, naming the value and the bound
     */
    static RegionDescriptor parse(byte[] bytes, int expectedNativeSize) {
        if (bytes == null) {
            throw new IllegalArgumentException("region descriptor is null");
        }
        int expected = HEADER + expectedNativeSize;
        if (bytes.length != expected) {
            throw new IllegalArgumentException("region descriptor of " + bytes.length + " bytes, expected exactly "
                    + expected + " (" + HEADER + "-byte header + librpma descriptor of " + expectedNativeSize + ")");
        }
        if ((bytes[0] & 0xff) != MAGIC) {
            throw new IllegalArgumentException("region descriptor starts with 0x" + Integer.toHexString(bytes[0] & 0xff)
                    + ", expected 0x" + Integer.toHexString(MAGIC) + " (not an rpma region descriptor)");
        }
        int n = bytes[2] & 0xff;
        if (n != expectedNativeSize) {
            throw new IllegalArgumentException("region descriptor declares a librpma descriptor of " + n
                    + " bytes, expected " + expectedNativeSize);
        }
        int bits = bytes[1] & 0xff;
        Set<RegionAccess> access = EnumSet.noneOf(RegionAccess.class);
        for (RegionAccess a : RegionAccess.values()) {
            if ((bits & a.bit()) != 0) {
                access.add(a);
            }
        }
        if (access.isEmpty()) {
            throw new IllegalArgumentException("region descriptor grants no access (bits 0x" + Integer.toHexString(bits) + ")");
        }
        return new RegionDescriptor(Set.copyOf(access), Arrays.copyOfRange(bytes, HEADER, bytes.length));
    }
}
