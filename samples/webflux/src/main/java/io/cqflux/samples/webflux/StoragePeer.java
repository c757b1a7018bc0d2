package io.cqflux.samples.webflux;

import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The records' storage: a cqflux server exposing one region of {@code slots × slotSize} bytes,
 * record {@code id} at {@code id × slotSize}. Its memory outlives {@link #stop()}: a restarted
 * peer serves what was written before, as persistent memory would. Runs inside the service's JVM
 * (its own {@link Cqflux}, by default) or alone ({@link StorageMain}).
 *
 * <p>Thread-safe; {@link #close()} frees the memory.
 */
public final class StoragePeer implements AutoCloseable {
    private final InetSocketAddress address;
    private final String transport;
    private final int slots;
    private final int slotSize;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment memory;
    private Cqflux cqflux;
    private RdmaServer server;

    /**
     * @param address where to listen
     * @param transport the transport ({@code auto}, {@code fabric}, {@code rpma})
     * @param slots records
     * @param slotSize bytes per record, header included
     */
    public StoragePeer(InetSocketAddress address, String transport, int slots, int slotSize) {
        this.address = address;
        this.transport = transport;
        this.slots = slots;
        this.slotSize = slotSize;
        this.memory = arena.allocate((long) slots * slotSize, 4096);
    }

    /** Starts listening (again); idempotent. */
    public synchronized void start() {
        if (cqflux != null) {
            return;
        }
        cqflux = Cqflux.builder().transport(transport).localAddress(address.getAddress())
                .threadNamePrefix("storage").build();
        // VISIBILITY: this memory is DRAM, not pmem; a durable write resolves once the record is in
        // it (rpma_flush(3); fabric/tcp: FI_COMMIT_COMPLETE).
        Region region = cqflux.register(memory, RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                RegionAccess.FLUSH_TYPE_VISIBILITY);
        server = cqflux.bind(address, c -> c.onDispose(), region).block(Duration.ofSeconds(10));
    }

    /** Stops as a peer that goes away does: every connection ends; the memory stays. */
    public synchronized void stop() {
        if (cqflux != null) {
            cqflux.disposeNow(Duration.ofSeconds(10));
            cqflux = null;
            server = null;
        }
    }

    /** {@return whether it listens} */
    public synchronized boolean isRunning() {
        return server != null;
    }

    /** {@return where it listens} */
    public InetSocketAddress address() {
        return address;
    }

    /**
     * Checks every slot of the memory in place, at the peer (no RDMA involved).
     *
     * @return how many slots hold a record, how many verify, and the first corrupt ids
     */
    public Verification verify() {
        long stored = 0;
        long ok = 0;
        List<Long> corrupt = new ArrayList<>();
        for (long id = 0; id < slots; id++) {
            MemorySegment slot = memory.asSlice(id * slotSize, slotSize);
            if (RecordFormat.empty(slot)) {
                continue;
            }
            stored++;
            if (RecordFormat.check(slot, id) == RecordFormat.Check.OK) {
                ok++;
            } else if (corrupt.size() < 16) {
                corrupt.add(id);
            }
        }
        return new Verification(slots, stored, ok, stored - ok, corrupt);
    }

    /** {@return the storage's memory, for tests that look at the peer's side} */
    MemorySegment memory() {
        return memory;
    }

    @Override
    public synchronized void close() {
        stop();
        arena.close();
    }

    /**
     * What {@link #verify()} found.
     *
     * @param slots slots in the storage
     * @param stored slots holding a record
     * @param verified records whose checksum, id and length verify
     * @param corrupt records that do not
     * @param firstCorruptIds up to 16 of their ids
     */
    public record Verification(long slots, long stored, long verified, long corrupt, List<Long> firstCorruptIds) {
    }
}
