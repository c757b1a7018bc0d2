package io.cqflux.samples.webflux;

import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * The storage peer as a process of its own, for a service pointed at it with
 * {@code records.embedded-storage=false} and {@code cqflux.peers.store.address/port}:
 * {@code java -cp ... io.cqflux.samples.webflux.StorageMain [address] [port] [slots] [slot-size] [transport]}.
 * It runs until stopped, then prints the verification of every stored record.
 */
public final class StorageMain {
    private StorageMain() {
    }

    /**
     * @param args address (127.0.0.1), port (7471), slots (65536), slot size (1024), transport (auto)
     * @throws Exception when the address does not resolve or the peer cannot start
     */
    public static void main(String[] args) throws Exception {
        InetAddress host = InetAddress.getByName(args.length > 0 ? args[0] : "127.0.0.1");
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 7471;
        int slots = args.length > 2 ? Integer.parseInt(args[2]) : 65536;
        int slotSize = args.length > 3 ? Integer.parseInt(args[3]) : 1024;
        String transport = args.length > 4 ? args[4] : "auto";
        StoragePeer peer = new StoragePeer(new InetSocketAddress(host, port), transport, slots, slotSize);
        peer.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("storage: " + peer.verify())));
        System.out.println("storage: listening on " + peer.address() + ", " + slots + " slots of " + slotSize + " B");
        Thread.currentThread().join();
    }
}
