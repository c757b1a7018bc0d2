package io.cqflux.transport.rpma;

/**
 * The range handed to {@code rpma_flush(3)} for a flush the caller asked of {@code [offset,
 * offset + length)}.
 *
 * <p>librpma 1.2 flushes by reading {@link #READ_BYTES} bytes at the offset it is given, whatever
 * the length (its {@code src/flush.c}: {@code rpma_flush_apm_do} reads {@code RAW_SIZE} bytes
 * at {@code dst_offset}); the installed {@code rpma_flush(3)} does not say so. Near the region's
 * end that read would pass it and fail with {@code IBV_WC_REM_ACCESS_ERR}. What makes the earlier
 * writes visible is the read's place after them on the queue pair, not its address (a responder
 * answers a read only after the writes posted before it), which librpma already relies on for
 * any range longer than the read. So a range starting within the region's last {@link
 * #READ_BYTES} bytes is flushed as the range from {@code size - READ_BYTES} to its own end: a
 * superset of it, whose read lies inside the region. A region smaller than the read cannot be
 * flushed at all; {@code Checks.flush} refuses it (RpmaTransport#flushReadBytes).
 *
 * @param offset where the flush (and its read) starts
 * @param length how many bytes it names
 */
record FlushSpan(long offset, long length) {

    /** Bytes librpma's emulated flush reads at the offset ({@code RAW_SIZE} in its flush code). */
    static final int READ_BYTES = 8;

    /**
     * @param regionSize the remote region's size, at least {@link #READ_BYTES}
     * @param offset the flushed range's start, within the region
     * @param length the flushed range's length, with {@code offset + length <= regionSize}
     * @return the range to hand to {@code rpma_flush}
     */
    static FlushSpan of(long regionSize, long offset, long length) {
        long lastRead = regionSize - READ_BYTES;
        return offset <= lastRead ? new FlushSpan(offset, length) : new FlushSpan(lastRead, offset + length - lastRead);
    }
}
