package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cqflux.core.RegionAccess;
import io.cqflux.test.CqfluxTest;
import io.cqflux.test.LoopbackPeer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A WebFlux service's first durable write against a region its server exposed without a flush
 * type fails with a message that says what to change on the server, not only what is missing.
 */
class FlushTypeRefusalTest {

    @Test
    void durableWrite_toARegionExposedWithoutFlushTypeVisibility_namesTheFixOnTheServer() {
        try (LoopbackPeer peer = CqfluxTest.loopback().regionSize(4096)
                .access(RegionAccess.WRITE_SRC, RegionAccess.WRITE_DST, RegionAccess.READ_SRC, RegionAccess.READ_DST).start()) {
            assertThatThrownBy(() -> peer.connection().durableWrite(peer.remote(), 0, peer.local(), 0, 64)
                    .block(Duration.ofSeconds(10)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("flush type VISIBILITY is not supported by the remote region (it supports [])")
                    .hasMessageContaining("register the region with FLUSH_TYPE_VISIBILITY on the server");
        }
    }
}
