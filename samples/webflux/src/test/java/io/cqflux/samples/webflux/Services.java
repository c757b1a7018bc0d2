package io.cqflux.samples.webflux;

import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The records service started by hand, for tests whose properties differ from one service to the
 * next or that stop its peer: on a free port, over fabric/tcp on loopback (no test double), with
 * 1024 slots. Start one at a time and close it before the next: a context's close disposes
 * Reactor Netty's global loops.
 *
 * <p>Each request goes on a connection of its own ({@link #send}). Reactor Netty 1.2.18, the
 * server here, can stop reading a keep-alive connection for good when a request that arrived
 * before the previous one had ended is answered synchronously (a refusal, a 503, /baseline,
 * /actuator): reactor/reactor-netty#4361, fixed after that release. A test reusing connections
 * would then hang on that server defect rather than check the service.
 */
final class Services {
    private Services() {
    }

    /** {@return a client of HTTP/1.1; close it when done} */
    static HttpClient client() {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5))
                .build();
    }

    /**
     * Sends one request on a connection of its own, within 20 s unless the request says otherwise.
     *
     * @param request the request
     * @param body how to read the answer's body
     * @param <T> the body's type
     * @return the answer
     * @throws Exception when it fails or times out
     */
    static <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> body) throws Exception {
        HttpRequest r = request.timeout().isPresent() ? request
                : HttpRequest.newBuilder(request, (n, v) -> true).timeout(Duration.ofSeconds(20)).build();
        try (HttpClient c = client()) {
            return c.send(r, body);
        }
    }

    /**
     * @param extra properties as {@code --name=value}, over the defaults
     * @return the started service
     */
    static ConfigurableApplicationContext start(String... extra) {
        List<String> args = new ArrayList<>(List.of(extra));
        for (String d : List.of("--server.port=0", "--cqflux.transport=fabric", "--records.storage-transport=fabric",
                "--records.slots=1024", "--cqflux.peers.store.port=" + FreePort.next(), "--logging.level.root=WARN",
                // Tests close many services: no 2 s wait for Reactor Netty's loops to go quiet each time.
                "--spring.reactor.netty.shutdown-quiet-period=0s")) {
            String key = d.substring(0, d.indexOf('=') + 1);
            if (args.stream().noneMatch(a -> a.startsWith(key))) {
                args.add(d);
            }
        }
        return new SpringApplicationBuilder(RecordsApplication.class).run(args.toArray(String[]::new));
    }

    static int port(ConfigurableApplicationContext ctx) {
        return Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port"));
    }

    static URI uri(ConfigurableApplicationContext ctx, String path) {
        return URI.create("http://127.0.0.1:" + port(ctx) + path);
    }

    static HttpResponse<String> post(ConfigurableApplicationContext ctx, String path, byte[] body) throws Exception {
        return send(HttpRequest.newBuilder(uri(ctx, path)).POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<byte[]> get(ConfigurableApplicationContext ctx, String path) throws Exception {
        return send(HttpRequest.newBuilder(uri(ctx, path)).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    /** {@return the record's bytes as the peer holds them in its own memory (no RDMA), or null when it does not verify} */
    static byte[] atPeer(MemorySegment memory, long id, int slotSize) {
        MemorySegment slot = memory.asSlice(id * slotSize, slotSize);
        if (RecordFormat.check(slot, id) != RecordFormat.Check.OK) {
            return null;
        }
        ByteBuffer p = RecordFormat.payload(slot.asByteBuffer().order(ByteOrder.LITTLE_ENDIAN));
        byte[] out = new byte[p.remaining()];
        p.get(out);
        return out;
    }
}
