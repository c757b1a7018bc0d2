package io.cqflux.samples.webflux;

import io.cqflux.spring.boot.CqfluxProperties;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The records service: a Spring Boot WebFlux application whose records live in a storage peer's
 * memory, written durably and read back by RDMA through the cqflux starter. By default it starts
 * the storage peer in its own JVM ({@code records.embedded-storage=true}); point
 * {@code cqflux.peers.store.*} at a {@link StorageMain} elsewhere and set it to false.
 */
@SpringBootApplication
@EnableConfigurationProperties(RecordsProperties.class)
public class RecordsApplication {

    /**
     * @param args Spring Boot's arguments, e.g. {@code --server.port=8080}
     */
    public static void main(String[] args) {
        SpringApplication.run(RecordsApplication.class, args);
    }

    /**
     * The storage peer inside this JVM, listening where {@code cqflux.peers.store} points.
     *
     * @param cqflux the starter's properties (the peer's address)
     * @param records the slot layout
     * @return the started peer, closed with the context (after the starter's drain)
     * @throws UnknownHostException when the peer's address does not resolve
     */
    @Bean(initMethod = "start", destroyMethod = "close")
    @ConditionalOnBooleanProperty(name = "records.embedded-storage", matchIfMissing = true)
    StoragePeer storagePeer(CqfluxProperties cqflux, RecordsProperties records) throws UnknownHostException {
        CqfluxProperties.Peer store = cqflux.getPeers().get("store");
        return new StoragePeer(new InetSocketAddress(InetAddress.getByName(store.getAddress()), store.getPort()),
                records.storageTransport(), records.slots(), records.slotSize());
    }

    /** The peer-side check of every stored record, when the storage runs in this JVM. */
    @RestController
    @ConditionalOnBooleanProperty(name = "records.embedded-storage", matchIfMissing = true)
    static class VerifyController {
        private final StoragePeer storage;

        VerifyController(StoragePeer storage) {
            this.storage = storage;
        }

        /** @return the verification; {@code 500} when any stored record does not verify */
        @GetMapping("/admin/verify")
        ResponseEntity<StoragePeer.Verification> verify() {
            StoragePeer.Verification v = storage.verify();
            return v.corrupt() == 0 ? ResponseEntity.ok(v) : ResponseEntity.internalServerError().body(v);
        }
    }
}
