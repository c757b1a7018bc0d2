#!/usr/bin/env bash
# The rpma test tier: runs every JUnit test tagged "rpma" or "fabric-verbs" (the fabric transport on
# libfabric's verbs provider over rxe), and not "host-only", from the test classes of core, core/rpma,
# core/fabric, reactor, test-kit, samples/quickstart and samples/pipeline inside the Soft-RoCE VM,
# with the JUnit Platform console launcher, after rxe-link-rig.sh has made test-kit's rxe link rig.
#
# Usage: run-tests.sh [--build] [--ready-file FILE] [--timeout SEC] [--keep] [--smp N] [-- EXTRA CONSOLE LAUNCHER ARGS...]
#   --build        run `mvnw test-compile` first even if the classes exist (otherwise only when
#                  core/rpma/target/test-classes is missing)
#   --ready-file FILE  create FILE once nothing more is read from the modules' target/ folders
#                  (classes compiled and copied, class path resolved), before the VM boots: from
#                  then on another build may rewrite target/ (./cqflux test starts the host tiers
#                  at that point, beside the lane)
#   --timeout SEC  hard limit for the VM run (default 900)
#   --keep         keep the VM run folder (kernel console log)
#   --smp N        the guest's CPUs (default 2)
#   after --       passed to the console launcher, e.g. -- --select-class=io.cqflux.transport.rpma.SoftRoceLaneTest
#                  (a --select-* replaces the class-path scan)
# CQFLUX_LANE_CLASSES=1 runs the test classes one after another; 2 (the default) runs the rxe link
# rig's classes beside the others (README.md: "One class at a time, or the rig's classes beside
# the others").
#
# Expects the host build to have compiled main and test classes (./mvnw ... verify or
# test-compile) with the JDK 25 that JAVA_HOME points at (or one found under /usr/lib/jvm).
# JUnit XML reports: target/softroce-reports/ in the repository. Exit code: the launcher's
# (0 all passed, 1 failures, 2 no tests found); 124/125 from run-in-vm.sh for timeout/lane failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${CQFLUX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cqflux}/softroce

build=0
ready_file=
vm_args=()
while [ $# -gt 0 ]; do
    case $1 in
        --build) build=1; shift ;;
        --ready-file) ready_file=${2:?--ready-file needs a path}; shift 2 ;;
        --timeout) vm_args+=(--timeout "${2:?--timeout needs seconds}"); shift 2 ;;
        --keep) vm_args+=(--keep); shift ;;
        --smp) vm_args+=(--smp "${2:?--smp needs a count}"); shift 2 ;;
        --) shift; break ;;
        -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
        *) printf 'softroce/tests: unknown option %s\n' "$1" >&2; exit 2 ;;
    esac
done
extra=("$@")
lane_classes=${CQFLUX_LANE_CLASSES:-2}
case $lane_classes in
    1 | 2) ;;
    *) printf 'softroce/tests: CQFLUX_LANE_CLASSES must be 1 or 2, not %s\n' "$lane_classes" >&2; exit 2 ;;
esac

say() { printf 'softroce/tests: %s\n' "$*" >&2; }
die() { printf 'softroce/tests: ERROR: %s\n' "$*" >&2; exit 125; }
start=$(date +%s.%N)
elapsed() { awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }

# ---------------------------------------------------------------------------- JDK 25
# The project's one JDK search (also used by ./mvnw and ./cqflux): exits with what to install.
# shellcheck source=../../.mvn/find-jdk.sh
. "$repo/.mvn/find-jdk.sh"
say "JDK $JAVA_HOME"

cd "$repo"
mvn() { ./mvnw -B -q "$@"; }

# ---------------------------------------------------------------------------- class path
# Third-party jars of the core, epoll-bridge and reactor test class paths, from Maven, cached by the
# poms' content (the paths point into ~/.m2, not into this checkout). The project's own modules are
# added as copies of their target/ folders below: nothing is installed into ~/.m2. JUnit's own
# jars are left out: the console launcher brings them, and two Jupiter engines on one class path
# abort the launcher.
poms_hash=$(cat pom.xml ./*/pom.xml ./*/*/pom.xml 2>/dev/null | sha256sum | cut -c1-16)
cp_file=$cache/classpath-$poms_hash.txt
cp_ok=0
if [ -s "$cp_file" ]; then
    cp_ok=1
    while IFS= read -r jar; do [ -f "$jar" ] || cp_ok=0; done <"$cp_file"
fi

# ---------------------------------------------------------------------------- classes
# A missing class path is resolved below by a Maven run that test-compiles the lane's modules
# too, so a fresh checkout pays one Maven run here, not two.
# Only the lane's modules (lane-modules.sh, the ones copied below): ./cqflux lane passes --build
# (./cqflux test compiles every module itself first) and the host build starts once this is done,
# so compiling the rest here would only delay it.
# shellcheck source=lane-modules.sh
. "$here/lane-modules.sh"
lane_modules=$(IFS=,; echo "${LANE_MODULES[*]}")
if [ "$cp_ok" = 1 ] && { [ "$build" = 1 ] || [ ! -d core/rpma/target/classes ] || [ ! -d core/rpma/target/test-classes ]; }; then
    say "compiling (mvnw test-compile)"
    mvn -DskipTests -pl "$lane_modules" test-compile
fi
if [ "$cp_ok" = 0 ]; then
    say "resolving the test class path (mvnw dependency:build-classpath)"
    mkdir -p "$cache"
    # test-compile first: with a lifecycle phase in the same run, Maven resolves the sibling
    # modules to their target/ folders; a goal-only run looks for them in ~/.m2, where nothing of
    # this project is installed on a fresh machine.
    mvn -DskipTests -pl "$lane_modules" test-compile dependency:build-classpath -Dmdep.includeScope=test \
        -Dmdep.outputFile=target/softroce.classpath \
        -DexcludeGroupIds=io.cqflux,org.junit.jupiter,org.junit.platform,org.opentest4j,org.apiguardian
    # The cache is shared by every checkout on the machine: two lanes resolving at once each
    # write a file of their own and rename it (the same content, whichever rename wins).
    for m in "${LANE_MODULES[@]}"; do
        [ ! -s "$m/target/softroce.classpath" ] || { tr ':' '\n' <"$m/target/softroce.classpath"; echo; }
    done | awk 'NF && !seen[$0]++' >"$cp_file.tmp.$$"
    mv "$cp_file.tmp.$$" "$cp_file"
fi
# The VM runs copies of the modules' classes (target/softroce-classes/<module>/), taken now: a
# build running beside the lane (./cqflux test runs the host tiers meanwhile) recompiles modules
# whose dependencies it repackages, and a class rewritten under a running JVM fails at random.
snap=$repo/target/softroce-classes
rm -rf "$snap"
cp=
scan=
for m in "${LANE_MODULES[@]}"; do
    for k in classes test-classes; do
        [ -d "$repo/$m/target/$k" ] || continue
        mkdir -p "$snap/$m"
        cp -R "$repo/$m/target/$k" "$snap/$m/$k"
        cp=$cp${cp:+:}$snap/$m/$k
    done
done
while IFS= read -r jar; do cp=$cp:$jar; done <"$cp_file"
# The discovery scans every lane module's tests but the event loop's: none of those is tagged rpma
# or fabric-verbs (they need no RDMA device), and each class scanned costs the scan time.
for m in "${LANE_MODULES[@]}"; do
    [ "$m" != epoll-bridge ] || continue
    [ -d "$snap/$m/test-classes" ] && scan=$scan${scan:+:}$snap/$m/test-classes
done
# Nothing below reads the modules' target/ folders (the console launcher jar and the discovery
# read the cache and the copies).
[ -z "$ready_file" ] || : >"$ready_file"

# ---------------------------------------------------------------------------- console launcher
# Jupiter 5.x.y runs on Platform 1.x.y; from JUnit 6 on both carry the same version.
junit=$(sed -n 's:.*<junit.version>\(.*\)</junit.version>.*:\1:p' pom.xml | head -n1)
[ -n "$junit" ] || die "no <junit.version> in pom.xml"
case $junit in 5.*) platform=1.${junit#5.} ;; *) platform=$junit ;; esac
console_jar=$cache/junit/junit-platform-console-standalone-$platform.jar
if [ ! -s "$console_jar" ]; then
    say "fetching junit-platform-console-standalone $platform"
    mvn -N dependency:copy -Dartifact="org.junit.platform:junit-platform-console-standalone:$platform" \
        -DoutputDirectory="$cache/junit"
    [ -s "$console_jar" ] || die "dependency:copy did not produce $console_jar"
fi

# ---------------------------------------------------------------------------- run in the VM
# Same JVM flags as Surefire's (the pom's cqflux.test.argLine), plus C1 only: under TCG every
# C2 compilation is expensive and these runs are short (measured: ~20% less CPU for the lane).
# A JVM crash report goes to the reports folder, which is copied out (the guest's working
# directory is a throw-away overlay: an hs_err file written there vanishes at power-off).
argline=$(sed -n 's:.*<cqflux.test.argLine>\(.*\)</cqflux.test.argLine>.*:\1:p' pom.xml | head -n1)
[ -n "$argline" ] || argline="--enable-native-access=ALL-UNNAMED"
reports=$repo/target/softroce-reports
rm -rf "$reports"
tags=(--include-tag rpma --include-tag fabric-verbs --exclude-tag host-only)
engines=(--exclude-engine=junit-vintage --exclude-engine=junit-platform-suite)
colors=()
[ -t 1 ] || colors=(--disable-ansi-colors)
scan_all=1
for a in "${extra[@]}"; do case $a in --select*) scan_all=0 ;; esac; done
selection=()
if [ "$scan_all" = 1 ]; then
    # The class-path scan runs here, on the host, and the VM gets the classes it found by name:
    # the scan loads and reflects on every test class of the seven modules (the tag filter applies
    # only after discovery), which costs the host a second or two of CPU and the emulated guest
    # minutes. The VM applies the same tag filter again, so it runs exactly what a scan in the
    # guest would have run.
    say "discovering the tagged test classes (console launcher, on the host)"
    discovered=$("$JAVA_HOME/bin/java" -XX:TieredStopAtLevel=1 -jar "$console_jar" discover \
        --disable-banner --details=flat --disable-ansi-colors "${engines[@]}" \
        --class-path "$cp" --scan-class-path "$scan" "${tags[@]}") \
        || die "test discovery on the host failed:
$discovered"
    while IFS= read -r c; do
        selection+=("--select-class=$c")
    done < <(printf '%s\n' "$discovered" | grep -o '\[class:[^]]*\]' | sed 's/^\[class:\(.*\)\]$/\1/' \
        | awk '!seen[$0]++')
    [ ${#selection[@]} -gt 0 ] || die "the class-path scan found no test class tagged rpma or fabric-verbs:
$discovered"
    say "${#selection[@]} test classes to run"
fi

# The rxe link rig's classes (test-kit's network tests, RxeRigTest) beside the others, which run
# one after another: the rig's classes spend most of their time in partitions and timeouts,
# waiting, while the others keep the emulated CPUs busy; two busy classes at once cost the
# emulation more CPU for the same tests (README.md's table). The rig's classes hold one resource
# lock among themselves. What must run alone says so: the reactive contract's global-hook and
# virtual-time tests take JUnit's global lock (ReactiveGlobalStateContract, a class of their own,
# since JUnit takes it for the whole class), and a class whose assertions count the process's
# descriptors or hold only with the CPUs to itself is @Isolated; JUnit runs those after the others. The pool never grows past two threads: JUnit's fork-join
# pool would otherwise add a worker, and start another class, for each test blocked in a
# CompletableFuture. CQFLUX_LANE_CLASSES=1 runs every class one after another.
parallel=(--config=junit.jupiter.execution.parallel.enabled=$([ "$lane_classes" = 2 ] && echo true || echo false)
    --config=junit.jupiter.execution.parallel.mode.default=same_thread
    --config=junit.jupiter.execution.parallel.mode.classes.default=same_thread
    --config=junit.jupiter.execution.parallel.config.strategy=fixed
    --config=junit.jupiter.execution.parallel.config.fixed.parallelism=2
    --config=junit.jupiter.execution.parallel.config.fixed.max-pool-size=2)

say "prepared in $(elapsed) s; booting the VM"
# The rxe link rig of test-kit's network tests is made before the JVM starts, not by the first
# test class that needs it: libfabric's verbs provider lists the RDMA devices once per process, at
# the JVM's first libfabric call, so FabricVerbsPartitionTest would find no verbs endpoint on the
# rig's addresses after FabricVerbsContractTest had used libfabric (see RxeLinkRig's facts).
# shellcheck disable=SC2086  # argline is a list of JVM flags
"$here/run-in-vm.sh" "${vm_args[@]}" --out "$reports" -- "$here/rxe-link-rig.sh" -- \
    "$JAVA_HOME/bin/java" $argline -XX:TieredStopAtLevel=1 -XX:ErrorFile=/run/cqflux/out/hs_err_pid%p.log \
    "-Djava.util.logging.config.file=$repo/.mvn/test-logging.properties" \
    -jar "$console_jar" execute \
    --disable-banner --details=tree --fail-if-no-tests "${colors[@]}" "${engines[@]}" \
    --class-path "$cp" "${selection[@]}" "${tags[@]}" "${parallel[@]}" \
    --reports-dir /run/cqflux/out \
    "${extra[@]}" && rc=0 || rc=$?

# Belt and braces for "zero tests is a failure": the XML report must count at least one test.
# Its counts also give a plain closing line ("rpma: N passed, N failed") for CI logs.
attr() { sed -n "s/.*<testsuite [^>]*$1=\"\([0-9]*\)\".*/\1/p" "$reports/TEST-junit-jupiter.xml" 2>/dev/null | head -n1; }
tests=$(attr tests)
if [ -n "$tests" ]; then
    failed=$(( $(attr failures) + $(attr errors) ))
    skipped=$(attr skipped)
    echo "rpma: $((tests - failed - skipped)) passed, $failed failed, $skipped skipped"
fi
if [ "$rc" = 0 ] && { [ -z "$tests" ] || [ "$tests" = 0 ]; }; then
    say "FAILED: no rpma test ran (report: ${tests:-none})"
    rc=2
fi
say "rpma tier: exit code $rc; lane wall time $(elapsed) s (reports in $reports)"
exit "$rc"
