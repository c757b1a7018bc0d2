package io.cqflux.samples.webflux;

import io.cqflux.core.ConnectionException;
import io.cqflux.core.QueueFullException;
import io.cqflux.core.ResourceClosedException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeoutException;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * {@code POST /records/{id}}: {@code 201 Created} once the record is durable at the storage peer.
 * {@code GET /records/{id}}: the record, read from the peer's memory by RDMA and verified.
 * {@code /baseline/{id}}: the same HTTP exchange with no RDMA behind it, for the load script's
 * comparison. {@code 503} while the peer is unreachable, {@code 504} past {@code records.timeout}.
 *
 * <p>A refusal, and a {@code 5xx} this service answers itself, is an RFC 9457 problem
 * ({@code application/problem+json}) whose {@code detail} says why (for a refusal, the value and
 * the bound), never a stack trace.
 *
 * <p>An id is decimal digits without leading zeros, within {@code records.slots}, checked before
 * the body is read: any other spelling ({@code 0x10}, {@code +16}, {@code 016}) is a {@code 400},
 * never another record.
 *
 * <p>A body is bounded by a record's size: a declared {@code Content-Length} over it is a
 * {@code 413} before the body is read, and a body without one is read only up to it ({@code 413}
 * past it). Nothing larger than a record is buffered.
 *
 * <p>A record is opaque bytes, answered as {@code application/octet-stream} with
 * {@code X-Content-Type-Options: nosniff} whatever the reader accepts.
 */
@RestController
public class RecordsController {
    private static final Logger LOG = Loggers.getLogger(RecordsController.class);
    private static final int ID_SHOWN = 32;

    private final RecordStore store;
    private final byte[] baseline;

    /**
     * @param store the records
     * @param props the slot size (the baseline answers a record's worth of bytes)
     */
    public RecordsController(RecordStore store, RecordsProperties props) {
        this.store = store;
        this.baseline = new byte[Math.min(256, props.slotSize() - RecordFormat.HEADER)];
        Arrays.fill(baseline, (byte) 'b');
    }

    /**
     * @param id the record's id, decimal
     * @param request its body: the record's bytes
     * @return {@code 201} with its location, after the durable write
     */
    @PostMapping("/records/{id}")
    public Mono<ResponseEntity<Void>> put(@PathVariable("id") String id, ServerHttpRequest request) {
        long record = id(id);
        // The body's buffers go to the store as they are (one copy, into a registered buffer) and
        // are released here once the write has ended or been cancelled.
        return body(request, store.maxPayload())
                .flatMap(b -> store.put(record, b).doFinally(s -> DataBufferUtils.release(b)))
                .thenReturn(ResponseEntity.created(URI.create("/records/" + record)).build());
    }

    /**
     * @param id the record's id, decimal
     * @return {@code 200} with its verified bytes, or {@code 404}
     */
    @GetMapping("/records/{id}")
    public Mono<ResponseEntity<ByteBuffer>> get(@PathVariable("id") String id) {
        // The payload as it came from the read, a view (WebFlux's ByteBuffer encoder wraps it for
        // Netty without a copy).
        return store.get(id(id))
                .map(RecordsController::opaque)
                .defaultIfEmpty(ResponseEntity.notFound().build());
    }

    /**
     * @param id ignored but parsed and checked, as for a record
     * @param request its body, read (within a record's bound) and dropped
     * @return {@code 201}, with no RDMA
     */
    @PostMapping("/baseline/{id}")
    public Mono<ResponseEntity<Void>> putBaseline(@PathVariable("id") String id, ServerHttpRequest request) {
        long record = id(id);
        return body(request, store.maxPayload())
                .doOnNext(DataBufferUtils::release)
                .thenReturn(ResponseEntity.created(URI.create("/baseline/" + record)).build());
    }

    /**
     * @param id ignored but parsed and checked, as for a record
     * @return {@code 200} with a record's worth of bytes from the heap, no RDMA
     */
    @GetMapping("/baseline/{id}")
    public ResponseEntity<byte[]> getBaseline(@PathVariable("id") String id) {
        id(id);
        return opaque(baseline);
    }

    /**
     * A record id as the API spells it: decimal digits, no leading zero but in {@code 0} itself (so
     * that no other spelling, such as {@code 0x10}, {@code +16} or {@code 016}, names a record, and
     * each record has one URI), then within {@code records.slots}.
     */
    private long id(String text) {
        String shown = text.length() > ID_SHOWN ? text.substring(0, ID_SHOWN) + "..." : text;
        if (text.isEmpty() || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                    "record id '" + shown + "' is not a decimal number in " + store.idBound());
        }
        if (text.length() > 1 && text.charAt(0) == '0') {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                    "record id '" + shown + "' has a leading zero; ids in " + store.idBound() + " are written without");
        }
        if (text.length() > 18) { // beyond any int slot count, and beyond a long's digits
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                    "record id " + shown + " is outside " + store.idBound());
        }
        long id = Long.parseLong(text);
        store.checkId(id);
        return id;
    }

    /**
     * The request's bytes whatever its content type, as one data buffer that the subscriber
     * releases: Netty's buffers joined without a copy (a composite). Never more than {@code max}
     * bytes are held: a declared {@code Content-Length} over {@code max} is refused before the
     * body is read; a body without one is cut off (and its joined part released) as soon as it
     * passes {@code max}. An empty body is an empty buffer.
     */
    private static Mono<DataBuffer> body(ServerHttpRequest request, int max) {
        long declared = request.getHeaders().getContentLength();
        if (declared > max) {
            return Mono.error(new ResponseStatusException(HttpStatus.PAYLOAD_TOO_LARGE,
                    "a record holds at most " + max + " bytes, not " + declared + " (Content-Length)"));
        }
        return DataBufferUtils.join(request.getBody(), max)
                .onErrorMap(DataBufferLimitException.class, e -> new ResponseStatusException(
                        HttpStatus.PAYLOAD_TOO_LARGE, "a record holds at most " + max + " bytes; the body is longer"))
                .defaultIfEmpty(DefaultDataBufferFactory.sharedInstance.allocateBuffer(0));
    }

    /**
     * Opaque bytes as opaque bytes: never labelled with a type the reader asked for (a stored
     * {@code <script>} served as {@code text/html} would run in the service's origin), and not to
     * be sniffed into one.
     */
    private static <T> ResponseEntity<T> opaque(T bytes) {
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_OCTET_STREAM)
                .header("X-Content-Type-Options", "nosniff").body(bytes);
    }

    /**
     * @param e a refusal of this service (bad id, body over the bound, a record that does not verify)
     * @return its status with a problem whose detail is the refusal's own message
     */
    @ExceptionHandler(ResponseStatusException.class)
    public ResponseEntity<ProblemDetail> refused(ResponseStatusException e) {
        return problem(e.getStatusCode(), e.getReason());
    }

    /**
     * @param e the peer is away, or this side is closing
     * @return {@code 503} with a generic detail (the exception's message names peer addresses and
     *     native calls, for the operator's log, not for the client: the starter's error mapping
     *     answers the same way)
     */
    @ExceptionHandler({ ConnectionException.class, ResourceClosedException.class, QueueFullException.class })
    public ResponseEntity<ProblemDetail> unavailable(RuntimeException e) {
        LOG.warn("503: " + e);
        return problem(HttpStatus.SERVICE_UNAVAILABLE, switch (e) {
            case QueueFullException q -> "too many requests wait for the storage peer; try again later";
            case ResourceClosedException r -> "the storage connection is closing; try again later";
            default -> "the storage peer is unavailable; try again later";
        });
    }

    /** @param e no completion within {@code records.timeout} @return {@code 504}, with a generic detail */
    @ExceptionHandler(TimeoutException.class)
    public ResponseEntity<ProblemDetail> timeout(TimeoutException e) {
        LOG.warn("504: " + e);
        return problem(HttpStatus.GATEWAY_TIMEOUT, "the storage peer did not answer in time");
    }

    /** An RFC 9457 problem, as JSON whatever the client accepts (its detail may echo the request). */
    private static ResponseEntity<ProblemDetail> problem(HttpStatusCode status, String detail) {
        return ResponseEntity.status(status).contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .header("X-Content-Type-Options", "nosniff")
                .body(ProblemDetail.forStatusAndDetail(status, detail));
    }
}
