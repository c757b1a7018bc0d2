package io.cqflux.spring.boot;

import java.util.concurrent.atomic.AtomicInteger;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.web.server.context.WebServerGracefulShutdownLifecycle;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;

/**
 * Admits the application's requests until it begins to shut down, refuses them from then on,
 * and counts the admitted ones still in progress, so that {@link CqfluxLifecycle} drains the
 * peers only once those have ended. The web side is {@link CqfluxRequestGateFilter}; both are
 * auto-configured in a reactive web application.
 *
 * <p><b>Why.</b> The web server's graceful shutdown ({@code server.shutdown=graceful}) waits for
 * the requests in progress when it begins, but a kept-alive HTTP/1.1 connection that was busy
 * then stays open afterwards and carries the client's next request into the application, until
 * the server's event loops are disposed (Spring's {@code ReactorResourceFactory}, phase 0: after
 * cqflux's drain). Without
 * this gate such requests reach the peers while, or after, they are drained and closed: they are
 * answered with the peer pool's "disposed" error, or cut when the loops go, sometimes after their
 * write has landed at the peer.
 *
 * <p><b>Order.</b> Its {@link #PHASE} is above the web server's graceful shutdown
 * ({@code Integer.MAX_VALUE - 1024}); a higher phase stops earlier. Its stop closes the gate: from
 * then on the filter answers every new request with {@code 503} and {@code Connection: close},
 * without running it. The server's graceful shutdown and stop follow, then
 * {@link CqfluxLifecycle} ({@link CqfluxLifecycle#PHASE}), which waits, within
 * {@code cqflux.shutdown-timeout}, until no admitted request is in progress and no operation is
 * in flight, and only then closes the peers.
 *
 * <p><b>Readiness.</b> When the gate closes it publishes {@link ReadinessState#REFUSING_TRAFFIC},
 * with itself as the source, so that the readiness probe says what the application does: a
 * closing context has said so already (Spring Boot publishes it when the close begins, before any
 * lifecycle bean stops), but a context stopped without being closed has not, and
 * {@link CqfluxReadiness}, which raises readiness back when the required peers come back up,
 * leaves alone a {@code REFUSING_TRAFFIC} that another source published.
 *
 * <p><b>Thread safety.</b> {@link #enter()} and {@link #exit()} are called on the server's event
 * loops, the lifecycle methods by the context; all are thread-safe and never block. Closing is
 * final: a start after the stop leaves the gate closed (the context cannot be started again
 * anyway, see {@link CqfluxLifecycle#start()}).
 */
public final class CqfluxRequestGate implements SmartLifecycle {
    /**
     * The phase: {@code Integer.MAX_VALUE - 512}, so it stops after the application's beans of the
     * default phase and before the web server's graceful shutdown
     * ({@link WebServerGracefulShutdownLifecycle#SMART_LIFECYCLE_PHASE}).
     */
    public static final int PHASE = WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE + 512;

    private static final Log LOG = LogFactory.getLog(CqfluxRequestGate.class);

    private final ApplicationEventPublisher publisher;
    private final AtomicInteger active = new AtomicInteger();
    private volatile boolean closed;
    private volatile boolean running;

    /** A gate that publishes no readiness (for an application without availability tracking). */
    public CqfluxRequestGate() {
        this(null);
    }

    /**
     * @param publisher where {@code REFUSING_TRAFFIC} goes when the gate closes; null publishes
     *     nothing
     */
    public CqfluxRequestGate(ApplicationEventPublisher publisher) {
        this.publisher = publisher;
    }

    /**
     * Admits a request, unless the gate is closed. An admitted request must be followed by one
     * {@link #exit()} when it ends (answered, failed or cancelled).
     *
     * @return whether the request was admitted; false once the application is shutting down
     */
    public boolean enter() {
        // Counted before the check, and close() sets the flag before it reads the count: either
        // this request sees the gate closed, or the drain sees it counted.
        active.incrementAndGet();
        if (closed) {
            active.decrementAndGet();
            return false;
        }
        return true;
    }

    /**
     * Ends a request that {@link #enter()} admitted. An exit with no admitted request in progress
     * is ignored (and logged): were it counted, the next admitted request would read as none, and
     * the drain would run under it.
     */
    public void exit() {
        if (active.getAndUpdate(v -> v > 0 ? v - 1 : v) <= 0) {
            LOG.warn("cqflux: CqfluxRequestGate.exit() without an admitted request in progress; ignored");
        }
    }

    /** {@return the admitted requests still in progress} */
    public int active() {
        return active.get();
    }

    /** {@return whether new requests are refused} */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Refuses every request from now on; idempotent. Requests already admitted go on; see
     * {@link #active()}.
     */
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        LOG.info("cqflux: the application is shutting down: new requests are refused (503), "
                + active() + " in progress");
        if (publisher != null) {
            try {
                AvailabilityChangeEvent.publish(publisher, this, ReadinessState.REFUSING_TRAFFIC);
            } catch (RuntimeException e) {
                LOG.warn("cqflux: an availability listener failed on readiness REFUSING_TRAFFIC", e);
            }
        }
    }

    @Override
    public void start() {
        running = !closed;
    }

    /** Closes the gate (see {@link #close()}); returns at once, the wait is {@link CqfluxLifecycle}'s. */
    @Override
    public void stop() {
        close();
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    @Override
    public String toString() {
        return "CqfluxRequestGate[" + (closed ? "closed" : "open") + ", " + active() + " in progress]";
    }
}
