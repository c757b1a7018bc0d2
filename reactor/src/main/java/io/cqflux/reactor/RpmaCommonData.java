package io.cqflux.reactor;

import java.util.Arrays;
import java.util.Optional;

/**
 * The private-data format of librpma's example programs, so that cqflux can talk to a C peer
 * built on librpma (and a C client to a cqflux server) without hand-packing bytes.
 *
 * <pre>{@code
 * struct common_data {
 *     uint16_t data_offset;    // where the data starts in the exposed region
 *     uint8_t  mr_desc_size;   // rpma_mr_get_descriptor_size(3)
 *     uint8_t  pcfg_desc_size; // rpma_peer_cfg_get_descriptor_size(3)
 *     char     descriptors[24]; // the region's descriptor, then the peer configuration's
 * };                            // sizeof: 28
 * }</pre>
 *
 * <p>{@code data_offset} is in the host's byte order on the C side; librpma runs on little-endian
 * machines (x86-64, aarch64), so it is encoded little-endian. The region descriptor is what
 * {@code rpma_mr_get_descriptor(3)} writes ({@link Region#rawDescriptor()} on this side, turned
 * into a peer region, with the access its usage byte names, by {@link RdmaConnection#remoteRegion(byte[])}),
 * the peer configuration's is what {@code rpma_peer_cfg_get_descriptor(3)} writes
 * ({@link Cqflux#peerConfigurationDescriptor()} on this side, applied with
 * {@link RdmaConnection#applyPeerConfiguration(byte[])}). Carry it with
 * {@link ConnectOptions#rawPrivateData(byte[])} and {@link AcceptOptions#rawPrivateData}: RDMA CM
 * pads what arrives (to 56 bytes in a connect, 196 in an accept), which {@link #decode(byte[])}
 * ignores.
 *
 * <p>The examples declare {@code descriptors} with a fixed size ({@code DESCRIPTORS_MAX_SIZE} 24)
 * and send the whole struct, {@value #SIZE} bytes; some of them check that at least that much
 * arrived, so {@link #encode} always produces {@value #SIZE} bytes, zero after the descriptors.
 * Not every peer sends one: some of librpma's example clients send no private data of their own,
 * which RDMA CM delivers as 56 zero bytes. {@link #tryDecode(byte[])} tells the two apart without
 * an exception.
 *
 * <p>Immutable and thread-safe; the accessors return copies.
 */
public final class RpmaCommonData {
    /** Bytes before the descriptors: {@code data_offset}, {@code mr_desc_size}, {@code pcfg_desc_size}. */
    public static final int HEADER_SIZE = 4;
    /** Room for both descriptors in the C struct ({@code DESCRIPTORS_MAX_SIZE} of librpma's examples). */
    public static final int DESCRIPTORS_MAX_SIZE = 24;
    /** {@code sizeof(struct common_data)}: what {@link #encode} returns. */
    public static final int SIZE = HEADER_SIZE + DESCRIPTORS_MAX_SIZE;

    private final int dataOffset;
    private final byte[] mrDescriptor;
    private final byte[] peerConfigDescriptor;

    private RpmaCommonData(int dataOffset, byte[] mrDescriptor, byte[] peerConfigDescriptor) {
        this.dataOffset = dataOffset;
        this.mrDescriptor = mrDescriptor;
        this.peerConfigDescriptor = peerConfigDescriptor;
    }

    /**
     * Encodes a {@code struct common_data}.
     *
     * @param mrDescriptor the region's descriptor ({@code rpma_mr_get_descriptor(3)}), 1..255 bytes
     * @param peerConfigDescriptor the peer configuration's descriptor
     *     ({@code rpma_peer_cfg_get_descriptor(3)}), 0..255 bytes
     * @param dataOffset where the data starts in the region, 0..65535
     * @return the whole struct, {@value #SIZE} bytes: the header, both descriptors, then zeros
     * @throws IllegalArgumentException when a size or the offset is outside its bound, or both
     *     descriptors together exceed {@value #DESCRIPTORS_MAX_SIZE} bytes (named)
     */
    public static byte[] encode(byte[] mrDescriptor, byte[] peerConfigDescriptor, int dataOffset) {
        if (mrDescriptor == null || peerConfigDescriptor == null) {
            throw new IllegalArgumentException("mrDescriptor or peerConfigDescriptor is null");
        }
        if (mrDescriptor.length < 1 || mrDescriptor.length > 255) {
            throw new IllegalArgumentException("region descriptor of " + mrDescriptor.length
                    + " bytes is outside [1, 255] (mr_desc_size is a uint8_t)");
        }
        if (peerConfigDescriptor.length > 255) {
            throw new IllegalArgumentException("peer configuration descriptor of " + peerConfigDescriptor.length
                    + " bytes exceeds 255 (pcfg_desc_size is a uint8_t)");
        }
        if (dataOffset < 0 || dataOffset > 0xFFFF) {
            throw new IllegalArgumentException("dataOffset " + dataOffset + " is outside [0, 65535] (a uint16_t)");
        }
        int both = mrDescriptor.length + peerConfigDescriptor.length;
        if (both > DESCRIPTORS_MAX_SIZE) {
            throw new IllegalArgumentException("region descriptor of " + mrDescriptor.length
                    + " bytes and peer configuration descriptor of " + peerConfigDescriptor.length + " bytes ("
                    + both + ") exceed the struct's " + DESCRIPTORS_MAX_SIZE + "-byte descriptors[]");
        }
        byte[] b = new byte[SIZE];
        b[0] = (byte) dataOffset;
        b[1] = (byte) (dataOffset >>> 8);
        b[2] = (byte) mrDescriptor.length;
        b[3] = (byte) peerConfigDescriptor.length;
        System.arraycopy(mrDescriptor, 0, b, HEADER_SIZE, mrDescriptor.length);
        System.arraycopy(peerConfigDescriptor, 0, b, HEADER_SIZE + mrDescriptor.length, peerConfigDescriptor.length);
        return b;
    }

    /**
     * Decodes a {@code struct common_data}, with bounds checks; bytes after the descriptors (RDMA
     * CM's padding) are ignored.
     *
     * @param privateData the peer's private data as delivered ({@link RdmaConnection#peerPrivateData()},
     *     or the request data an accept function sees)
     * @return the parsed structure
     * @throws IllegalArgumentException when the bytes are too short for the header or for the
     *     sizes it declares (naming the offset and the bound), declare an empty region descriptor,
     *     or declare descriptors larger together than the struct's
     *     {@value #DESCRIPTORS_MAX_SIZE}-byte {@code descriptors[]} can hold
     */
    public static RpmaCommonData decode(byte[] privateData) {
        if (privateData == null) {
            throw new IllegalArgumentException("private data is null");
        }
        if (privateData.length < HEADER_SIZE) {
            throw new IllegalArgumentException("common_data of " + privateData.length + " bytes is shorter than its "
                    + HEADER_SIZE + "-byte header");
        }
        int offset = (privateData[0] & 0xFF) | (privateData[1] & 0xFF) << 8;
        int mr = privateData[2] & 0xFF;
        int pcfg = privateData[3] & 0xFF;
        if (mr == 0) {
            throw new IllegalArgumentException("common_data declares mr_desc_size 0 at offset 2: no region"
                    + " descriptor (is it common_data at all?)");
        }
        if (mr + pcfg > DESCRIPTORS_MAX_SIZE) {
            throw new IllegalArgumentException("common_data declares mr_desc_size " + mr + " and pcfg_desc_size "
                    + pcfg + " (" + (mr + pcfg) + " bytes together), more than the struct's " + DESCRIPTORS_MAX_SIZE
                    + "-byte descriptors[] holds");
        }
        int end = HEADER_SIZE + mr + pcfg;
        if (end > privateData.length) {
            throw new IllegalArgumentException("common_data declares mr_desc_size " + mr + " and pcfg_desc_size "
                    + pcfg + ": its descriptors end at offset " + end + ", beyond the " + privateData.length
                    + " bytes received");
        }
        return new RpmaCommonData(offset,
                Arrays.copyOfRange(privateData, HEADER_SIZE, HEADER_SIZE + mr),
                Arrays.copyOfRange(privateData, HEADER_SIZE + mr, end));
    }

    /**
     * Recognises a {@code struct common_data} without throwing: for a server that serves peers
     * which may or may not send one (librpma's 02 and 05 example clients send no private data,
     * which arrives as 56 zero bytes).
     *
     * @param privateData the peer's private data as delivered, possibly {@code null} or empty
     * @return the parsed structure, or empty when the bytes are not one: shorter than the
     *     header, {@code mr_desc_size} 0 (all zeros, say), sizes that run past what arrived, or
     *     sizes that the struct's {@value #DESCRIPTORS_MAX_SIZE}-byte {@code descriptors[]} cannot hold
     */
    public static Optional<RpmaCommonData> tryDecode(byte[] privateData) {
        if (privateData == null || privateData.length < HEADER_SIZE || (privateData[2] & 0xFF) == 0
                || (privateData[2] & 0xFF) + (privateData[3] & 0xFF) > DESCRIPTORS_MAX_SIZE
                || HEADER_SIZE + (privateData[2] & 0xFF) + (privateData[3] & 0xFF) > privateData.length) {
            return Optional.empty();
        }
        return Optional.of(decode(privateData));
    }

    /** {@return {@code data_offset}: where the data starts in the peer's region} */
    public int dataOffset() {
        return dataOffset;
    }

    /** {@return the region descriptor ({@code rpma_mr_get_descriptor(3)} bytes), a copy} */
    public byte[] mrDescriptor() {
        return mrDescriptor.clone();
    }

    /** {@return the peer configuration descriptor ({@code rpma_peer_cfg_get_descriptor(3)} bytes), a copy} */
    public byte[] peerConfigDescriptor() {
        return peerConfigDescriptor.clone();
    }

    @Override
    public String toString() {
        return "RpmaCommonData[dataOffset " + dataOffset + ", mr descriptor " + mrDescriptor.length
                + " bytes, peer configuration " + peerConfigDescriptor.length + " bytes]";
    }
}
