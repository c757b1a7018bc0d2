package io.cqflux.spring.boot;

import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import java.nio.ByteBuffer;
import reactor.core.publisher.Mono;

/**
 * The copy path through the library's registered buffer pool ({@code Cqflux.buffers()}): the
 * ByteBuffer forms of the operations copy into a lease that comes back when the operation is
 * terminal at the NIC, never on cancel.
 */
final class PoolStaging implements CqfluxDataBuffers.Staging {

    @Override
    public Mono<Void> write(RdmaConnection c, PeerRegion dst, long dstOffset, ByteBuffer data, boolean durable) {
        return durable ? c.durableWrite(dst, dstOffset, data) : c.write(dst, dstOffset, data);
    }

    @Override
    public Mono<byte[]> read(RdmaConnection c, PeerRegion src, long srcOffset, int length) {
        return c.read(src, srcOffset, length);
    }
}
