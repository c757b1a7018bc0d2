package io.cqflux.spring.boot;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * The web side of {@link CqfluxRequestGate}: admits each request through the gate and counts it
 * until its exchange ends; once the application is shutting down, refuses new ones before any of
 * the application's filters and handlers run, hence before any RDMA work.
 *
 * <p><b>The refusal.</b> {@code 503 Service Unavailable}, {@code Connection: close} and a
 * {@code text/plain} body ({@link #REFUSAL}) saying that the service is shutting down and did not
 * process the request, which may therefore be retried, on another instance, even when it is not
 * idempotent. The request's body is read and dropped before the answer (up to 64 KiB and 1 s; not
 * at all when a larger body is declared or the client waits for {@code 100 Continue}), so that
 * closing the connection after it cannot reset it before the client has read it (RFC 9112, 9.6). Responses
 * of admitted requests that end after the gate closed carry {@code Connection: close} too, so a
 * kept-alive HTTP/1.1 connection ends with its last answer instead of carrying one more request
 * to be refused. (HTTP/2 has no {@code Connection} header; there the server's own shutdown ends
 * the connection.)
 *
 * <p><b>Not gated.</b> Requests under the pass-through paths (the actuator's base path, when the
 * actuator is on the class path and shares the application's port) are neither refused nor
 * counted: liveness must keep answering while the application drains, and readiness already says
 * {@code REFUSING_TRAFFIC}; they do no RDMA work. Requests of another context (the actuator's
 * own child context, on a separate management port, which sees the parent's filters) are not
 * gated either.
 *
 * <p><b>Order.</b> {@link #ORDER}, near the head of the chain (before Spring Security's
 * {@code WebFilterChainProxy}), leaving room for a filter that must see every request (logging,
 * tracing). An admitted request is counted from this filter until the rest of the chain ends:
 * answered, failed or cancelled by its client.
 *
 * <p><b>Thread safety.</b> Stateless apart from the gate; runs on the server's event loops.
 */
public final class CqfluxRequestGateFilter implements WebFilter, Ordered, ApplicationContextAware {
    /** The filter's order: {@code Ordered.HIGHEST_PRECEDENCE + 10}. */
    public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 10;

    /** The refusal's body. */
    public static final String REFUSAL = "503 Service Unavailable: the service is shutting down and did not process"
            + " this request; retry it, on another instance\n";

    private static final byte[] REFUSAL_BYTES = REFUSAL.getBytes(StandardCharsets.UTF_8);
    /** A refused request's body read and dropped before the answer, at most (see {@link #refuse}). */
    static final long DRAINED_BODY_BYTES = 64 * 1024;
    /** How long a refused request's body is read before the answer goes anyway. */
    static final java.time.Duration DRAIN_TIME = java.time.Duration.ofSeconds(1);

    private final CqfluxRequestGate gate;
    private final List<String> passThrough;
    private volatile ApplicationContext context;

    /**
     * @param gate the gate that admits, counts and, once closed, refuses
     * @param passThroughPaths path prefixes (within the application, after
     *     {@code spring.webflux.base-path}) never gated, e.g. {@code /actuator}; a prefix matches
     *     itself and what lies under it ({@code /actuator/health}), not {@code /actuatorx}
     */
    public CqfluxRequestGateFilter(CqfluxRequestGate gate, List<String> passThroughPaths) {
        this.gate = gate;
        this.passThrough = passThroughPaths.stream().map(CqfluxRequestGateFilter::trimmed)
                .filter(p -> !p.isEmpty()).toList();
    }

    private static String trimmed(String prefix) {
        String p = prefix.trim();
        while (p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        return p.isEmpty() || p.startsWith("/") ? p : "/" + p;
    }

    /**
     * Remembers the context whose requests are gated.
     *
     * @param context this filter's context
     */
    @Override
    public void setApplicationContext(ApplicationContext context) {
        this.context = context;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (passesThrough(exchange)) {
            return chain.filter(exchange);
        }
        // Admitted when subscribed, not when assembled: a Mono built and never subscribed (by a
        // filter that wraps this one) must not stay counted.
        return Mono.defer(() -> gate.enter() ? admitted(exchange, chain) : refuse(exchange));
    }

    private Mono<Void> admitted(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpResponse response = exchange.getResponse();
        response.beforeCommit(() -> {
            if (gate.isClosed()) {
                response.getHeaders().set(HttpHeaders.CONNECTION, "close");
            }
            return Mono.empty();
        });
        AtomicBoolean ended = new AtomicBoolean();
        return Mono.defer(() -> chain.filter(exchange)).doFinally(s -> {
            if (ended.compareAndSet(false, true)) {
                gate.exit();
            }
        });
    }

    private boolean passesThrough(ServerWebExchange exchange) {
        ApplicationContext own = context;
        ApplicationContext of = exchange.getApplicationContext();
        if (own != null && of != null && of != own) {
            return true; // another context's server, e.g. the actuator's on its own port
        }
        if (passThrough.isEmpty()) {
            return false;
        }
        String path = exchange.getRequest().getPath().pathWithinApplication().value();
        for (String p : passThrough) {
            if (path.startsWith(p) && (path.length() == p.length() || path.charAt(p.length()) == '/')) {
                return true;
            }
        }
        return false;
    }

    private static Mono<Void> refuse(ServerWebExchange exchange) {
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(HttpStatus.SERVICE_UNAVAILABLE);
        HttpHeaders headers = response.getHeaders();
        headers.set(HttpHeaders.CONNECTION, "close");
        headers.setContentType(new MediaType(MediaType.TEXT_PLAIN, StandardCharsets.UTF_8));
        headers.setContentLength(REFUSAL_BYTES.length);
        headers.setCacheControl("no-store");
        Mono<Void> answer = Mono.defer(() -> response.writeWith(Mono.fromSupplier(
                () -> response.bufferFactory().wrap(REFUSAL_BYTES))));
        HttpHeaders request = exchange.getRequest().getHeaders();
        if (request.getContentLength() > DRAINED_BODY_BYTES
                || request.getFirst(HttpHeaders.EXPECT) != null) {
            // A large declared body, or one the client sends only after a 100 Continue (which
            // reading it would send): answered at once, the connection closes after the answer.
            return answer;
        }
        // Read and dropped, bounded in bytes and time, so that closing the connection after the
        // answer does not reset it before the client has read it (RFC 9112, 9.6); an endless or
        // stalled body does not hold the refusal, nor the server's graceful shutdown after it.
        return DataBufferUtils.takeUntilByteCount(exchange.getRequest().getBody(), DRAINED_BODY_BYTES)
                .doOnNext(DataBufferUtils::release).then()
                .timeout(DRAIN_TIME)
                .onErrorComplete()
                .then(answer);
    }

    /** {@return the gate this filter admits through} */
    public CqfluxRequestGate gate() {
        return gate;
    }

    @Override
    public int getOrder() {
        return ORDER;
    }
}
