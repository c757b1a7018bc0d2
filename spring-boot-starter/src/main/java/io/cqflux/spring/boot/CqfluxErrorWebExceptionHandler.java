package io.cqflux.spring.boot;

import io.cqflux.core.ConnectionException;
import io.cqflux.core.CqfluxException;
import io.cqflux.core.QueueFullException;
import io.cqflux.core.ResourceClosedException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;

/**
 * Answers cqflux's errors that reach the web layer unhandled with an RFC 9457 problem
 * ({@code application/problem+json}) whose status says what the client can do, instead of
 * Spring's default {@code 500} for everything. On with
 * {@code cqflux.web.error-mapping.enabled=true}.
 *
 * <ul>
 *   <li>the peer is away ({@link ConnectionException}: unreachable, lost, closed, rejected):
 *       {@code 503} with {@code Retry-After} ({@code cqflux.web.error-mapping.retry-after});</li>
 *   <li>too many operations wait ({@link QueueFullException}): {@code 503};</li>
 *   <li>this instance or the peer's pool is closing ({@link ResourceClosedException}): {@code 503};</li>
 *   <li>a value the library's argument checks refused before anything was posted (an offset or
 *       length outside a region, a length above the per-operation maximum or the buffer pool's
 *       buffer size, and every other {@link IllegalArgumentException} thrown by
 *       {@code io.cqflux.core.internal.Checks}, the one check per operation), or a data buffer
 *       {@link CqfluxDataBuffers} refused for not fitting a pooled buffer: {@code 400};</li>
 *   <li>any other cqflux error: {@code 500}.</li>
 * </ul>
 *
 * <p>A {@code 400}'s {@code detail} is the exception's message: it names the client's own value
 * and the bound. A {@code 5xx}'s {@code detail} is a generic sentence unless
 * {@code cqflux.web.error-mapping.include-message=true}: its message may name peer addresses and
 * native calls, which are not the HTTP client's to see (the WARN line of a {@code 500} keeps it
 * for the operator). No stack trace is written to the response or logged. The error typically arrives on an event-loop thread (a failed completion is
 * signalled there), and formatting and writing a stack trace there holds every completion of the
 * loop behind it; a {@code 500} is logged as one WARN line, the trace only at DEBUG. Errors that
 * are not cqflux's pass on to the next handler (Spring Boot's own).
 */
public final class CqfluxErrorWebExceptionHandler implements WebExceptionHandler, Ordered {
    /**
     * Before Spring Boot's {@code DefaultErrorWebExceptionHandler} ({@code -1}), which would
     * otherwise answer {@code 500} first.
     */
    public static final int ORDER = -2;

    /**
     * Where the library's argument checks live (one per operation, and the primitives they are
     * made of): an {@link IllegalArgumentException} thrown there refused a value before anything
     * was posted. Matched by class, not by method, so that a check added there maps as well.
     */
    private static final String CHECKS_CLASS = "io.cqflux.core.internal.Checks";

    private static final Log LOG = LogFactory.getLog(CqfluxErrorWebExceptionHandler.class);

    private final Duration retryAfter;
    private final boolean includeMessage;

    /**
     * A handler whose {@code 5xx} problems carry a generic {@code detail}.
     *
     * @param retryAfter the {@code Retry-After} of a {@code 503} answered because the peer is away;
     *     whole seconds, at least 1
     */
    public CqfluxErrorWebExceptionHandler(Duration retryAfter) {
        this(retryAfter, false);
    }

    /**
     * @param retryAfter the {@code Retry-After} of a {@code 503} answered because the peer is away;
     *     whole seconds, at least 1
     * @param includeMessage whether a {@code 5xx} problem's {@code detail} is the exception's
     *     message (it may name peer addresses and native calls) rather than a generic sentence
     */
    public CqfluxErrorWebExceptionHandler(Duration retryAfter, boolean includeMessage) {
        Objects.requireNonNull(retryAfter, "retryAfter");
        if (retryAfter.toSeconds() < 1) {
            throw new IllegalArgumentException("retryAfter " + retryAfter + " is below 1 second (Retry-After"
                    + " counts whole seconds)");
        }
        this.retryAfter = retryAfter;
        this.includeMessage = includeMessage;
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
        Throwable e = cqfluxCause(ex);
        ServerHttpResponse response = exchange.getResponse();
        if (e == null || response.isCommitted()) {
            return Mono.error(ex);
        }
        HttpStatus status = status(e);
        if (e instanceof ConnectionException) {
            response.getHeaders().set(HttpHeaders.RETRY_AFTER, Long.toString(retryAfter.toSeconds()));
        }
        if (status == HttpStatus.INTERNAL_SERVER_ERROR) {
            LOG.warn("cqflux error answered 500 on " + exchange.getRequest().getMethod() + " "
                    + exchange.getRequest().getPath() + ": " + e);
            if (LOG.isDebugEnabled()) {
                LOG.debug("the error's stack trace", e);
            }
        }
        response.setStatusCode(status);
        response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        byte[] body = problem(status, detail(e, status), exchange.getRequest().getPath().value());
        DataBuffer buffer = response.bufferFactory().wrap(body);
        return response.writeWith(Mono.just(buffer));
    }

    /** {@return the status a cqflux error is answered with} */
    static HttpStatus status(Throwable e) {
        if (e instanceof ConnectionException || e instanceof QueueFullException
                || e instanceof ResourceClosedException) {
            return HttpStatus.SERVICE_UNAVAILABLE;
        }
        if (isArgumentRefusal(e)) {
            return HttpStatus.BAD_REQUEST;
        }
        return HttpStatus.INTERNAL_SERVER_ERROR;
    }

    /**
     * {@return the problem's detail: the message of a client error, a generic sentence for a
     * server error unless the messages are included}
     */
    String detail(Throwable e, HttpStatus status) {
        if (status.is4xxClientError() || includeMessage) {
            return e.getMessage();
        }
        if (e instanceof ConnectionException) {
            return "a peer this service depends on is unavailable; retry later";
        }
        if (e instanceof QueueFullException) {
            return "too many operations are waiting; retry later";
        }
        if (e instanceof ResourceClosedException) {
            return "the service is shutting down";
        }
        return "the request failed on the server; the server's log has the cause";
    }

    /** {@return the cqflux error in {@code ex} or its causes, or null when it is not cqflux's} */
    static Throwable cqfluxCause(Throwable ex) {
        Throwable e = Exceptions.unwrap(ex);
        for (int depth = 0; e != null && depth < 8; depth++, e = e.getCause()) {
            if (e instanceof CqfluxException || isArgumentRefusal(e)) {
                return e;
            }
        }
        return null;
    }

    /**
     * A value the library's argument checks refused: an IllegalArgumentException thrown in Checks,
     * or CqfluxDataBuffers' refusal of a data buffer larger than a pooled buffer.
     */
    static boolean isArgumentRefusal(Throwable e) {
        if (e instanceof CqfluxDataBuffers.DataBufferSizeException) {
            return true;
        }
        if (!(e instanceof IllegalArgumentException)) {
            return false;
        }
        StackTraceElement[] at = e.getStackTrace();
        return at.length > 0 && CHECKS_CLASS.equals(at[0].getClassName());
    }

    /** An RFC 9457 problem document; written by hand, so that the starter needs no JSON library. */
    private static byte[] problem(HttpStatus status, String detail, String instance) {
        return ("{\"type\":\"about:blank\",\"title\":" + json(status.getReasonPhrase()) + ",\"status\":" + status.value()
                + ",\"detail\":" + json(detail == null ? "" : detail) + ",\"instance\":" + json(instance) + "}")
                .getBytes(StandardCharsets.UTF_8);
    }

    private static String json(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
