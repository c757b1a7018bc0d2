package io.cqflux.reactor;

/**
 * The kinds of operation an {@link RdmaConnection} posts, under the names that metrics, Reactor's
 * debug hooks and {@code checkpoint} show. Each operation {@code Mono} is
 * {@link reactor.core.Scannable} and answers {@link reactor.core.Scannable.Attr#NAME} with its
 * kind's {@link #sequenceName()}, so {@code tap(Micrometer.metrics(registry))} names its meters
 * after it without the application naming each operation.
 */
public enum OperationKind {
    /** {@link RdmaConnection#read}. */
    READ("read"),
    /** {@link RdmaConnection#write}. */
    WRITE("write"),
    /** {@link RdmaConnection#writeWithImmediate}. */
    WRITE_WITH_IMMEDIATE("writeWithImmediate"),
    /** {@link RdmaConnection#atomicWrite}. */
    ATOMIC_WRITE("atomicWrite"),
    /** {@link RdmaConnection#flush}. */
    FLUSH("flush"),
    /** {@link RdmaConnection#send}. */
    SEND("send"),
    /** {@link RdmaConnection#sendWithImmediate}. */
    SEND_WITH_IMMEDIATE("sendWithImmediate"),
    /** {@link RdmaConnection#durableWrite}: a write and a flush, one operation. */
    DURABLE_WRITE("durableWrite");

    private final String tag;
    private final String sequenceName;

    OperationKind(String tag) {
        this.tag = tag;
        this.sequenceName = "cqflux." + tag;
    }

    /** {@return the value of the {@code kind} tag of the operation meters, e.g. {@code durableWrite}} */
    public String tagValue() {
        return tag;
    }

    /**
     * {@return the name of the operation's {@code Mono} ({@link reactor.core.Scannable#name()}),
     * e.g. {@code cqflux.durableWrite}}
     */
    public String sequenceName() {
        return sequenceName;
    }
}
