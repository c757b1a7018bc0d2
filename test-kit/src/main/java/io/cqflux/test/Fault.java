package io.cqflux.test;

import io.cqflux.core.CompletionStatus;
import io.cqflux.core.Opcode;
import java.time.Duration;
import java.util.Set;
import java.util.function.Predicate;

/**
 * One installed fault rule of {@link Faults}: which operations it selects, what it does to them,
 * and how often it has. Thread-safe.
 */
public final class Fault {
    private final Faults owner;
    private final Set<Opcode> kinds;
    private final long nth;
    private final Predicate<? super Faults.Operation> predicate;
    private final Faults.Action action;
    private final CompletionStatus status;
    private final Duration delay;
    private long seen;
    private long hits;

    Fault(Faults owner, Set<Opcode> kinds, long nth, Predicate<? super Faults.Operation> predicate,
          Faults.Action action, CompletionStatus status, Duration delay) {
        this.owner = owner;
        this.kinds = Set.copyOf(kinds);
        this.nth = nth;
        this.predicate = predicate;
        this.action = action;
        this.status = status;
        this.delay = delay;
    }

    /** {@return what it does} */
    public Faults.Action action() {
        return action;
    }

    /** {@return the status of its error completions; {@code null} unless {@link Faults.Action#FAIL}} */
    public CompletionStatus status() {
        return status;
    }

    /** {@return how long it holds completions back; zero unless {@link Faults.Action#DELAY}, or a {@link Faults.Action#FAIL} that fails later} */
    public Duration delay() {
        return delay;
    }

    /** {@return how many operations matched it so far (selected or not)} */
    public synchronized long seen() {
        return seen;
    }

    /** {@return how many operations it acted on so far} */
    public synchronized long hits() {
        return hits;
    }

    /** Uninstalls it: operations posted from now on are not selected by it. */
    public void remove() {
        owner.remove(this);
    }

    /** Counts {@code op} if it matches; {@return whether this rule selects it} */
    synchronized boolean offer(Faults.Operation op) {
        if (!kinds.contains(op.opcode()) || !predicate.test(op)) {
            return false;
        }
        seen++;
        return nth == 0 || seen == nth;
    }

    /** Counts an operation this rule acts on. */
    synchronized void hit() {
        hits++;
    }

    @Override
    public synchronized String toString() {
        return "Fault[" + action + (status != null ? " " + status : "") + (!delay.isZero() ? " " + delay : "")
                + " on " + kinds + (nth != 0 ? " #" + nth : "") + ", hits " + hits + "/" + seen + "]";
    }
}
