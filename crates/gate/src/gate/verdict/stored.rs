//! The stored check's tests: a row's launches against the baseline's, the engine-wide test
//! pooling a model's scenarios, and the test over all models.

use super::decide::Test;
use super::row::{blank, fixed, start_row, unusable, values, Grouped, Key, Start};
use super::{Metric, ScenarioError, Scope, ALL_MODELS, ENGINE_WIDE};
use crate::gate::config::{percentile_supported, GateConfig, MetricRule};
use crate::gate::noise::loops::LaunchLoops;
use crate::gate::noise::{self, Launches, Priors};
use crate::gate::stats::{self, orientation, Shift, StatsError};
use crate::gate::{Row, Verdict};
use crate::record::ScenarioResult;

/// One metric of one scenario: the row, and its test when one can be made.
pub(crate) fn metric_row(
    key: &Key,
    m: &Metric,
    [b, c]: [&[&ScenarioResult]; 2],
    (priors, loops): (&Priors, &[LaunchLoops; 2]),
    cfg: &GateConfig,
) -> Option<(Row, Option<Test>)> {
    let missing = ["metric not in the baseline", "metric not in the results"];
    let (mut row, [bv, cv]) = match start_row(key, m, [b, c], missing)? {
        Start::Test(row, values) => (row, values),
        Start::Done(row) => return Some((row, None)),
    };
    let (rule, metric) = (&m.rule, m.name.as_str());
    let (bl, cl) = match LaunchLoops::row(loops, &key.0, [b, c], metric) {
        Ok(sides) => sides,
        Err(e) => return Some((unusable(row, rule, [&bv, &cv], e), None)),
    };
    row.baseline = Some(bl.mean().exp());
    row.current = Some(cl.mean().exp());
    row.launches = Some([bl.n(), cl.n()]);
    row.change_pct = Some(stats::pct(cl.mean() - bl.mean()));
    let Some(noise) = noise::estimate(&[&bl, &cl], priors.prior(metric, rule, cfg)) else {
        let why = StatsError::NoVariance.to_string();
        let mut row = fixed(row, Verdict::Inconclusive, why);
        row.launches_needed = Some(2);
        return Some((row, None));
    };
    let (test, noise) = stored_test(&bl, &cl, noise, rule, priors, (metric, cfg));
    row.noise = Some(noise);
    Some((row, Some(test)))
}

/// A stored comparison's test of two sides' launches: the oriented difference of their means,
/// its se² = sd² (1/n_b + 1/n_c) + λ sd² · (session factor) + the machine term (with a
/// `machine_slope`: [`noise::loops::machine_var`]), on the noise's df. Returns the test and the
/// noise with its session term.
fn stored_test(
    bl: &Launches,
    cl: &Launches,
    mut noise: noise::Noise,
    rule: &MetricRule,
    priors: &Priors,
    (metric, cfg): (&str, &GateConfig),
) -> (Test, noise::Noise) {
    let slope = Some(cfg.machine_slope()).filter(|s| *s > 0.0);
    let machine = slope.and_then(|s| noise::loops::machine_var(bl, cl, s));
    let mut term = priors.session_term(metric, (bl, cl), cfg, machine.is_some());
    term.machine = machine;
    let machine_var = term.machine.map_or(0.0, |m| m.var);
    noise.session = Some(term);
    let var = noise.sd() * noise.sd();
    let fixed_var = term.ratio * var * term.factor + machine_var;
    let launch_var = var * (1.0 / bl.n() as f64 + 1.0 / cl.n() as f64);
    let shift = Shift {
        worse: orientation(rule.direction) * (cl.mean() - bl.mean()),
        se: (launch_var + fixed_var).sqrt(),
        df: satterthwaite(launch_var, noise.df, fixed_var, term.df),
    };
    // The row's own launches alone (no prior). Its session term is the metric's λ, or the
    // row's own between-session variance where its sides span sessions and show more: a row
    // whose sessions differ more than its metric's others must not pass on theirs. A hand-set
    // prior (`noise_pct`) is the settings' word on the noise: the own-launches pass rule guards
    // the learnt one only.
    let own = noise::estimate(&[bl, cl], None)
        .filter(|o| o.own_df > 0.0 && rule.noise_pct.is_none())
        .map(|o| {
            let v = o.sd() * o.sd();
            let launch_var = v * (1.0 / bl.n() as f64 + 1.0 / cl.n() as f64);
            let shared = (term.ratio * v, term.df);
            let (session_var, session_df) = match own_session_var(bl, cl, v) {
                Some((s, df)) if s > shared.0 => (s, Some(df)),
                _ => shared,
            };
            let fixed_var = session_var * term.factor + machine_var;
            let own = Shift {
                worse: shift.worse,
                se: (launch_var + fixed_var).sqrt(),
                df: satterthwaite(launch_var, o.df, fixed_var, session_df),
            };
            // The guard of a regression nothing can confirm: the row's own launch noise with
            // its metric's session term. (A session variance measured on one df would leave
            // t on about one df, which no regression clears.)
            let shared_var = shared.0 * term.factor + machine_var;
            let guard = Shift {
                worse: shift.worse,
                se: (launch_var + shared_var).sqrt(),
                df: satterthwaite(launch_var, o.df, shared_var, term.df),
            };
            (own, fixed_var, (guard, shared_var))
        });
    let test = Test {
        shift,
        n_base: bl.n(),
        n_now: cl.n(),
        fixed_var,
        paired: false,
        own: own.map(|o| o.0),
        own_fixed_var: own.map_or(0.0, |o| o.1),
        own_launches: own.map(|o| o.2),
    };
    (test, noise)
}

/// The df of a se² made of a launch part (on `launch_df`) and a session part: a measured
/// session variance carries its own sampling error (two sessions: one comparison), so the df
/// follow Welch–Satterthwaite over the two parts, never above the launch part's; an assumed one
/// (`None`) is a constant and adds none.
fn satterthwaite(launch_var: f64, launch_df: f64, fixed_var: f64, session_df: Option<f64>) -> f64 {
    match session_df {
        Some(df_s) if fixed_var > 0.0 && launch_df > 0.0 && df_s > 0.0 => {
            let total = launch_var + fixed_var;
            let df = total * total
                / (launch_var * launch_var / launch_df + fixed_var * fixed_var / df_s);
            df.min(launch_df)
        }
        _ => launch_df,
    }
}

/// The row's own between-session variance of one launch's log value, pooled over the sides
/// that span ≥ 2 sessions (each side's one-way analysis, weighted by its session df), with
/// those df. The within-session variance is `within`, the row's launch variance pooled over
/// both sides (a shift between the sides leaves it alone), so a side with one launch in each of
/// its sessions shows its offset too: a baseline of one launch from each of two sittings whose
/// launches differ by three launch sd is a session effect, not noise to average over. `None`
/// when no side spans two sessions.
pub(crate) fn own_session_var(bl: &Launches, cl: &Launches, within: f64) -> Option<(f64, f64)> {
    let (mut sum, mut df) = (0.0, 0.0);
    for (ms_b, df_b, n0) in [bl, cl].into_iter().filter_map(Launches::between_sessions) {
        sum += ((ms_b - within) / n0).max(0.0) * df_b;
        df += df_b;
    }
    (df > 0.0).then(|| (sum / df, df))
}

/// The engine-wide test of one metric over one model's scenarios: each launch's
/// precision-weighted mean log value over the scenarios (centred on the baseline), compared
/// between the sides like a row. Launches are matched across scenarios by their key, so a launch
/// effect shared by every scenario counts once, as it should. The series' prior is what the
/// rows' noise implies for the weighted mean at the scenario correlation the data show. Needs
/// ≥ 2 scenarios and a launch on each side that ran all of them.
pub(crate) fn engine_wide_row(
    model: &str,
    m: &Metric,
    scenarios: &[(&[&ScenarioResult], &[&ScenarioResult])],
    (priors, loops): (&Priors, &[LaunchLoops; 2]),
    cfg: &GateConfig,
) -> Option<(Row, Test)> {
    let (rule, metric) = (&m.rule, m.name.as_str());
    let prior = priors.prior(metric, rule, cfg);
    let mut sides: Vec<(Launches, Launches, f64)> = Vec::new();
    for (b, c) in scenarios {
        // A "p99" of fewer than 100 requests is an extreme value: not pooled.
        if !(percentile_supported(metric, b) && percentile_supported(metric, c)) {
            continue;
        }
        let Ok((bl, cl)) = LaunchLoops::row(loops, model, [b, c], metric) else {
            continue;
        };
        let noise = noise::estimate(&[&bl, &cl], prior)?;
        sides.push((bl, cl, noise.weight()));
    }
    if sides.len() < 2 {
        return None;
    }
    // One side's launches that ran every scenario, as weighted means of (value − baseline mean).
    let pool = |pick: fn(&(Launches, Launches, f64)) -> &Launches| {
        let rows: Vec<(&Launches, f64, f64)> =
            sides.iter().map(|s| (pick(s), s.2, s.0.mean())).collect();
        noise::pooled(&rows)
    };
    let (bl, cl) = (pool(|s| &s.0), pool(|s| &s.1));
    if bl.n() == 0 || cl.n() == 0 {
        return None;
    }
    let w: Vec<f64> = sides.iter().map(|s| s.2).collect();
    let with_sd = |pick: fn(&(Launches, Launches, f64)) -> &Launches| {
        sides
            .iter()
            .map(|s| (pick(s), 1.0 / s.2.sqrt()))
            .collect::<Vec<_>>()
    };
    let rho = noise::scenario_corr(&[with_sd(|s| &s.0), with_sd(|s| &s.1)]);
    let noise = noise::estimate(&[&bl, &cl], noise::engine_wide_prior(&w, rho, prior))?;
    let (test, noise) = stored_test(&bl, &cl, noise, rule, priors, (metric, cfg));
    let mut row = blank(model, ENGINE_WIDE, metric, rule);
    row.gated = true;
    row.tolerance_pct = Some(Scope::EngineWide.tolerance_pct(rule));
    row.change_pct = Some(stats::pct(cl.mean() - bl.mean()));
    row.launches = Some([bl.n(), cl.n()]);
    row.n_baseline = scenarios.iter().map(|s| values(s.0, metric).len()).sum();
    row.n_current = scenarios.iter().map(|s| values(s.1, metric).len()).sum();
    row.noise = Some(noise);
    Some((row, test))
}

/// The engine-wide test over every model: the mean of the models' engine-wide changes. Models
/// run on launches of their own, so their tests are independent; the degrees of freedom follow
/// Welch–Satterthwaite. Needs ≥ 2 models.
///
/// Equal weights, not inverse-variance ones: the variances are estimates (a few launches a
/// model), and weighting by their inverse favours the models whose noise happened to look small,
/// so the se of the weighted mean came out too small. In `gate-sim --same-session 1` (300
/// trials) the all-models tests made nearly every false alarm at 2 × 2, up to 2.0 % of one-process
/// checks and 6.7 % of merged matrices (docs/gate.md, "Decision quality").
///
/// `guarded`: also combine the models' own-launch guards (when every model has one) into the
/// row's [`Test::own_launches`], as a check whose regressions nothing can confirm needs
/// ([`super::Inputs::unconfirmable`]); otherwise the row has none.
pub(crate) fn all_models_row(per_model: &[(Row, Test)], guarded: bool) -> Option<(Row, Test)> {
    if per_model.len() < 2 || per_model.iter().any(|m| m.1.shift.se <= 0.0) {
        return None;
    }
    let parts: Vec<(Shift, f64)> = per_model
        .iter()
        .map(|m| (m.1.shift, m.1.fixed_var))
        .collect();
    let (shift, shared) = mean_of_models(&parts);
    // The same mean over the models' own-launch guards, when every model has one.
    let guard: Option<Vec<(Shift, f64)>> = per_model.iter().map(|m| m.1.own_launches).collect();
    let guard = guard.filter(|_| guarded).map(|g| mean_of_models(&g));
    let first = &per_model[0].0;
    let mut row = first.clone();
    row.model = ALL_MODELS.into();
    row.change_pct = Some(stats::pct(shift.worse * orientation(first.direction)));
    row.n_baseline = per_model.iter().map(|m| m.0.n_baseline).sum();
    row.n_current = per_model.iter().map(|m| m.0.n_current).sum();
    let launches = |i: usize| {
        per_model
            .iter()
            .map(|m| m.0.launches.map_or(0, |l| l[i]))
            .sum()
    };
    row.launches = Some([launches(0), launches(1)]);
    let n_base = per_model.iter().map(|m| m.1.n_base).sum();
    let n_now = per_model.iter().map(|m| m.1.n_now).sum();
    if let Some(n) = row.noise.as_mut() {
        // The sd of one launch's value is not defined across models: show the combined
        // standard error's equivalent for one launch a side.
        n.sd_pct = shift.se / (2.0f64).sqrt() * 100.0;
        n.df = shift.df;
        n.own_df = per_model
            .iter()
            .map(|m| m.0.noise.map_or(0.0, |n| n.own_df))
            .sum();
        n.outliers = 0;
    }
    let test = Test {
        shift,
        n_base,
        n_now,
        fixed_var: shared,
        paired: false,
        own: None,
        own_fixed_var: 0.0,
        own_launches: guard,
    };
    Some((row, test))
}

/// The plain mean of independent models' tests, each a shift and the part of its se² shared by
/// every model of a session (`fixed`): the launch parts add as Σ (seᵢ² − fᵢ) / M², each on its
/// model's df (Welch–Satterthwaite); the session parts are one offset every model of a session
/// shares, (Σ √fᵢ)² / M², added whole. Returns the mean's shift and its shared part.
fn mean_of_models(parts: &[(Shift, f64)]) -> (Shift, f64) {
    let m = parts.len() as f64;
    let worse = parts.iter().map(|p| p.0.worse).sum::<f64>() / m;
    let v: Vec<f64> = parts
        .iter()
        .map(|(s, f)| (s.se.powi(2) - f) / (m * m))
        .collect();
    let shared = (parts.iter().map(|p| p.1.sqrt()).sum::<f64>() / m).powi(2);
    let vsum: f64 = v.iter().sum();
    let df = if vsum > 0.0 {
        vsum.powi(2)
            / v.iter()
                .zip(parts)
                .map(|(v, p)| v * v / p.0.df)
                .sum::<f64>()
    } else {
        1e9 // no launch variance: the normal reference (finite, so the report's JSON keeps it)
    };
    let shift = Shift {
        worse,
        se: (vsum + shared).sqrt(),
        df,
    };
    (shift, shared)
}

/// The noise priors of a stored check, learnt from every row that both sides measured: per
/// metric, each row's launch spread (both sides) and its sides' session analyses.
pub(crate) fn learn_priors(
    g: &Grouped<'_>,
    errors: &[ScenarioError],
    metrics: &[String],
) -> Priors {
    let mut rows = Vec::new();
    for (b, c) in g.both(errors) {
        for metric in metrics.iter().filter(|m| *m != "success_rate") {
            let (Ok(bl), Ok(cl)) = (Launches::of(b, metric), Launches::of(c, metric)) else {
                continue;
            };
            let (sb, db, _) = bl.spread();
            let (sc, dc, _) = cl.spread();
            let anovas = [bl.session_anova(), cl.session_anova()]
                .into_iter()
                .flatten()
                .collect();
            rows.push((metric.as_str(), (sb + sc, db + dc), anovas));
        }
    }
    Priors::learn(rows)
}
