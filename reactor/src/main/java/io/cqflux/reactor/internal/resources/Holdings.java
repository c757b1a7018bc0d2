package io.cqflux.reactor.internal.resources;

import io.cqflux.reactor.Region;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import reactor.core.Disposable;

/**
 * What an instance made through its public side and has not released yet: its listening servers,
 * its registered regions and its peer pools, each in a concurrent set (any thread), and what its
 * {@link Shutdown} does with them. The pools are disposed first, before anything else closes: a
 * pool whose slots wait out a backoff would otherwise notice only when its next attempt fails, up
 * to the backoff's maximum later, and its waiting operations would fail UNREACHABLE instead of
 * closed.
 *
 * <p>Each add races the shutdown's start: a call that passed its open check just before
 * {@code dispose()} may add after the shutdown read the set. The shutdown sets the instance's
 * {@code closing} flag before it reads any set, and every add reads the flag after it added, so
 * either the shutdown sees the item or the add sees the flag; an add that answers {@code false}
 * leaves the item for its caller to close and refuse.
 *
 * @param <S> the server type, whose close only the public side can start
 */
public final class Holdings<S> implements Shutdown.Owned {
    private final Set<S> servers = ConcurrentHashMap.newKeySet();
    private final Set<Region> regions = ConcurrentHashMap.newKeySet();
    /** The pools made and not disposed yet; the shutdown disposes them first. */
    private final Set<Disposable> pools = ConcurrentHashMap.newKeySet();
    private final Function<S, CompletableFuture<Void>> closeServer;
    /** What else stops before anything closes, after the pools (the buffer pool's takers). */
    private final Runnable afterPools;
    /** The instance's shutdown flag, which the shutdown sets before it reads these sets. */
    private final AtomicBoolean closing;

    /**
     * @param closeServer starts a server's close
     * @param afterPools what else stops first, after the pools
     * @param closing the instance's shutdown flag
     */
    public Holdings(Function<S, CompletableFuture<Void>> closeServer, Runnable afterPools, AtomicBoolean closing) {
        this.closeServer = closeServer;
        this.afterPools = afterPools;
        this.closing = closing;
    }

    /**
     * Keeps a registered region until it closes.
     *
     * @return {@code false} when the shutdown began: the caller closes the region
     */
    public boolean add(Region region) {
        regions.add(region);
        region.onClose().subscribe(null, null, () -> regions.remove(region));
        return !closing.get();
    }

    /**
     * Keeps a peer pool until it is disposed ({@link #forgetPool}).
     *
     * @return {@code false} when the shutdown began: the caller disposes the pool
     */
    public boolean addPool(Disposable pool) {
        pools.add(pool);
        return !closing.get();
    }

    /**
     * Keeps a listening server until it removes itself.
     *
     * @return {@code false} when the shutdown began: the caller disposes the server
     */
    public boolean addServer(S server) {
        servers.add(server);
        return !closing.get();
    }

    /** A pool was disposed: nothing left to dispose of it. */
    public void forgetPool(Disposable pool) {
        pools.remove(pool);
    }

    @Override
    public void stopFirst() {
        for (Disposable p : List.copyOf(pools)) {
            p.dispose();
        }
        afterPools.run();
    }

    @Override
    public List<CompletableFuture<Void>> closeServers() {
        List<CompletableFuture<Void>> closes = new ArrayList<>();
        for (S s : List.copyOf(servers)) {
            closes.add(closeServer.apply(s));
        }
        return closes;
    }

    /**
     * Sums what each server still listening holds now, position by position (an instance's
     * total over its servers). Any thread: the servers are read one after another, not as one
     * snapshot.
     *
     * @param n how many counts each server gives
     * @param counts a server's counts, at least {@code n} of them
     * @return the {@code n} sums
     */
    public int[] sum(int n, Function<? super S, int[]> counts) {
        int[] sums = new int[n];
        for (S s : servers) {
            int[] c = counts.apply(s);
            for (int i = 0; i < n; i++) {
                sums[i] += c[i];
            }
        }
        return sums;
    }

    /** {@return the servers still listening (a live, mutable view: servers add and remove themselves)} */
    @Override
    public Set<S> servers() {
        return servers;
    }

    @Override
    public Collection<Region> regions() {
        return regions;
    }
}
