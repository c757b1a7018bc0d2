package io.cqflux.test.network;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/*
 * Facts the code depends on (checked in the Soft-RoCE lane's guest: Debian's kernel 6.1, rdma_rxe,
 * QEMU/TCG, client and server in one guest and one JVM):
 *
 * - Two addresses of one host never meet on a wire: the kernel finds the destination in its
 *   `local` routing table and loops the packet back inside the stack, and rxe does the same (it
 *   resolves the route in the initial namespace with its own netdev as the output interface). So
 *   netem on the guest's eth0, where the lane's other tests have both ends on 10.0.2.15, shapes
 *   none of their RDMA traffic.
 * - rxe does not follow network namespaces (its UDP socket and its route lookups are the initial
 *   namespace's): with one end of a veth pair in another namespace, an rping connect from the
 *   root namespace hangs, inside the namespace it fails RDMA_CM_EVENT_UNREACHABLE, and
 *   `rdma dev set rxe... netns` answers EOPNOTSUPP. Both ends stay in the initial namespace.
 * - A VRF per veth end (`ip link add vrf-a type vrf table N`, the end enslaved to it) does put the
 *   packets on the wire: the route lookup with the end as output interface goes to the VRF's
 *   table, where the other address is not local, and the packets cross the veth. But the
 *   receiving side's VRF sets the packet's device to the VRF device itself on input, and rxe finds
 *   its device by the packet's netdev: nothing answers, rping hangs until its timeout (with
 *   net.ipv4.udp_l3mdev_accept = 1). rxe attached to the VRF device instead gets no GID (the
 *   VRF device has no address; rping: "rdma_bind_addr: No such device").
 * - What works is policy routing: each end gets its address as a /32, its `local` route is moved
 *   from the `local` table into a table of its own that a rule consults only for packets that
 *   arrive on that end (`ip rule add iif END lookup TABLE`), and the main table routes each
 *   address as on-link over the other end. A lookup for a locally sent packet (iif is the
 *   loopback) then sends it over the veth; the packet arriving on the other end finds its local
 *   route there and is delivered to rxe's UDP socket with that end as its device, so the rxe
 *   device of that end takes it. rdma_cm resolves the client's source from the route (the address
 *   on the sending end), librpma's rpma_utils_get_ibv_context(3) maps each address to its own
 *   rxe device, and the server's rdma_cm check that the reply leaves through the receiving device
 *   (a lookup of the client's address with that device as output interface) holds by the main
 *   table's route. Both ends need net.ipv4.conf.*.accept_local = 1 and rp_filter = 0: the source
 *   of an arriving packet is an address of this host.
 * - rping over the pair works; with netem `loss 100%` on the client's end nothing connects (rping
 *   times out, netem counts the drops); with `loss 20%` or `delay 50ms` it completes, slower (rxe
 *   retransmits what was lost after its ack timeout).
 * - netem on a veth end's root qdisc shapes what that end sends: a fault on both ends shapes both
 *   directions (requests and acknowledgements). A netem drop reports success to the sender (it
 *   counts the packet under "dropped"): a real loss as far as rxe knows, not a local error.
 * - `tc qdisc change ... netem` keeps a `reorder` that an earlier change set and the new one does
 *   not name (tc sends the reorder attribute only when given); a fault therefore replaces the
 *   qdisc (delete, add), which resets its drop counter.
 * - Under TCG starting a process (tc) can take seconds beside the host's builds, while the
 *   kernel's own work for a netem change (delete and add of both ends' root qdiscs) is small
 *   next to it: the rig keeps one `tc -force -batch -` running and writes each change to its
 *   stdin (TcBatch), so a fault or a heal costs what the kernel does, not a process start.
 * - A tc command naming a link that does not exist makes the kernel try to load a module of
 *   that name (dev_load: request_module("netdev-NAME") on the SIOCGIFINDEX that resolves the
 *   name), which starts a modprobe process: as costly as a tc process of its own under TCG. The
 *   fence TcBatch waits for after each change is therefore a line tc's own parser rejects.
 * - rxe retransmits a lost packet after a fixed timeout of seconds, without backoff (the writes
 *   slowed by netem loss took that timeout or a multiple of it; figures in docs/reliability.md);
 *   a lost packet with nothing behind it, which would provoke a sequence NAK, costs the whole
 *   timeout.
 * - Each end holds a permanent neighbour entry for the other's address: during a partition ARP is
 *   dropped too, and a learned entry that expired then would delay the first packets after the
 *   heal by an ARP probe interval.
 * - A socket cannot bind these addresses (bind(2): EADDRNOTAVAIL, the kernel checks the `local`
 *   table), while rdma_bind_addr(3) can (it looks for the interface holding the address). A test
 *   that wants a free port number asks the wildcard address: the RDMA CM's port space is apart
 *   from TCP's anyway.
 * - `rdma link del` of an rxe device blocks while a process holds a context of it (rxe cannot
 *   disassociate its user contexts, so unregistering waits for their files to close), and
 *   librdmacm opens every device's context once and keeps them for the life of the process: a
 *   JVM that used the rig cannot remove its rxe devices (the command ran into the 10 s bound).
 *   librdmacm does find devices added after its first use (rdma-core's device hot-plug), so the
 *   rig can be made by a JVM that used rxe0 before. The rig is therefore made once per boot and
 *   left standing: create() finds and reuses it, close() only removes the faults. The guest is
 *   the test's own throw-away machine, so names, tables and rule priorities are fixed.
 * - libfabric's verbs provider, unlike librdmacm, does not find devices added later: it lists the
 *   RDMA devices and the interfaces' addresses once per process, at libfabric's initialisation on
 *   the first fi_getinfo (libfabric 1.17, prov/verbs: VERBS_INI -> vrb_init_info, which fills
 *   the provider's fi_info list and its interface list; vrb_getinfo only matches against those;
 *   FI_VERBS_IFACE and FI_VERBS_DEVICE_NAME are read at the same moment and only filter that
 *   list; fi_freeinfo frees the caller's copy, not the provider's). A JVM that used libfabric
 *   before the rig existed is offered no FI_EP_MSG endpoint on the rig's addresses. Rescanning on
 *   each fi_getinfo came upstream only in 2025 (ofiwg/libfabric#10886). So the lane makes the rig
 *   before its JVM starts (scripts/softroce/run-tests.sh runs the script below), and the script
 *   is the one place that makes it: create() runs it when no rig stands.
 * - rxe builds its GID table from the netdev's addresses: an end's IPv4 address appears as an
 *   IPv4-mapped GID (index 1 here) whose netdev is that end, which create() checks of an adopted
 *   rig.
 * - Addresses come from 198.18.0.0/15 (RFC 2544's benchmarking block); the guest has no default
 *   route, and the /32 routes keep them on the veth.
 */

/**
 * Two RDMA endpoints of one host joined by a link that netem can shape: a veth pair in the initial
 * namespace, an rxe device on each end, and the routing that makes the two addresses meet over the
 * pair instead of inside the stack (see the facts above). Runs only where rdma_rxe and sch_netem
 * exist and the JVM is root: the Soft-RoCE lane's guest. The faults act on both ends' egress, so
 * on both directions: {@link #partition()} (everything dropped), {@link #loss}, {@link #delay},
 * {@link #heal()}. The rig stays up until the guest powers off (see the facts); {@link #close()}
 * removes the faults.
 */
final class RxeLinkRig implements AutoCloseable {
    static final String CLIENT_LINK = "cqfxrxa";
    static final String SERVER_LINK = "cqfxrxb";
    static final String CLIENT_RXE = "rxe-cqfxa";
    static final String SERVER_RXE = "rxe-cqfxb";
    /** The script that makes the rig, relative to the checkout's root. */
    static final String RIG_SCRIPT = "scripts/softroce/rxe-link-rig.sh";
    /** What making the rig may take: a handful of processes, each seconds under TCG beside builds. */
    private static final Duration MAKE_BOUND = Duration.ofSeconds(60);
    /** How many of an rxe device's first GIDs are searched for its end's address (it is at index 1). */
    private static final int GIDS_CHECKED = 8;
    private static final Pattern DROPPED = Pattern.compile("dropped (\\d+)");

    final InetAddress clientAddress = address(198, 18, 200, 1);
    final InetAddress serverAddress = address(198, 18, 200, 2);
    private boolean closed;
    /** A fault may be set: true at first (a rig found standing may carry an earlier JVM's). */
    private boolean faulted = true;
    /** The rig's tc, started at the first change; closed with the rig. */
    private TcBatch tc;

    private RxeLinkRig() {
    }

    private static InetAddress address(int a, int b, int c, int d) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) a, (byte) b, (byte) c, (byte) d});
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * {@return the rig of this boot}: adopted when it stands (the lane makes it before the JVM
     * starts, see the facts), else made by {@code scripts/softroce/rxe-link-rig.sh} (found from the
     * working directory up), which makes the pair, the routing, a netem qdisc (no fault) on each end
     * and the rxe devices, and waits until both ports are active. Either way the rig is checked for
     * what the tests rely on: both rxe devices' port 1 active, each holding its end's address as a
     * GID. Close it after the test.
     */
    static synchronized RxeLinkRig create() {
        RxeLinkRig rig = new RxeLinkRig();
        boolean devices = Files.isDirectory(Path.of("/sys/class/infiniband", CLIENT_RXE))
                && Files.isDirectory(Path.of("/sys/class/infiniband", SERVER_RXE));
        if (!devices || !Files.isDirectory(Path.of("/sys/class/net", CLIENT_LINK))) {
            makeRig();
        }
        rig.check(CLIENT_RXE, CLIENT_LINK, rig.clientAddress);
        rig.check(SERVER_RXE, SERVER_LINK, rig.serverAddress);
        rig.heal();
        return rig;
    }

    /**
     * Runs the script that makes the rig (the one place that does, so that a rig the lane made and
     * one a JVM made are the same), bounded by {@link #MAKE_BOUND}; its output (a few lines) goes to
     * this JVM's stdout, and into the error when it fails.
     */
    private static void makeRig() {
        Path script = null;
        for (Path d = Path.of("").toAbsolutePath(); d != null && script == null; d = d.getParent()) {
            Path p = d.resolve(RIG_SCRIPT);
            script = Files.isRegularFile(p) ? p : null;
        }
        if (script == null) {
            throw new AssertionError("no rxe link rig stands and " + RIG_SCRIPT + " is not found from "
                    + Path.of("").toAbsolutePath() + " upwards: run the test from the checkout"
                    + " (scripts/softroce/run-tests.sh makes the rig before the JVM starts)");
        }
        try {
            Process p = new ProcessBuilder("/bin/sh", script.toString()).redirectErrorStream(true).start();
            p.getOutputStream().close();
            // The output is a few lines, far below a pipe's buffer: read once the script ended (not
            // after a timeout: a command it started may still hold the pipe open).
            if (!p.waitFor(MAKE_BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(script + " took over " + MAKE_BOUND);
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            System.out.println(out);
            if (p.exitValue() != 0) {
                throw new AssertionError(script + " exited " + p.exitValue() + ": " + out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(script + " could not be started", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(script + " interrupted", e);
        }
    }

    /**
     * Checks that {@code rxe} is attached to {@code link}, its port 1 is active and one of its
     * first GIDs is {@code address} (IPv4-mapped, as rxe builds them from the netdev's addresses):
     * a rig of other names or addresses would otherwise fail later as an unreachable peer.
     */
    private void check(String rxe, String link, InetAddress address) {
        awaitActive(rxe);
        Path port = Path.of("/sys/class/infiniband", rxe, "ports/1");
        byte[] a = address.getAddress();
        String gid = String.format("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", a[0], a[1], a[2], a[3]);
        List<String> seen = new ArrayList<>();
        for (int i = 0; i < GIDS_CHECKED; i++) {
            try {
                String g = Files.readString(port.resolve("gids/" + i)).trim();
                String dev = Files.readString(port.resolve("gid_attrs/ndevs/" + i)).trim();
                if (g.equals(gid) && dev.equals(link)) {
                    return;
                }
                seen.add(g + " on " + dev);
            } catch (IOException e) {
                seen.add("(" + i + ": " + e.getClass().getSimpleName() + ")");
            }
        }
        throw new AssertionError(rxe + " has no GID " + gid + " (" + address.getHostAddress() + ") on " + link
                + " among its first " + GIDS_CHECKED + ": " + seen
                + "; a rig of other addresses stands (compare " + RIG_SCRIPT + " with RxeLinkRig)");
    }

    private static void awaitActive(String rxe) {
        Path state = Path.of("/sys/class/infiniband", rxe, "ports/1/state");
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        String s = "";
        while (System.nanoTime() < end) {
            try {
                s = Files.readString(state).trim();
            } catch (IOException e) {
                s = e.toString();
            }
            if (s.equals("4: ACTIVE")) {
                return;
            }
            PartitionTest.sleep(Duration.ofMillis(50));
        }
        throw new AssertionError(rxe + " port 1 not ACTIVE after 10 s: " + s);
    }

    /** Drops everything both ends send (a silent partition, as behind a failed switch). */
    void partition() {
        netem("loss", "100%");
    }

    /**
     * Removes every fault; nothing to do (no tc change) when none was set since the last heal,
     * which each test's clean-up relies on to cost nothing after a test that healed already.
     */
    synchronized void heal() {
        if (faulted) {
            netem();
            faulted = false;
        }
    }

    /**
     * Drops {@code percent} of what each end sends, at random.
     *
     * @param percent in [0, 100]
     */
    void loss(double percent) {
        if (!(percent >= 0 && percent <= 100)) {
            throw new IllegalArgumentException("loss " + percent + " % is outside [0, 100]");
        }
        netem("loss", percent + "%");
    }

    /**
     * Delays what each end sends by {@code oneWay} (a round trip so gains twice that).
     *
     * @param oneWay at least 0 and at most 10 s
     */
    void delay(Duration oneWay) {
        if (oneWay.isNegative() || oneWay.compareTo(Duration.ofSeconds(10)) > 0) {
            throw new IllegalArgumentException("delay " + oneWay + " is outside [0, 10 s]");
        }
        netem("delay", (oneWay.toNanos() / 1000) + "us");
    }

    /**
     * Reorders and duplicates what each end sends: {@code reorderPercent} of the packets leave at
     * once, the others {@code delay} later (netem's {@code reorder} needs a delay, tc-netem(8)),
     * and {@code duplicatePercent} are sent twice.
     *
     * @param delay the delay of the packets not sent at once, in (0, 1 s]
     * @param reorderPercent in [0, 100]
     * @param duplicatePercent in [0, 100]
     */
    void reorderAndDuplicate(Duration delay, double reorderPercent, double duplicatePercent) {
        if (delay.isNegative() || delay.isZero() || delay.compareTo(Duration.ofSeconds(1)) > 0) {
            throw new IllegalArgumentException("delay " + delay + " is outside (0, 1 s]");
        }
        for (double p : new double[] {reorderPercent, duplicatePercent}) {
            if (!(p >= 0 && p <= 100)) {
                throw new IllegalArgumentException(p + " % is outside [0, 100]");
            }
        }
        netem("delay", (delay.toNanos() / 1000) + "us", "reorder", reorderPercent + "%", "duplicate",
                duplicatePercent + "%");
    }

    /**
     * {@return one counter of an rxe device ({@code rdma statistic show link DEV/1}), e.g. the
     * responder's {@code duplicate_request} or {@code out_of_seq_request}}
     *
     * @param serverSide the server end's device, else the client's
     * @param name the counter's name
     */
    long rxeCounter(boolean serverSide, String name) {
        String text = NetworkRig.run(List.of("rdma", "statistic", "show", "link",
                (serverSide ? SERVER_RXE : CLIENT_RXE) + "/1"), true);
        Matcher m = Pattern.compile("\\b" + Pattern.quote(name) + " (\\d+)").matcher(text);
        if (!m.find()) {
            throw new AssertionError("no counter " + name + " in: " + text.trim());
        }
        return Long.parseLong(m.group(1));
    }

    /**
     * {@return the packets netem dropped on both ends since the last fault was set}; one tc
     * process for both ends (a process costs a sizeable part of a second under TCG)
     */
    long drops() {
        String text = NetworkRig.run(List.of("tc", "-s", "qdisc", "show"), true);
        long n = 0;
        for (String link : List.of(CLIENT_LINK, SERVER_LINK)) {
            Matcher m = Pattern.compile("qdisc netem \\S+ dev " + link + " [^\\n]*\\n[^\\n]*?" + DROPPED.pattern())
                    .matcher(text);
            if (!m.find()) {
                throw new AssertionError("no drop count in tc's statistics of " + link + ": " + text.trim());
            }
            n += Long.parseLong(m.group(1));
        }
        return n;
    }

    /** {@return each rxe device's counters, one line each, from one {@code rdma statistic show} process} */
    String rxeStatistics() {
        StringBuilder b = new StringBuilder();
        for (String line : NetworkRig.run(List.of("rdma", "statistic", "show"), false).split("\n")) {
            if (line.startsWith("link " + CLIENT_RXE + "/") || line.startsWith("link " + SERVER_RXE + "/")) {
                b.append(b.isEmpty() ? "" : "; ").append(line.trim());
            }
        }
        return b.toString();
    }

    /**
     * Sets both ends' netem to {@code options} alone (none: no fault), through the rig's one
     * {@link TcBatch} (a process start costs a sizeable part of a second under TCG, a line to a
     * running tc almost nothing), both ends in one call so that they change together; returns once
     * tc has applied both. The qdisc is replaced, not changed: `tc qdisc change ... netem` keeps a
     * reordering left by an earlier change that does not name one. Replacing resets the drop
     * counters: read {@link #drops()} before the next change.
     */
    private synchronized void netem(String... options) {
        if (closed) {
            throw new IllegalStateException("the rig is closed");
        }
        List<String> commands = new ArrayList<>();
        for (String link : List.of(CLIENT_LINK, SERVER_LINK)) {
            commands.add("qdisc del dev " + link + " root");
            commands.add("qdisc add dev " + link + " root netem" + (options.length == 0 ? "" : " " + String.join(" ", options)));
        }
        if (options.length > 0) {
            faulted = true; // before tc runs: a failed change may have set half of it
        }
        if (tc == null) {
            tc = new TcBatch();
        }
        try {
            tc.run(commands);
        } catch (AssertionError | UncheckedIOException e) {
            try {
                tc.close(); // a tc that failed is not trusted with the next change: a fresh one then
            } catch (IllegalStateException stuck) {
                e.addSuppressed(stuck);
            }
            tc = null;
            throw e;
        }
    }

    /**
     * One long-lived {@code tc -force -batch -} process fed commands over its stdin. What this
     * depends on: tc runs each line before it reads the next (iproute2 6.1, the host's userland,
     * which the guest uses too; RxeLinkRigTcBatchTest checks it on that binary). The iproute2
     * releases from 4.16 into the 5.x series whose batch mode read one line ahead for every
     * command would leave the last line, the fence below, unread until the next batch, and every
     * call would fail at its bound. Each qdisc command waits for the kernel's acknowledgement
     * before tc reads the next line. What tells that a command finished is a fence after it: a line naming
     * an object tc does not know, which tc rejects in its own parser (no system call), and, with
     * {@code -force}, reports on stderr, unbuffered, as "Command failed -:N" with N the line's
     * number in the batch, then reads on. When the fence's report arrives every line before it has
     * been applied; a report of an earlier line is a command that failed. The fence must not be a
     * command on a link that does not exist: looking a missing link's name up makes the kernel try
     * to load a module of that name (dev_load: a modprobe process per fence, as costly as starting
     * tc itself under TCG). Stdout (nothing, for these commands) is discarded.
     */
    static final class TcBatch implements AutoCloseable {
        /** What one batch of commands may take: far more than tc's own work, a bound for a stuck tc. */
        private static final Duration TC_BOUND = Duration.ofSeconds(10);
        private final Duration bound;
        /** The fence: no object of tc's has this name, so the line fails in tc's parser. */
        static final String FENCE = "cqfx-fence";
        private static final String EOF = new String("(tc closed its stderr)");
        private final Process process;
        private final OutputStreamWriter in;
        private final BlockingQueue<String> stderr = new LinkedBlockingQueue<>();
        /** Lines written to tc so far: the next line's number is one more. */
        private int lines;
        /**
         * A call ran out of its bound or tc exited: reports of that batch may still come, and would
         * be taken for the next call's, so the session takes no more calls and close() kills tc.
         */
        private boolean broken;

        TcBatch() {
            this(TC_BOUND);
        }

        /** @param bound what one batch may take, and what a killed tc may take to exit (tests: shorter) */
        TcBatch(Duration bound) {
            this.bound = bound;
            try {
                process = new ProcessBuilder("tc", "-force", "-batch", "-")
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            } catch (IOException e) {
                throw new UncheckedIOException("tc -force -batch - could not be started", e);
            }
            in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            // A platform thread: it blocks in read for the rig's whole life, which would hold one of
            // the few carriers of the virtual threads (NetworkRig.run reads through those).
            Thread.ofPlatform().daemon().name("rxe-rig-tc-stderr").start(() -> {
                try (var r = new BufferedReader(new InputStreamReader(process.getErrorStream(),
                        StandardCharsets.UTF_8))) {
                    for (String l = r.readLine(); l != null; l = r.readLine()) {
                        stderr.add(l);
                    }
                } catch (IOException e) {
                    stderr.add("(reading tc's stderr failed: " + e + ")");
                } finally {
                    stderr.add(EOF);
                }
            });
        }

        /** {@return tc's process id} (tests) */
        long pid() {
            return process.pid();
        }

        /**
         * Applies {@code commands} in order and returns once tc has, bounded by
         * {@link #TC_BOUND} (or the bound it was made with); fails naming what tc reported when one of them failed
         * (tc went on with the others: {@code -force}).
         */
        synchronized void run(List<String> commands) {
            if (broken) {
                throw new IllegalStateException("this tc session timed out or tc exited: start a new one");
            }
            StringBuilder batch = new StringBuilder();
            int first = lines + 1;
            for (String c : commands) {
                batch.append(c).append('\n');
                lines++;
            }
            batch.append(FENCE).append('\n');
            int fence = ++lines;
            List<String> said = new ArrayList<>();
            boolean failed = false;
            try {
                in.write(batch.toString());
                in.flush();
                String done = "Command failed -:" + fence;
                long end = System.nanoTime() + bound.toNanos();
                for (;;) {
                    String l = stderr.poll(end - System.nanoTime(), TimeUnit.NANOSECONDS);
                    if (l == null || l == EOF) { // NOSONAR: identity, the sentinel
                        broken = true;
                        throw new AssertionError("tc " + (l == null ? "did not apply " + commands + " within "
                                + bound : "exited while applying " + commands) + "; it said: " + said);
                    }
                    if (l.equals(done)) {
                        break;
                    }
                    if (!l.startsWith("Object \"" + FENCE + "\" is unknown")) {
                        said.add(l);
                        failed |= l.startsWith("Command failed -:");
                    }
                }
            } catch (IOException e) {
                broken = true;
                throw new UncheckedIOException("writing to tc failed (it said: " + said + ")", e);
            } catch (InterruptedException e) {
                broken = true;
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while tc applied " + commands, e);
            }
            if (failed) {
                throw new AssertionError("tc failed on " + commands + " (lines " + first + "-" + (fence - 1)
                        + " of its batch): " + said);
            }
        }

        /**
         * Closes tc's stdin (it exits at the end of its batch), bounded; destroys it if it lingers,
         * and at once when the session is broken (a tc that did not answer within the bound). A
         * killed tc is waited for: one stuck inside a netlink request could still apply its change
         * after the kill, over the rig's next heal.
         *
         * @throws IllegalStateException when a killed tc did not exit within the bound
         */
        @Override
        public synchronized void close() {
            if (broken) {
                process.destroyForcibly();
                try {
                    if (!process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
                        throw new IllegalStateException("tc (pid " + process.pid() + ") did not exit within " + bound
                                + " of its kill: a change it was applying may still land");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return;
            }
            try {
                in.close();
            } catch (IOException e) {
                // the process is gone already
            }
            try {
                if (!process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Removes the faults; the rig itself stays up (see the facts). */
    @Override
    public synchronized void close() {
        if (!closed) {
            try {
                heal();
            } finally {
                closed = true;
                if (tc != null) {
                    tc.close();
                    tc = null;
                }
            }
        }
    }
}
