package io.cqflux.reactor.internal.op;

import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.WriteRequest;
import io.cqflux.reactor.WriteResult;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.util.annotation.Nullable;

/**
 * {@link RdmaConnection#writeAll}: a bounded window of writes in flight, results in request order,
 * without the per-request tuple, inner Mono chain, inner subscriber and queue a
 * {@code index().flatMapSequential(...)} costs.
 *
 * <p><b>The window.</b> A fixed ring of {@code window} slots, each its own inner subscriber. A slot
 * is taken when a request arrives from upstream and freed when its result is emitted downstream;
 * upstream is asked for exactly as many requests as there are free slots ({@code window} at
 * first, then one per result emitted), so at most {@code window} writes are in flight and at most
 * {@code window} requests or results are held, whatever the downstream demand. A request that
 * arrives with no free slot is an upstream overflow ({@link Exceptions#failWithOverflow}).
 *
 * <p><b>Posting.</b> A request is posted from the connection's loop thread, by one posting scan
 * at a time ({@link WriteAllPosting}): a producer on another thread (a request-handling thread, a
 * {@code Sinks.many()} fed from elsewhere) costs one hand-over to the loop per burst, not one per
 * write as a {@code write()} subscribed on that thread does: posting is batched per loop turn.
 *
 * <p><b>Signals.</b> Every downstream signal is sent by one WIP drain loop (Reactor's usual
 * pattern): completions arrive on the connection's loop thread, requests on whatever thread
 * upstream uses, demand on the subscriber's; the drain emits the completed head slots in order
 * while there is demand. A successful completion's drain waits for the end of the completion
 * batch it came in ({@link io.cqflux.epoll.loop.EventLoop#runAfterBatch}): one drain emits the
 * batch's results and asks upstream for as many requests, as a C program reads a batch of
 * completions before it posts again. Each write is an ordinary operation Mono ({@link OpMono}) subscribed with
 * its slot, so it checks, posts and holds its credits and regions as a lone {@code write()} does;
 * cancelling it only detaches the slot, the operation keeps its buffers until the NIC is done.
 *
 * <p><b>Failures.</b> The first failure of a write (its check, its completion, the connection's
 * end; with no write in flight and upstream not completed, the end itself) fails the stream at once: upstream is cancelled, the other writes in flight are cancelled,
 * which only detaches them (they still finish at the NIC and keep their credits and regions until
 * then; a later failure of their own goes to {@link Operators#onErrorDropped}, the connection's
 * end, which the stream has reported or the connection reports, does not). An upstream error does
 * the same, at once, without waiting for the writes in flight. A {@code request(n <= 0)} fails the
 * stream with the {@link IllegalArgumentException} Reactive Streams §3.9 asks for. A subscriber
 * whose {@code onNext} throws (§2.13 forbids it) is treated as Reactor's operators treat a callback
 * of theirs that throws: the error, through {@link Operators#onOperatorError}, fails the stream in
 * the same way (a fatal one, a {@code VirtualMachineError} say, is rethrown after upstream and the
 * writes were cancelled; no discard runs after it).
 *
 * <p><b>Discards.</b> Once the stream has ended (cancelled, or its terminal signal sent), every
 * request taken from upstream that will not be emitted as a result goes to
 * {@link Operators#onDiscard} (so {@code doOnDiscard(WriteRequest.class, ...)} sees it), exactly once,
 * and never while the NIC may still read its buffer: at once for a held result (completed, not
 * yet asked for), a request whose write was never posted, or one that arrives after the end; for
 * a write that failed or that the end cancelled in flight, once its regions are released, which
 * {@link OpMono} tells its slot ({@link ReleaseListener}): at its completion, or, when the
 * connection's end failed it, after the native close destroyed the queue pair (later than a
 * {@code write()} subscriber hears of the end; never, if that close failed and the buffers are
 * kept).
 * So every request is either emitted or discarded. A drain after the end emits nothing, asks
 * upstream for nothing and only discards. The hook also reaches upstream through the context, for
 * what upstream discards on its own, but not upstream's discard of a request taken here that is
 * the last one taken or still in a slot, and a request upstream discarded after the end and then
 * delivered is not discarded here again ({@link WriteAllDiscards}: Reactor's unicast sink can
 * discard one, before or after its delivery, when an emission races the cancel).
 */
public final class WriteAllFlux extends Flux<WriteResult> implements Scannable {
    public static final String NAME = "cqflux.writeAll";

    private final RdmaConnection connection;
    private final Flux<? extends WriteRequest> source;
    private final int window;

    private WriteAllFlux(RdmaConnection connection, Publisher<? extends WriteRequest> source, int window) {
        this.connection = connection;
        this.source = Flux.from(source);
        this.window = window;
    }

    /**
     * Builds the stream and hands it to Reactor's assembly hooks, as Reactor's own operators do.
     *
     * @param connection whose {@code write}/{@code durableWrite} post the requests
     * @param requests the writes
     * @param window writes in flight at most, at least 1
     * @return the results
     */
    public static Flux<WriteResult> create(RdmaConnection connection, Publisher<? extends WriteRequest> requests,
                                    int window) {
        if (window < 1) {
            throw new IllegalArgumentException("writeAll window " + window + " < 1");
        }
        return onAssembly(new WriteAllFlux(connection, requests, window));
    }

    @Override
    public void subscribe(CoreSubscriber<? super WriteResult> actual) {
        source.subscribe(new WriteAllMain(actual, connection, window));
    }

    @Override
    @Nullable
    @SuppressWarnings("rawtypes") // Scannable declares it with the raw Attr
    public Object scanUnsafe(Attr key) {
        if (key == Attr.NAME) {
            return NAME;
        }
        if (key == Attr.PARENT) {
            return source;
        }
        if (key == Attr.PREFETCH) {
            return window;
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        return null;
    }

    @Override
    public String toString() {
        return NAME + "[" + connection.description() + ", window " + window + "]";
    }
}
