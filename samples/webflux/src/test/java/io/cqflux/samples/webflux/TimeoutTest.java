package io.cqflux.samples.webflux;

import io.cqflux.core.Opcode;
import io.cqflux.test.Faults;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.test.StepVerifier;

/** A peer that stops answering: the request's own timeout, in virtual time and over HTTP. */
@AutoConfigureWebTestClient
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "cqflux.transport=faulty", "records.storage-transport=fabric", "records.slots=1024",
                "records.timeout=2s", "cqflux.shutdown-timeout=2s" })
class TimeoutTest {
    static final Faults FAULTS = Faults.create();

    @DynamicPropertySource
    static void props(DynamicPropertyRegistry r) {
        r.add("cqflux.peers.store.port", FreePort::next);
        r.add("cqflux.transport-properties[faulty.id]", FAULTS::id);
    }

    @Autowired
    RecordStore store;

    @Autowired
    WebTestClient web;

    @AfterEach
    void clear() {
        FAULTS.clear();
    }

    @Test
    void put_whenTheFlushNeverCompletes_failsWithTimeoutAfterRecordsTimeout_inVirtualTime() {
        FAULTS.on(Opcode.FLUSH).once().hang();
        StepVerifier.withVirtualTime(() -> store.put(5, ByteBuffer.wrap(new byte[] { 5 })))
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(1999))
                .thenAwait(Duration.ofMillis(1))
                .expectError(TimeoutException.class)
                .verify(Duration.ofSeconds(10));
    }

    @Test
    void get_whenTheReadNeverCompletes_answers504() {
        FAULTS.on(Opcode.READ).once().hang();
        web.mutate().responseTimeout(Duration.ofSeconds(10)).build()
                .get().uri("/records/6").exchange().expectStatus().isEqualTo(504);
    }
}
