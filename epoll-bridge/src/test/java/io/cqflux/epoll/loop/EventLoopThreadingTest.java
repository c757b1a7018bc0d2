package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Which thread may call what: inEventLoop(), and the assertions of the loop-only methods. */
class EventLoopThreadingTest {

    @Test
    void inEventLoop_isTrueOnlyOnTheLoopThread() {
        try (EventLoop loop = EventLoop.start(LoopConfig.of("in-event-loop"))) {
            CompletableFuture<boolean[]> seen = new CompletableFuture<>();
            loop.execute(() -> seen.complete(new boolean[] {loop.inEventLoop(), loop.inLoop()}));
            boolean[] onLoop = Await.done(seen, "the flags seen on the loop thread");
            assertTrue(onLoop[0]);
            assertTrue(onLoop[1]);
            assertFalse(loop.inEventLoop());
            assertFalse(loop.inLoop());
        }
    }

    @Test
    void loopOnlyMethods_calledFromAnotherThread_failTheirAssertion() {
        assertTrue(EventLoop.class.desiredAssertionStatus(),
                "tests must run with -ea (cqflux.test.argLine): the loop's thread checks are assertions");
        try (EventLoop loop = EventLoop.start(LoopConfig.of("loop-only"));
                EventfdTestSource s = new EventfdTestSource()) {
            Registration r = loop.register(s, s::consume);
            Await.roundTrip(loop);
            assertThrows(AssertionError.class, () -> loop.unregister((LoopSource) r, false));
            r.close(); // the hand-over path is still fine from this thread
        }
    }
}
