package io.cqflux.samples.webflux;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The records service's settings ({@code records.*}); the storage peer itself is
 * {@code cqflux.peers.store.*}.
 *
 * @param slots how many records the storage holds (ids 0..slots-1)
 * @param slotSize bytes per record, its 24-byte header included
 * @param timeout how long one request waits for its RDMA operation before {@code 504}
 * @param embeddedStorage start the storage peer inside this JVM, listening at {@code cqflux.peers.store}
 * @param storageTransport the embedded storage's transport
 */
@ConfigurationProperties("records")
public record RecordsProperties(int slots, int slotSize, Duration timeout, boolean embeddedStorage,
                                String storageTransport) {
    /** Fills in the defaults: 65,536 slots of 1 KiB, 2 s, embedded storage on the AUTO transport. */
    public RecordsProperties {
        slots = slots == 0 ? 65_536 : slots;
        slotSize = slotSize == 0 ? 1024 : slotSize;
        timeout = timeout == null ? Duration.ofSeconds(2) : timeout;
        storageTransport = storageTransport == null ? "auto" : storageTransport;
        if (slotSize <= RecordFormat.HEADER) {
            throw new IllegalArgumentException("records.slot-size " + slotSize + " leaves no room after the "
                    + RecordFormat.HEADER + "-byte header");
        }
    }
}
