#!/usr/bin/env python3
"""CPU and context switches per request of the records service, by thread group.

    samples/webflux/cpu.py [--duration S] [--concurrency "1 16"] [--endpoints "post-records ..."]
                           [--jvm-opt OPT]... [--app-arg ARG]...

Starts the service as load.sh does (storage peer in the same JVM), fills records 0..1023, warms
up, then for each endpoint and concurrency runs wrk and reads, before and after, every thread's
on-CPU time (/proc/<pid>/task/*/schedstat, nanoseconds), its user/system split (stat) and its
context switches (status): the figures per request are the differences divided by the requests
wrk counted. wrk's own CPU comes from getrusage of its process. Threads are grouped by name:
Netty's loops, the client's cqflux loop, the storage peer's loop, Schedulers.parallel(), GC, JIT,
the rest. Measures that survive a shared host: CPU per request does not depend on how long the
other processes kept the CPUs, unlike req/s. Build first (./cqflux demo webflux, or
mvnw -pl samples/webflux -am package -DskipTests).
"""
import argparse
import os
import re
import resource
import socket
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "target", "cpu")

GROUPS = [  # (group, pattern on the 15-character thread name), first match wins
    ("netty", r"^reactor-http-"),
    ("client-loop", r"^cqflux-\d+-loop"),
    ("storage-loop", r"^storage-loop"),
    ("parallel", r"^parallel-"),
    ("gc", r"^(GC |G1 |VM Thread|ParGC|PS )"),
    ("jit", r"^C[12] Compiler"),
]

POST_LUA = """
counter = 0
local path = os.getenv("LOAD_PATH")
local pad = string.rep("r", 240)
local base = math.random(0, 3) * 16384
function request()
  local id = base + (counter % 16384)
  counter = counter + 1
  return wrk.format("POST", path .. id, {["Content-Type"] = "application/octet-stream"},
    string.format("%015d", id) .. pad)
end
"""
GET_LUA = """
counter = 0
local path = os.getenv("LOAD_PATH")
function request()
  counter = counter + 1
  return wrk.format("GET", path .. (counter % 1024))
end
"""
ENDPOINTS = {
    "post-records": ("post.lua", "/records/"),
    "post-baseline": ("post.lua", "/baseline/"),
    "get-records": ("get.lua", "/records/"),
    "get-baseline": ("get.lua", "/baseline/"),
}


def group(name):
    for g, pattern in GROUPS:
        if re.match(pattern, name):
            return g
    return "other"


def snapshot(pid):
    """{tid: (name, run_ns, user_ticks, sys_ticks, voluntary, involuntary)} of the live threads."""
    threads = {}
    base = f"/proc/{pid}/task"
    for tid in os.listdir(base):
        try:
            with open(f"{base}/{tid}/stat") as f:
                stat = f.read()
            with open(f"{base}/{tid}/schedstat") as f:
                run_ns = int(f.read().split()[0])
            with open(f"{base}/{tid}/status") as f:
                status = f.read()
        except (FileNotFoundError, ProcessLookupError):
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        vol = int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))
        invol = int(re.search(r"^nonvoluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))
        threads[tid] = (name, run_ns, int(fields[11]), int(fields[12]), vol, invol)
    return threads


def allocated(jcmd, pid):
    """Bytes each Java thread allocated so far ({nid: bytes}), from the JVM's thread dump."""
    out = subprocess.run([jcmd, str(pid), "Thread.print", "-e"], capture_output=True, text=True).stdout
    unit = {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return {m.group(3): int(m.group(1)) * unit[m.group(2)]
            for m in re.finditer(r" allocated=(\d+)([BKMG]) .*? nid=(\d+) ", out)}


def diff(before, after):
    """{group: [cpu_ns, user_ticks, sys_ticks, voluntary, involuntary]} over the interval."""
    out = {}
    for tid, a in after.items():
        b = before.get(tid, (a[0], 0, 0, 0, 0, 0))
        g = out.setdefault(group(a[0]), [0, 0, 0, 0, 0])
        for i in range(5):
            g[i] += a[i + 1] - b[i + 1]
    return out


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wrk(base, script, path, c, duration):
    """Runs wrk; {requests, rps, p50, errors, cpu_s} (cpu_s: wrk's own user+system time)."""
    t = 1 if c < 2 else 2
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(["wrk", "-t", str(t), "-c", str(c), "-d", f"{duration}s", "--timeout", "10s",
                          "--latency", "-s", os.path.join(OUT, script), base],
                         env=dict(os.environ, LOAD_PATH=path), capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    errors = (int(non2xx.group(1)) if non2xx else 0) + (sum(map(int, sock.groups())) if sock else 0)
    p50 = re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1)
    return {"requests": requests, "rps": requests / duration, "p50": p50, "errors": errors,
            "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--concurrency", default="1 16")
    ap.add_argument("--endpoints", default="post-records post-baseline get-records get-baseline")
    ap.add_argument("--jvm-opt", action="append", default=[])
    ap.add_argument("--app-arg", action="append", default=[])
    ap.add_argument("--label", default="run")
    ap.add_argument("--warmup", type=int, default=5, help="seconds of each endpoint at 16 connections per round")
    ap.add_argument("--warmup-rounds", type=int, default=6, help="rounds at most, until the JIT takes < 5 %%")
    ap.add_argument("--perf", action="store_true",
                    help="perf record -g each run (target/cpu/perf-*.data; the JIT's symbols in /tmp/perf-<pid>.map)")
    ap.add_argument("--build", default=os.path.join(HERE, "target"),
                    help="the built sample: classes/ and lib/ (default: samples/webflux/target)")
    ap.add_argument("--classpath-first", default="", help="classes ahead of the sample's (a patched build)")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "post.lua"), "w") as f:
        f.write(POST_LUA)
    with open(os.path.join(OUT, "get.lua"), "w") as f:
        f.write(GET_LUA)
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if "JAVA_HOME" in os.environ else None
    if java is None:
        java = subprocess.run(["bash", "-c", f". {ROOT}/.mvn/find-jdk.sh >/dev/null; echo $JAVA_HOME/bin/java"],
                              capture_output=True, text=True).stdout.strip()
    jcmd = os.path.join(os.path.dirname(java), "jcmd")
    port, peer = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [java, "--enable-native-access=ALL-UNNAMED", "-XX:+UseParallelGC", "-Xms512m", "-Xmx512m",
           *args.jvm_opt, "-cp", (args.classpath_first + ":" if args.classpath_first else "")
           + f"{args.build}/classes:{args.build}/lib/*",
           "io.cqflux.samples.webflux.RecordsApplication", f"--server.port={port}",
           f"--cqflux.peers.store.port={peer}", *args.app_arg]
    log = open(os.path.join(OUT, f"service-{args.label}.log"), "w")
    service = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(1200):
            try:
                urllib.request.urlopen(base + "/actuator/health/readiness", timeout=1)
                break
            except Exception:
                if service.poll() is not None:
                    sys.exit(f"cpu: the service died; see {log.name}")
                time.sleep(0.5)
        for i in range(1024):
            req = urllib.request.Request(f"{base}/records/{i}", data=b"fill record %d" % i, method="POST",
                                         headers={"Content-Type": "application/octet-stream"})
            urllib.request.urlopen(req, timeout=5)
        # Warm-up until the JIT is nearly done: on a loaded host a fixed time may compile little.
        for _ in range(args.warmup_rounds):
            before = snapshot(service.pid)
            for name in ENDPOINTS:
                script, path = ENDPOINTS[name]
                wrk(base, script, path, 16, args.warmup)
            d = diff(before, snapshot(service.pid))
            jit, total = d.get("jit", [0])[0], sum(v[0] for v in d.values())
            print(f"# warm-up round: jit {100 * jit / max(total, 1):.0f} % of the JVM's CPU", flush=True)
            if jit < 0.05 * total:
                break
        print(f"# {args.label}: jvm {' '.join(args.jvm_opt) or '-'}; app {' '.join(args.app_arg) or '-'};"
              f" load {open('/proc/loadavg').read().split()[0]}; {args.duration} s per run")
        cols = ["netty", "client-loop", "storage-loop", "parallel", "gc", "jit", "other"]
        print("endpoint\tc\treq/s\tp50\terrors\tjvm_us\t" + "\t".join(c + "_us" for c in cols)
              + "\tjvm_sys%\twrk_us\tcsw_vol\tcsw_invol\t" + "\t".join(c + "_csw" for c in cols[:4])
              + "\talloc_B")
        for c in map(int, args.concurrency.split()):
            for name in args.endpoints.split():
                script, path = ENDPOINTS[name]
                alloc_before = allocated(jcmd, service.pid)
                before = snapshot(service.pid)
                rec = None
                if args.perf:
                    rec = subprocess.Popen(["perf", "record", "-F", "499", "-g", "-p", str(service.pid), "-o",
                                            os.path.join(OUT, f"perf-{args.label}-{name}-c{c}.data")],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                r = wrk(base, script, path, c, args.duration)
                if rec:
                    rec.send_signal(2)
                    rec.wait()
                d = diff(before, snapshot(service.pid))
                alloc_after = allocated(jcmd, service.pid)
                alloc = sum(v - alloc_before.get(k, 0) for k, v in alloc_after.items())
                n = max(r["requests"], 1)
                us = {g: d.get(g, [0] * 5)[0] / 1e3 / n for g in cols}
                total = sum(us.values())
                user = sum(v[1] for v in d.values())
                system = sum(v[2] for v in d.values())
                vol = sum(v[3] for v in d.values()) / n
                invol = sum(v[4] for v in d.values()) / n
                csw = {g: (d.get(g, [0] * 5)[3] + d.get(g, [0] * 5)[4]) / n for g in cols[:4]}
                print(f"{name}\t{c}\t{r['rps']:.0f}\t{r['p50']}\t{r['errors']}\t{total:.1f}\t"
                      + "\t".join(f"{us[g]:.1f}" for g in cols)
                      + f"\t{100 * system / max(user + system, 1):.0f}\t{r['cpu_s'] * 1e6 / n:.1f}"
                      + f"\t{vol:.2f}\t{invol:.2f}\t" + "\t".join(f"{csw[g]:.2f}" for g in cols[:4])
                      + f"\t{alloc / n:.0f}",
                      flush=True)
        if args.perf:
            subprocess.run([jcmd, str(service.pid), "Compiler.perfmap"], capture_output=True)
    finally:
        service.terminate()
        try:
            service.wait(20)
        except subprocess.TimeoutExpired:
            service.kill()


if __name__ == "__main__":
    main()
