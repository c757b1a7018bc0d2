package io.cqflux.core.spi;

import io.cqflux.core.Capability;
import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.UnsupportedCapabilityException;
import java.util.Set;

/**
 * Argument checks every transport (and the reactive layer) applies before posting. Each failure
 * names the value and the bound.
 */
public final class Checks {

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
     * Checks that a local region is open and has an access right.
     *
     * @param what which region, for the message
     * @param region the region
     * @param needed the access the operation needs
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
        if (!region.access().contains(needed)) {
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
                    + " (it supports " + supported + ")");
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
     */
    public static void privateData(byte[] data, int max, String what) {
        if (data != null && data.length > max) {
            throw new IllegalArgumentException(what + " private data of " + data.length
                    + " bytes exceeds the transport's maximum " + max);
        }
    }
}
