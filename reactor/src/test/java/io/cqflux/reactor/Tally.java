package io.cqflux.reactor;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;

/**
 * Counts the terminal signals of many subscriptions, one index each, with raw subscribers (no
 * operator in between that would hide a second signal): how many never terminated, how many
 * terminated twice, the outcomes by kind, and when the last one came.
 */
final class Tally {
    private final AtomicIntegerArray signals;
    private final AtomicReferenceArray<Throwable> errors;
    private final AtomicReferenceArray<Subscription> subscriptions;
    private final AtomicInteger terminated = new AtomicInteger();
    private final AtomicInteger subscribed = new AtomicInteger();
    private final AtomicLong lastNanos = new AtomicLong();
    private final Map<String, AtomicInteger> kinds = new ConcurrentHashMap<>();

    Tally(int capacity) {
        signals = new AtomicIntegerArray(capacity);
        errors = new AtomicReferenceArray<>(capacity);
        subscriptions = new AtomicReferenceArray<>(capacity);
    }

    /** Subscribes a raw counting subscriber to {@code m} as index {@code i}. */
    void subscribe(int i, Mono<?> m) {
        subscribed.incrementAndGet();
        m.subscribe(new CoreSubscriber<Object>() {
            @Override
            public void onSubscribe(Subscription s) {
                subscriptions.set(i, s);
                s.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(Object o) {
            }

            @Override
            public void onError(Throwable t) {
                errors.compareAndSet(i, null, t);
                signal(i, t);
            }

            @Override
            public void onComplete() {
                signal(i, null);
            }
        });
    }

    /** Cancels subscription {@code i} if it was made. */
    void cancel(int i) {
        Subscription s = subscriptions.get(i);
        if (s != null) {
            s.cancel();
        }
    }

    private void signal(int i, Throwable t) {
        boolean first = signals.getAndIncrement(i) == 0;
        // The outcome is recorded before the count that awaitAll() waits on: a test that reads
        // kinds() right after awaitAll() returned must find it (it once read {} on the lane).
        kinds.computeIfAbsent(FaultRig.kind(t), k -> new AtomicInteger()).incrementAndGet();
        lastNanos.set(System.nanoTime());
        if (first) {
            terminated.incrementAndGet();
        }
    }

    int subscribed() {
        return subscribed.get();
    }

    int terminated() {
        return terminated.get();
    }

    /** {@return subscriptions made that have no terminal signal yet} */
    int unterminated() {
        return subscribed.get() - terminated.get();
    }

    /** {@return how many indexes got more than one terminal signal} */
    int twice() {
        int n = 0;
        for (int i = 0; i < signals.length(); i++) {
            if (signals.get(i) > 1) {
                n++;
            }
        }
        return n;
    }

    Throwable error(int i) {
        return errors.get(i);
    }

    /** {@return the time of the last terminal signal (System.nanoTime)} */
    long lastNanos() {
        return lastNanos.get();
    }

    /** {@return outcome kind to count, sorted} */
    Map<String, Integer> kinds() {
        Map<String, Integer> m = new TreeMap<>();
        kinds.forEach((k, v) -> m.put(k, v.get()));
        return m;
    }

    /** Waits (bounded) until every subscription made so far terminated; {@return whether they did} */
    boolean awaitAll(Duration max) {
        return FaultRig.await(() -> unterminated() == 0, max);
    }

    /** {@return the first error whose kind is not {@code expected}, with its message, or null} */
    String firstOtherThan(String expected) {
        for (int i = 0; i < errors.length(); i++) {
            Throwable t = errors.get(i);
            if (t != null && !FaultRig.kind(t).equals(expected)) {
                return FaultRig.kind(t) + ": " + t.getMessage();
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "subscribed " + subscribed() + ", terminated " + terminated() + ", twice " + twice() + ", outcomes "
                + kinds();
    }
}
