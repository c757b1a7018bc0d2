package io.cqflux.reactor;

import io.cqflux.reactor.internal.op.Emissions;
import java.util.function.Predicate;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * Raw subscribers (no Reactor operator between them and a sink) that break Reactive Streams §2.13
 * by throwing from a signal: Reactor's sinks let such a throw out of {@code tryEmit*}, which the
 * library's emissions must survive ({@code Emissions}). Test double, named as such.
 */
final class RuleBreakingSubscribers {
    private RuleBreakingSubscribers() {
    }

    /**
     * @param when the values it throws on (after running {@code before})
     * @param before run before each throw, e.g. a latch's count-down
     * @return a subscriber with unbounded demand that throws from {@code onNext} for those values
     */
    static <T> Subscriber<T> throwingOnNext(Predicate<? super T> when, Runnable before) {
        return new Base<>() {
            @Override
            public void onNext(T t) {
                if (when.test(t)) {
                    before.run();
                    throw new IllegalStateException("a subscriber that throws from onNext");
                }
            }
        };
    }

    /**
     * @param before run before the throw, e.g. a latch's count-down
     * @return a subscriber with unbounded demand that throws from {@code onComplete}
     */
    static <T> Subscriber<T> throwingOnComplete(Runnable before) {
        return new Base<>() {
            @Override
            public void onComplete() {
                before.run();
                throw new IllegalStateException("a subscriber that throws from onComplete");
            }
        };
    }

    private abstract static class Base<T> implements Subscriber<T> {
        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(T t) {
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onComplete() {
        }
    }
}
