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
 * Parsing checks every field; malformed bytes are an {@link IllegalArgumentException} naming
 * what is wrong.
 */
final class RegionDescriptor {

    static final int MAGIC = 0x43514658;
    static final byte VERSION = 1;
    static final int LENGTH = 32;
    private static final int ACCESS_MASK = 0xff;

    private RegionDescriptor() {
    }

    static byte[] encode(long key, long base, long length, Set<RegionAccess> access, Set<FlushType> flush) {
        int f = (flush.contains(FlushType.PERSISTENT) ? 1 : 0) | (flush.contains(FlushType.VISIBILITY) ? 2 : 0);
        return ByteBuffer.allocate(LENGTH).order(ByteOrder.BIG_ENDIAN).putInt(MAGIC).put(VERSION).put((byte) f)
                .putShort((short) RegionAccess.bits(access)).putLong(key).putLong(base).putLong(length).array();
    }

    /** Bytes of the raw form: key, base, length. */
    static final int RAW_LENGTH = 24;

    /**
     * The transport's own form, for peers not written with cqflux: key, base, length, each a
     * big-endian 64-bit value.
     */
    static byte[] encodeRaw(long key, long base, long length) {
        return ByteBuffer.allocate(RAW_LENGTH).order(ByteOrder.BIG_ENDIAN).putLong(key).putLong(base).putLong(length)
                .array();
    }

    /**
     * Parses the raw form with the access the caller states; such a region offers
     * {@link FlushType#VISIBILITY} flushes (this transport's flush is a delivery-complete write,
     * which needs nothing of the peer's registration).
     */
    static Remote parseRaw(byte[] d, Set<RegionAccess> access) {
        if (d == null || d.length != RAW_LENGTH) {
            throw new IllegalArgumentException("raw fabric region descriptor of " + (d == null ? "null" : d.length + " bytes")
                    + ", expected exactly " + RAW_LENGTH + " (key, base, length)");
        }
        if (access == null || access.isEmpty()) {
            throw new IllegalArgumentException("access of a raw region descriptor is empty: state what the peer granted");
        }
        ByteBuffer b = ByteBuffer.wrap(d).order(ByteOrder.BIG_ENDIAN);
        long key = b.getLong();
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
        if ((f & ~3) != 0) {
            throw new IllegalArgumentException("region descriptor flush bits 0x" + Integer.toHexString(f & 0xff)
                    + " have unknown bits outside 0x3");
        }
        int a = b.getShort() & 0xffff;
        if ((a & ~ACCESS_MASK) != 0 || a == 0) {
            throw new IllegalArgumentException("region descriptor access bits 0x" + Integer.toHexString(a)
                    + (a == 0 ? " are empty" : " have unknown bits outside 0x" + Integer.toHexString(ACCESS_MASK)));
        }
        long key = b.getLong();
        long base = b.getLong();
        long length = b.getLong();
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
