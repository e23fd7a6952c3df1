//! `--loop-slopes`: how much of the machine's speed each metric follows, within a sitting and
//! between sittings. Per launch, x is the mean natural log of its runs' calibration loop times
//! and y the median log of the metric over its runs; the within-sitting slope and correlation
//! pool every sitting's launches around their sitting's means, the between-sitting ones are
//! those of the sittings' means around the grand mean (one point per sitting). A last table
//! asks whether a metric follows a single reading: within each sitting, a launch's point in one
//! scenario less its launch's mean over the scenarios and its scenario's mean over the launches
//! (the loop timed before that scenario's run against the launch's other readings), pooled.

use perfgate::gate::replay::Launch;

/// The metrics whose slopes are shown (where the records carry them).
const METRICS: [&str; 6] = [
    "output_throughput",
    "median_ttft_ms",
    "median_tpot_ms",
    "p99_ttft_ms",
    "p99_tpot_ms",
    "median_itl_ms",
];

/// Sums of squares and products of one level (within or between sittings).
#[derive(Default, Clone, Copy)]
struct Moments {
    sxx: f64,
    sxy: f64,
    syy: f64,
}

impl Moments {
    fn add(&mut self, dx: f64, dy: f64) {
        self.sxx += dx * dx;
        self.sxy += dx * dy;
        self.syy += dy * dy;
    }
    fn merge(&mut self, o: Moments) {
        self.sxx += o.sxx;
        self.sxy += o.sxy;
        self.syy += o.syy;
    }
    fn cell(&self) -> String {
        if self.sxx <= 0.0 || self.syy <= 0.0 {
            return "– | –".into();
        }
        let b = self.sxy / self.sxx;
        let r = self.sxy / (self.sxx * self.syy).sqrt();
        format!("{b:+.2} | {r:+.2}")
    }
}

/// One launch's (x, y) for `metric` in `scenario`, when its records carry both.
fn point(l: &Launch, scenario: &str, metric: &str) -> Option<(f64, f64)> {
    let recs: Vec<_> = l
        .records
        .iter()
        .filter(|r| r.scenario_id() == scenario)
        .collect();
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for r in &recs {
        let c = r.telemetry.as_ref()?.calibration_ms?;
        let v = r.metric(metric)?;
        if !(c > 0.0 && v > 0.0) {
            return None;
        }
        xs.push(c.ln());
        ys.push(v.ln());
    }
    let x = xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    Some((x, perfgate::gate::stats::median(&ys)?))
}

/// The within- and between-sitting moments of one row: points grouped by sitting.
fn moments(groups: &[Vec<(f64, f64)>]) -> (Moments, Moments) {
    let mean = |p: &[(f64, f64)]| {
        let n = p.len() as f64;
        (
            p.iter().map(|q| q.0).sum::<f64>() / n,
            p.iter().map(|q| q.1).sum::<f64>() / n,
        )
    };
    let (mut within, mut between) = (Moments::default(), Moments::default());
    let means: Vec<(f64, f64)> = groups
        .iter()
        .filter(|g| !g.is_empty())
        .map(|g| mean(g))
        .collect();
    for (g, m) in groups.iter().filter(|g| !g.is_empty()).zip(&means) {
        for (x, y) in g {
            within.add(x - m.0, y - m.1);
        }
    }
    let grand = mean(&means);
    for m in &means {
        between.add(m.0 - grand.0, m.1 - grand.1);
    }
    (within, between)
}

/// A sitting's (launch × scenario) points, double-centred: each point less its launch's mean
/// and its scenario's mean, plus the sitting's (launches with a point in every scenario).
fn reading_moments(points: &[Vec<(f64, f64)>]) -> Moments {
    let mut m = Moments::default();
    let (nl, ns) = (points.len(), points.first().map_or(0, Vec::len));
    if nl < 2 || ns < 2 {
        return m;
    }
    let avg = |it: &mut dyn Iterator<Item = (f64, f64)>, n: usize| {
        let (sx, sy) = it.fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
        (sx / n as f64, sy / n as f64)
    };
    let launch: Vec<(f64, f64)> = points
        .iter()
        .map(|l| avg(&mut l.iter().copied(), ns))
        .collect();
    let scen: Vec<(f64, f64)> = (0..ns)
        .map(|j| avg(&mut points.iter().map(|l| l[j]), nl))
        .collect();
    let all = avg(&mut launch.iter().copied(), nl);
    for (l, lm) in points.iter().zip(&launch) {
        for (p, sm) in l.iter().zip(&scen) {
            m.add(p.0 - lm.0 - sm.0 + all.0, p.1 - lm.1 - sm.1 + all.1);
        }
    }
    m
}

/// Print the table: per scenario and metric, and per metric pooled over the scenarios.
pub(crate) fn loop_slopes(a: &[Launch], scenarios: &[String]) {
    let mut sittings: Vec<Option<String>> = Vec::new();
    for l in a {
        let s = l.records.first().and_then(|r| r.session_id.clone());
        if !sittings.contains(&s) {
            sittings.push(s);
        }
    }
    println!(
        "\nslope of log metric on log calibration loop time (b) and correlation (r), \
         {} sittings, {} launches\n",
        sittings.len(),
        a.len()
    );
    println!("| scenario | metric | within sittings: b | r | between sittings: b | r |");
    println!("|---|---|--:|--:|--:|--:|");
    let mut pooled: Vec<(Moments, Moments)> = vec![Default::default(); METRICS.len()];
    for sc in scenarios {
        for (k, metric) in METRICS.iter().enumerate() {
            let groups: Vec<Vec<(f64, f64)>> = sittings
                .iter()
                .map(|s| {
                    a.iter()
                        .filter(|l| l.records.first().and_then(|r| r.session_id.clone()) == *s)
                        .filter_map(|l| point(l, sc, metric))
                        .collect()
                })
                .collect();
            if groups.iter().all(Vec::is_empty) {
                continue;
            }
            let (w, b) = moments(&groups);
            pooled[k].0.merge(w);
            pooled[k].1.merge(b);
            println!("| {sc} | {metric} | {} | {} |", w.cell(), b.cell());
        }
    }
    for (metric, (w, b)) in METRICS.iter().zip(&pooled) {
        if w.sxx > 0.0 {
            println!(
                "| (all scenarios) | {metric} | {} | {} |",
                w.cell(),
                b.cell()
            );
        }
    }
    println!(
        "\na reading within its launch: slope (b) and correlation (r) of the metric's deviation \
         in one scenario on that scenario's loop reading, both less their launch's and their \
         scenario's means within the sitting\n"
    );
    println!("| metric | b | r | points |");
    println!("|---|--:|--:|--:|");
    for metric in METRICS {
        let mut m = Moments::default();
        let mut n = 0;
        for s in &sittings {
            let points: Vec<Vec<(f64, f64)>> = a
                .iter()
                .filter(|l| l.records.first().and_then(|r| r.session_id.clone()) == *s)
                .filter_map(|l| {
                    let p: Option<Vec<_>> =
                        scenarios.iter().map(|sc| point(l, sc, metric)).collect();
                    p
                })
                .collect();
            if points.len() >= 2 && scenarios.len() >= 2 {
                n += points.len() * scenarios.len();
            }
            m.merge(reading_moments(&points));
        }
        if m.sxx > 0.0 {
            println!("| {metric} | {} | {n} |", m.cell());
        }
    }
}
