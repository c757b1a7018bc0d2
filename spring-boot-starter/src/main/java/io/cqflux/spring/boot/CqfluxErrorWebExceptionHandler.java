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
 *   <li>an offset or length outside a region (the library's range check refused it before anything
 *       was posted, naming the value and the bound): {@code 400};</li>
 *   <li>any other cqflux error: {@code 500}.</li>
 * </ul>
 *
 * <p>The problem's {@code detail} is the exception's message; no stack trace is written to the
 * response or logged. The error typically arrives on an event-loop thread (a failed completion is
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

    /** Where the library's range check lives: its refusals are the client's offsets and lengths. */
    private static final String RANGE_CHECK_CLASS = "io.cqflux.core.internal.Checks";
    private static final String RANGE_CHECK_METHOD = "range";

    private static final Log LOG = LogFactory.getLog(CqfluxErrorWebExceptionHandler.class);

    private final Duration retryAfter;

    /**
     * @param retryAfter the {@code Retry-After} of a {@code 503} answered because the peer is away;
     *     whole seconds, at least 1
     */
    public CqfluxErrorWebExceptionHandler(Duration retryAfter) {
        Objects.requireNonNull(retryAfter, "retryAfter");
        if (retryAfter.toSeconds() < 1) {
            throw new IllegalArgumentException("retryAfter " + retryAfter + " is below 1 second (Retry-After"
                    + " counts whole seconds)");
        }
        this.retryAfter = retryAfter;
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
        byte[] body = problem(status, e.getMessage(), exchange.getRequest().getPath().value());
        DataBuffer buffer = response.bufferFactory().wrap(body);
        return response.writeWith(Mono.just(buffer));
    }

    /** {@return the status a cqflux error is answered with} */
    static HttpStatus status(Throwable e) {
        if (e instanceof ConnectionException || e instanceof QueueFullException
                || e instanceof ResourceClosedException) {
            return HttpStatus.SERVICE_UNAVAILABLE;
        }
        if (isRangeRefusal(e)) {
            return HttpStatus.BAD_REQUEST;
        }
        return HttpStatus.INTERNAL_SERVER_ERROR;
    }

    /** {@return the cqflux error in {@code ex} or its causes, or null when it is not cqflux's} */
    static Throwable cqfluxCause(Throwable ex) {
        Throwable e = Exceptions.unwrap(ex);
        for (int depth = 0; e != null && depth < 8; depth++, e = e.getCause()) {
            if (e instanceof CqfluxException || isRangeRefusal(e)) {
                return e;
            }
        }
        return null;
    }

    /** An offset or length the library's range check refused (it throws IllegalArgumentException). */
    private static boolean isRangeRefusal(Throwable e) {
        if (!(e instanceof IllegalArgumentException)) {
            return false;
        }
        StackTraceElement[] at = e.getStackTrace();
        return at.length > 0 && RANGE_CHECK_CLASS.equals(at[0].getClassName())
                && RANGE_CHECK_METHOD.equals(at[0].getMethodName());
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
