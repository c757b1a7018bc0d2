package io.cqflux.test;

import io.cqflux.core.Capability;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.Opcode;
import io.cqflux.reactor.Cqflux;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * Fault rules for the {@code faulty} transport, a <b>test double</b> that wraps a real transport
 * ({@code fabric} unless told otherwise) and, for the operations a rule selects, does not post
 * them and instead fails them, never completes them, completes them late, or drops their
 * connection. It exists for tests of code that uses cqflux; never put it on a production class
 * path.
 *
 * <pre>{@code
 * Faults faults = Faults.create();
 * try (Cqflux client = faults.configure(Cqflux.builder()).build()) {   // transport "faulty"
 *     faults.on(Opcode.WRITE).nth(2).fail(CompletionStatus.REM_ACCESS_ERR);
 *     faults.on(Opcode.READ).hang();
 *     ...
 * }
 * }</pre>
 *
 * <p>Without {@link #configure}, {@code Cqflux.builder().transport("faulty")} uses the shared
 * rules of {@link #global()}. The wrapped transport is the transport property
 * {@value #WRAPS} ({@code fabric} by default, any provider's name).
 *
 * <p>What each action does to the operations it selects, as the reactive API then reports it:
 * <ul>
 *   <li>{@link Selector#fail(CompletionStatus)}: not posted; an error completion with that status
 *       comes out of the connection's completion queue: the operation's {@code Mono} fails with
 *       {@link io.cqflux.core.OperationFailedException} carrying the status, and, as a real error
 *       completion does ({@code ibv_poll_cq(3)}: the queue pair enters the error state), the
 *       connection ends LOST. The completion comes in the order of posting, as on a reliable
 *       connection: after those of the operations posted before it (which complete as they
 *       would), before those of the operations posted after it.
 *       {@link CompletionStatus#WR_FLUSH_ERR} is the status of a flushed operation: the connection
 *       begins to end (the operation stays pending, new ones wait), and, as no transport event
 *       follows it, it ends LOST after the connection timeout ({@code ConnectionConfig.timeout},
 *       5 s by default) with a message that it was flushed: a test of the ENDING window.
 *       {@link Selector#fail(CompletionStatus, Duration)} makes that completion come later,
 *       among the completions a delay holds back, in the order they fall due (a delayed one
 *       joins them once the real queue has given it).</li>
 *   <li>{@link Selector#hang()}: not posted and never completed, as with a peer that stopped
 *       answering: a {@code timeout()} in the caller's code fires, or the builder's
 *       {@code operationTimeout} ends the connection LOST.</li>
 *   <li>{@link Selector#delay(Duration)}: posted; its completion is held back for the delay
 *       (real time). While a held completion waits, the event loop does not sleep (it parks 1 ms
 *       at a time): meant for delays of milliseconds to seconds.</li>
 *   <li>{@link Selector#drop()}: not posted; the connection reports LOST on its event channel
 *       (and the operation is flushed), so the operation and everything pending on the
 *       connection fail with {@link io.cqflux.core.ConnectionException} LOST.</li>
 * </ul>
 * An operation posted without a completion of its own (the {@code WRITE} of a durable write)
 * shows a hang or a delay on the operation that covers it, the next one posted on its connection
 * that reports a completion (the durable write's {@code FLUSH}): that one never completes, or
 * completes no sooner than the delay, since on a reliable connection its completion says that
 * everything posted before it completed. So a durable write whose {@code WRITE} hangs never
 * reports its data durable. (Only the cover is held back: operations posted after it complete
 * as they would, which a reliable connection, completing in order, would not let them.)
 * Occurrences are counted per rule over every connection of the instances that use these rules,
 * in the order the operations are posted. The words two cqflux peers write to each other for
 * flow control and an orderly goodbye are never selected; operations on a peer region made from
 * a raw descriptor ({@code RdmaConnection.remoteRegion(byte[], RegionAccess...)}) are, like any
 * other. Rules may be added and removed at any
 * time, from any thread; an operation is matched against them when it is posted (on its
 * connection's event-loop thread), first rule first.
 *
 * <p>Thread-safe.
 */
public final class Faults {

    /** The transport's name, for {@code Cqflux.Builder.transport(String)}. */
    public static final String TRANSPORT = "faulty";
    /** Transport property: the name of the wrapped transport ({@code fabric} by default). */
    public static final String WRAPS = "faulty.wraps";
    /** Transport property: the {@link #id()} of the rules to apply ({@link #global()} when absent). */
    public static final String ID = "faulty.id";

    private static final AtomicLong IDS = new AtomicLong();
    /**
     * Instances by id, for the transport that {@link #configure} names them to (the builder
     * carries only the id). Held for the JVM's life: an instance a test dropped before its
     * builder was built must still be found, so create one per test or test class, not per
     * operation.
     */
    private static final Map<String, Faults> REGISTRY = new ConcurrentHashMap<>();
    private static final Faults GLOBAL = new Faults("global");

    private final String id;
    private final List<Fault> rules = new CopyOnWriteArrayList<>();

    /** Capabilities the transports of these rules do not report ({@link #withoutCapabilities}). */
    private final Set<Capability> hidden = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private Faults(String id) {
        this.id = id;
        REGISTRY.put(id, this);
    }

    /**
     * {@return new, empty rules with an identity of their own, for instances configured with
     * {@link #configure}; tests that run in parallel do not see each other's rules}
     */
    public static Faults create() {
        return new Faults("faults-" + IDS.incrementAndGet());
    }

    /** {@return the shared rules, used by every {@code faulty} transport opened without {@value #ID}} */
    public static Faults global() {
        return GLOBAL;
    }

    /** Finds rules by id; the global ones for {@code null}. */
    static Faults lookup(String id) {
        if (id == null) {
            return GLOBAL;
        }
        Faults f = REGISTRY.get(id);
        if (f == null) {
            throw new IllegalArgumentException("transport property " + ID + "=" + id + " names no Faults instance"
                    + " (" + REGISTRY.size() + " exist; ids come from Faults.create()); pass the builder through"
                    + " Faults.configure");
        }
        return f;
    }

    /** {@return the identity of these rules, the value of the transport property {@value #ID}} */
    public String id() {
        return id;
    }

    /**
     * Makes a builder use the {@code faulty} transport with these rules.
     *
     * @param builder the builder to configure
     * @param wrapped the transport to wrap, by its provider's name ({@code fabric}, {@code rpma})
     * @return {@code builder}
     */
    public Cqflux.Builder configure(Cqflux.Builder builder, String wrapped) {
        Objects.requireNonNull(builder, "builder");
        Objects.requireNonNull(wrapped, "wrapped");
        if (wrapped.equalsIgnoreCase(TRANSPORT)) {
            throw new IllegalArgumentException("the faulty transport cannot wrap itself");
        }
        return builder.transport(TRANSPORT).transportProperty(WRAPS, wrapped).transportProperty(ID, id);
    }

    /**
     * Makes a builder use the {@code faulty} transport over {@code fabric} with these rules.
     *
     * @param builder the builder to configure
     * @return {@code builder}
     */
    public Cqflux.Builder configure(Cqflux.Builder builder) {
        return configure(builder, "fabric");
    }

    /**
     * Makes the faulty transports of these rules report the wrapped transport's capabilities
     * without {@code missing}, as a transport or device that lacks them would: what asks for one
     * is refused as it would be there (a bind asking for keys scoped to its connections without
     * {@link Capability#CONNECTION_SCOPED_KEYS}, say). Applies at once, to the transports of these
     * rules already open too.
     *
     * @param missing the capabilities to hide
     * @return these rules
     */
    public Faults withoutCapabilities(Capability... missing) {
        for (Capability c : missing) {
            hidden.add(Objects.requireNonNull(c, "capability"));
        }
        return this;
    }

    /** {@return the capabilities hidden by {@link #withoutCapabilities}} */
    Set<Capability> hiddenCapabilities() {
        return Set.copyOf(hidden);
    }

    /**
     * What the next accept of a server on these rules throws, after it rejected its request (as a
     * transport's accept that fails does), or null. A seam for the test kit's own tests of how a
     * server survives a transport whose accept fails with an {@code Error}; not part of the rules.
     */
    private final java.util.concurrent.atomic.AtomicReference<Error> nextAcceptFailure =
            new java.util.concurrent.atomic.AtomicReference<>();

    /** Makes the next accept reject its request and throw {@code e} (the test kit's own tests). */
    void failNextAccept(Error e) {
        nextAcceptFailure.set(java.util.Objects.requireNonNull(e, "e"));
    }

    /** {@return the failure the next accept throws, taken (at most one accept gets it), or null} */
    Error takeAcceptFailure() {
        return nextAcceptFailure.getAndSet(null);
    }

    /**
     * Starts a rule for operations of the given kinds.
     *
     * @param kinds what was posted: {@link Opcode#READ}, {@link Opcode#WRITE},
     *     {@link Opcode#WRITE_WITH_IMMEDIATE}, {@link Opcode#ATOMIC_WRITE}, {@link Opcode#FLUSH},
     *     {@link Opcode#SEND}, {@link Opcode#SEND_WITH_IMMEDIATE}; none: all of them. (A durable
     *     write is a {@code WRITE} followed by a {@code FLUSH}.)
     * @return the rule's selector; its action method installs it
     * @throws IllegalArgumentException for a receive opcode (receives are posted by the library,
     *     not by the caller)
     */
    public Selector on(Opcode... kinds) {
        Objects.requireNonNull(kinds, "kinds");
        Set<Opcode> set = EnumSet.noneOf(Opcode.class);
        for (Opcode k : kinds) {
            if (Objects.requireNonNull(k, "kind").isReceive()) {
                throw new IllegalArgumentException("opcode " + k + " cannot be faulted: receives are posted by the"
                        + " library; fault the peer's SEND instead");
            }
            set.add(k);
        }
        if (set.isEmpty()) {
            set = EnumSet.complementOf(EnumSet.of(Opcode.RECEIVE, Opcode.RECEIVE_WRITE_WITH_IMMEDIATE));
        }
        return new Selector(set);
    }

    /** {@return the installed rules, first first} */
    public List<Fault> rules() {
        return List.copyOf(rules);
    }

    /** Removes every rule. */
    public void clear() {
        rules.clear();
    }

    void remove(Fault f) {
        rules.remove(f);
    }

    /** {@return the first rule that selects {@code op}, counting it in every rule that matches; or null} */
    Fault select(Operation op) {
        Fault chosen = null;
        for (Fault f : rules) {
            if (f.offer(op) && chosen == null) {
                chosen = f;
            }
        }
        if (chosen != null) {
            chosen.hit();
        }
        return chosen;
    }

    @Override
    public String toString() {
        return "Faults[" + id + ", " + rules + "]";
    }

    /**
     * An operation as it is about to be posted, for rule predicates.
     *
     * @param opcode what is posted
     * @param connection the connection's description (transport, local and peer address)
     * @param remoteOffset the offset in the peer's region; -1 for a send
     * @param length bytes (8 for an atomic write)
     */
    public record Operation(Opcode opcode, String connection, long remoteOffset, long length) {
    }

    /** What a rule does to the operations it selects. */
    public enum Action {
        /** Not posted; an error completion with the rule's status, after the rule's delay (0: at once). */
        FAIL,
        /** Not posted, never completed. */
        HANG,
        /** Posted; the completion is held back for the rule's delay. */
        DELAY,
        /** Not posted; the connection reports LOST. */
        DROP
    }

    /** Selects operations for a rule; one of its action methods installs the rule. Not thread-safe. */
    public final class Selector {
        private final Set<Opcode> kinds;
        private long nth;
        private Predicate<? super Operation> predicate = o -> true;

        private Selector(Set<Opcode> kinds) {
            this.kinds = kinds;
        }

        /**
         * Selects only the {@code n}-th matching operation (counted from 1); by default every
         * matching operation is selected.
         *
         * @param n the occurrence, at least 1
         * @return this
         */
        public Selector nth(long n) {
            if (n < 1) {
                throw new IllegalArgumentException("nth " + n + " is below 1 (occurrences count from 1)");
            }
            this.nth = n;
            return this;
        }

        /** {@return this, selecting only the first matching operation ({@code nth(1)})} */
        public Selector once() {
            return nth(1);
        }

        /**
         * Narrows the rule to the operations {@code p} accepts; only those count as occurrences.
         * Called again, it narrows further: the rule selects what every predicate accepts.
         *
         * @param p the predicate, called on the loop thread: keep it fast, let it not throw
         * @return this
         */
        public Selector matching(Predicate<? super Operation> p) {
            Objects.requireNonNull(p, "predicate");
            // Narrowing composes: a second call that replaced the first would silently widen the
            // rule to operations the first predicate excluded.
            Predicate<? super Operation> before = this.predicate;
            this.predicate = op -> before.test(op) && p.test(op);
            return this;
        }

        /**
         * Fails the selected operations with an error completion of {@code status}.
         *
         * @param status an error status (not {@code SUCCESS})
         * @return the installed rule
         */
        public Fault fail(CompletionStatus status) {
            Objects.requireNonNull(status, "status");
            if (status == CompletionStatus.SUCCESS) {
                throw new IllegalArgumentException("status SUCCESS is not a failure; use delay(Duration.ZERO)"
                        + " for an operation that completes normally");
            }
            return install(Action.FAIL, status, Duration.ZERO);
        }

        /**
         * Fails the selected operations with an error completion of {@code status} that comes
         * {@code after} their post, among the completions a {@link #delay} holds back, in the
         * order they fall due: a failure that can arrive in one batch with the completions of
         * operations posted before it. A delayed operation's completion is held only once the
         * real queue has given it, so one that the network has not completed by the failure's
         * time comes out after the failure.
         *
         * @param status an error status (not {@code SUCCESS})
         * @param after how long, from the post, in real time; at least 0 and at most one hour
         * @return the installed rule
         */
        public Fault fail(CompletionStatus status, Duration after) {
            Objects.requireNonNull(status, "status");
            if (status == CompletionStatus.SUCCESS) {
                throw new IllegalArgumentException("status SUCCESS is not a failure; use delay(Duration)"
                        + " for an operation that completes normally");
            }
            return install(Action.FAIL, status, checkDelay("after", after));
        }

        /** {@return the installed rule: the selected operations are never posted and never complete} */
        public Fault hang() {
            return install(Action.HANG, null, Duration.ZERO);
        }

        /**
         * Posts the selected operations but holds their completions back.
         *
         * @param delay how long, from the post, in real time; at least 0 and at most one hour
         * @return the installed rule
         */
        public Fault delay(Duration delay) {
            return install(Action.DELAY, null, checkDelay("delay", delay));
        }

        private static Duration checkDelay(String name, Duration delay) {
            Objects.requireNonNull(delay, name);
            if (delay.isNegative() || delay.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException(name + " " + delay + " is outside [0, PT1H]");
            }
            return delay;
        }

        /** {@return the installed rule: the selected operations' connection reports LOST instead of posting them} */
        public Fault drop() {
            return install(Action.DROP, null, Duration.ZERO);
        }

        private Fault install(Action action, CompletionStatus status, Duration delay) {
            Fault f = new Fault(Faults.this, kinds, nth, predicate, action, status, delay);
            rules.add(f);
            return f;
        }
    }
}
