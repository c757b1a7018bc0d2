package io.cqflux.test.network;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/*
 * Facts the code depends on (checked on the project's build host as root; proven again by
 * NetworkRigTest, which fails loudly where one stops holding):
 *
 * - `ip netns add`, `ip link add ... type veth peer name ...`, `ip link set IF netns NS` and
 *   addresses inside the namespace work for root; `ip netns exec NS java ...` starts a JVM whose
 *   sockets live in NS. No netem (no sch_netem module) and no iptables/nft: the only faults are a
 *   link's administrative state and the removal of the link.
 * - The test JVM stays in the root namespace, on the veth end left there: libfabric's tcp provider
 *   reaches the peer's address over it when the client's Cqflux binds the root end's address
 *   (Cqflux.Builder.localAddress refuses an address no interface of this host has, so a client in
 *   the root namespace cannot take the peer's address by mistake).
 * - Partition = the peer end set down (`ip -n NS link set P down`, ip-link(8)). The root end then
 *   shows NO-CARRIER and keeps its route, flagged `linkdown` (net.ipv4.conf.all.
 *   ignore_routes_with_linkdown is 0): the client's TCP sees no error, its segments are dropped in
 *   the veth and retransmitted, as behind a switch that drops everything. The peer's own route is
 *   removed while its end is down and comes back with the address when it is set up again (heal):
 *   a connection that outlived the partition resumes, bytes sent during it arrive.
 * - The root end holds a permanent neighbour entry for the peer's address. Without it, a
 *   partition under traffic leaves the peer's entry INCOMPLETE (the carrier loss flushes the
 *   learned entry, the next segment starts a resolution whose requests are dropped), and after
 *   the heal the first packets wait for the next probe, up to retrans_time_ms (1 s by default,
 *   ip-neighbour(8)): connects right after a heal took about 750 ms instead of a few. A permanent
 *   entry survives the carrier loss, so a heal takes effect at once; the peer's side needs none
 *   (its entries go with its link's administrative down, and it resolves the client, whose link
 *   is up, at once).
 * - Vanish = the peer's end set down first, then the namespace's processes SIGKILLed and the
 *   namespace deleted (`ip netns del` only removes its name; the kernel frees it later). The order
 *   matters: a killed process's sockets send FIN or RST, which the downed link no longer carries,
 *   so the client hears nothing, as with a host that lost power behind a switch. A namespace whose
 *   killed process had a TCP connection with unacknowledged data is not freed at once: the
 *   orphaned socket holds it, and with it the veth, whose root end stays NO-CARRIER (the client's
 *   retransmissions and connects are dropped there, silently) until its retransmissions give up,
 *   minutes later, or until close() deletes the root end, which removes both ends (veth(4)).
 *   Deleting the veth instead would make the peer's address hit the blackhole route below, and a
 *   connect to it then fails at once with EINVAL (libfabric's fi_connect: FI_EINVAL), which no real
 *   vanished host causes.
 * - The root namespace has a default route to the outside: once the veth is gone, segments the
 *   client still retransmits to the peer's address (and a dead socket's FIN, which the kernel
 *   retransmits for up to about a minute after close) would leave the host through it. Each rig
 *   therefore adds a blackhole route for its /30 with a higher metric than the connected route
 *   (the connected one wins while the veth lives; `ip route get` then says "Invalid argument"
 *   for the address), and keeps it until this JVM exits, so nothing of the test ever leaves.
 * - Random loss without netem (and without act_gact, also absent): a classic BPF filter on a
 *   receiving end's ingress (clsact, cls_bpf with `bytecode`) that loads the kernel's random
 *   number (the ancillary load SKF_AD_RANDOM) and matches above a threshold, with the action
 *   `mirred egress redirect` to a veth that stays down in the same namespace (mirred looks its
 *   target up there): the matched packet is dropped there (mirred counts it under overlimits). On
 *   an ingress the drop is a real network loss for the sender (TCP retransmits: 10 % cost 365
 *   retransmitted segments for 2 MB); the same filter on an egress is a local drop that the
 *   sending stack sees and requeues at once (1 retransmission for the same 2 MB). So each
 *   direction is dropped at its receiver: what the client sends on the peer end's ingress (sink
 *   pair `s`/`t` inside the namespace), what the peer sends on the root end's ingress (sink pair
 *   `u`/`v` in the root namespace). Each filter matches `protocol ip` only: ARP passes, and the
 *   root end's permanent neighbour entry needs none anyway. A veth passes TCP's segmentation
 *   offload through: one packet on it may carry up to 64 KB (the first loss test saw 8 drops at
 *   30 % for 200 KB), so one draw would drop dozens of wire frames at once. Both ends therefore
 *   have gso_max_segs 1 (ip-link(8)): the stack then sizes each packet to one MSS (within the
 *   1500-byte MTU), and a drop is one frame, as on a real link.
 * - Names and addresses are the rig's own, and each names the JVM that made it, so that two JVMs
 *   (two builds on one host) neither collide nor sweep each other's rigs: namespaces
 *   `cqfxnf-<pid>-<n>`; links `cqfxnf<pid36>-<n36><role>`, the pid and the rig's index in base 36
 *   (IFNAMSIZ is 16, so a name has at most 15 characters: 6 + 5 for a pid up to 2^22, Linux's
 *   largest pid_max, + 1 + 2 + 1); addresses from 198.18.0.0/15, the block RFC 2544 sets aside
 *   for benchmarking tests, a /30 per rig from a random start per JVM (two JVMs' rigs meet on
 *   one block about once in 16,384 pairs of live rigs); blackhole routes with the JVM's pid as metric and the
 *   routing protocol number ROUTE_PROTO (rtnetlink(7)'s rtm_protocol; one that
 *   /etc/iproute2/rt_protos and the kernel's RTPROT_* values leave unassigned). Leftovers of a
 *   run that was killed are removed when the first rig of a JVM starts: namespaces and links whose
 *   pid is no longer alive, and routes of ROUTE_PROTO whose metric is no live pid. Nothing else is
 *   touched: a live JVM's pair in the middle of its creation (both ends still in the root
 *   namespace) carries its pid, and a route the rig did not make has another protocol. A dead
 *   pid that a new process took keeps its leftovers until that process ends.
 */

/**
 * A network the test owns: a namespace for the peer, joined to the root namespace (where the test
 * JVM runs the client) by a veth pair with an address at each end; a peer JVM ({@link NetPeer})
 * started inside the namespace; and the faults: {@link #partition()}, {@link #heal()},
 * {@link #vanish()}, random loss per direction ({@link #loss(int, int)}). {@link #close()} kills the peer and deletes the namespace and the links, and
 * is idempotent; every command it runs is bounded in time.
 */
final class NetworkRig implements AutoCloseable {
    static final String PREFIX = "cqfxnf";
    /** The routing protocol number of the rig's blackhole routes (see the facts). */
    static final String ROUTE_PROTO = "207";
    /** This JVM's token in link names: its pid in base 36 (see the facts). */
    static final String TOKEN = Long.toString(ProcessHandle.current().pid(), 36);
    /** Where this JVM's rigs start in the /30 blocks of 198.18.0.0/15 (see the constructor). */
    private static final int BLOCK_BASE = java.util.concurrent.ThreadLocalRandom.current().nextInt(16_384);
    private static final Duration COMMAND_BOUND = Duration.ofSeconds(10);
    private static final AtomicInteger NEXT = new AtomicInteger();
    private static boolean swept;

    final int index;
    final String namespace;
    final String rootLink;
    final String peerLink;
    final InetAddress rootAddress;
    final InetAddress peerAddress;
    private final List<NetPeer.Handle> peers = new ArrayList<>();
    private boolean closed;

    private NetworkRig(int index) {
        this.index = index;
        this.namespace = PREFIX + "-" + ProcessHandle.current().pid() + "-" + index;
        this.rootLink = link(TOKEN, index, 'r');
        this.peerLink = link(TOKEN, index, 'p');
        // A /30 per rig: 198.18.<hi>.<lo*4 + 1 | 2>, 16,384 rigs before the range wraps, from a
        // random start per JVM: test JVMs started together (Surefire's forks) have pids close to
        // each other, and pid-derived blocks collided whenever two pids were equal mod 256.
        int block = (BLOCK_BASE + index) % 16_384;
        this.rootAddress = address(198, 18 + (block >> 13), (block >> 6) & 0x7f, ((block & 0x3f) << 2) + 1);
        this.peerAddress = address(198, 18 + (block >> 13), (block >> 6) & 0x7f, ((block & 0x3f) << 2) + 2);
    }

    /**
     * {@return a link name of the rig: the prefix, the owning JVM's token, the index, the role}
     *
     * @param token the owner's pid in base 36
     * @param index the rig's index in that JVM, below 1296 (two base-36 digits)
     * @param role {@code r} root end, {@code p} peer end, {@code s}/{@code t} the namespace's loss
     *     sink pair, {@code u}/{@code v} the root namespace's
     */
    static String link(String token, int index, char role) {
        String name = PREFIX + token + "-" + Integer.toString(index, 36) + role;
        if (name.length() > 15) {
            throw new IllegalArgumentException("link name " + name + " has " + name.length()
                    + " characters, above IFNAMSIZ - 1 = 15");
        }
        return name;
    }

    /** {@return the pid whose token a link name of the rig carries, or -1 when it carries none} */
    static long ownerOfLink(String name) {
        if (!name.startsWith(PREFIX)) {
            return -1;
        }
        String rest = name.substring(PREFIX.length());
        int dash = rest.indexOf('-');
        if (dash < 1 || !rest.substring(0, dash).matches("[0-9a-z]{1,5}")) {
            return -1;
        }
        return Long.parseLong(rest.substring(0, dash), 36);
    }

    private static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    private static InetAddress address(int a, int b, int c, int d) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) a, (byte) b, (byte) c, (byte) d});
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Makes the namespace and the veth pair, with addresses at both ends and both ends up.
     *
     * @return the rig; close it
     */
    static NetworkRig create() {
        sweepLeftovers();
        NetworkRig rig = new NetworkRig(NEXT.getAndIncrement() % 1000);
        try {
            rig.blackhole();
            rig.ip("netns", "add", rig.namespace);
            rig.ip("link", "add", rig.rootLink, "type", "veth", "peer", "name", rig.peerLink);
            // One wire-size frame per packet, so that the loss filter drops frames (see the facts).
            rig.ip("link", "set", "dev", rig.rootLink, "gso_max_segs", "1");
            rig.ip("link", "set", "dev", rig.peerLink, "gso_max_segs", "1");
            rig.ip("link", "set", rig.peerLink, "netns", rig.namespace);
            rig.ip("addr", "add", rig.rootAddress.getHostAddress() + "/30", "dev", rig.rootLink);
            rig.ip("link", "set", rig.rootLink, "up");
            rig.ip("-n", rig.namespace, "addr", "add", rig.peerAddress.getHostAddress() + "/30", "dev", rig.peerLink);
            rig.ip("-n", rig.namespace, "link", "set", "lo", "up");
            rig.ip("-n", rig.namespace, "link", "set", rig.peerLink, "up");
            rig.ip("neigh", "replace", rig.peerAddress.getHostAddress(), "lladdr", rig.peerMac(), "dev", rig.rootLink,
                    "nud", "permanent");
            return rig;
        } catch (RuntimeException | Error e) {
            rig.close();
            throw e;
        }
    }

    /**
     * Starts a peer JVM in the namespace, serving a region of {@code regionSize} bytes on the
     * peer's address, and waits (bounded) until it listens.
     *
     * @param regionSize bytes of the exposed region
     * @param options the peer's further arguments ({@link NetPeer#main}: its keep-alive)
     * @return the peer; it is killed by {@link #vanish()} or {@link #close()}
     */
    NetPeer.Handle startPeer(long regionSize, String... options) {
        NetPeer.Handle h = NetPeer.start(List.of("ip", "netns", "exec", namespace), peerAddress, regionSize, options);
        peers.add(h);
        return h;
    }

    /** {@return the hardware address of the peer's end} */
    private String peerMac() {
        String line = run(List.of("ip", "-n", namespace, "-o", "link", "show", peerLink), true);
        int at = line.indexOf("link/ether ");
        if (at < 0) {
            throw new AssertionError("no link/ether in: " + line);
        }
        return line.substring(at + "link/ether ".length()).split("\\s")[0];
    }

    /** {@return the rig's /30, e.g. 198.18.0.0/30} */
    String subnet() {
        byte[] a = rootAddress.getAddress();
        return (a[0] & 0xff) + "." + (a[1] & 0xff) + "." + (a[2] & 0xff) + "." + ((a[3] & 0xff) & ~3) + "/30";
    }

    /** Adds the rig's blackhole route (see the facts), removed when this JVM exits. */
    private void blackhole() {
        String metric = Long.toString(ProcessHandle.current().pid());
        List<String> del = List.of("ip", "route", "del", "blackhole", subnet(), "metric", metric, "proto", ROUTE_PROTO);
        run(del, false); // one an earlier rig of this JVM with the same /30 left
        run(List.of("ip", "route", "add", "blackhole", subnet(), "metric", metric, "proto", ROUTE_PROTO), true);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> run(del, false)));
    }

    /** Takes the peer's end of the link down: nothing passes either way, and neither side is told. */
    void partition() {
        ip("-n", namespace, "link", "set", peerLink, "down");
    }

    /** Sets the peer's end up again, undoing {@link #partition()}. */
    void heal() {
        ip("-n", namespace, "link", "set", peerLink, "up");
    }

    /**
     * The peer's host vanishes without a word: its end of the link goes down, then every process
     * of the namespace is SIGKILLed and the namespace deleted. No FIN or RST reaches the client;
     * what it sends is dropped at the root end, which stays (without carrier) until {@link #close()}.
     */
    void vanish() {
        partition();
        killNamespaceProcesses(namespace);
        for (NetPeer.Handle p : peers) {
            p.awaitExit(COMMAND_BOUND);
        }
        ipQuiet("netns", "del", namespace);
    }

    /**
     * Drops each packet the client sends to the peer with probability {@code percent} / 100, and
     * nothing the peer sends; {@link #noLoss()} removes it.
     *
     * @param percent 1..100
     */
    void loss(int percent) {
        if (percent < 1) {
            throw new IllegalArgumentException("loss percent " + percent + " is outside [1, 100]");
        }
        loss(percent, 0);
    }

    /**
     * Drops packets at random in each direction (see the facts: a BPF filter on each receiving
     * end's ingress), replacing what an earlier call set; a direction at 0 % has no filter.
     * {@link #noLoss()} removes both.
     *
     * @param toPeer percent of what the client sends that is dropped, 0..100
     * @param toClient percent of what the peer sends that is dropped, 0..100
     */
    void loss(int toPeer, int toClient) {
        for (int p : new int[] {toPeer, toClient}) {
            if (p < 0 || p > 100) {
                throw new IllegalArgumentException("loss percent " + p + " is outside [0, 100]");
            }
        }
        noLoss();
        if (toPeer > 0) {
            lossFilter(List.of("-n", namespace), peerLink, link(TOKEN, index, 's'), link(TOKEN, index, 't'), toPeer);
        }
        if (toClient > 0) {
            lossFilter(List.of(), rootLink, link(TOKEN, index, 'u'), link(TOKEN, index, 'v'), toClient);
        }
    }

    /**
     * Lowers the floor of TCP's retransmission timer between the two ends, both ways, to
     * {@code millis} (a /32 route to the other end with ip-route(8)'s {@code rto_min}, in the root
     * namespace and in the peer's; both go with the links, and a {@link #partition()} takes the
     * peer's with it, which its heal does not bring back). Under heavy loss one segment can be
     * dropped several times in a row, and each timeout doubles the timer (tcp(7)): from the
     * default floor of 200 ms, or from more while a loaded machine inflates the round-trip
     * variance, eight drops in a row take most of a minute. Sockets already connected take the
     * floor at their next transmission (the route cache is invalidated by the change).
     *
     * @param millis the floor, 1..200
     */
    void retransmitFloor(int millis) {
        if (millis < 1 || millis > 200) {
            throw new IllegalArgumentException("retransmit floor " + millis + " ms is outside [1, 200]");
        }
        ip("route", "replace", peerAddress.getHostAddress() + "/32", "dev", rootLink, "src",
                rootAddress.getHostAddress(), "rto_min", millis + "ms");
        ip("-n", namespace, "route", "replace", rootAddress.getHostAddress() + "/32", "dev", peerLink, "src",
                peerAddress.getHostAddress(), "rto_min", millis + "ms");
    }

    /**
     * Puts the loss filter on {@code dev}'s ingress, redirecting its matches to {@code sink}, a
     * veth made (once) in the same namespace and kept down.
     *
     * @param ns {@code -n <namespace>}, or nothing for the root namespace
     */
    private void lossFilter(List<String> ns, String dev, String sink, String sinkPeer, int percent) {
        List<String> ip = new ArrayList<>(List.of("ip"));
        ip.addAll(ns);
        List<String> tc = new ArrayList<>(List.of("tc"));
        tc.addAll(ns);
        if (!run(concat(ip, "-o", "link", "show"), false).contains(": " + sink + "@")) {
            run(concat(ip, "link", "add", sink, "type", "veth", "peer", "name", sinkPeer), true);
        }
        run(concat(ip, "link", "set", sink, "down"), false);
        run(concat(tc, "qdisc", "replace", "dev", dev, "clsact"), true);
        run(concat(tc, "filter", "del", "dev", dev, "ingress"), false);
        // ld rand (SKF_AD_OFF + SKF_AD_RANDOM = -0x1000 + 56); jgt threshold ? match : no match.
        long threshold = Math.round((100 - percent) / 100.0 * 0xFFFF_FFFFL);
        String bytecode = "4,32 0 0 4294963256,37 0 1 " + threshold + ",6 0 0 4294967295,6 0 0 0";
        run(concat(tc, "filter", "add", "dev", dev, "ingress", "protocol", "ip", "bpf", "bytecode", bytecode, "action",
                "mirred", "egress", "redirect", "dev", sink), true);
    }

    private static List<String> concat(List<String> head, String... tail) {
        List<String> all = new ArrayList<>(head);
        all.addAll(List.of(tail));
        return all;
    }

    /** Removes the loss filters of {@link #loss(int, int)}, in both directions. */
    void noLoss() {
        run(List.of("tc", "-n", namespace, "filter", "del", "dev", peerLink, "ingress"), false);
        run(List.of("tc", "filter", "del", "dev", rootLink, "ingress"), false);
    }

    /** {@return packets the loss filters dropped so far, both directions} */
    long lossDrops() {
        return lossDropsToPeer() + lossDropsToClient();
    }

    /** {@return packets the client sent that the loss filter dropped (mirred's overlimits: redirects to the downed sink)} */
    long lossDropsToPeer() {
        return overlimits(run(List.of("tc", "-n", namespace, "-s", "filter", "show", "dev", peerLink, "ingress"), false));
    }

    /** {@return packets the peer sent that the loss filter dropped} */
    long lossDropsToClient() {
        return overlimits(run(List.of("tc", "-s", "filter", "show", "dev", rootLink, "ingress"), false));
    }

    private static long overlimits(String tcStats) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("overlimits (\\d+)").matcher(tcStats);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    /** {@return whether the namespace is listed by {@code ip netns list}} */
    boolean namespaceExists() {
        return run(List.of("ip", "netns", "list"), false).lines().anyMatch(l -> l.split(" ")[0].equals(namespace));
    }

    /** {@return whether a link of that name exists in the root namespace} */
    static boolean linkExists(String name) {
        return run(List.of("ip", "-o", "link", "show"), false).lines()
                .anyMatch(l -> l.contains(": " + name + "@") || l.contains(": " + name + ":"));
    }

    /** {@return the root end's state line from {@code ip -o link show}, e.g. to see NO-CARRIER} */
    String rootLinkState() {
        return run(List.of("ip", "-o", "link", "show", rootLink), false).trim();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (NetPeer.Handle p : peers) {
            p.destroy();
        }
        ipQuiet("link", "del", rootLink);
        ipQuiet("link", "del", link(TOKEN, index, 'u')); // the root namespace's loss sink, if made
        killNamespaceProcesses(namespace);
        ipQuiet("netns", "del", namespace);
    }

    @Override
    public String toString() {
        return "network rig " + namespace + " (" + rootLink + " " + rootAddress.getHostAddress() + " <-> " + peerLink + " "
                + peerAddress.getHostAddress() + ")";
    }

    private static void killNamespaceProcesses(String ns) {
        for (String pid : run(List.of("ip", "netns", "pids", ns), false).split("\\s+")) {
            if (pid.matches("\\d+")) { // "Cannot open network namespace ..." once it is gone
                ProcessHandle.of(Long.parseLong(pid.trim())).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
    }

    /** {@return the peers started so far} */
    List<NetPeer.Handle> peers() {
        return List.copyOf(peers);
    }

    /** Removes what an earlier, killed run left behind, once per JVM. */
    static synchronized void sweepLeftovers() {
        if (!swept) {
            swept = true;
            sweep();
        }
    }

    /** Removes the namespaces, links and blackhole routes of rigs whose JVM is no longer alive. */
    static synchronized void sweep() {
        for (String line : run(List.of("ip", "netns", "list"), false).lines().toList()) {
            String ns = line.split(" ")[0];
            if (!ns.startsWith(PREFIX + "-")) {
                continue;
            }
            String[] parts = ns.split("-");
            Optional<ProcessHandle> owner = parts.length == 3 && parts[1].matches("\\d+")
                    ? ProcessHandle.of(Long.parseLong(parts[1])) : Optional.empty();
            if (owner.isPresent() && owner.get().isAlive()) {
                continue; // another live JVM's rig
            }
            killNamespaceProcesses(ns);
            run(List.of("ip", "netns", "del", ns), false);
        }
        // A link whose name carries a dead JVM's token: deleting either end removes the pair
        // (veth(4)). A name without a token is not the rig's, and a live JVM's is its own.
        for (String line : run(List.of("ip", "-o", "link", "show"), false).lines().toList()) {
            String[] f = line.split(":\\s+", 3);
            if (f.length < 2) {
                continue;
            }
            String name = f[1].split("@")[0];
            long owner = ownerOfLink(name);
            if (owner >= 0 && !alive(owner)) {
                run(List.of("ip", "link", "del", name), false);
            }
        }
        // Only the rig's routes (its protocol number; the filter leaves "proto" out of each line:
        // "blackhole 198.18.0.0/30 metric 1234"), and of those only a dead JVM's.
        for (String line : run(List.of("ip", "route", "show", "type", "blackhole", "root", "198.18.0.0/15", "proto",
                ROUTE_PROTO), false).lines().toList()) {
            List<String> f = List.of(line.trim().split("\\s+"));
            int m = f.indexOf("metric");
            if (f.size() >= 2 && f.get(0).equals("blackhole") && m > 0 && m + 1 < f.size()
                    && f.get(m + 1).matches("\\d+") && !alive(Long.parseLong(f.get(m + 1)))) {
                run(List.of("ip", "route", "del", "blackhole", f.get(1), "metric", f.get(m + 1), "proto", ROUTE_PROTO),
                        false);
            }
        }
    }

    private void ip(String... args) {
        List<String> cmd = new ArrayList<>(List.of("ip"));
        cmd.addAll(List.of(args));
        run(cmd, true);
    }

    private void ipQuiet(String... args) {
        List<String> cmd = new ArrayList<>(List.of("ip"));
        cmd.addAll(List.of(args));
        run(cmd, false);
    }

    /**
     * Runs a command, bounded by {@link #COMMAND_BOUND}.
     *
     * @param check whether a non-zero exit fails (with the command and its output)
     * @return its standard output and error
     */
    static String run(List<String> cmd, boolean check) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            p.getOutputStream().close();
            CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> {
                try {
                    return p.getInputStream().readAllBytes();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, Thread::startVirtualThread);
            if (!p.waitFor(COMMAND_BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(String.join(" ", cmd) + " took over " + COMMAND_BOUND);
            }
            String text = new String(out.get(COMMAND_BOUND.toMillis(), TimeUnit.MILLISECONDS), StandardCharsets.UTF_8);
            if (check && p.exitValue() != 0) {
                throw new AssertionError(String.join(" ", cmd) + " exited " + p.exitValue() + ": " + text.trim());
            }
            return text;
        } catch (IOException e) {
            throw new UncheckedIOException(String.join(" ", cmd) + " could not be started", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(String.join(" ", cmd) + " interrupted", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new AssertionError("the output of " + String.join(" ", cmd) + " could not be read", e);
        }
    }
}
