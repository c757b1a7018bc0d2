package io.cqflux.micrometer;

import io.cqflux.epoll.LoopStats;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.CqfluxListener;
import io.cqflux.reactor.OperationKind;
import io.cqflux.reactor.OperationOutcome;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.RefusalKind;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import reactor.core.Disposable;

/**
 * Binds the meters of one {@link Cqflux} to a Micrometer {@link MeterRegistry}:
 *
 * <pre>{@code
 * Cqflux cq = Cqflux.builder().build();
 * CqfluxMetrics metrics = new CqfluxMetrics(cq);
 * metrics.bindTo(registry);       // Spring Boot: expose it as a MeterBinder bean
 * ...
 * metrics.close();                // removes the meters and the listener
 * }</pre>
 *
 * <p><b>Meters.</b> The names are stable; every meter also carries the tags given to the
 * constructor.
 * <table>
 * <caption>cqflux meters</caption>
 * <tr><th>name</th><th>type</th><th>unit</th><th>tags</th><th>what</th></tr>
 * <tr><td>{@code cqflux.loop.wakeups}</td><td>function counter</td><td>wakeups</td><td>{@code loop}</td>
 *     <td>returns from a sleeping {@code epoll_wait} ({@link LoopStats#wakeups()})</td></tr>
 * <tr><td>{@code cqflux.loop.batches}</td><td>function counter</td><td>batches</td><td>{@code loop}</td>
 *     <td>native drain calls that returned completions</td></tr>
 * <tr><td>{@code cqflux.loop.completions}</td><td>function counter</td><td>completions</td><td>{@code loop}</td>
 *     <td>completions delivered</td></tr>
 * <tr><td>{@code cqflux.loop.tasks}</td><td>function counter</td><td>tasks</td><td>{@code loop}</td>
 *     <td>tasks run (hand-overs from other threads)</td></tr>
 * <tr><td>{@code cqflux.loop.lag}</td><td>time gauge</td><td>seconds</td><td>{@code loop}</td>
 *     <td>the latest sampled wait of a task between its hand-over and its run ({@link LoopStats#lagNanos()})</td></tr>
 * <tr><td>{@code cqflux.loop.blocked}</td><td>function counter</td><td>events</td><td>{@code loop}</td>
 *     <td>times subscriber code or a task held the loop longer than
 *     {@link Cqflux.Builder#blockedLoopThreshold(java.time.Duration)}</td></tr>
 * <tr><td>{@code cqflux.loop.quiet.skips}</td><td>function counter</td><td>polls</td><td>{@code loop}</td>
 *     <td>polls of idle (settled or quiet) fabric/tcp queues that a spinning loop left to one
 *     {@code epoll_wait} ({@link LoopStats#quietSkips()})</td></tr>
 * <tr><td>{@code cqflux.server.refusals}</td><td>function counter</td><td>requests</td><td>{@code kind}</td>
 *     <td>requests the instance's servers refused, and connections they ended for what the peer
 *     did, by {@link RefusalKind#tagValue()}: {@code max_connections}, {@code max_pending},
 *     {@code authenticator}, {@code malformed_hello}, {@code handshake_timeout},
 *     {@code control_word}, {@code beyond_credits}, {@code max_per_address} ({@link Cqflux#serverStats()};
 *     disposed servers' counts stay)</td></tr>
 * <tr><td>{@code cqflux.server.connections}</td><td>gauge</td><td>connections</td><td></td>
 *     <td>established connections of the live servers ({@link RdmaServer.Stats#connections()})</td></tr>
 * <tr><td>{@code cqflux.server.handshakes.pending}</td><td>gauge</td><td>handshakes</td><td></td>
 *     <td>requests between arrival and establishment or end ({@link RdmaServer.Stats#pendingHandshakes()})</td></tr>
 * <tr><td>{@code cqflux.server.exposures}</td><td>gauge</td><td>registrations</td><td></td>
 *     <td>live per-connection registrations of exposed regions ({@link RdmaServer.Stats#exposures()})</td></tr>
 * <tr><td>{@code cqflux.connection.credits.used}</td><td>gauge</td><td>credits</td><td>{@code transport}, {@code connection}, {@code id}</td>
 *     <td>send-queue credits held by operations in flight ({@link RdmaConnection#inFlight()})</td></tr>
 * <tr><td>{@code cqflux.connection.credits.max}</td><td>gauge</td><td>credits</td><td>{@code transport}, {@code connection}, {@code id}</td>
 *     <td>the connection's send-queue credits ({@link RdmaConnection#sendCredits()}); used = max is credit starvation</td></tr>
 * <tr><td>{@code cqflux.connection.waiting}</td><td>gauge</td><td>operations</td><td>{@code transport}, {@code connection}, {@code id}</td>
 *     <td>operations waiting for a credit ({@link RdmaConnection#waiting()})</td></tr>
 * <tr><td>{@code cqflux.connection.rejections}</td><td>function counter</td><td>operations</td><td>{@code transport}, {@code connection}, {@code id}</td>
 *     <td>operations refused for the pending limit ({@link RdmaConnection#rejections()})</td></tr>
 * <tr><td>{@code cqflux.operation}</td><td>timer</td><td>seconds</td><td>{@code transport}, {@code kind}, {@code outcome}, {@code error}</td>
 *     <td>each operation from subscription to outcome; {@code kind} {@link OperationKind#tagValue()}
 *     ({@code read}, {@code write}, {@code durableWrite}, ...), {@code outcome} {@code success},
 *     {@code error} or {@code cancelled}, {@code error} {@code none}, a completion status
 *     ({@code REM_ACCESS_ERR}) or an exception's simple class name ({@code ConnectionException})</td></tr>
 * </table>
 *
 * <p>{@code loop} is the loop's thread name ({@link Cqflux#loopNames()}), {@code transport}
 * {@link Cqflux#transportName()}, {@code connection} {@link RdmaConnection#description()}, {@code id} a number that
 * tells apart connections with one description (two connections to one server address). The
 * meters of a connection are removed from the registry when it ends (no meter per dead connection
 * stays behind); the loop meters and the timers stay until {@link #close()}.
 *
 * <p><b>Cost.</b> The loop and connection meters read counters the library keeps anyway, when the
 * registry asks. The operation timer makes the library read the clock twice per operation and
 * call {@link Timer#record(long, TimeUnit)} on the loop thread; with no {@code CqfluxMetrics}
 * bound, none of that happens.
 *
 * <p><b>Thread safety and lifetime.</b> Thread-safe. {@link #bindTo} may be called for several
 * registries; again for a registry it is bound to, it does nothing, and for a registry that
 * another binder of the same instance with equal tags is bound to, it throws an
 * {@link IllegalStateException}: both would count each operation. For a registry that holds
 * another instance's meters with equal tags it binds, and logs a WARNING: their meter ids are the
 * same, so the registry keeps the first instance's gauges for both (its server counts, and its
 * loop meters where the loops' names are the same) and adds both instances' operations into one
 * timer; give each instance a tag of its own ({@code Tags.of("instance", name)}). {@link #close()} is idempotent;
 * meters of a {@link Cqflux} that was disposed keep their last values until then.
 */
public final class CqfluxMetrics implements MeterBinder, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(CqfluxMetrics.class.getName());
    private final Cqflux cqflux;
    private final Tags tags;
    private final List<Binding> bindings = new CopyOnWriteArrayList<>();
    /**
     * Per registry, the (instance, tags) pairs bound to it by some binder: the one owner of "this
     * instance's meters are in that registry already". Weak keys: a registry that is dropped takes
     * its entry with it. Guarded by itself.
     */
    private static final Map<MeterRegistry, Set<Key>> BOUND = new WeakHashMap<>();

    /**
     * Meters for {@code cqflux}, with no extra tags.
     *
     * @param cqflux the instance to measure
     */
    public CqfluxMetrics(Cqflux cqflux) {
        this(cqflux, Tags.empty());
    }

    /**
     * Meters for {@code cqflux}, each with {@code tags} as well (e.g. {@code instance=orders}).
     *
     * @param cqflux the instance to measure
     * @param tags tags added to every meter
     */
    public CqfluxMetrics(Cqflux cqflux, Iterable<Tag> tags) {
        this.cqflux = Objects.requireNonNull(cqflux, "cqflux");
        this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
    }

    /**
     * Registers the loop meters and the operation timer, and installs the listener that adds and
     * removes the connection meters. The check and the registration are one step under the lock
     * {@link #close()} takes too: two threads binding the same registry bind it once, and a close
     * that runs meanwhile finds either nothing yet or every meter of the binding.
     *
     * @param registry the registry
     * @throws IllegalStateException when another binder of the same instance with equal tags is
     *     bound to {@code registry}
     */
    @Override
    public void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        synchronized (BOUND) {
            for (Binding b : bindings) {
                if (b.registry == registry) {
                    return; // bound already: a second listener would count every operation twice
                }
            }
            // Another binder of the same instance with the same tags in this registry would share
            // its timers and count every operation twice: refused rather than over-counted.
            Set<Key> keys = BOUND.computeIfAbsent(registry, r -> new HashSet<>());
            if (!keys.add(key())) {
                throw new IllegalStateException("registry " + registry + " is bound already to the meters of "
                        + cqflux + " with tags " + tags + " by another CqfluxMetrics: each operation would be counted"
                        + " twice; bind one CqfluxMetrics per instance and registry (or give them different tags)");
            }
            for (Key k : keys) {
                if (k.cqflux() != cqflux && k.tags().equals(tags)) {
                    // Said, not refused: two Spring contexts that share one registry (a cached test
                    // context beside another) would otherwise fail to start, with no property to
                    // tell them apart.
                    LOG.log(System.Logger.Level.WARNING, "registry " + registry + " holds the meters of another"
                            + " instance, " + k.cqflux() + ", with the same tags " + tags + ": the meters of " + cqflux
                            + " have the same ids, so the registry shows that instance's gauges for both and adds both"
                            + " instances' operations into one timer; give each instance a tag of its own (new"
                            + " CqfluxMetrics(cqflux, Tags.of(\"instance\", name)))");
                    break;
                }
            }
            Binding b = new Binding(registry);
            bindings.add(b);
            try {
                b.start();
            } catch (RuntimeException | Error e) {
                bindings.remove(b);
                b.close();
                keys.remove(key());
                throw e;
            }
        }
    }

    /** What {@link #BOUND} tells binders apart by. */
    private Key key() {
        return new Key(cqflux, tags);
    }

    /**
     * A binder's instance and tags; {@link Cqflux} keeps {@code Object}'s equality, so two keys
     * are equal for the same instance only.
     *
     * @param cqflux the instance
     * @param tags the binder's extra tags
     */
    private record Key(Cqflux cqflux, Tags tags) {
    }

    /** Removes every meter this binder registered and its listeners; idempotent. It may be bound again afterwards. */
    @Override
    public void close() {
        synchronized (BOUND) {
            for (Binding b : bindings) {
                b.close();
                Set<Key> keys = BOUND.get(b.registry);
                if (keys != null) {
                    keys.remove(key());
                }
            }
            bindings.clear();
        }
    }

    /** The meters in one registry, and the listener that keeps the per-connection ones. */
    private final class Binding implements CqfluxListener {
        private final MeterRegistry registry;
        private final Tags base;
        private final List<Meter> fixed = new CopyOnWriteArrayList<>();
        private final Map<RdmaConnection, List<Meter>> perConnection = new ConcurrentHashMap<>();
        /** Timers by kind and outcome for error "none"; by kind and error name for errors. */
        private final Timer[][] plain;
        private final List<Map<String, Timer>> errors = new ArrayList<>();
        private volatile Disposable listening;
        private volatile boolean closed;
        private final java.util.concurrent.atomic.AtomicLong ids = new java.util.concurrent.atomic.AtomicLong();

        Binding(MeterRegistry registry) {
            this.registry = registry;
            this.base = tags.and("transport", cqflux.transportName());
            OperationKind[] kinds = OperationKind.values();
            plain = new Timer[kinds.length][OperationOutcome.values().length];
            for (int i = 0; i < kinds.length; i++) {
                errors.add(new ConcurrentHashMap<>());
            }
        }

        void start() {
            List<String> names = cqflux.loopNames();
            for (int i = 0; i < names.size(); i++) {
                int index = i;
                Tags t = tags.and("loop", names.get(i));
                loopCounter("cqflux.loop.wakeups", "wakeups", t, index, LoopStats::wakeups,
                        "Returns from a sleeping epoll_wait");
                loopCounter("cqflux.loop.batches", "batches", t, index, LoopStats::batches,
                        "Native completion-queue drain calls that returned completions");
                loopCounter("cqflux.loop.completions", "completions", t, index, LoopStats::completions,
                        "Completions delivered");
                loopCounter("cqflux.loop.tasks", "tasks", t, index, LoopStats::tasks,
                        "Tasks handed to the loop and run");
                loopCounter("cqflux.loop.blocked", "events", t, index, LoopStats::blocked,
                        "Times subscriber code or a task held the loop longer than the blocked-loop threshold");
                loopCounter("cqflux.loop.quiet.skips", "polls", t, index, LoopStats::quietSkips,
                        "Polls of idle (settled or quiet) fabric/tcp queues that a spinning loop left to one epoll_wait");
                fixed.add(TimeGauge.builder("cqflux.loop.lag", cqflux, TimeUnit.NANOSECONDS,
                                c -> stat(c, index, LoopStats::lagNanos))
                        .tags(t).description("Latest sampled wait of a task between its hand-over and its run")
                        .register(registry));
            }
            for (RefusalKind k : RefusalKind.values()) {
                fixed.add(FunctionCounter.builder("cqflux.server.refusals", cqflux, c -> c.serverStats().count(k))
                        .tags(tags).tag("kind", k.tagValue()).baseUnit("requests")
                        .description("Requests the servers refused, and connections they ended for what the peer did,"
                                + " by kind").register(registry));
            }
            fixed.add(Gauge.builder("cqflux.server.connections", cqflux, c -> c.serverStats().connections())
                    .tags(tags).baseUnit("connections")
                    .description("Established connections of the live servers").register(registry));
            fixed.add(Gauge.builder("cqflux.server.handshakes.pending", cqflux,
                            c -> c.serverStats().pendingHandshakes())
                    .tags(tags).baseUnit("handshakes")
                    .description("Connection requests between arrival and establishment or end").register(registry));
            fixed.add(Gauge.builder("cqflux.server.exposures", cqflux, c -> c.serverStats().exposures())
                    .tags(tags).baseUnit("registrations")
                    .description("Live per-connection registrations of exposed regions").register(registry));
            listening = cqflux.addListener(this);
        }

        private void loopCounter(String name, String unit, Tags t, int index, ToDoubleFunction<LoopStats> f,
                                 String description) {
            fixed.add(FunctionCounter.builder(name, cqflux, c -> stat(c, index, f))
                    .tags(t).baseUnit(unit).description(description).register(registry));
        }

        private static double stat(Cqflux c, int index, ToDoubleFunction<LoopStats> f) {
            List<LoopStats> s = c.loopStats();
            return index < s.size() ? f.applyAsDouble(s.get(index)) : Double.NaN;
        }

        @Override
        public void connectionOpened(RdmaConnection c) {
            if (closed || perConnection.containsKey(c)) {
                return; // announced twice (opened while the listener was added)
            }
            // Registered inside computeIfAbsent: of two announcements that race, only one makes
            // meters (each would take another id, and the loser's meters would stay for ever).
            perConnection.computeIfAbsent(c, this::registerConnection);
            if (c.isDisposed() || closed) {
                // Ended while being added (its close may have been reported before this), or the
                // binder closed meanwhile: no meter stays behind.
                connectionClosed(c);
            }
        }

        private List<Meter> registerConnection(RdmaConnection c) {
            // The description need not be unique (two connections to one server address read
            // alike), so an id numbers the connections this binding has seen.
            Tags t = base.and("connection", c.description()).and("id", Long.toString(ids.incrementAndGet()));
            return List.of(
                    Gauge.builder("cqflux.connection.credits.used", c, RdmaConnection::inFlight)
                            .tags(t).baseUnit("credits")
                            .description("Send-queue credits held by operations in flight").register(registry),
                    Gauge.builder("cqflux.connection.credits.max", c, RdmaConnection::sendCredits)
                            .tags(t).baseUnit("credits")
                            .description("The connection's send-queue credits").register(registry),
                    Gauge.builder("cqflux.connection.waiting", c, RdmaConnection::waiting)
                            .tags(t).baseUnit("operations")
                            .description("Operations waiting for a send-queue credit").register(registry),
                    FunctionCounter.builder("cqflux.connection.rejections", c, RdmaConnection::rejections)
                            .tags(t).baseUnit("operations")
                            .description("Operations refused because the pending limit was reached")
                            .register(registry));
        }

        @Override
        public void connectionClosed(RdmaConnection c) {
            List<Meter> ms = perConnection.remove(c);
            if (ms != null) {
                for (Meter m : ms) {
                    registry.remove(m);
                }
            }
        }

        @Override
        public void operationFinished(RdmaConnection c, OperationKind kind, OperationOutcome outcome, String error,
                                      long nanos) {
            // An operation keeps the listener it saw at subscription, so it can finish after
            // close(): it must not bring a timer back into the registry.
            if (closed) {
                return;
            }
            Timer t = timer(kind, outcome, error);
            if (!closed) {
                t.record(nanos, TimeUnit.NANOSECONDS);
            }
        }

        /** The timer for the tags; looked up without allocating once it exists. */
        private Timer timer(OperationKind kind, OperationOutcome outcome, String error) {
            if (outcome != OperationOutcome.ERROR) {
                Timer t = plain[kind.ordinal()][outcome.ordinal()];
                if (t == null) {
                    t = register(kind, outcome, "none");
                    plain[kind.ordinal()][outcome.ordinal()] = t; // a benign race: the registry returns one timer
                }
                return t;
            }
            return errors.get(kind.ordinal()).computeIfAbsent(error, e -> register(kind, outcome, e));
        }

        private Timer register(OperationKind kind, OperationOutcome outcome, String error) {
            Timer t = Timer.builder("cqflux.operation")
                    .tags(base).tag("kind", kind.tagValue()).tag("outcome", outcome.tagValue()).tag("error", error)
                    .description("RDMA operations from subscription to outcome, by kind and outcome")
                    .register(registry);
            fixed.add(t);
            if (closed) {
                // close() ran between the check in operationFinished and here, and may have
                // cleared fixed before the add: remove it ourselves (removing twice is harmless).
                registry.remove(t);
            }
            return t;
        }

        void close() {
            closed = true;
            Disposable l = listening;
            if (l != null) {
                l.dispose();
            }
            for (RdmaConnection c : List.copyOf(perConnection.keySet())) {
                connectionClosed(c);
            }
            for (Meter m : fixed) {
                registry.remove(m);
            }
            fixed.clear();
        }
    }
}
