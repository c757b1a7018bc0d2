package io.cqflux.transport.fabric;

import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.RemoteRegion;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * The fabric transport's region descriptor: what a peer needs to address a registered region.
 * A small versioned big-endian format, 32 bytes in version 1:
 * <pre>
 *  0  int   magic 0x43514658 ("CQFX")
 *  4  byte  version (1)
 *  5  byte  flush types: bit 0 PERSISTENT, bit 1 VISIBILITY
 *  6  short access bits (RegionAccess#bit)
 *  8  long  key (fi_mr_key)
 * 16  long  base: the region's virtual address under FI_MR_VIRT_ADDR, else 0 (offsets)
 * 24  long  length in bytes (&gt; 0)
 * </pre>
 * and 24 bytes in version 2, for providers whose keys are 4 bytes ({@code mr_key_size} 4:
 * verbs, whose keys are the 32-bit rkeys of ibv_reg_mr(3)):
 * <pre>
 *  0  short magic 0x4351 ("CQ")
 *  2  byte  version (2; never 'F', the third byte of version 1's magic)
 *  3  byte  flush types, as in version 1
 *  4  int   key (unsigned 32 bits)
 *  8  long  base
 * 16  long  length, whose top byte carries the access bits (regions are below 2^56 bytes)
 * </pre>
 * Why two: verbs' connection private data is 55 bytes in either direction ({@code
 * FI_OPT_CM_DATA_SIZE}: RDMA CM's 56-byte request minus the provider's 1-byte header; the
 * provider reports one limit, which the transport applies to accepts too), and a reactive hello with one region, the
 * control words' raw descriptor and the framing must fit it: 4 + 1 + 1 + 20 + 2 + 24 = 52.
 * Version 1 is kept where keys are 8 bytes (tcp: 256 bytes of private data).
 * Parsing checks every field; malformed bytes are an {@link IllegalArgumentException} naming
 * what is wrong.
 */
final class RegionDescriptor {

    static final int MAGIC = 0x43514658;
    static final byte VERSION = 1;
    static final int LENGTH = 32;
    /** Version 2's 2-byte magic ("CQ"), version and length. */
    static final short MAGIC2 = 0x4351;
    static final byte VERSION2 = 2;
    static final int LENGTH2 = 24;
    private static final int ACCESS_MASK = 0xff;

    private RegionDescriptor() {
    }

    static byte[] encode(long key, long base, long length, Set<RegionAccess> access, Set<FlushType> flush) {
        return encode(key, base, length, access, flush, 8);
    }

    /**
     * Encodes version 2 when the provider's keys are at most 4 bytes (and the key and length fit
     * it), version 1 otherwise.
     *
     * @param keyBytes the provider's {@code mr_key_size}
     */
    static byte[] encode(long key, long base, long length, Set<RegionAccess> access, Set<FlushType> flush,
                         long keyBytes) {
        int f = (flush.contains(FlushType.PERSISTENT) ? 1 : 0) | (flush.contains(FlushType.VISIBILITY) ? 2 : 0);
        if (keyBytes <= 4 && (key >>> 32) == 0 && (length >>> 56) == 0) {
            long accessBits = RegionAccess.bits(access) & ACCESS_MASK;
            return ByteBuffer.allocate(LENGTH2).order(ByteOrder.BIG_ENDIAN).putShort(MAGIC2).put(VERSION2)
                    .put((byte) f).putInt((int) key).putLong(base).putLong(length | (accessBits << 56)).array();
        }
        return ByteBuffer.allocate(LENGTH).order(ByteOrder.BIG_ENDIAN).putInt(MAGIC).put(VERSION).put((byte) f)
                .putShort((short) RegionAccess.bits(access)).putLong(key).putLong(base).putLong(length).array();
    }

    /** Bytes of the raw form: key, base, length. */
    static final int RAW_LENGTH = 24;
    /** Bytes of the raw form with a 4-byte key (providers with {@code mr_key_size} 4: verbs). */
    static final int RAW_LENGTH_SHORT_KEY = 20;

    /**
     * The transport's own form, for peers not written with cqflux: key, base, length, each a
     * big-endian 64-bit value.
     */
    static byte[] encodeRaw(long key, long base, long length) {
        return encodeRaw(key, base, length, 8);
    }

    /**
     * The raw form: with a big-endian 32-bit key (20 bytes) when the provider's keys are at most
     * 4 bytes ({@code mr_key_size}), else a 64-bit one (24 bytes); then base and length, 64 bits
     * each.
     *
     * @param keyBytes the provider's {@code mr_key_size}
     */
    static byte[] encodeRaw(long key, long base, long length, long keyBytes) {
        if (keyBytes <= 4 && (key >>> 32) == 0) {
            return ByteBuffer.allocate(RAW_LENGTH_SHORT_KEY).order(ByteOrder.BIG_ENDIAN).putInt((int) key).putLong(base)
                    .putLong(length).array();
        }
        return ByteBuffer.allocate(RAW_LENGTH).order(ByteOrder.BIG_ENDIAN).putLong(key).putLong(base).putLong(length)
                .array();
    }

    /**
     * Parses the raw form with the access the caller states; such a region offers
     * {@link FlushType#VISIBILITY} flushes (this transport's flush is a read-back, which succeeds
     * where the peer registered the region with a flush type or READ_SRC, and fails like any
     * access the peer did not grant otherwise).
     */
    static Remote parseRaw(byte[] d, Set<RegionAccess> access) {
        if (d == null || (d.length != RAW_LENGTH && d.length != RAW_LENGTH_SHORT_KEY)) {
            throw new IllegalArgumentException("raw fabric region descriptor of " + (d == null ? "null" : d.length + " bytes")
                    + ", expected exactly " + RAW_LENGTH + " (key, base, length) or " + RAW_LENGTH_SHORT_KEY
                    + " (a 4-byte key, base, length)");
        }
        if (access == null || access.isEmpty()) {
            throw new IllegalArgumentException("access of a raw region descriptor is empty: state what the peer granted");
        }
        ByteBuffer b = ByteBuffer.wrap(d).order(ByteOrder.BIG_ENDIAN);
        long key = d.length == RAW_LENGTH_SHORT_KEY ? Integer.toUnsignedLong(b.getInt()) : b.getLong();
        long base = b.getLong();
        long length = b.getLong();
        checkRange(base, length);
        return new Remote(key, base, length, Collections.unmodifiableSet(EnumSet.copyOf(access)),
                Collections.unmodifiableSet(EnumSet.of(FlushType.VISIBILITY)));
    }

    private static void checkRange(long base, long length) {
        if (length <= 0) {
            throw new IllegalArgumentException("region descriptor length " + length + " is not positive");
        }
        if (Long.compareUnsigned(base + length, base) < 0) {
            throw new IllegalArgumentException("region descriptor base 0x" + Long.toHexString(base) + " + length "
                    + length + " overflows the 64-bit address space");
        }
    }

    static Remote parse(byte[] d) {
        if (d == null) {
            throw new IllegalArgumentException("region descriptor is null");
        }
        if (d.length < 5) {
            throw new IllegalArgumentException("region descriptor of " + d.length + " bytes is shorter than its "
                    + LENGTH + "-byte format");
        }
        ByteBuffer b = ByteBuffer.wrap(d).order(ByteOrder.BIG_ENDIAN);
        if (b.getShort(0) == MAGIC2 && d[2] == VERSION2) {
            return parseV2(d);
        }
        int magic = b.getInt();
        if (magic != MAGIC) {
            throw new IllegalArgumentException("region descriptor magic 0x" + Integer.toHexString(magic)
                    + " is not 0x" + Integer.toHexString(MAGIC) + " (not a fabric transport descriptor)");
        }
        int version = b.get();
        if (version != VERSION) {
            throw new IllegalArgumentException("region descriptor version " + version + " is not supported (only "
                    + VERSION + ")");
        }
        if (d.length != LENGTH) {
            throw new IllegalArgumentException("region descriptor of " + d.length + " bytes is not the " + LENGTH
                    + " bytes of version " + VERSION);
        }
        int f = b.get();
        int a = b.getShort() & 0xffff;
        long key = b.getLong();
        long base = b.getLong();
        long length = b.getLong();
        return remote(f, a, key, base, length);
    }

    private static Remote parseV2(byte[] d) {
        if (d.length != LENGTH2) {
            throw new IllegalArgumentException("region descriptor of " + d.length + " bytes is not the " + LENGTH2
                    + " bytes of version " + VERSION2);
        }
        ByteBuffer b = ByteBuffer.wrap(d).order(ByteOrder.BIG_ENDIAN);
        int f = b.get(3);
        long key = Integer.toUnsignedLong(b.getInt(4));
        long base = b.getLong(8);
        long packed = b.getLong(16);
        return remote(f, (int) (packed >>> 56), key, base, packed & 0x00ff_ffff_ffff_ffffL);
    }

    private static Remote remote(int f, int a, long key, long base, long length) {
        if ((f & ~3) != 0) {
            throw new IllegalArgumentException("region descriptor flush bits 0x" + Integer.toHexString(f & 0xff)
                    + " have unknown bits outside 0x3");
        }
        if ((a & ~ACCESS_MASK) != 0 || a == 0) {
            throw new IllegalArgumentException("region descriptor access bits 0x" + Integer.toHexString(a)
                    + (a == 0 ? " are empty" : " have unknown bits outside 0x" + Integer.toHexString(ACCESS_MASK)));
        }
        checkRange(base, length);
        EnumSet<RegionAccess> access = EnumSet.noneOf(RegionAccess.class);
        for (RegionAccess r : RegionAccess.values()) {
            if ((a & r.bit()) != 0) {
                access.add(r);
            }
        }
        EnumSet<FlushType> flush = EnumSet.noneOf(FlushType.class);
        if ((f & 1) != 0) {
            flush.add(FlushType.PERSISTENT);
        }
        if ((f & 2) != 0) {
            flush.add(FlushType.VISIBILITY);
        }
        return new Remote(key, base, length, Collections.unmodifiableSet(access), Collections.unmodifiableSet(flush));
    }

    /** A parsed peer region: plain values, nothing native to free. Thread-safe. */
    record Remote(long key, long base, long size, Set<RegionAccess> access, Set<FlushType> flushTypes)
            implements RemoteRegion {
        @Override
        public void close() {
            // nothing native: the descriptor is plain Java values
        }
    }
}
