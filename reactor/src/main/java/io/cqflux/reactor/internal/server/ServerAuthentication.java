package io.cqflux.reactor.internal.server;

import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.Authenticator;
import io.cqflux.reactor.RdmaServer;
import java.time.Duration;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * An {@link RdmaServer}'s questions to its {@link Authenticator}
 * ({@link AcceptOptions#authenticatedBy(Authenticator)}): each request's credentials go to the
 * authenticator, and until it answers (or the handshake timeout passes) nothing is registered for
 * the request. The answer is taken on the server's loop: an allowed request is served, a refused
 * one is rejected with the refusal's reason as the reject's data, or, on a transport whose reject
 * carries none to the client, accepted with it and closed ({@link ServerRefusals#refuse}). Whatever is
 * still undecided when the server closes is rejected, since a request must not outlive its
 * listener ({@code fi_reject(3)} names the passive endpoint). Loop-confined, as the server's
 * accept path is; only {@link #authenticate}'s answer arrives on any thread.
 */
final class ServerAuthentication {
    /** The server's logger: what it refuses is the server's to say. */
    private static final Logger LOG = Loggers.getLogger(RdmaServer.class);

    private final ServerCore server;
    private final ServerRefusals refusals;
    private final EventLoop loop;
    private final Authenticator authenticator;
    private final ServerAdmission admission;
    private final Duration handshakeTimeout;
    /** Requests the authenticator has not decided on: neither accepted nor rejected yet. Loop thread only. */
    private final Set<ServerAdmission.Handshake> undecided = new HashSet<>();

    ServerAuthentication(ServerCore server, ServerRefusals refusals, EventLoop loop, Authenticator authenticator, ServerAdmission admission,
                         Duration handshakeTimeout) {
        this.server = server;
        this.refusals = refusals;
        this.loop = loop;
        this.authenticator = authenticator;
        this.admission = admission;
        this.handshakeTimeout = handshakeTimeout;
    }

    /**
     * Asks the authenticator about a request; until it answers nothing is registered for it. The
     * answer (or the handshake timeout) is taken on this loop.
     */
    void authenticate(ServerAdmission.Handshake h, byte[] credentials) {
        undecided.add(h);
        h.timeout(loop.schedule(handshakeTimeout, () -> {
            if (undecided.remove(h)) {
                h.dropDecision(); // a decision that never comes holds nothing
                admission.timedOut("the authenticator of " + server + " did not decide on "
                        + ServerAdmission.peerOf(h.req) + " within " + handshakeTimeout.toMillis()
                        + " ms; the request is refused");
                refusals.refuse(h, "authentication timed out after " + handshakeTimeout.toMillis() + " ms");
            }
        }));
        Mono<Authenticator.Decision> m;
        try {
            loop.noteOperation("cqflux.authenticate"); // the application's authenticator
            m = Objects.requireNonNull(authenticator.authenticate(
                    new Authenticator.Request(credentials, h.req.peerAddress())), "the authenticator returned null");
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            LOG.warn("the authenticator of " + server + " threw; the request is refused", t);
            m = Mono.just(Authenticator.Decision.deny("the server could not authenticate the request"));
        } finally {
            loop.noteSetup("cqflux.accept");
        }
        h.decision(m.singleOptional().subscribe(
                d -> decided(h, d.orElse(null)),
                e -> {
                    LOG.warn("the authenticator of " + server + " failed; the request is refused", e);
                    decided(h, Authenticator.Decision.deny("the server could not authenticate the request"));
                }));
    }

    /** Any thread: the authenticator's answer, taken on this loop; null is a refusal. */
    private void decided(ServerAdmission.Handshake h, Authenticator.Decision d) {
        Runnable task = () -> {
            loop.noteSetup("cqflux.accept");
            if (!undecided.remove(h)) {
                return; // timed out, or the server closed
            }
            h.cancelTimeout();
            if (d == null || !d.allowed()) {
                String reason = d == null ? "the authenticator gave no decision" : d.reason();
                admission.refusedByAuthenticator("the authenticator of " + server + " refused "
                        + ServerAdmission.peerOf(h.req) + ": " + reason);
                refusals.refuse(h, reason);
                return;
            }
            server.serve(h);
        };
        try {
            loop.execute(task);
        } catch (RuntimeException e) {
            // The loop is shutting down: the server's close rejects what is undecided.
        }
    }

    /**
     * The server closes: every request still undecided is rejected before the listener goes, and
     * a decision that comes later finds nothing. Loop thread.
     */
    void rejectUndecided() {
        for (ServerAdmission.Handshake h : undecided) {
            h.dropDecision();
            refusals.rejectQuietly(h.req);
            h.done();
        }
        undecided.clear();
    }
}
