package io.cqflux.reactor;

import io.cqflux.core.OperationFailedException;
import java.util.Arrays;
import java.util.Collection;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The listeners of one {@link Cqflux} (see {@link CqfluxListener}): one volatile field that is
 * {@code null} while none is installed, so that the hot path pays one null check. Thread-safe.
 */
final class Instrumentation {
    private static final Logger LOG = Loggers.getLogger(Instrumentation.class);

    /** For connections made outside a {@link Cqflux} (none today): never a listener. */
    static final Instrumentation NONE = new Instrumentation();

    /** The installed listener (a composite for several), or {@code null}. */
    volatile CqfluxListener listener;
    private CqfluxListener[] all = new CqfluxListener[0];

    /**
     * Adds a listener and tells it of the connections already established.
     *
     * @param l the listener
     * @param open the connections of the instance
     * @return removes it again
     */
    Disposable add(CqfluxListener l, Collection<ConnectionCore> open) {
        synchronized (this) {
            all = Arrays.copyOf(all, all.length + 1);
            all[all.length - 1] = l;
            listener = combine(all);
        }
        // After the volatile write: a connection announcing itself now either sees the listener
        // or is seen here (both sides write, then read a volatile), so none is missed.
        for (ConnectionCore c : open) {
            if (c.announced && !c.api.isDisposed()) {
                safely(() -> l.connectionOpened(c.api));
            }
        }
        return new Disposable() {
            private volatile boolean disposed;

            @Override
            public void dispose() {
                disposed = true;
                remove(l);
            }

            @Override
            public boolean isDisposed() {
                return disposed;
            }
        };
    }

    private synchronized void remove(CqfluxListener l) {
        for (int i = 0; i < all.length; i++) {
            if (all[i] == l) {
                CqfluxListener[] n = new CqfluxListener[all.length - 1];
                System.arraycopy(all, 0, n, 0, i);
                System.arraycopy(all, i + 1, n, i, all.length - i - 1);
                all = n;
                listener = combine(all);
                return;
            }
        }
    }

    private static CqfluxListener combine(CqfluxListener[] ls) {
        return switch (ls.length) {
            case 0 -> null;
            case 1 -> ls[0];
            default -> new Composite(ls.clone());
        };
    }

    /** Loop thread: the connection is established. */
    void opened(ConnectionCore c) {
        c.announced = true;
        CqfluxListener l = listener;
        if (l != null) {
            safely(() -> l.connectionOpened(c.api));
        }
    }

    /** The connection ended (once). */
    void closed(ConnectionCore c) {
        CqfluxListener l = listener;
        if (l != null && c.announced) {
            safely(() -> l.connectionClosed(c.api));
        }
    }

    /**
     * {@return the {@code error} a listener gets: "none", a completion status or a class name}
     *
     * @param error the failure, or {@code null}
     */
    static String errorName(Throwable error) {
        if (error == null) {
            return "none";
        }
        if (error instanceof OperationFailedException f) {
            return f.status().name();
        }
        return error.getClass().getSimpleName();
    }

    static void safely(Runnable r) {
        try {
            r.run();
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            LOG.warn("a CqfluxListener threw; ignored", t);
        }
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

        @Override
        public void operationFinished(RdmaConnection connection, OperationKind kind, OperationOutcome outcome,
                                      String error, long nanos) {
            for (CqfluxListener l : ls) {
                try {
                    l.operationFinished(connection, kind, outcome, error, nanos);
                } catch (Throwable t) {
                    Exceptions.throwIfJvmFatal(t);
                    LOG.warn("a CqfluxListener threw; ignored", t);
                }
            }
        }
    }
}
