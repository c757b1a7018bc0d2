package io.cqflux.spring.boot;

import java.util.ArrayList;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationListener;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.event.ContextClosedEvent;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Ties the application's readiness to its required peers: lowers it to
 * {@link ReadinessState#REFUSING_TRAFFIC} when one of them goes down and raises it back to
 * {@link ReadinessState#ACCEPTING_TRAFFIC} when all are up again, so that a Kubernetes readiness
 * probe ({@code /actuator/health/readiness}) takes the instance out of rotation while its storage
 * is away. When Spring Boot declares the application ready while a required peer is down, it
 * answers with {@code REFUSING_TRAFFIC} at once. Off with {@code cqflux.readiness=false}.
 *
 * <p><b>Whose readiness.</b> The readiness state is shared with Spring Boot and the application,
 * so this bean follows every readiness event, not only its own. It only ever restores
 * {@code ACCEPTING_TRAFFIC} that it took away itself: once anyone else publishes
 * {@code REFUSING_TRAFFIC} (the application, or Spring Boot's reactive web context, which does so
 * at the start of its close, before the lifecycle beans stop), a peer coming back changes nothing
 * until someone else publishes {@code ACCEPTING_TRAFFIC} again. Before the application is declared
 * ready it publishes nothing. From {@link ContextClosedEvent} on it stops watching the peers and
 * never publishes again, so a peer reconnecting in the graceful-shutdown window cannot report a
 * terminating instance ready.
 *
 * <p><b>Whose context.</b> Spring forwards a child context's events to its parent's listeners,
 * so this bean also hears a child closing ({@link ContextClosedEvent}) and a child declaring its
 * own readiness (Spring Boot publishes readiness with the context as the source,
 * {@code AvailabilityChangeEvent.publish(context, state)}).
 * Events whose context or source is a descendant of this bean's context are ignored: they are
 * about the child, not about this application. An event with another source (the application
 * publishing with one of its beans as the source, or this bean's own nested publish) cannot be
 * told apart by origin and is followed as before; this bean skips only its own.
 *
 * <p><b>Thread safety.</b> Peer state changes arrive on cqflux event-loop threads; they are
 * handed to {@link Schedulers#boundedElastic()} before anything is published, because the
 * application's availability listeners run on the publishing thread and must never run (or block)
 * on an event loop. Decisions (the flags below) are made under this object's monitor, but every
 * event is published after releasing it: a publish runs all of the application's availability
 * listeners, and one that takes a lock held by a thread that is itself publishing readiness (and
 * so waiting for this bean's listener) would otherwise deadlock with it. The peer watch's
 * publishes are serialised by its one {@code publishOn} worker; a publish re-checks
 * {@link ContextClosedEvent} just before it goes out, so only a close that arrives during that
 * very publish can still see it. A publish that a listener failed is undone in the flags (unless
 * a newer decision replaced it), so the next peer signal retries it.
 */
public final class CqfluxReadiness implements ApplicationListener<ApplicationEvent>, SmartLifecycle,
        ApplicationContextAware {
    private static final Log LOG = LogFactory.getLog(CqfluxReadiness.class);

    private final CqfluxPeers peers;
    private final ApplicationEventPublisher publisher;
    private final Scheduler publishOn;
    private volatile Disposable watch;
    /** The context this bean lives in; null outside one (then every event is its own). */
    private volatile ApplicationContext context;

    // Guarded by this.
    /** The last readiness event published by someone else was not ACCEPTING_TRAFFIC (none yet, too). */
    private boolean othersRefusing = true;
    /** This bean published REFUSING_TRAFFIC and nobody else has published readiness since. */
    private boolean lowered;
    /** The context is closing: never publish again. */
    private boolean closed;
    /** Counts changes of {@code lowered}, so a failed publish undoes only its own decision. */
    private long decisions;
    /** Peer state signals handled (published or not), for tests to wait on. */
    private volatile long handled;

    /**
     * @param peers the peers whose required ones decide readiness
     * @param publisher where the availability events go (the application context)
     */
    public CqfluxReadiness(CqfluxPeers peers, ApplicationEventPublisher publisher) {
        this(peers, publisher, Schedulers.boundedElastic());
    }

    CqfluxReadiness(CqfluxPeers peers, ApplicationEventPublisher publisher, Scheduler publishOn) {
        this.peers = peers;
        this.publisher = publisher;
        this.publishOn = publishOn;
    }

    /**
     * Remembers the context this bean lives in, to tell its events from a child context's.
     *
     * @param context this bean's context
     */
    @Override
    public void setApplicationContext(ApplicationContext context) {
        this.context = context;
    }

    @Override
    public void onApplicationEvent(ApplicationEvent event) {
        if (event instanceof ContextClosedEvent c) {
            if (!fromDescendant(c.getApplicationContext())) {
                close();
            }
        } else if (event instanceof AvailabilityChangeEvent<?> a && a.getState() instanceof ReadinessState state
                && a.getSource() != this && !fromDescendant(a.getSource())) {
            othersChanged(state);
        }
    }

    /**
     * {@return whether {@code source} is a context below this bean's own (a child, or its child),
     * whose events Spring forwards here}
     *
     * @param source an event's context or source
     */
    private boolean fromDescendant(Object source) {
        ApplicationContext own = context;
        if (own == null || !(source instanceof ApplicationContext c) || c == own) {
            return false;
        }
        for (ApplicationContext p = c.getParent(); p != null; p = p.getParent()) {
            if (p == own) {
                return true;
            }
        }
        return false;
    }

    private void othersChanged(ReadinessState state) {
        long mine;
        synchronized (this) {
            // Whatever this bean had lowered, the state is now someone else's.
            lowered = false;
            decisions++; // a failed publish of this bean in progress must not undo this
            othersRefusing = state != ReadinessState.ACCEPTING_TRAFFIC;
            if (othersRefusing || closed || peers.requiredAvailable()) {
                return;
            }
            lowered = true;
            mine = ++decisions;
        }
        LOG.warn("cqflux: a required peer is down, readiness REFUSING_TRAFFIC: " + peers);
        // Published from inside this dispatch: the nested event must reach Boot's
        // availability bean after the ACCEPTING_TRAFFIC being dispatched did, so this
        // listener comes after it (CqfluxAutoConfiguration runs after
        // ApplicationAvailabilityAutoConfiguration: its beans, listeners included, are
        // registered and created later, and listeners without an order keep that order).
        // Outside the monitor (see the class comment); lowered only if it reached every
        // listener, otherwise the next peer signal retries.
        if (!tryPublish(ReadinessState.REFUSING_TRAFFIC)) {
            undo(mine, false);
        }
    }

    /** Restores {@code lowered} after a failed publish, unless a newer decision replaced it. */
    private synchronized void undo(long decision, boolean wasLowered) {
        if (decisions == decision) {
            lowered = wasLowered;
        }
    }

    private synchronized void close() {
        closed = true;
        Disposable w = watch;
        if (w != null) {
            w.dispose();
        }
    }

    @Override
    public synchronized void start() {
        if (closed || watch != null) {
            return;
        }
        List<Flux<CqfluxPeer.State>> required = new ArrayList<>();
        for (CqfluxPeer p : peers.all()) {
            if (p.required()) {
                required.add(p.states().skip(1));
            }
        }
        // changed() lets no listener's exception out (it would cancel this watch for good); the
        // error consumer is the backstop for anything else, so it is at least logged as ours.
        watch = Flux.merge(required).publishOn(publishOn).subscribe(s -> changed(),
                e -> LOG.error("cqflux: readiness no longer follows the required peers: " + peers, e));
    }

    private void changed() {
        try {
            ReadinessState next;
            long mine;
            synchronized (this) {
                if (closed || othersRefusing) {
                    // Not ready yet, refused by someone else (never overridden), or closing.
                    return;
                }
                boolean available = peers.requiredAvailable();
                if (!available && !lowered) {
                    next = ReadinessState.REFUSING_TRAFFIC;
                } else if (available && lowered) {
                    next = ReadinessState.ACCEPTING_TRAFFIC;
                } else {
                    return;
                }
                lowered = next == ReadinessState.REFUSING_TRAFFIC;
                mine = ++decisions;
            }
            LOG.info("cqflux: readiness " + next + " (" + peers + ")");
            synchronized (this) {
                // Closing since the decision: a terminating instance must not change readiness.
                if (closed) {
                    return;
                }
            }
            // Outside the monitor (see the class comment); undone if a listener failed it, so
            // the next peer signal retries.
            if (!tryPublish(next)) {
                undo(mine, next == ReadinessState.ACCEPTING_TRAFFIC);
            }
        } finally {
            handled++;
        }
    }

    /**
     * Publishes {@code s}; Spring rethrows a listener's exception out of the publish (and skips the
     * listeners after it), which must neither end the peer watch nor escape into someone else's
     * publish.
     *
     * @param s the readiness state
     * @return whether every listener took it
     */
    private boolean tryPublish(ReadinessState s) {
        try {
            AvailabilityChangeEvent.publish(publisher, this, s);
            return true;
        } catch (RuntimeException e) {
            LOG.warn("cqflux: an availability listener failed on readiness " + s
                    + "; retried on the next peer state change (" + peers + ")", e);
            return false;
        }
    }

    /** {@return the peer state signals handled so far} */
    long handled() {
        return handled;
    }

    @Override
    public synchronized void stop() {
        Disposable w = watch;
        if (w != null) {
            w.dispose();
        }
        watch = null;
    }

    @Override
    public boolean isRunning() {
        return watch != null;
    }

    @Override
    public int getPhase() {
        // Stops before the peers close (their CLOSED state is not a readiness change).
        return CqfluxLifecycle.PHASE + 1;
    }
}
