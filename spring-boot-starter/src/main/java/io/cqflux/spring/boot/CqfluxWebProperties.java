package io.cqflux.spring.boot;

import java.time.Duration;

/**
 * The web layer, {@code cqflux.web.*} ({@link CqfluxProperties#getWeb()}): the HTTP answers of
 * cqflux's errors.
 */
public class CqfluxWebProperties {
    /** The HTTP answers of cqflux's errors ({@link CqfluxErrorWebExceptionHandler}). */
    private final ErrorMapping errorMapping = new ErrorMapping();

    /** Created by the binder. */
    public CqfluxWebProperties() {
    }

    /** @return the error mapping's settings */
    public ErrorMapping getErrorMapping() {
        return errorMapping;
    }

    /** The HTTP answers of cqflux's errors. */
    public static class ErrorMapping {
        /** Answer cqflux's errors with 503 / 400 / 500 problem details instead of the default 500 (opt-in). */
        private boolean enabled = false;

        /** The Retry-After of a 503 answered because the peer is away. */
        private Duration retryAfter = Duration.ofSeconds(1);

        /**
         * Whether a 5xx problem's detail is the exception's message (it may name peer addresses
         * and native calls) instead of a generic sentence; a 400's detail is always the message.
         */
        private boolean includeMessage = false;

        /** Created by the binder. */
        public ErrorMapping() {
        }

        /** @return whether the mapping is on */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether the mapping is on */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return the Retry-After of a 503 answered because the peer is away */
        public Duration getRetryAfter() {
            return retryAfter;
        }

        /** @param retryAfter the Retry-After of a 503 answered because the peer is away */
        public void setRetryAfter(Duration retryAfter) {
            this.retryAfter = retryAfter;
        }

        /** @return whether a 5xx problem's detail is the exception's message */
        public boolean isIncludeMessage() {
            return includeMessage;
        }

        /** @param includeMessage whether a 5xx problem's detail is the exception's message */
        public void setIncludeMessage(boolean includeMessage) {
            this.includeMessage = includeMessage;
        }
    }
}
