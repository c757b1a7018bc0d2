package io.cqflux.core.internal;

import io.cqflux.core.Capability;
import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.UnsupportedCapabilityException;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;

/**
 * The one argument check per operation. The reactive layer runs it when an operation is
 * subscribed (so that the Mono fails before anything is queued) and every transport runs the
 * same method right before its native call (so that the SPI is safe on its own): one wording
 * for one mistake, whichever layer catches it. Each failure names the value and the bound.
 *
 * <p>A new operation kind adds one method here. The primitives below them are public for the
 * transports' own extra rules (librpma's 8-byte flush read, private-data limits).
 */
public final class Checks {
    /** The longest timeout {@link #timeout} allows: one day. */
    private static final Duration MAX_TIMEOUT = Duration.ofDays(1);

    // ---------------------------------------------------------------- registration

    /**
     * The access rights a caller named, as a set: refuses a null array, an empty one and a null
     * element, naming its position.
     *
     * @param what whose access, for the message ("access", "granted access")
     * @param access the rights as given
     * @return them as a set
     */
    public static Set<RegionAccess> accesses(String what, RegionAccess... access) {
        if (access == null || access.length == 0) {
            throw new IllegalArgumentException(what + " is empty: name at least one RegionAccess");
        }
        EnumSet<RegionAccess> set = EnumSet.noneOf(RegionAccess.class);
        for (int i = 0; i < access.length; i++) {
            if (access[i] == null) {
                throw new IllegalArgumentException(what + " " + i + " of " + access.length + " is null");
            }
            set.add(access[i]);
        }
        return set;
    }

    /**
     * Memory and access rights of a registration, before anything is registered: native memory
     * that is alive and not empty, at least one right, and no right by which the NIC or the peer
     * would write into memory the caller made read-only ({@link MemorySegment#isReadOnly()}: the
     * NIC does not honour a Java view's read-only flag).
     *
     * @param memory the memory
     * @param access the rights
     */
    public static void registration(MemorySegment memory, Set<RegionAccess> access) {
        if (memory == null) {
            throw new IllegalArgumentException("memory is null");
        }
        if (access == null || access.isEmpty()) {
            throw new IllegalArgumentException("access is empty: name at least one RegionAccess");
        }
        for (RegionAccess a : access) { // not contains(null): Set.of(...) throws on it
            if (a == null) {
                throw new IllegalArgumentException("access " + access + " holds a null");
            }
        }
        if (!memory.isNative()) {
            throw new IllegalArgumentException("memory " + memory + " is on the Java heap; RDMA needs native memory"
                    + " (Arena.allocate or FileChannel.map)");
        }
        if (!memory.scope().isAlive()) {
            throw new IllegalArgumentException("memory " + memory + " was freed (its arena is closed)");
        }
        if (memory.byteSize() < 1) {
            throw new IllegalArgumentException("memory size " + memory.byteSize() + " is below 1");
        }
        if (memory.isReadOnly()) {
            for (RegionAccess a : access) {
                if (a == RegionAccess.READ_DST || a == RegionAccess.WRITE_DST || a == RegionAccess.RECV) {
                    throw new IllegalArgumentException("memory " + memory + " is read-only, but access " + a
                            + " would let " + (a == RegionAccess.WRITE_DST ? "the peer" : "the NIC")
                            + " write into it; register a writable view, or only the source rights READ_SRC, WRITE_SRC"
                            + " and SEND");
                }
            }
        }
    }

    // ---------------------------------------------------------------- one check per operation

    /**
     * A read of {@code length} bytes from {@code src} into {@code dst}.
     *
     * @param t the transport (capabilities, message size limit)
     * @param dst local destination, needs {@code READ_DST}
     * @param dstOffset offset in {@code dst}
     * @param src remote source, needs {@code READ_SRC}
     * @param srcOffset offset in {@code src}
     * @param length bytes, at least 1
     */
    public static void read(Transport t, LocalRegion dst, long dstOffset, RemoteRegion src, long srcOffset,
                            long length) {
        capability(t.name(), t.capabilities(), Capability.RMA, "");
        local("read local destination", dst, RegionAccess.READ_DST);
        remote("read remote source", src, RegionAccess.READ_SRC);
        range("read local destination", dstOffset, length, dst.size(), 1);
        range("read remote source", srcOffset, length, src.size(), 1);
        maxLength(length, t.maxMessageSize());
    }

    /**
     * A write of {@code length} bytes from {@code src} to {@code dst} (also the first half of a
     * durable write).
     *
     * @param t the transport
     * @param dst remote destination, needs {@code WRITE_DST}
     * @param dstOffset offset in {@code dst}
     * @param src local source, needs {@code WRITE_SRC}
     * @param srcOffset offset in {@code src}
     * @param length bytes, at least 1
     */
    public static void write(Transport t, RemoteRegion dst, long dstOffset, LocalRegion src, long srcOffset,
                             long length) {
        capability(t.name(), t.capabilities(), Capability.RMA, "");
        local("write local source", src, RegionAccess.WRITE_SRC);
        remote("write remote destination", dst, RegionAccess.WRITE_DST);
        range("write local source", srcOffset, length, src.size(), 1);
        range("write remote destination", dstOffset, length, dst.size(), 1);
        maxLength(length, t.maxMessageSize());
    }

    /**
     * A write with 32-bit immediate data: {@link #write} plus the capability.
     *
     * @param t the transport
     * @param dst remote destination
     * @param dstOffset offset in {@code dst}
     * @param src local source
     * @param srcOffset offset in {@code src}
     * @param length bytes, at least 1
     */
    public static void writeWithImmediate(Transport t, RemoteRegion dst, long dstOffset, LocalRegion src,
                                          long srcOffset, long length) {
        capability(t.name(), t.capabilities(), Capability.WRITE_WITH_IMMEDIATE,
                "the provider carries no remote completion data");
        write(t, dst, dstOffset, src, srcOffset, length);
    }

    /**
     * An 8-byte atomic write.
     *
     * @param t the transport
     * @param dst remote destination, needs {@code WRITE_DST}
     * @param dstOffset offset, a multiple of {@link #ATOMIC_WRITE_ALIGNMENT}
     */
    public static void atomicWrite(Transport t, RemoteRegion dst, long dstOffset) {
        remote("atomic write remote destination", dst, RegionAccess.WRITE_DST);
        atomicWrite(dstOffset, dst.size());
        capability(t.name(), t.capabilities(), Capability.ATOMIC_WRITE,
                "use a write followed by a flush, or the rpma transport");
    }

    /**
     * A flush of a range of a remote region.
     *
     * @param t the transport
     * @param dst remote region
     * @param dstOffset offset in {@code dst}
     * @param length bytes (0 allowed)
     * @param type a flush type the region offers
     */
    public static void flush(Transport t, RemoteRegion dst, long dstOffset, long length, FlushType type) {
        if (dst == null) {
            throw new IllegalArgumentException("flush remote region is null");
        }
        flushType(type, dst.flushTypes());
        capability(t.name(), t.capabilities(),
                type == FlushType.PERSISTENT ? Capability.FLUSH_PERSISTENT : Capability.FLUSH_VISIBILITY, "");
        range("flush remote range", dstOffset, length, dst.size(), 0);
        int reads = t.flushReadBytes();
        if (dst.size() < reads) {
            // The flush reads a fixed span inside the region (Transport#flushReadBytes): a region
            // smaller than that span has no room for it, and the read would fail at the peer's
            // NIC after posting.
            throw new IllegalArgumentException("flush of a remote region of size " + dst.size() + ": " + t.name()
                    + "'s flush reads " + reads + " bytes inside the region, so the region needs at least " + reads
                    + " bytes");
        }
    }

    /**
     * A durable write: {@link #write} followed by {@link #flush} of the same range.
     *
     * @param t the transport
     * @param dst remote destination
     * @param dstOffset offset in {@code dst}
     * @param src local source
     * @param srcOffset offset in {@code src}
     * @param length bytes, at least 1
     * @param type the flush type
     */
    public static void durableWrite(Transport t, RemoteRegion dst, long dstOffset, LocalRegion src, long srcOffset,
                                    long length, FlushType type) {
        write(t, dst, dstOffset, src, srcOffset, length);
        flush(t, dst, dstOffset, length, type);
    }

    /**
     * A send (with or without immediate data).
     *
     * @param t the transport
     * @param src local source, needs {@code SEND}
     * @param offset offset in {@code src}
     * @param length bytes (0 allowed)
     * @param immediate whether it carries immediate data
     */
    public static void send(Transport t, LocalRegion src, long offset, long length, boolean immediate) {
        capability(t.name(), t.capabilities(), Capability.MESSAGES, "");
        if (immediate) {
            capability(t.name(), t.capabilities(), Capability.SEND_WITH_IMMEDIATE,
                    "the provider carries no remote completion data");
        }
        local("send source", src, RegionAccess.SEND);
        range("send source", offset, length, src.size(), 0);
        maxLength(length, t.maxMessageSize());
    }

    /**
     * A posted receive buffer.
     *
     * @param t the transport
     * @param dst local destination, needs {@code RECV}
     * @param offset offset in {@code dst}
     * @param length bytes (0 allowed: for write-with-immediate notifications)
     */
    public static void receive(Transport t, LocalRegion dst, long offset, long length) {
        local("receive destination", dst, RegionAccess.RECV);
        range("receive destination", offset, length, dst.size(), 0);
        maxLength(length, t.maxMessageSize());
    }

    /**
     * A registration's flush accesses: each {@code FLUSH_TYPE_*} asked for must be a flush type
     * the transport can deliver to this side's memory. A region is never registered (nor
     * described to peers) at a weaker flush type than asked for: that would let a peer's durable
     * write complete at visibility while the program believes it persistent.
     *
     * @param transport the transport's name, e.g. {@code fabric/tcp}
     * @param access the requested accesses
     * @param deliverable the flush types the transport can deliver to memory registered on it
     * @param why what limits it, for the message (e.g. which declaration is missing)
     * @throws UnsupportedCapabilityException naming the transport, the refused access and the
     *     flush types it delivers
     */
    public static void registerFlushAccess(String transport, Set<RegionAccess> access, Set<FlushType> deliverable,
                                           String why) {
        for (FlushType type : FlushType.values()) {
            RegionAccess a = type == FlushType.PERSISTENT ? RegionAccess.FLUSH_TYPE_PERSISTENT
                    : RegionAccess.FLUSH_TYPE_VISIBILITY;
            if (access.contains(a) && !deliverable.contains(type)) {
                Capability c = type == FlushType.PERSISTENT ? Capability.FLUSH_PERSISTENT : Capability.FLUSH_VISIBILITY;
                throw new UnsupportedCapabilityException(transport, c, "cannot deliver " + a
                        + " to registered memory, it delivers " + ordered(deliverable)
                        + (why == null || why.isEmpty() ? "" : "; " + why));
            }
        }
    }

    private static Set<FlushType> ordered(Set<FlushType> types) {
        EnumSet<FlushType> s = EnumSet.noneOf(FlushType.class);
        s.addAll(types);
        return s;
    }

    // ---------------------------------------------------------------- primitives

    /** Alignment of an atomic write's target offset ({@code RPMA_ATOMIC_WRITE_ALIGNMENT}). */
    public static final int ATOMIC_WRITE_ALIGNMENT = 8;

    private Checks() {
    }

    /**
     * Checks that {@code [offset, offset + length)} lies inside a region of {@code size} bytes.
     *
     * @param what which region, for the message ("local source", "remote destination")
     * @param offset the offset
     * @param length the length
     * @param size the region size
     * @param minLength smallest allowed length (0 or 1)
     */
    public static void range(String what, long offset, long length, long size, long minLength) {
        if (offset < 0) {
            throw new IllegalArgumentException(what + " offset " + offset + " is negative");
        }
        if (length < minLength) {
            throw new IllegalArgumentException(what + " length " + length + " is below " + minLength);
        }
        if (offset > size || length > size - offset) {
            throw new IllegalArgumentException(what + " range [" + offset + ", " + offset + " + " + length
                    + ") exceeds the region size " + size);
        }
    }

    /**
     * Refuses a setting outside a closed range, in the one wording every module uses for it:
     * {@code "<name> <value> is outside [<min>, <max>]"} (users and tests match on it).
     *
     * @param name the setting, as the message names it
     * @param value the value given
     * @param min the least value allowed
     * @param max the most value allowed
     * @return {@code value}
     * @throws IllegalArgumentException when {@code value} is below {@code min} or above {@code max}
     */
    public static long inRange(String name, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " " + value + " is outside [" + min + ", " + max + "]");
        }
        return value;
    }

    /**
     * Refuses an {@code int} setting outside a closed range, as {@link #inRange(String, long, long, long)}.
     *
     * @param name the setting, as the message names it
     * @param value the value given
     * @param min the least value allowed
     * @param max the most value allowed
     * @return {@code value}
     * @throws IllegalArgumentException when {@code value} is below {@code min} or above {@code max}
     */
    public static int inRange(String name, int value, int min, int max) {
        return (int) inRange(name, (long) value, min, max);
    }

    /**
     * Refuses a duration outside a closed range, the durations written in ISO-8601 as
     * {@link Duration#toString()} writes them ({@code PT0S}, {@code PT24H}).
     *
     * @param name the setting, as the message names it
     * @param value the duration given, not null
     * @param min the shortest allowed
     * @param max the longest allowed
     * @return {@code value}
     * @throws IllegalArgumentException when {@code value} is shorter than {@code min} or longer than {@code max}
     */
    public static Duration inRange(String name, Duration value, Duration min, Duration max) {
        if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new IllegalArgumentException(name + " " + value + " is outside [" + min + ", " + max + "]");
        }
        return value;
    }

    /**
     * Checks a timeout the library keeps itself (an operation's, a pool's acquire, the test kit's
     * waits): positive, and at most one day, so that it is never 0 in whole milliseconds and its
     * nanoseconds never overflow a {@code long}.
     *
     * @param what the setting, for the message ("operationTimeout")
     * @param timeout the timeout, not null
     */
    public static void timeout(String what, Duration timeout) {
        if (timeout.isNegative() || timeout.isZero() || timeout.compareTo(MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException(what + " " + timeout + " is outside (0, " + MAX_TIMEOUT + "]");
        }
    }

    /**
     * Checks that a length fits the transport's per-operation limit.
     *
     * @param length the length
     * @param max the largest length one operation may carry
     */
    public static void maxLength(long length, long max) {
        if (length > max) {
            throw new IllegalArgumentException("length " + length + " exceeds the per-operation maximum " + max);
        }
    }

    /**
     * Checks that an operation's data fits one pooled staging buffer: the reactive layer's
     * {@code byte[]} and {@code ByteBuffer} forms copy the data into one buffer of its pool and
     * never split it.
     *
     * @param what the operation and operand, for the message ("write data")
     * @param length the data's length
     * @param minLength smallest allowed length (0 or 1)
     * @param bufferSize the pool's buffer size
     */
    public static void staged(String what, long length, long minLength, long bufferSize) {
        if (length < minLength) {
            throw new IllegalArgumentException(what + " length " + length + " is below " + minLength);
        }
        if (length > bufferSize) {
            throw new IllegalArgumentException(what + " length " + length + " exceeds the buffer pool's buffer size "
                    + bufferSize + " (one operation uses one buffer; raise it with Cqflux.Builder.bufferPool, or"
                    + " split the data)");
        }
    }

    /**
     * Checks that a local region is open, that its memory was not freed, and that it has an
     * access right.
     *
     * @param what which region, for the message
     * @param region the region
     * @param needed the access the operation needs, or {@code null} for none (an exposure: its
     *     rights are what it grants)
     */
    public static void local(String what, LocalRegion region, RegionAccess needed) {
        if (region == null) {
            throw new IllegalArgumentException(what + " region is null");
        }
        if (!region.isOpen()) {
            throw new ResourceClosedException(what + " region is closed");
        }
        // The registration does not keep the memory alive: a closed arena would leave the NIC
        // (or the provider) reading and writing freed memory.
        if (!region.segment().scope().isAlive()) {
            throw new ResourceClosedException(what + " region's memory was freed (its arena is closed)"
                    + " while still registered: close the region before its arena");
        }
        if (needed != null && !region.access().contains(needed)) {
            throw new IllegalArgumentException(what + " region lacks access " + needed + " (it has " + region.access() + ")");
        }
    }

    /**
     * Checks that a remote region has an access right.
     *
     * @param what which region, for the message
     * @param region the region
     * @param needed the access the operation needs
     */
    public static void remote(String what, RemoteRegion region, RegionAccess needed) {
        if (region == null) {
            throw new IllegalArgumentException(what + " region is null");
        }
        if (!region.access().contains(needed)) {
            throw new IllegalArgumentException(what + " remote region lacks access " + needed
                    + " (the peer granted " + region.access() + ")");
        }
    }

    /**
     * Checks an atomic write's target offset.
     *
     * @param offset offset in the remote region
     * @param size the remote region's size
     */
    public static void atomicWrite(long offset, long size) {
        if (offset % ATOMIC_WRITE_ALIGNMENT != 0) {
            throw new IllegalArgumentException("atomic write offset " + offset + " is not a multiple of "
                    + ATOMIC_WRITE_ALIGNMENT);
        }
        range("atomic write remote destination", offset, ATOMIC_WRITE_ALIGNMENT, size, ATOMIC_WRITE_ALIGNMENT);
    }

    /**
     * Checks that the remote region supports a flush type.
     *
     * @param type the requested type
     * @param supported what the remote region supports
     */
    public static void flushType(FlushType type, Set<FlushType> supported) {
        if (type == null) {
            throw new IllegalArgumentException("flush type is null");
        }
        if (!supported.contains(type)) {
            throw new IllegalArgumentException("flush type " + type + " is not supported by the remote region"
                    + " (it supports " + supported + "): register the region with FLUSH_TYPE_" + type + " on the server");
        }
    }

    /**
     * Checks that a transport has a capability.
     *
     * @param transport its name
     * @param have what it has
     * @param needed what the request needs
     * @param hint what to use instead
     */
    public static void capability(String transport, Set<Capability> have, Capability needed, String hint) {
        if (!have.contains(needed)) {
            throw new UnsupportedCapabilityException(transport, needed, hint);
        }
    }

    /**
     * Checks private data against a bound.
     *
     * @param data the bytes (null means none)
     * @param max the bound
     * @param what "connect" or "accept"
     * @return {@code data}, or empty bytes for null: what a transport sends
     */
    public static byte[] privateData(byte[] data, int max, String what) {
        if (data != null && data.length > max) {
            throw new IllegalArgumentException(what + " private data of " + data.length
                    + " bytes exceeds the transport's maximum " + max);
        }
        return data == null ? new byte[0] : data;
    }
}
