package io.cqflux.spring.boot;

import java.util.ArrayList;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationListener;
import org.springframework.context.SmartLifecycle;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

/**
 * Ties the application's readiness to its required peers: publishes
 * {@link ReadinessState#REFUSING_TRAFFIC} when one of them goes down and
 * {@link ReadinessState#ACCEPTING_TRAFFIC} when all are up again, so that a Kubernetes readiness
 * probe ({@code /actuator/health/readiness}) takes the instance out of rotation while its storage
 * is away. When Spring Boot declares the application ready while a required peer is down, it
 * answers with {@code REFUSING_TRAFFIC} at once. Off with {@code cqflux.readiness=false}.
 *
 * <p><b>Thread safety.</b> State changes arrive on event-loop threads; publishing an
 * availability event only records it, so that is safe there.
 */
public final class CqfluxReadiness implements ApplicationListener<AvailabilityChangeEvent<?>>, SmartLifecycle {
    private static final Log LOG = LogFactory.getLog(CqfluxReadiness.class);

    private final CqfluxPeers peers;
    private final ApplicationEventPublisher publisher;
    private volatile boolean ready;
    private ReadinessState last;
    private volatile Disposable watch;

    /**
     * @param peers the peers whose required ones decide readiness
     * @param publisher where the availability events go (the application context)
     */
    public CqfluxReadiness(CqfluxPeers peers, ApplicationEventPublisher publisher) {
        this.peers = peers;
        this.publisher = publisher;
    }

    @Override
    public void onApplicationEvent(AvailabilityChangeEvent<?> event) {
        if (event.getState() == ReadinessState.ACCEPTING_TRAFFIC && event.getSource() != this) {
            ready = true;
            synchronized (this) {
                last = ReadinessState.ACCEPTING_TRAFFIC;
            }
            if (!peers.requiredAvailable()) {
                LOG.warn("cqflux: a required peer is down, readiness REFUSING_TRAFFIC: " + peers);
                synchronized (this) {
                    last = ReadinessState.REFUSING_TRAFFIC;
                }
                // Published from inside this dispatch: the nested event must reach Boot's
                // availability bean after the ACCEPTING_TRAFFIC being dispatched did, so this
                // listener comes after it (CqfluxAutoConfiguration runs after
                // ApplicationAvailabilityAutoConfiguration: its beans, listeners included, are
                // registered and created later, and listeners without an order keep that order).
                AvailabilityChangeEvent.publish(publisher, this, ReadinessState.REFUSING_TRAFFIC);
            }
        }
    }

    @Override
    public void start() {
        List<Flux<CqfluxPeer.State>> required = new ArrayList<>();
        for (CqfluxPeer p : peers.all()) {
            if (p.required()) {
                required.add(p.states().skip(1));
            }
        }
        watch = Flux.merge(required).subscribe(s -> changed());
    }

    private synchronized void changed() {
        if (!ready) {
            return;
        }
        ReadinessState s = peers.requiredAvailable() ? ReadinessState.ACCEPTING_TRAFFIC : ReadinessState.REFUSING_TRAFFIC;
        if (s == last) {
            return;
        }
        last = s;
        LOG.info("cqflux: readiness " + s + " (" + peers + ")");
        AvailabilityChangeEvent.publish(publisher, this, s);
    }

    @Override
    public void stop() {
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
