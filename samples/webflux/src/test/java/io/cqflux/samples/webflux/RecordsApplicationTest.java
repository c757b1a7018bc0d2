package io.cqflux.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

@AutoConfigureWebTestClient
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "cqflux.transport=fabric", "records.storage-transport=fabric", "records.slots=1024" })
class RecordsApplicationTest {

    @DynamicPropertySource
    static void storagePort(DynamicPropertyRegistry r) {
        r.add("cqflux.peers.store.port", FreePort::next);
    }

    @Autowired
    WebTestClient web;

    @Autowired
    StoragePeer storage;

    /**
     * A connection per request: the refusals, 503s, /baseline and /actuator are answered
     * synchronously, after which Reactor Netty 1.2.18 can stop reading a reused connection
     * (reactor/reactor-netty#4361; see {@link Services}).
     */
    @BeforeEach
    void connectionPerRequest() {
        web = web.mutate().defaultHeader(HttpHeaders.CONNECTION, "close").build();
    }

    @Test
    void post_answers201AfterTheDurableWrite_andGetReadsTheVerifiedBytesBack() {
        byte[] body = "the record seven".getBytes(StandardCharsets.UTF_8);
        web.post().uri("/records/7").bodyValue(body).exchange()
                .expectStatus().isCreated().expectHeader().location("/records/7");
        // 201 means durable: the bytes are in the peer's memory before the answer.
        assertThat(storage.verify().stored()).isGreaterThanOrEqualTo(1);
        web.get().uri("/records/7").exchange().expectStatus().isOk()
                .expectHeader().contentType(MediaType.APPLICATION_OCTET_STREAM)
                .expectHeader().valueEquals("X-Content-Type-Options", "nosniff")
                .expectBody(byte[].class).isEqualTo(body);
    }

    @Test
    void get_ofAnEmptySlot_is404() {
        web.get().uri("/records/1000").exchange().expectStatus().isNotFound();
    }

    @Test
    void idOutsideTheStorage_is400NamingTheBound() {
        web.post().uri("/records/1024").bodyValue(new byte[1]).exchange()
                .expectStatus().isBadRequest()
                .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody().jsonPath("$.detail").isEqualTo("record id 1024 is outside [0, 1024)");
        web.get().uri("/records/-1").exchange()
                .expectStatus().isBadRequest()
                .expectBody().jsonPath("$.detail").isEqualTo("record id '-1' is not a decimal number in [0, 1024)");
    }

    @Test
    void recordLargerThanASlot_is413NamingTheBound() {
        web.post().uri("/records/3").bodyValue(new byte[1024]).exchange()
                .expectStatus().isEqualTo(413)
                .expectBody().jsonPath("$.detail").isEqualTo("a record holds at most 1000 bytes, not 1024 (Content-Length)");
    }

    @Test
    void corruptedAtThePeer_getAnswers500InsteadOfWrongBytes() {
        web.post().uri("/records/9").bodyValue("nine".getBytes(StandardCharsets.UTF_8)).exchange()
                .expectStatus().isCreated();
        long at = 9L * 1024 + RecordFormat.HEADER + 1;
        byte b = storage.memory().get(java.lang.foreign.ValueLayout.JAVA_BYTE, at);
        storage.memory().set(java.lang.foreign.ValueLayout.JAVA_BYTE, at, (byte) ~b);
        try {
            web.get().uri("/records/9").exchange().expectStatus().is5xxServerError();
        } finally {
            storage.memory().set(java.lang.foreign.ValueLayout.JAVA_BYTE, at, b);
        }
    }

    @Test
    void health_showsTheStorePeerUp_andTheBaselineAnswersWithoutRdma() {
        web.get().uri("/actuator/health").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.components.cqflux.components.peers.components.store.status").isEqualTo("UP");
        web.get().uri("/baseline/1").exchange().expectStatus().isOk();
        web.post().uri("/baseline/1").bodyValue(new byte[16]).exchange().expectStatus().isCreated();
    }
}
