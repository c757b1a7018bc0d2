import re,collections,statistics,sys
# Medians and ranges of opcount runs of several builds: python3 summarize.py FILE [IDLE:ROUND ...] (rounds to leave out).
f=sys.argv[1]; skip=set(sys.argv[2:])  # e.g. "16:1" to skip round 1 of idle 16
cur=None; d=collections.defaultdict(list); sc=collections.defaultdict(list); lf=collections.defaultdict(list)
for line in open(f):
    m=re.match(r'== (\w+) (\w+) idle=(\d+) round=(\d+)',line)
    if m:
        cur=(m.group(2),int(m.group(3)),m.group(1)); rnd=m.group(4)
        ok = f"{m.group(3)}:{rnd}" not in skip
        continue
    if not ok: continue
    m=re.search(r'count=24000 us/op=([\d.]+)',line)
    if m: d[cur].append(float(m.group(1)))
    m=re.match(r'\s+system calls\s+([-\d.]+)',line)
    if m: sc[cur].append(float(m.group(1)))
    m=re.match(r'\s+epoll_wait of libfabric\s+([-\d.]+)',line)
    if m: lf[cur].append(float(m.group(1)))
def fmt(k):
    if not d[k]: return "-"
    return "%.1f [%.1f–%.1f] µs; %.0f [%.0f–%.0f] calls; %.0f libfabric" % (statistics.median(d[k]),min(d[k]),max(d[k]),statistics.median(sc[k]),min(sc[k]),max(sc[k]),statistics.median(lf[k]))
for s in ('BUSY_POLL','ADAPTIVE'):
    for i in (16,4,0):
        n=len(d[(s,i,'base')])
        print(f"| {s}, {i} idle ({n} runs each) | {fmt((s,i,'base'))} | {fmt((s,i,'variant'))} | {fmt((s,i,'new'))} |")
