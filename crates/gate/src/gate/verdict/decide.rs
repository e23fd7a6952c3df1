//! The multiple-comparison step: every tested row decided at once (weighted Holm at this
//! look's share of α), with the launches that would likely decide an open row.

use super::Scope;
use crate::gate::config::{GateConfig, MetricRule};
use crate::gate::look::Levels;
use crate::gate::noise::Noise;
use crate::gate::stats::{self, limits, orientation, NotDecidable, Shift};
use crate::gate::{Row, Verdict};
use crate::record::Direction;

/// A row's test, kept until the multiple-comparison step decides every tested row at once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tested {
    /// Index of the row in the report.
    pub(crate) row: usize,
    pub(crate) scope: Scope,
    /// Gated tests decide the top verdict; the others are shown only.
    pub(crate) gated: bool,
    pub(crate) direction: Direction,
    /// The tolerance as an oriented log distance: worse beyond `lim_worse` regresses, better
    /// beyond `lim_better` improves; a `pass` needs the bound of "worse" below `lim_worse`
    /// (an engine-wide test passes within its own, smaller tolerance).
    pub(crate) lim_worse: f64,
    pub(crate) lim_better: f64,
    pub(crate) test: Test,
    /// Regress only when the row's own launches show it too ([`super::Inputs::unconfirmable`]).
    pub(crate) regress_on_own: bool,
}

impl Tested {
    /// Row `index`'s test of `scope` under its metric's `rule`: the one constructor of the
    /// stored, paired and merged checks' tests.
    pub(crate) fn new(index: usize, scope: Scope, rule: &MetricRule, test: Test) -> Tested {
        let (lim_worse, lim_better) = limits(rule.direction, scope.tolerance_pct(rule));
        Tested {
            row: index,
            scope,
            gated: scope != Scope::Scenario || rule.gated,
            direction: rule.direction,
            lim_worse,
            lim_better,
            test,
            regress_on_own: false,
        }
    }
}

/// A report's rows and the tests of those that have one.
#[derive(Debug, Default)]
pub(crate) struct Rows {
    pub(crate) rows: Vec<Row>,
    pub(crate) tested: Vec<Tested>,
}

impl Rows {
    /// Add `row`, with its `test` of `scope` under its metric's `rule` when it has one.
    pub(crate) fn push(&mut self, row: Row, test: Option<Test>, scope: Scope, rule: &MetricRule) {
        if let Some(t) = test {
            self.tested
                .push(Tested::new(self.rows.len(), scope, rule, t));
        }
        self.rows.push(row);
    }

    /// Add a row decided without a test.
    pub(crate) fn shown(&mut self, row: Row) {
        self.rows.push(row);
    }
}

/// A row's test before the multiple-comparison step.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Test {
    pub shift: Shift,
    /// Baseline launches (pairs, when paired), and the candidate's so far.
    pub n_base: usize,
    pub n_now: usize,
    /// The part of se² that more candidate launches cannot shrink (the session term).
    pub fixed_var: f64,
    /// A paired test (`perfgate ab`).
    #[serde(default)]
    pub paired: bool,
    /// The same comparison on the row's own launches alone (no prior), when they have df, with
    /// the row's own between-session variance where it shows more than its metric's: a `pass`
    /// needs its bound below δ too (intersection–union), so a row noisier than its class's prior
    /// cannot pass on the quieter rows' precision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own: Option<Shift>,
    /// The part of the own test's se² that more candidate launches cannot shrink.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub own_fixed_var: f64,
    /// The row's own launch noise with its metric's session term, and that term's part of se²:
    /// what a regression nothing can confirm must clear too ([`super::Inputs::unconfirmable`]).
    /// Used by this decision only, not kept in the report.
    #[serde(skip)]
    pub own_launches: Option<(Shift, f64)>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// Launches a side beyond which "likely decides" is not worth saying.
pub(crate) const NEEDED_CAP: u32 = 50;

/// Which of `tests` are the widest engine-wide tests: over all models when the family has
/// them, else over each model's scenarios.
fn widest(tests: &[&Tested]) -> Vec<bool> {
    let has_all = tests.iter().any(|t| t.scope == Scope::AllModels);
    let widest = if has_all {
        Scope::AllModels
    } else {
        Scope::EngineWide
    };
    tests.iter().map(|t| t.scope == widest).collect()
}

/// Weighted Holm within the gated tests (the widest engine-wide tests share
/// [`GateConfig::engine_wide_share`] of α) and plain Holm within the shown ones; then every tested row's
/// verdict: regressed (worse than δ, significant after Holm at this look's α), improved (the
/// mirror image), pass (the one-sided bound of "worse" below δ, and for a test with [`Test::own`]
/// that bound on the row's own launches too), else inconclusive with the
/// launches that would likely decide it.
pub(crate) fn decide(rows: &mut [Row], tested: &[Tested], cfg: &GateConfig, levels: Levels) {
    for gated in [true, false] {
        let mine: Vec<&Tested> = tested.iter().filter(|t| t.gated == gated).collect();
        // The shown family has no engine-wide tests: its weights are equal.
        let widest = if gated {
            widest(&mine)
        } else {
            vec![false; mine.len()]
        };
        let weights = cfg.holm_weights(&widest);
        let w_min = weights.iter().copied().fold(1.0, f64::min);
        let alpha = levels.look_alpha_at(w_min);
        // A t statistic with few df keeps only part of a look's level (`stats::df_share`):
        // dividing its p-value by that part judges it at its own level within Holm.
        let factor: Vec<f64> = mine
            .iter()
            .map(|t| levels.look_df_factor(levels.alpha() * w_min, t.test.shift.df))
            .collect();
        let moderated: Vec<f64> = mine
            .iter()
            .zip(&factor)
            .map(|(t, f)| (t.test.shift.p_worse_than(t.lim_worse) / f).min(1.0))
            .collect();
        // A regression nothing can confirm must stand on the row's own launches too: the
        // larger of the two p-values (each a valid one for "worse by at most δ", so the larger
        // is). A row with no own test (no replicated launches) cannot regress so.
        let worse: Vec<f64> = mine
            .iter()
            .zip(&moderated)
            .map(|(t, &p)| match (t.regress_on_own, t.test.own_launches) {
                (false, _) => p,
                (true, None) => 1.0,
                (true, Some((o, _))) => {
                    let f = levels.look_df_factor(levels.alpha() * w_min, o.df);
                    p.max((o.p_worse_than(t.lim_worse) / f).min(1.0))
                }
            })
            .collect();
        // What the moderated test alone decides, for the note of a row the guard held back.
        let alone = mine
            .iter()
            .any(|t| t.regress_on_own)
            .then(|| stats::holm_weighted(&moderated, &weights));
        let better: Vec<f64> = mine
            .iter()
            .zip(&factor)
            .map(|(t, f)| (t.test.shift.p_better_than(t.lim_better) / f).min(1.0))
            .collect();
        let (worse, better) = (
            stats::holm_weighted(&worse, &weights),
            stats::holm_weighted(&better, &weights),
        );
        for (k, t) in mine.iter().enumerate() {
            let row = &mut rows[t.row];
            let s = t.test.shift;
            row.test = Some(t.test);
            let sign = orientation(t.direction);
            let alpha_eq = levels.look_equivalence_alpha_df(s.df);
            let (lo, hi) = (s.lower(alpha_eq), s.upper(alpha_eq));
            // The interval of the plain (unoriented) change.
            let (a, b) = if sign > 0.0 { (lo, hi) } else { (-hi, -lo) };
            row.interval = Some([stats::pct(a), stats::pct(b)]);
            row.p_value = Some(worse[k]);
            // Intersection–union: a pass needs the bound on the row's own launches below δ too.
            let own_blocks = hi < t.lim_worse
                && t.test.own.is_some_and(|o| {
                    o.upper(levels.look_equivalence_alpha_df(o.df)) >= t.lim_worse
                });
            row.verdict = if worse[k] < alpha {
                Verdict::Regressed
            } else if better[k] < alpha {
                Verdict::Improved
            } else if hi < t.lim_worse && !own_blocks {
                Verdict::Pass
            } else {
                Verdict::Inconclusive
            };
            let noise = row.noise.expect("a tested row has its noise");
            let mut note = noise.describe();
            let held_back = alone
                .as_ref()
                .is_some_and(|a| t.regress_on_own && a[k] < alpha);
            if held_back && row.verdict != Verdict::Regressed {
                note.push_str(
                    "; worse than δ on its metric's noise but not on its own launches' (a \
                     regression that nothing can confirm must show on both)",
                );
            }
            if own_blocks && row.verdict == Verdict::Inconclusive {
                note.push_str(
                    "; within δ on its metric's noise, not yet on its own launches' (noisier than \
                     its class's other rows, between launches or between sessions)",
                );
            }
            if row.verdict == Verdict::Inconclusive {
                // The nearer question decides first: pass (the bound below δ, at the
                // equivalence level) or regress (at this row's first Holm level, α · wᵢ).
                let (lim, level) = if s.worse < t.lim_worse {
                    (t.lim_worse, alpha_eq)
                } else {
                    (t.lim_worse, alpha * weights[k] * factor[k])
                };
                let needed = needed(t, &noise, lim, level, levels);
                row.launches_needed = needed.ok();
                // The machine term names the bound when it is the larger part of it.
                let v = noise.sd() * noise.sd();
                let machine = noise.session.and_then(|s| {
                    s.machine
                        .filter(|m| m.var > 0.0 && m.var >= s.ratio * v * s.factor)
                });
                note.push_str(&needed_words(needed, t.test.paired, machine));
            }
            row.note = Some(note);
        }
    }
}

/// The candidate launches (or pairs, in all) that would likely decide an open test: at `level`
/// against `lim`.
fn needed(
    t: &Tested,
    noise: &Noise,
    lim: f64,
    level: f64,
    levels: Levels,
) -> Result<u32, NotDecidable> {
    let s = t.test.shift;
    if t.test.paired {
        // At least one more pair than it has: these pairs did not decide it.
        // The cap reaches past twice the planned pairs, so that "more than the cap"
        // means out of reach for the futility stop (`paired::stop`).
        let cap = levels
            .look
            .map_or(NEEDED_CAP, |l| NEEDED_CAP.max(2 * l.of + 1));
        let now = t.test.n_base as u32;
        stats::pairs_needed(s.worse, lim, noise.sd(), noise.df, now, level, cap)
            .map(|n| n.max(now + 1))
    } else {
        let design = |sd: f64, df: f64, fixed_var: f64| stats::Design {
            worse: s.worse,
            lim,
            sd,
            n_base: t.test.n_base,
            n_now: t.test.n_now,
            fixed_var,
            df,
        };
        // At least one more launch than it has, as with pairs: a row these launches left open
        // (a regression held back for want of confirmation among them) is not decided by them.
        let now = t.test.n_now as u32;
        let moderated = stats::launches_needed(
            &design(noise.sd(), noise.df, t.test.fixed_var),
            level,
            NEEDED_CAP,
        )
        .map(|n| n.max(now + 1));
        // A pass needs the bound on the row's own launches too: as many launches as both
        // bounds need (the own one's sd recovered from its se² without the session part).
        let Some(own) = t.test.own.filter(|_| lim == t.lim_worse && s.worse < lim) else {
            return moderated;
        };
        let per_launch = 1.0 / t.test.n_base as f64 + 1.0 / t.test.n_now as f64;
        let own_sd = ((own.se * own.se - t.test.own_fixed_var).max(0.0) / per_launch).sqrt();
        let own_level = levels.look_equivalence_alpha_df(own.df);
        let mine = stats::launches_needed(
            &design(own_sd, own.df, t.test.own_fixed_var),
            own_level,
            NEEDED_CAP,
        );
        match (moderated, mine) {
            (Ok(a), Ok(b)) => Ok(a.max(b)),
            (Err(e), _) | (Ok(_), Err(e)) => Err(e),
        }
    }
}

/// What an open test's note adds: what would likely decide it. `machine`: the row's machine
/// term, when the sides' calibration loops moved (then no launches of these machines decide
/// it either, and the note says why).
fn needed_words(
    needed: Result<u32, NotDecidable>,
    paired: bool,
    machine: Option<crate::gate::noise::loops::MachineTerm>,
) -> String {
    match needed {
        Ok(n) if paired => format!("; likely decided with {n} pair(s) in all"),
        Ok(n) => format!("; likely decided with {n} candidate launch(es)"),
        Err(NotDecidable::SessionBound) => match machine {
            Some(m) => format!(
                "; the machines' speed bounds it (perfgate's {} {:+.1} % from the baseline's \
                 runs to the candidate's): record both on one steady runner or compare in \
                 pairs (`perfgate ab`)",
                m.probe.label(),
                m.loop_shift_pct
            ),
            None => "; the between-session offset bounds it: record the baseline over ≥ 2 \
                sessions (`perfgate baseline calibrate`) or compare in pairs (`perfgate ab`)"
                .to_string(),
        },
        Err(NotDecidable::BaselineTooShort) => {
            "; needs more baseline launches to decide".to_string()
        }
        Err(NotDecidable::MoreThan(n)) if paired => {
            format!("; would likely need more than {n} pairs")
        }
        Err(NotDecidable::MoreThan(n)) => {
            format!("; would likely need more than {n} candidate launches")
        }
    }
}
