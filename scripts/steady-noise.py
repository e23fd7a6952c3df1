#!/usr/bin/env python3
"""Launch-to-launch noise of whole-run vs steady-window figures, from perfgate run's per-request
rows (--save-detailed-format jsonl) and result JSON. usage: scripts/steady-noise.py DIR [DIR…]
Then the noise-per-minute curve of each whole-run metric: the variance of a launch's log value
fitted as v(T) = a + b/T over the scenarios' mean durations T (a: what every launch carries
however long it runs; b/T: what a longer run averages away), the duration T* = sqrt(b·S/a) that
buys the most information per engine-second when a launch costs S seconds before its first
measured request (launches.tsv's `start` rows or STARTUP_S, plus about 2 s of warm-up), and the engine-minutes a
two-sided test at alpha 1 % needs for 95 % power against a 5 % change at each duration (from
that duration's measured variance; at T*, from the fit). Last, the within-run noise by batch
means: each run of at least 32 requests cut into 4 blocks of equal time, the figures of each block
(tokens produced inside it, the medians of the requests that started in it), and the sd of the
whole run's log figure that block-to-block variation alone would give (sd of the blocks' logs / 2),
beside the launch-to-launch sd.
The steady window is recomputed here with the rule of crates/record/src/steady.rs (in flight = cap) so that
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

# Within a run: batch means over 4 blocks of equal time.
BLOCKS = 4
within = defaultdict(lambda: defaultdict(list))  # size -> metric -> per-run sd %
for d in sys.argv[1:]:
    for f in sorted(glob.glob(os.path.join(d, "l*-*.json"))):
        size = re.sub(r"^l\d+-", "", os.path.basename(f)[:-5])
        rows = [json.loads(l) for l in open(f[:-5] + ".requests.jsonl")]
        ok = [r for r in rows if r.get("error") is None and r["output_len"] > 1]
        if len(ok) < 32:
            continue
        t0 = min(r["start_time"] for r in ok)
        t1 = max(r["scheduled_time"] + r["latency"] for r in ok)
        w = (t1 - t0) / BLOCKS
        blocks = []
        for k in range(BLOCKS):
            a_, b_ = t0 + k * w, t0 + (k + 1) * w
            toks = 0.0
            for r in ok:
                first = r["scheduled_time"] + r["ttft"]; end = r["scheduled_time"] + r["latency"]
                toks += float(a_ <= first < b_)
                if end > first:
                    toks += (r["output_len"] - 1) * max(0.0, min(end, b_) - max(first, a_)) / (end - first)
            started = [r for r in ok if a_ <= r["start_time"] < b_]
            gaps = [g for r in started for g in r["itl"]]
            if not started or not gaps:
                blocks = None
                break
            blocks.append(dict(output_throughput=toks / w,
                               median_ttft_ms=pct([r["ttft"] * 1e3 for r in started], 50),
                               median_tpot_ms=pct([r["tpot"] * 1e3 for r in started], 50),
                               mean_itl_ms=1e3 * sum(gaps) / len(gaps)))
        if not blocks:
            continue
        for m in METRICS:
            within[size][m].append(sdlog([bl[m] for bl in blocks]) / math.sqrt(BLOCKS))
if within:
    print()
    print("| scenario | runs | metric | within a run: sd(log) % of the run's figure from 4 blocks (mean over runs) | launch to launch sd(log) % |")
    print("|---|---|---|---|---|")
    for size in sorted(within, key=key):
        for m in METRICS:
            v = within[size][m]
            print(f"| {size} | {len(v)} | {m} | {st.mean(v):.1f} | {sdlog(vals[size][('whole', m)]):.1f} |")

# The noise-per-minute curve (whole-run figures: the ones the gate reads).
starts = []
for d in sys.argv[1:]:
    tsv = os.path.join(d, "launches.tsv")
    if os.path.exists(tsv):
        for line in open(tsv):
            f = line.rstrip("\n").split("\t")
            if len(f) >= 3 and f[1] == "start":
                starts.append(float(f[2]))
# Without `start` rows (sessions recorded before the script wrote them), STARTUP_S gives it.
S = (st.mean(starts) if starts else float(os.environ.get("STARTUP_S", "0"))) + 2.0  # + warm-up
Z = 2.5758 + 1.6449  # z(1 - 0.01/2) + z(0.95)
DELTA = math.log(1.05)
print()
print(f"start-up + warm-up S = {S:.1f} s ({len(starts)} launches with a start row)")
print("| metric | a (launch floor, sd %) | b (sd % at 60 s, above the floor) | T* (s) | launches and engine-min per arm (T s: n × = min) |")
print("|---|---|---|---|---|")
sizes = sorted(vals, key=key)
for m in METRICS:
    pts = [(st.mean(durs[z]), (sdlog(vals[z][("whole", m)]) / 100) ** 2) for z in sizes if len(durs[z]) > 1]
    if len(pts) < 2:
        continue
    # Least squares of v on 1/T, each size weighted alike; a and b kept >= 0.
    xs = [1 / t for t, _ in pts]; ys = [v for _, v in pts]
    mx, my = st.mean(xs), st.mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = max(0.0, sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx) if sxx > 0 else 0.0
    a = max(0.0, my - b * mx)
    if a == 0.0:
        b = st.mean([y / x for x, y in zip(xs, ys)])
    tstar = math.sqrt(b * S / a) if a > 0 and b > 0 else (float("inf") if a == 0 else 0.0)
    def minutes(t, v=None):
        v = a + b / t if v is None else v
        n = max(2, math.ceil(2 * Z * Z * v / (DELTA * DELTA)))  # launches per arm
        return n, n * (S + t) / 60
    cells = []
    for t, v in sorted(pts):
        n, mins = minutes(t, v)
        cells.append(f"{t:.0f} s: {n} × = {mins:.1f}")
    lo, hi = min(t for t, _ in pts), max(t for t, _ in pts)
    if tstar < lo:
        shown = f"< {lo:.0f} (shortest measured)"
    elif tstar > hi:
        shown = f"> {hi:.0f} (longest measured)"
    else:
        n, mins = minutes(tstar)
        cells.append(f"T* {tstar:.0f} s: {n} × = {mins:.1f}")
        shown = f"{tstar:.0f}"
    print(f"| {m} | {100 * math.sqrt(a):.1f} | {100 * math.sqrt(b / 60):.1f} | {shown} | {'; '.join(cells)} |")
