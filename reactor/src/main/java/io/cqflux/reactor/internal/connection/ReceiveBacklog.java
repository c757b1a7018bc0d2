package io.cqflux.reactor.internal.connection;

import io.cqflux.core.Opcode;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * What arrived on a live connection with nobody asking for it, in arrival order: completed
 * receives, kept in the buffers they landed in (no copy), and notifications that consumed no
 * buffer. Its {@link Receiver} hands it to the next subscriber before anything else and bounds
 * it (the receive queue's depth for the buffers, the notification backlog for the rest). Confined
 * as its receiver is.
 */
final class ReceiveBacklog {
    /** A notification that consumed no buffer, kept until asked for. */
    record Notification(long length, Opcode opcode, boolean hasImmediate, int immediate) {
    }

    /** {@link ReceiveBuffer}s and {@link Notification}s. */
    // Sized for an idle connection (one per connection, thousands per server); it grows on use.
    private final ArrayDeque<Object> kept = new ArrayDeque<>(4);
    private int buffers;
    private int notifications;

    /**
     * Keeps a completed receive in its buffer, which holds what arrived.
     *
     * @param b the buffer
     */
    void add(ReceiveBuffer b) {
        kept.add(b);
        buffers++;
    }

    /**
     * Keeps a notification.
     *
     * @param n the notification
     */
    void add(Notification n) {
        kept.add(n);
        notifications++;
    }

    /** {@return the oldest, taken out: a {@link ReceiveBuffer} or a {@link Notification}; null when empty} */
    Object poll() {
        Object o = kept.poll();
        if (o instanceof ReceiveBuffer) {
            buffers--;
        } else if (o != null) {
            notifications--;
        }
        return o;
    }

    boolean isEmpty() {
        return kept.isEmpty();
    }

    /** {@return the messages and notifications kept} */
    int size() {
        return kept.size();
    }

    /** {@return the buffers kept (the rest are notifications)} */
    int buffers() {
        return buffers;
    }

    /** {@return the notifications kept} */
    int notifications() {
        return notifications;
    }

    /**
     * Takes everything out, in order.
     *
     * @param onBuffer gets each buffer kept
     * @param onNotification gets each notification kept
     */
    void drain(Consumer<ReceiveBuffer> onBuffer, Consumer<Notification> onNotification) {
        for (Object o : kept) {
            if (o instanceof ReceiveBuffer b) {
                onBuffer.accept(b);
            } else {
                onNotification.accept((Notification) o);
            }
        }
        kept.clear();
        buffers = 0;
        notifications = 0;
    }
}
