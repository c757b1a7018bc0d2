#!/usr/bin/env bash
# Drives the records service with wrk at several concurrencies: durable POSTs and RDMA GETs beside
# the same HTTP exchange with no RDMA behind it (/baseline), in the same run; then verifies every
# stored record at the storage peer. Exits non-zero on any non-2xx answer, socket error or record
# that does not verify.
#
#   samples/webflux/load.sh [--duration S] [--concurrency "1 16 64 256"] [--plot FILE.svg]
#                           [--service-arg --cqflux.wait-strategy=adaptive ...]
#
# --service-arg (repeatable) passes one more argument to the records service, e.g. a cqflux.*
# property to compare against the defaults in the same way.
#
# Run it through ./cqflux demo webflux, which builds the sample and installs wrk (Debian's
# package) first. Results: samples/webflux/target/load/results.tsv (and the plot, with --plot).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT="$HERE/target/load"
DURATION=10
CONCURRENCY="1 16 64 256"
PLOT=""
SERVICE_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) DURATION=$2; shift 2 ;;
    --concurrency) CONCURRENCY=$2; shift 2 ;;
    --plot) PLOT=$2; shift 2 ;;
    --service-arg) SERVICE_ARGS+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,15s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "load.sh: unknown option $1 (--duration, --concurrency, --plot, --service-arg)" >&2; exit 2 ;;
  esac
done

say() { printf 'load: %s\n' "$*" >&2; }
if ! command -v wrk >/dev/null; then
  if [ -z "${CQFLUX_DEMO:-}" ]; then
    # The project's one place that installs Debian packages.
    exec "$ROOT/cqflux" demo webflux "$@"
  fi
  say "wrk is not installed"; exit 1
fi
[ -n "${JAVA_HOME:-}" ] || { . "$ROOT/.mvn/find-jdk.sh"; }
[ -d "$HERE/target/lib" ] || { say "build first: ./cqflux demo webflux (or mvnw -pl samples/webflux -am package)"; exit 1; }

mkdir -p "$OUT"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
HTTP_PORT=$(free_port)
PEER_PORT=$(free_port)
BASE="http://127.0.0.1:$HTTP_PORT"

# ---- the service, in the background; stopped by its own pid on exit --------------------------
"$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC -Xms512m -Xmx512m \
  -cp "$HERE/target/classes:$HERE/target/lib/*" io.cqflux.samples.webflux.RecordsApplication \
  --server.port="$HTTP_PORT" --cqflux.peers.store.port="$PEER_PORT" ${SERVICE_ARGS[@]+"${SERVICE_ARGS[@]}"} >"$OUT/service.log" 2>&1 &
SERVICE=$!
stop_service() {
  if kill -0 "$SERVICE" 2>/dev/null; then
    kill "$SERVICE"; wait "$SERVICE" 2>/dev/null || true
  fi
}
trap stop_service EXIT
for _ in $(seq 1 120); do
  curl -sf "$BASE/actuator/health/readiness" >/dev/null 2>&1 && break
  kill -0 "$SERVICE" 2>/dev/null || { say "the service died; see $OUT/service.log"; tail -20 "$OUT/service.log" >&2; exit 1; }
  sleep 0.5
done
curl -sf "$BASE/actuator/health/readiness" >/dev/null || { say "the service is not ready; see $OUT/service.log"; exit 1; }
say "service on $BASE, storage peer on 127.0.0.1:$PEER_PORT ($(curl -s "$BASE/actuator/health" | grep -o '"transport":"[^"]*"' | head -1))"

# ---- wrk scripts ------------------------------------------------------------------------------
# POST: each wrk thread writes its own range of ids, so that no two writes of one record are ever
# in flight at once; every 201's Location is counted once.
cat >"$OUT/post.lua" <<'LUA'
local threads = {}
local path = os.getenv("LOAD_PATH") or "/records/"
function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end
function init(args)
  counter = 0
  range = 16384
  base = tid * range
  distinct = 0
  seen = {}
  pad = string.rep("r", 240)
end
function request()
  local id = base + (counter % range)
  counter = counter + 1
  return wrk.format("POST", path .. id, {["Content-Type"] = "application/octet-stream"},
    string.format("%015d", id) .. pad)
end
function response(status, headers, body)
  if status == 201 then
    local loc = headers["Location"] or headers["location"]
    if loc and not seen[loc] then seen[loc] = true; distinct = distinct + 1 end
  end
end
function done(summary, latency, requests)
  local n = 0
  for _, t in ipairs(threads) do n = n + t:get("distinct") end
  io.write(string.format("distinct %d\n", n))
end
LUA
# GET: ids 0..1023, written before the runs (the fill below).
cat >"$OUT/get.lua" <<'LUA'
local path = os.getenv("LOAD_PATH") or "/records/"
function init(args) counter = 0 end
function request()
  counter = counter + 1
  return wrk.format("GET", path .. (counter % 1024))
end
LUA

to_ms() { # "1.23ms" / "456.00us" / "1.20s" -> milliseconds
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0; else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'
}

FAIL=0
printf 'endpoint\tconcurrency\treq_per_s\tp50_ms\tp99_ms\terrors\n' >"$OUT/results.tsv"
run() { # name method path concurrency duration -> one row
  local name=$1 script=$2 path=$3 c=$4 d=$5 t out rps p50 p99 non2xx sock
  t=$(( c < 2 ? 1 : 2 ))
  out=$(LOAD_PATH=$path wrk -t "$t" -c "$c" -d "${d}s" --timeout 10s --latency -s "$OUT/$script" "$BASE" 2>&1)
  echo "$out" >"$OUT/wrk-$name-c$c.txt"
  rps=$(echo "$out" | awk '/^Requests\/sec:/ { print $2 }')
  p50=$(to_ms "$(echo "$out" | awk '$1 == "50%" { print $2 }')")
  p99=$(to_ms "$(echo "$out" | awk '$1 == "99%" { print $2 }')")
  non2xx=$(echo "$out" | awk '/Non-2xx or 3xx responses:/ { print $NF }')
  sock=$(echo "$out" | awk -F'[ ,]+' '/Socket errors:/ { print $4 + $6 + $8 + $10 }')
  local errors=$(( ${non2xx:-0} + ${sock:-0} ))
  [ "$errors" -eq 0 ] || FAIL=1
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$c" "$rps" "$p50" "$p99" "$errors" >>"$OUT/results.tsv"
  printf '  %-14s c=%-4s %10s req/s   p50 %8s ms   p99 %8s ms   errors %s\n' "$name" "$c" "$rps" "$p50" "$p99" "$errors" >&2
  [ "$name" != "post-records" ] || echo "$out" | awk '/^distinct/ { print $2 }' >>"$OUT/distinct.txt"
}

: >"$OUT/distinct.txt"
say "fill: records 0..1023 (what the GET runs read)"
FILLED=$(seq 0 1023 | xargs -P 8 -I{} curl -s -o /dev/null -w '%{http_code}\n' -X POST \
  -H 'Content-Type: application/octet-stream' --data-binary "fill record {}" "$BASE/records/{}" | grep -c '^201$' || true)
[ "$FILLED" -eq 1024 ] || { say "FAILED: only $FILLED of 1024 fill writes answered 201"; exit 1; }
say "warm-up (JIT): 5 s of each endpoint at 16 connections (not recorded)"
for s in "post.lua /records/" "post.lua /baseline/" "get.lua /records/" "get.lua /baseline/"; do
  set -- $s
  LOAD_PATH=$2 wrk -t 2 -c 16 -d 5s --timeout 10s -s "$OUT/$1" "$BASE" >/dev/null 2>&1
done
say "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; ${DURATION} s per run"
# The library's own durable write, in the same run: one connection of a plain cqflux client to
# the same storage peer, chained writes of a record-sized slot that the POSTs never touch (wrk's
# ids stay below 2 x 16,384), one in flight. What a record POST adds beyond it and beyond the
# HTTP baseline is the service's share: Spring, the hops between Netty's loop and cqflux's.
# The probe waits as the service's loops do and writes the service's last slot, both as any
# --service-arg sets them (defaults: the sample's application.properties).
PROBE_WAIT=blocking PROBE_SLOTS=65536 PROBE_SLOT_SIZE=1024
for a in ${SERVICE_ARGS[@]+"${SERVICE_ARGS[@]}"}; do
  case "$a" in
    --cqflux.wait-strategy=*) PROBE_WAIT=${a#*=} ;;
    --records.slots=*) PROBE_SLOTS=${a#*=} ;;
    --records.slot-size=*) PROBE_SLOT_SIZE=${a#*=} ;;
  esac
done
[ "$PROBE_SLOTS" -gt 32768 ] || { say "--records.slots=$PROBE_SLOTS leaves no slot the POSTs (ids below 32768) never write"; exit 2; }
PROBE=$("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC \
  -cp "$HERE/target/classes:$HERE/target/lib/*" io.cqflux.samples.webflux.DurableWriteProbe \
  127.0.0.1 "$PEER_PORT" "$((PROBE_SLOTS - 1))" "$PROBE_SLOT_SIZE" "$(( DURATION < 5 ? DURATION : 5 ))" "$PROBE_WAIT" \
  2>"$OUT/probe.log" | awk '$1 == "probe"') \
  || { say "FAILED: the durable-write probe (see $OUT/probe.log)"; tail -5 "$OUT/probe.log" >&2; exit 1; }
read -r _ PROBE_N PROBE_P50 PROBE_P99 <<<"$PROBE"
PROBE_SECONDS=$(( DURATION < 5 ? DURATION : 5 ))
printf '%s\t%s\t%s\t%s\t%s\t%s\n' library-durable-write 1 "$(awk -v n="$PROBE_N" -v s="$PROBE_SECONDS" 'BEGIN { printf "%.2f", n / s }')" \
  "$(awk -v v="$PROBE_P50" 'BEGIN { printf "%.3f", v / 1000 }')" "$(awk -v v="$PROBE_P99" 'BEGIN { printf "%.3f", v / 1000 }')" 0 >>"$OUT/results.tsv"
printf '  %-14s c=%-4s %10s writes  p50 %8s us   p99 %8s us   (the library alone: DurableWriteProbe)\n' \
  durable-write 1 "$PROBE_N" "$PROBE_P50" "$PROBE_P99" >&2
for c in $CONCURRENCY; do
  run post-records post.lua /records/ "$c" "$DURATION"
  run post-baseline post.lua /baseline/ "$c" "$DURATION"
  run get-records get.lua /records/ "$c" "$DURATION"
  run get-baseline get.lua /baseline/ "$c" "$DURATION"
done
say "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
# At one connection: a record POST's p50 beside the baseline's plus twice the library's own.
if grep -q '^post-records	1	' "$OUT/results.tsv"; then
  awk -F'\t' -v lib="$PROBE_P50" '
    $1 == "post-records" && $2 == 1 { rec = $4 } $1 == "post-baseline" && $2 == 1 { base = $4 }
    END { bound = base + 2 * lib / 1000
          printf "load: one connection: POST p50 %.3f ms; baseline %.3f ms + 2 x the library'"'"'s durable write %.3f ms = %.3f ms (%s)\n",
                 rec, base, lib / 1000, bound, rec <= bound ? "within" : "above" }' "$OUT/results.tsv" >&2
fi

# ---- verification at the peer: every stored record, in the storage's own memory ----------------
VERIFY=$(curl -s "$BASE/admin/verify")
say "verification at the storage peer: $VERIFY"
STORED=$(echo "$VERIFY" | grep -o '"stored":[0-9]*' | cut -d: -f2)
CORRUPT=$(echo "$VERIFY" | grep -o '"corrupt":[0-9]*' | cut -d: -f2)
MAXDISTINCT=$(sort -n "$OUT/distinct.txt" | tail -1)
if [ "${CORRUPT:-1}" -ne 0 ]; then say "FAILED: $CORRUPT stored records do not verify"; FAIL=1; fi
# One stored record is the probe's own (its slot, which no POST writes).
if [ "$(( ${STORED:-0} - 1 ))" -lt "${MAXDISTINCT:-0}" ]; then
  say "FAILED: $(( ${STORED:-0} - 1 )) records stored by POSTs, fewer than the $MAXDISTINCT distinct ids one run got 201 for"; FAIL=1
fi
# And back over RDMA: every record id 0..1023 read and checked by the service.
BAD=$(seq 0 1023 | xargs -P 8 -I{} curl -s -o /dev/null -w '%{http_code}\n' "$BASE/records/{}" | grep -vc '^200$' || true)
[ "$BAD" -eq 0 ] || { say "FAILED: $BAD of records 0..1023 did not read back with 200"; FAIL=1; }
say "records 0..1023 read back by RDMA and verified: $((1024 - BAD))/1024"

if [ -n "$PLOT" ]; then
  python3 "$HERE/plot.py" "$OUT/results.tsv" "$PLOT" "$(uname -m), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
  say "plot: $PLOT"
fi
if [ "$FAIL" -ne 0 ]; then say "FAILED (see $OUT)"; exit 1; fi
say "OK: no error, every stored record verified ($STORED stored)"
