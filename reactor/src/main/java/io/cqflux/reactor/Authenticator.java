package io.cqflux.reactor;

import java.net.InetSocketAddress;
import java.util.Objects;
import reactor.core.publisher.Mono;

/**
 * Decides whether a server serves a client, from the credentials in the client's hello
 * ({@link ConnectOptions#credentials(byte[])}) and its address; bound with
 * {@link AcceptOptions#authenticatedBy(Authenticator)}.
 *
 * <p>Nothing of the server's is registered for a request before the decision: neither its
 * control words nor its registrations of the exposed regions. A refused client's connect fails
 * with a {@link io.cqflux.core.ConnectionException} ({@code REJECTED}) whose message carries the
 * reason given here; a decision that does not come within the server's handshake timeout
 * ({@link AcceptOptions#withHandshakeTimeout}) refuses the client, as does one that fails.
 *
 * <p>Called on the server's event-loop thread: return a Mono at once and do any slow work
 * (a lookup, a remote call) inside it, off the loop. {@link SharedSecretAuthenticator} is one.
 */
@FunctionalInterface
public interface Authenticator {

    /**
     * {@return the decision, as one {@link Decision}; an empty Mono or an error refuses}
     *
     * @param request the client's credentials and address
     */
    Mono<Decision> authenticate(Request request);

    /**
     * What a client presented.
     *
     * @param credentials the bytes from its hello (a copy; empty when it sent none)
     * @param peerAddress its address, or {@code null} where the transport cannot tell it
     */
    record Request(byte[] credentials, InetSocketAddress peerAddress) {
        /** Copies the credentials. */
        public Request {
            credentials = Objects.requireNonNull(credentials, "credentials").clone();
        }

        /** {@return the credentials (a copy)} */
        @Override
        public byte[] credentials() {
            return credentials.clone();
        }
    }

    /**
     * Serve the client, or refuse it with a reason the client's error will name.
     *
     * @param allowed whether the client is served
     * @param reason why it is refused (empty when allowed); sent to the client in clear, so say
     *     nothing there that helps an attacker
     */
    record Decision(boolean allowed, String reason) {
        private static final Decision ALLOW = new Decision(true, "");

        /** Checks the reason. */
        public Decision {
            Objects.requireNonNull(reason, "reason");
        }

        /** {@return a decision to serve the client} */
        public static Decision allow() {
            return ALLOW;
        }

        /**
         * {@return a decision to refuse the client}
         *
         * @param reason why, for the client's error (at most 200 bytes of it are sent)
         */
        public static Decision deny(String reason) {
            return new Decision(false, Objects.requireNonNull(reason, "reason"));
        }
    }
}
