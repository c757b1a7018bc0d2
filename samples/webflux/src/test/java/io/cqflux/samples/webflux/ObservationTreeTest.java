package io.cqflux.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationView;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpHeaders;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * With {@code cqflux.observations.enabled=true}, the span tree of a request: WebFlux's
 * {@code http.server.requests} observation is the parent of the RDMA operation's
 * {@code cqflux.rdma.operation}, found through the request's Reactor context although the
 * operation ends on cqflux's event loop.
 */
@AutoConfigureWebTestClient
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "cqflux.transport=fabric", "records.storage-transport=fabric", "records.slots=64",
                "cqflux.observations.enabled=true" })
class ObservationTreeTest {

    @DynamicPropertySource
    static void storagePort(DynamicPropertyRegistry r) {
        r.add("cqflux.peers.store.port", FreePort::next);
    }

    /** One stopped observation: its name, its contextual name, its parent's name (or null). */
    record Node(String name, String contextualName, String parent, Observation.Context context) {
    }

    @TestConfiguration
    static class Recording {
        static final List<Node> STOPPED = new CopyOnWriteArrayList<>();

        @Bean
        ObservationHandler<Observation.Context> parentRecorder() {
            return new ObservationHandler<>() {
                @Override
                public void onStop(Observation.Context context) {
                    ObservationView parent = context.getParentObservation();
                    STOPPED.add(new Node(context.getName(), context.getContextualName(),
                            parent == null ? null : parent.getContextView().getName(), context));
                }

                @Override
                public boolean supportsContext(Observation.Context context) {
                    return true;
                }
            };
        }
    }

    @Autowired
    WebTestClient web;

    @Test
    void postAndGet_eachRdmaOperationIsAChildOfItsHttpRequest() {
        web = web.mutate().defaultHeader(HttpHeaders.CONNECTION, "close").build();
        byte[] body = "observed".getBytes(StandardCharsets.UTF_8);
        web.post().uri("/records/5").bodyValue(body).exchange().expectStatus().isCreated();
        web.get().uri("/records/5").exchange().expectStatus().isOk().expectBody(byte[].class).isEqualTo(body);

        // The server observation stops after the answer is written: wait for both requests'.
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> Recording.STOPPED.stream()
                .filter(n -> n.name().equals("http.server.requests")).count() >= 2);
        List<Node> rdma = Recording.STOPPED.stream().filter(n -> n.name().equals("cqflux.rdma.operation")).toList();
        assertThat(rdma).extracting(Node::contextualName).contains("cqflux durableWrite", "cqflux read");
        // Every RDMA operation of a request (the ones made at start-up have no request) has the
        // request as its parent; both requests made theirs.
        List<Node> inRequests = rdma.stream().filter(n -> n.parent() != null).toList();
        assertThat(inRequests).extracting(Node::parent).containsOnly("http.server.requests");
        assertThat(inRequests).extracting(Node::contextualName)
                .containsExactlyInAnyOrder("cqflux durableWrite", "cqflux read");
        Node write = inRequests.stream().filter(n -> n.contextualName().equals("cqflux durableWrite"))
                .findFirst().orElseThrow();
        assertThat(write.context().getLowCardinalityKeyValue("outcome").getValue()).isEqualTo("success");
        assertThat(write.context().getHighCardinalityKeyValue("bytes").getValue())
                .isEqualTo(String.valueOf(RecordFormat.HEADER + body.length));
    }
}
