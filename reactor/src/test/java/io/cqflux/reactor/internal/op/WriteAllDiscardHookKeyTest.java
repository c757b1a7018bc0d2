package io.cqflux.reactor.internal.op;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * The fact {@code WriteAllFlux} depends on to tell whether its caller set a discard hook: Reactor
 * keeps a local hook, whether set by {@code doOnDiscard} or {@code Operators.enableOnDiscard},
 * under the context key {@link WriteAllDiscards.DISCARD_HOOK_KEY} (package-private in
 * reactor-core as {@code Hooks.KEY_ON_DISCARD}). Should a Reactor upgrade move it, this fails
 * rather than {@code writeAll} silently passing upstream's discards of its own requests on.
 */
class WriteAllDiscardHookKeyTest {

    @Test
    void reactorsLocalDiscardHook_isKeptUnderTheKeyWriteAllLooksFor() {
        assertTrue(Operators.enableOnDiscard(Context.empty(), o -> { }).hasKey(WriteAllDiscards.DISCARD_HOOK_KEY));
        Boolean seen = Mono.deferContextual(ctx -> Mono.just(ctx.hasKey(WriteAllDiscards.DISCARD_HOOK_KEY)))
                .doOnDiscard(Object.class, o -> { })
                .block();
        assertEquals(Boolean.TRUE, seen, "doOnDiscard's hook, seen upstream");
        assertEquals(Boolean.FALSE, Mono.deferContextual(ctx -> Mono.just(ctx.hasKey(WriteAllDiscards.DISCARD_HOOK_KEY)))
                .block(), "no hook, no key");
    }
}
