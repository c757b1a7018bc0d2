package io.cqflux.spring.boot;

/** The registered buffer pool's size, {@code cqflux.buffer-pool.*} (Cqflux.Builder's buffer pool). */
public class CqfluxBufferPoolProperties {
    /** Registered buffers in the pool (never grows); an operation that finds none waits for one. */
    private int buffers = io.cqflux.reactor.BufferPool.DEFAULT_BUFFERS;

    /** Bytes per buffer: the largest byte[], ByteBuffer or DataBuffer one operation can carry. */
    private int bufferSize = io.cqflux.reactor.BufferPool.DEFAULT_BUFFER_SIZE;

    /** Operations that may wait for a free buffer; one more fails with QueueFullException. */
    private int maxWaiters = io.cqflux.reactor.BufferPool.DEFAULT_MAX_WAITERS;

    /** @return operations that may wait for a free buffer */
    public int getMaxWaiters() {
        return maxWaiters;
    }

    /** @param maxWaiters operations that may wait for a free buffer */
    public void setMaxWaiters(int maxWaiters) {
        this.maxWaiters = maxWaiters;
    }

    /** @return buffers in the pool */
    public int getBuffers() {
        return buffers;
    }

    /** @param buffers buffers in the pool */
    public void setBuffers(int buffers) {
        this.buffers = buffers;
    }

    /** @return bytes per buffer */
    public int getBufferSize() {
        return bufferSize;
    }

    /** @param bufferSize bytes per buffer */
    public void setBufferSize(int bufferSize) {
        this.bufferSize = bufferSize;
    }
}
