//! The plan file (`perfgate plan --save plan.toml`) that `check --plan` and `ab --plan` read,
//! and the plan's errors.

use serde::{Deserialize, Serialize};

/// Why a plan cannot be made or read.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("{path}:{line}: {msg}")]
    Input {
        path: String,
        line: usize,
        msg: String,
    },
    #[error(
        "model {0}: no launch start-up cost: pass --startup-s SECONDS or --launches-tsv FILE \
         (a launch's wall time in the corpora's launches.tsv format)"
    )]
    NoStartup(String),
    #[error("no row of the records has a metric the gate tests")]
    NoRows,
}

/// A design to run: launches (for `ab`: launches of each arm, i.e. pairs) and runs per launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlannedDesign {
    pub launches: u32,
    pub runs_per_launch: u32,
}

/// What `check --plan` and `ab --plan` take from a plan.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<PlannedDesign>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ab: Option<PlannedDesign>,
}

impl PlanFile {
    /// Read a plan file's text; errors name the file, line and column.
    pub fn parse(text: &str, path: &str) -> Result<PlanFile, PlanError> {
        let f: PlanFile = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| {
                text[..s.start.min(text.len())].lines().count().max(1)
            });
            PlanError::Input {
                path: path.to_string(),
                line,
                msg: e.message().to_string(),
            }
        })?;
        for (name, d) in [("check", f.check), ("ab", f.ab)] {
            if let Some(d) = d {
                if !(1..=100).contains(&d.launches) || !(1..=100).contains(&d.runs_per_launch) {
                    return Err(PlanError::Input {
                        path: path.to_string(),
                        line: 1,
                        msg: format!("[{name}]: launches and runs_per_launch must be 1 to 100"),
                    });
                }
            }
        }
        Ok(f)
    }

    /// The file's text, with a comment line on top.
    pub fn to_toml(&self, comment: &str) -> String {
        let body = toml::to_string(self).expect("a plan file serialises");
        format!("# {comment}\n{body}")
    }

    /// The text `perfgate plan --save` writes for a plan: its suite's designs, and what they
    /// were planned for in a comment.
    pub fn text_of(p: &super::Plan) -> String {
        let why = format!(
            "perfgate plan: a {} % change at alpha {} with power {}",
            p.delta_pct, p.alpha, p.power
        );
        PlanFile::of(p).to_toml(&why)
    }
}

impl PlanFile {
    /// The suite's designs of a plan.
    pub fn of(p: &super::Plan) -> PlanFile {
        let d = |c: &super::Choice| PlannedDesign {
            launches: c.launches,
            runs_per_launch: c.runs_per_launch,
        };
        PlanFile {
            check: p.check.as_ref().map(|x| d(&x.choice)),
            ab: p.ab.as_ref().map(|x| d(&x.choice)),
        }
    }
}
