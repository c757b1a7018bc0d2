package io.cqflux.micrometer;

import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.CqfluxListener;
import io.cqflux.reactor.OperationKind;
import io.cqflux.reactor.OperationOutcome;
import io.cqflux.reactor.RdmaConnection;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.ObservationRegistry;
import java.util.Objects;
import reactor.core.Disposable;
import reactor.util.context.ContextView;

/**
 * Makes every operation of one {@link Cqflux} a Micrometer {@link Observation}, the child of the
 * observation its subscriber's Reactor context carries (a WebFlux request's, for one):
 *
 * <pre>{@code
 * CqfluxObservations observations = new CqfluxObservations(cq, observationRegistry);
 * ...
 * observations.close();           // removes the listener
 * }</pre>
 *
 * <p><b>Conventions</b> ({@link DefaultConvention}; replace them with a custom
 * {@link ObservationConvention} for {@link OperationContext}, or one registered globally on the
 * registry's {@code ObservationConfig}):
 * <table>
 * <caption>the observation of an operation</caption>
 * <tr><th>what</th><th>value</th></tr>
 * <tr><td>name</td><td>{@value #NAME}</td></tr>
 * <tr><td>contextual name</td><td>{@code cqflux } and the kind, e.g. {@code cqflux durableWrite}</td></tr>
 * <tr><td>low-cardinality {@code kind}</td><td>{@link OperationKind#tagValue()}: {@code read},
 *     {@code write}, {@code durableWrite}, ...</td></tr>
 * <tr><td>low-cardinality {@code transport}</td><td>{@link Cqflux#transportName()}</td></tr>
 * <tr><td>low-cardinality {@code outcome}</td><td>{@code success}, {@code error} or
 *     {@code cancelled}</td></tr>
 * <tr><td>low-cardinality {@code error.type}</td><td>{@code none}, a completion status
 *     ({@code REM_ACCESS_ERR}) or an exception's simple class name, as the listener hears it
 *     ({@link CqfluxListener#operationFinished})</td></tr>
 * <tr><td>high-cardinality {@code peer}</td><td>{@link RdmaConnection#description()}</td></tr>
 * <tr><td>high-cardinality {@code bytes}</td><td>the length of the operation's data</td></tr>
 * </table>
 *
 * <p>The name is not {@code cqflux.operation}: that is {@link CqfluxMetrics}'s timer, and a meter
 * handler on the registry would register a second timer of that name with other tags, which
 * registries such as Prometheus refuse. An outcome of {@code error} carries its error only as the
 * {@code error.type} key: the listener hears a name, not the exception.
 *
 * <p><b>Parent and threads.</b> The parent is read once, at subscription, from the subscriber's
 * context under {@value #PARENT_KEY} (Micrometer's {@code ObservationThreadLocalAccessor.KEY}, which
 * WebFlux's server observation and Reactor's {@code contextCapture()} use), so it is right whatever
 * thread the operation ends on. The observation starts on the subscribing thread and stops on the
 * thread its outcome arrives on (usually the connection's event loop), never opening a scope:
 * handlers must not rely on thread-locals when it stops, and must be fast there (see
 * {@link CqfluxListener}'s threads). An operation subscribed without a parent is a root.
 *
 * <p><b>Cost.</b> One observation and one small object per operation while the registry is not a
 * no-op registry; none otherwise. Thread-safe.
 */
public final class CqfluxObservations implements AutoCloseable {
    /** The observation's name. */
    public static final String NAME = "cqflux.rdma.operation";
    /**
     * The Reactor context key of the parent observation: the value of Micrometer's
     * {@code ObservationThreadLocalAccessor.KEY}, spelled here so that this module needs no
     * context-propagation library.
     */
    public static final String PARENT_KEY = "micrometer.observation";

    private static final DefaultConvention DEFAULT = new DefaultConvention();

    private final Disposable listener;

    /**
     * Observes the operations of {@code cqflux} with the {@link DefaultConvention}.
     *
     * @param cqflux the instance
     * @param registry where the observations go
     */
    public CqfluxObservations(Cqflux cqflux, ObservationRegistry registry) {
        this(cqflux, registry, null);
    }

    /**
     * Observes the operations of {@code cqflux}.
     *
     * @param cqflux the instance
     * @param registry where the observations go
     * @param convention names and key values in place of the {@link DefaultConvention}, or
     *     {@code null}
     */
    public CqfluxObservations(Cqflux cqflux, ObservationRegistry registry,
                              ObservationConvention<OperationContext> convention) {
        Objects.requireNonNull(cqflux, "cqflux");
        Objects.requireNonNull(registry, "registry");
        this.listener = cqflux.addListener(new Starter(cqflux.transportName(), registry, convention));
    }

    /** Removes the listener: operations subscribed from now on are not observed. Idempotent. */
    @Override
    public void close() {
        listener.dispose();
    }

    /** Starts an observation per operation; its {@link Ended} stops it. */
    private record Starter(String transport, ObservationRegistry registry,
                           ObservationConvention<OperationContext> convention) implements CqfluxListener {
        @Override
        public CqfluxListener operationStarted(RdmaConnection connection, OperationKind kind, long bytes,
                                               ContextView context) {
            if (registry.isNoop()) {
                return null;
            }
            OperationContext ctx = new OperationContext(connection, kind, transport, bytes);
            Observation parent = context.getOrDefault(PARENT_KEY, null);
            if (parent != null) {
                ctx.setParentObservation(parent);
            }
            Observation o = Observation.createNotStarted(convention, DEFAULT, () -> ctx, registry).start();
            return o.isNoop() ? null : new Ended(o, ctx);
        }
    }

    /** Hears one operation's end and stops its observation. */
    private record Ended(Observation observation, OperationContext ctx) implements CqfluxListener {
        @Override
        public void operationFinished(RdmaConnection connection, OperationKind kind, OperationOutcome outcome,
                                      String error, long nanos) {
            ctx.outcome = outcome;
            ctx.error = error;
            observation.stop();
        }
    }

    /**
     * What an operation's observation knows: set at subscription, the outcome at its end (read
     * them in a convention's or handler's {@code onStop}).
     */
    public static final class OperationContext extends Observation.Context {
        private final RdmaConnection connection;
        private final OperationKind kind;
        private final String transport;
        private final long bytes;
        private volatile OperationOutcome outcome;
        private volatile String error;

        OperationContext(RdmaConnection connection, OperationKind kind, String transport, long bytes) {
            this.connection = connection;
            this.kind = kind;
            this.transport = transport;
            this.bytes = bytes;
        }

        /** {@return the connection it was posted on} */
        public RdmaConnection connection() {
            return connection;
        }

        /** {@return what it is} */
        public OperationKind kind() {
            return kind;
        }

        /** {@return {@link Cqflux#transportName()}} */
        public String transport() {
            return transport;
        }

        /** {@return the length of its data} */
        public long bytes() {
            return bytes;
        }

        /** {@return how it ended, or {@code null} while it runs} */
        public OperationOutcome outcome() {
            return outcome;
        }

        /** {@return {@code none}, a completion status or an exception's simple name; {@code null} while it runs} */
        public String error() {
            return error;
        }
    }

    /** The names and key values of the table in {@link CqfluxObservations}. */
    public static class DefaultConvention implements ObservationConvention<OperationContext> {
        /** Creates the convention. */
        public DefaultConvention() {
        }

        @Override
        public String getName() {
            return NAME;
        }

        @Override
        public String getContextualName(OperationContext context) {
            return "cqflux " + context.kind().tagValue();
        }

        @Override
        public KeyValues getLowCardinalityKeyValues(OperationContext context) {
            OperationOutcome outcome = context.outcome();
            String error = context.error();
            return KeyValues.of("kind", context.kind().tagValue(), "transport", context.transport(),
                    "outcome", outcome == null ? "unknown" : outcome.tagValue(),
                    "error.type", error == null ? "none" : error);
        }

        @Override
        public KeyValues getHighCardinalityKeyValues(OperationContext context) {
            return KeyValues.of("peer", context.connection().description(), "bytes", Long.toString(context.bytes()));
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return context instanceof OperationContext;
        }
    }
}
