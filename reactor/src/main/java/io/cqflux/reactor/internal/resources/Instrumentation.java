package io.cqflux.reactor.internal.resources;

import io.cqflux.core.OperationFailedException;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.CqfluxListener;
import io.cqflux.reactor.OperationKind;
import io.cqflux.reactor.OperationOutcome;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import java.util.Arrays;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.context.ContextView;

/**
 * The listeners of one {@link Cqflux} (see {@link CqfluxListener}): one volatile field that is
 * {@code null} while none is installed, so that the hot path pays one null check. Thread-safe.
 */
public final class Instrumentation {
    private static final Logger LOG = Loggers.getLogger(Instrumentation.class);

    /** For connections made outside a {@link Cqflux} (none today): never a listener. */
    public static final Instrumentation NONE = new Instrumentation();

    /** The installed listener (a composite for several), or {@code null}. */
    public volatile CqfluxListener listener;
    /**
     * One entry per {@link #add} (the same listener added twice is two), in the order added;
     * replaced whole under {@code this}. The connection notices go through these one by one,
     * each with its own state per connection ({@link io.cqflux.reactor.internal.connection.ConnectionMonitor#notices}).
     */
    private volatile Registration[] all = new Registration[0];

    /**
     * Adds a listener and tells it of the connections already established.
     *
     * @param l the listener
     * @param open the connections of the instance
     * @return removes it again
     */
    public Disposable add(CqfluxListener l, Collection<ConnectionCore> open) {
        Registration r = new Registration(l);
        synchronized (this) {
            Registration[] n = Arrays.copyOf(all, all.length + 1);
            n[n.length - 1] = r;
            all = n;
            listener = combine(n);
        }
        // After the volatile write: a connection announcing itself now either sees the listener
        // or is seen here (both sides write, then read a volatile), so none is missed; if both
        // see it, the per-connection state lets one of them deliver. A connection that ends now
        // either has ended before the check below (skipped) or sees the listener in closed().
        for (ConnectionCore c : open) {
            if (c.monitor.announced() && !c.api.isDisposed()) {
                r.opened(c);
            }
        }
        return new Disposable() {
            private volatile boolean disposed;

            @Override
            public void dispose() {
                disposed = true;
                remove(r);
            }

            @Override
            public boolean isDisposed() {
                return disposed;
            }
        };
    }

    private synchronized void remove(Registration r) {
        for (int i = 0; i < all.length; i++) {
            if (all[i] == r) {
                Registration[] n = new Registration[all.length - 1];
                System.arraycopy(all, 0, n, 0, i);
                System.arraycopy(all, i + 1, n, i, all.length - i - 1);
                all = n;
                listener = combine(n);
                return;
            }
        }
    }

    private static CqfluxListener combine(Registration[] rs) {
        return switch (rs.length) {
            case 0 -> null;
            case 1 -> rs[0].listener;
            default -> {
                CqfluxListener[] ls = new CqfluxListener[rs.length];
                for (int i = 0; i < rs.length; i++) {
                    ls[i] = rs[i].listener;
                }
                yield new Composite(ls);
            }
        };
    }

    /** Loop thread: the connection is established. */
    public void opened(ConnectionCore c) {
        for (Registration r : all) {
            r.opened(c);
        }
    }

    /** The connection ended (once); after its state became ENDED. */
    public void closed(ConnectionCore c) {
        for (Registration r : all) {
            r.closed(c);
        }
    }

    /**
     * One added listener. Its connection notices have a state per connection, none → opening →
     * opened → closed, changed by compare-and-set: opened is delivered once though both the loop
     * (the connection established) and {@link #add} (the connections already open) may try, and
     * closed only after opened returned (a close during opened is left to the opener to deliver),
     * never for a connection it was not told opened.
     */
    private static final class Registration {
        private static final int NONE = 0;
        private static final int OPENING = 1;
        private static final int OPENED = 2;
        /** Closed while opened was being delivered: the opener delivers closed after it. */
        private static final int CLOSE_PENDING = 3;
        private static final int CLOSED = 4;

        public final CqfluxListener listener;

        public Registration(CqfluxListener listener) {
            this.listener = listener;
        }

        private AtomicInteger state(ConnectionCore c) {
            return c.monitor.notices.computeIfAbsent(this, k -> new AtomicInteger(NONE));
        }

        public void opened(ConnectionCore c) {
            AtomicInteger s = state(c);
            if (!s.compareAndSet(NONE, OPENING)) {
                return;
            }
            safely(() -> listener.connectionOpened(c.api));
            if (!s.compareAndSet(OPENING, OPENED)) { // CLOSE_PENDING
                s.set(CLOSED);
                safely(() -> listener.connectionClosed(c.api));
            }
        }

        public void closed(ConnectionCore c) {
            AtomicInteger s = state(c);
            while (true) {
                switch (s.get()) {
                    case NONE -> {
                        if (s.compareAndSet(NONE, CLOSED)) {
                            return; // never told opened: nothing to tell
                        }
                    }
                    case OPENING -> {
                        if (s.compareAndSet(OPENING, CLOSE_PENDING)) {
                            return;
                        }
                    }
                    case OPENED -> {
                        if (s.compareAndSet(OPENED, CLOSED)) {
                            safely(() -> listener.connectionClosed(c.api));
                            return;
                        }
                    }
                    default -> {
                        return;
                    }
                }
            }
        }
    }

    /**
     * {@return the {@code error} a listener gets: "none", a completion status or a class name}
     *
     * @param error the failure, or {@code null}
     */
    public static String errorName(Throwable error) {
        if (error == null) {
            return "none";
        }
        if (error instanceof OperationFailedException f) {
            return f.status().name();
        }
        return error.getClass().getSimpleName();
    }

    /**
     * Tells a listener an operation started ({@link CqfluxListener#operationStarted}); one that
     * throws is logged and hears of the end itself, as if it had returned itself.
     *
     * @param l the listener installed at subscription
     * @param c the connection
     * @param kind what the operation is
     * @param bytes the length of its data
     * @param context the subscriber's context
     * @return who hears of its end, or {@code null}
     */
    public static CqfluxListener started(CqfluxListener l, ConnectionCore c, OperationKind kind, long bytes,
                                         ContextView context) {
        try {
            return l.operationStarted(c.api, kind, bytes, context);
        } catch (Throwable t) {
            listenerThrew(t);
            return l;
        }
    }

    public static void safely(Runnable r) {
        try {
            r.run();
        } catch (Throwable t) {
            listenerThrew(t);
        }
    }

    /**
     * What a listener's exception becomes, wherever it is called: a WARN, never thrown (it would
     * reach the loop); JVM-fatal errors are rethrown.
     *
     * @param t what the listener threw
     */
    public static void listenerThrew(Throwable t) {
        Exceptions.throwIfJvmFatal(t);
        LOG.warn("a CqfluxListener threw; ignored", t);
    }

    /** Several listeners, called in the order they were added. */
    private record Composite(CqfluxListener[] ls) implements CqfluxListener {
        @Override
        public void connectionOpened(RdmaConnection connection) {
            for (CqfluxListener l : ls) {
                safely(() -> l.connectionOpened(connection));
            }
        }

        @Override
        public void connectionClosed(RdmaConnection connection) {
            for (CqfluxListener l : ls) {
                safely(() -> l.connectionClosed(connection));
            }
        }

        /** Each one's start; a new composite only when one returns other than itself. */
        @Override
        public CqfluxListener operationStarted(RdmaConnection connection, OperationKind kind, long bytes,
                                               ContextView context) {
            CqfluxListener[] out = null;
            for (int i = 0; i < ls.length; i++) {
                CqfluxListener r;
                try {
                    r = ls[i].operationStarted(connection, kind, bytes, context);
                } catch (Throwable t) {
                    listenerThrew(t);
                    r = ls[i];
                }
                if (r != ls[i] && out == null) {
                    out = Arrays.copyOf(ls, ls.length);
                }
                if (out != null) {
                    out[i] = r;
                }
            }
            if (out == null) {
                return this;
            }
            int n = 0;
            for (CqfluxListener x : out) {
                if (x != null) {
                    out[n++] = x;
                }
            }
            return n == 0 ? null : n == 1 ? out[0] : new Composite(n == out.length ? out : Arrays.copyOf(out, n));
        }

        @Override
        public void operationFinished(RdmaConnection connection, OperationKind kind, OperationOutcome outcome,
                                      String error, long nanos) {
            for (CqfluxListener l : ls) {
                try {
                    l.operationFinished(connection, kind, outcome, error, nanos);
                } catch (Throwable t) {
                    listenerThrew(t);
                }
            }
        }
    }
}
