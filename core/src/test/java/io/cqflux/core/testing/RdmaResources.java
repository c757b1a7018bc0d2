package io.cqflux.core.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * Test support: what the kernel's RDMA subsystem holds, read with iproute2's
 * {@code rdma resource show} (the Soft-RoCE lane's guest runs it as root). Leak checks count
 * through it what no process-local count shows: an RDMA CM id, a protection domain, a memory
 * region belong to the kernel, and a leaked one is freed only when its process or its event
 * channel goes.
 */
public final class RdmaResources {

    private RdmaResources() {
    }

    /**
     * {@return how many of the kernel's {@code rdma_cm_id}s have {@code source} as their source
     * address} A listener's own id and those of its requests and accepted connections do (its
     * address and port); a client's have it as their destination.
     *
     * @param source an address and port a listener was bound to
     */
    public static int cmIdsFrom(InetSocketAddress source) {
        String needle = "src-addr " + source.getAddress().getHostAddress() + ":" + source.getPort() + " ";
        return (int) show("cm_id").lines().filter(l -> (l + " ").contains(needle)).count();
    }

    /**
     * {@return a device's protection domains and memory regions: {@code rdma resource show}'s pd and
     * mr counts on the device's summary line}
     *
     * @param device an RDMA device, e.g. {@code rxe0}
     */
    public static int[] protectionDomainsAndRegions(String device) {
        String out = show();
        for (String line : out.split("\n")) {
            if (line.contains(" " + device + ": ")) {
                String[] w = line.trim().split("\\s+");
                int pd = -1;
                int mr = -1;
                for (int i = 0; i + 1 < w.length; i++) {
                    if (w[i].equals("pd")) {
                        pd = Integer.parseInt(w[i + 1]);
                    } else if (w[i].equals("mr")) {
                        mr = Integer.parseInt(w[i + 1]);
                    }
                }
                if (pd >= 0 && mr >= 0) {
                    return new int[] {pd, mr};
                }
            }
        }
        throw new IllegalStateException("no " + device + " line with pd and mr counts in: " + out);
    }

    private static String show(String... what) {
        String[] cmd = new String[3 + what.length];
        cmd[0] = "rdma";
        cmd[1] = "resource";
        cmd[2] = "show";
        System.arraycopy(what, 0, cmd, 3, what.length);
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.waitFor() != 0) {
                throw new IllegalStateException(String.join(" ", cmd) + " failed: " + out);
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + String.join(" ", cmd), e);
        }
    }
}
