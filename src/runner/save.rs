//! What a live run leaves besides its records: `--save-baseline` (the suite file with the
//! measured runs) and the interrupt that Ctrl-C raises.

use tokio::sync::watch;

use super::Runner;
use crate::baseline::{Baseline, BaselineError, Provenance};

impl Runner {
    /// `--save-baseline`: the suite `file` (its planned models, without numbers) with the measured
    /// runs recorded by [`Baseline::from_records`], exactly as `perfgate baseline record
    /// --runs-from` would. `source` names the file in the provenance. Returns the notes too.
    pub fn baseline(
        &self,
        file: &Baseline,
        source: &str,
    ) -> Result<(Baseline, Vec<String>), BaselineError> {
        let provenance = Provenance {
            sources: vec![format!("perfgate check --baseline {source} (live runs)")],
            date: Some(chrono::Utc::now().to_rfc3339()),
            perfgate_version: Some(env!("CARGO_PKG_VERSION").to_string()),
            ..file.provenance.clone()
        };
        let plan = self.plan();
        let skeleton = file.skeleton(|m| plan.models.iter().any(|p| p.name == m));
        let records = &self.measured().records;
        Baseline::from_records(records, file.engine.clone(), provenance, Some(&skeleton))
    }
}

/// A receiver that turns true on Ctrl-C: the runner then stops the engine and keeps what was
/// measured.
pub fn interrupt_on_ctrl_c(rt: &tokio::runtime::Runtime) -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    rt.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("perfgate: interrupted: stopping the engine and keeping what was measured");
            let _ = tx.send(true);
        }
    });
    rx
}
