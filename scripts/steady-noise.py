#!/usr/bin/env python3
"""Launch-to-launch noise of whole-run vs steady-window figures, from perfgate run's per-request
rows (--save-detailed-format jsonl) and result JSON. usage: scripts/steady-noise.py DIR [DIR…]
The steady window is recomputed here with the rule of src/steady.rs (in flight = cap) so that
records of a perfgate without the `steady` key can be used; where the record has the key, the
two are compared."""
import json, math, sys, glob, os, re, statistics as st
from collections import defaultdict

def pct(v, p):
    v = sorted(v)
    if not v: return 0.0
    r = p / 100 * (len(v) - 1); lo, hi = math.floor(r), math.ceil(r)
    return v[lo] + (v[hi] - v[lo]) * (r - lo)

def cap_window(spans, cap):
    ev = sorted([(s, 1) for s, e in spans] + [(max(s, e), -1) for s, e in spans], key=lambda x: (x[0], x[1]))
    now, op, cl = 0, None, None
    for t, d in ev:
        b = now; now += d
        if now == cap and op is None: op = t
        if b == cap and now < cap and op is not None: cl = t
    return (op, cl) if op is not None and cl is not None and cl > op else None

def steady(rows, cap):
    pts = [(r["start_time"], r["scheduled_time"] + r["latency"], r) for r in rows if r.get("error") is None]
    w = cap_window([(s, e) for s, e, _ in pts], cap)
    if not w: return None
    a, b = w
    inside = [r for s, e, r in pts if s >= a and e <= b]
    def within(r, e):
        first = r["scheduled_time"] + r["ttft"]
        n = 1.0 if a <= first <= b else 0.0
        span = e - first
        share = max(0.0, min(e, b) - max(first, a)) / span if span > 0 else float(a <= e <= b)
        return min(n, r["output_len"]) + max(r["output_len"] - 1, 0) * share
    fin = sum(within(r, e) for s, e, r in pts)
    gaps = [g for r in inside for g in r["itl"]]
    return dict(output_throughput=fin / (b - a),
                median_ttft_ms=pct([r["ttft"] * 1e3 for r in inside], 50),
                median_tpot_ms=pct([r["tpot"] * 1e3 for r in inside], 50),
                mean_itl_ms=1e3 * sum(gaps) / len(gaps), requests=len(inside), window=(a, b))

METRICS = ["output_throughput", "median_ttft_ms", "median_tpot_ms", "mean_itl_ms"]
vals = defaultdict(lambda: defaultdict(list))  # (size) -> (kind, metric) -> values
durs = defaultdict(list); inside_n = defaultdict(list); mismatch = 0
for d in sys.argv[1:]:
    for f in sorted(glob.glob(os.path.join(d, "l*-*.json"))):
        size = re.sub(r"^l\d+-", "", os.path.basename(f)[:-5])
        res = json.load(open(f))
        rows = [json.loads(l) for l in open(f[:-5] + ".requests.jsonl")]
        s = steady(rows, 4)
        if s is None: continue
        if res.get("steady"):
            # The latencies: records of session s2 (docs/steady.md) were written before the
            # throughput counted tokens within the window rather than whole requests by their end.
            for m in METRICS[1:]:
                if abs(res["steady"][m] - s[m]) > 1e-6 * max(1, abs(s[m])): mismatch += 1
        durs[size].append(res["duration"]); inside_n[size].append(s["requests"])
        for m in METRICS:
            vals[size][("whole", m)].append(res[m])
            vals[size][("steady", m)].append(s[m])

def sdlog(v):
    return 100 * st.stdev([math.log(x) for x in v]) if len(v) > 1 else float("nan")

print(f"steady latencies recomputed vs the record's `steady` key: {mismatch} mismatches")
print("| scenario | launches | mean duration (s) | requests in window | metric | whole-run sd(log) % | steady sd(log) % |")
print("|---|---|---|---|---|---|---|")
key = lambda k: (k[0], int(k[1:]))
for size in sorted(vals, key=key):
    v = vals[size]
    for m in METRICS:
        print(f"| {size} | {len(durs[size])} | {st.mean(durs[size]):.1f} | {st.mean(inside_n[size]):.1f} | {m} | "
              f"{sdlog(v[('whole', m)]):.1f} | {sdlog(v[('steady', m)]):.1f} |")
