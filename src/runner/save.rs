//! What a live run leaves besides its records: `--save-baseline` (the suite file with the
//! measured runs) and the interrupt that SIGINT, SIGTERM or SIGHUP raises.

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

/// A receiver that turns true on SIGINT (Ctrl-C), SIGTERM or SIGHUP: the runner then stops the
/// engine's process group (and container), keeps what was measured, and the command writes its
/// reports and exits 3. The handlers stay installed, so a second signal does not kill perfgate
/// half-way through stopping the engine (SIGKILL does; the engine's parent-death signal and
/// reaper then stop it, see `engine::process`).
pub fn interrupt_on_signal(rt: &tokio::runtime::Runtime) -> watch::Receiver<bool> {
    use tokio::signal::unix::{signal, SignalKind};
    let (tx, rx) = watch::channel(false);
    // Installed now, on the caller's thread, so a signal right after this call is caught.
    let _guard = rt.enter();
    let kinds = [
        (SignalKind::interrupt(), "SIGINT"),
        (SignalKind::terminate(), "SIGTERM"),
        (SignalKind::hangup(), "SIGHUP"),
    ];
    for (kind, name) in kinds {
        let Ok(mut sig) = signal(kind) else {
            eprintln!("perfgate: warning: cannot handle {name}");
            continue;
        };
        let tx = tx.clone();
        rt.spawn(async move {
            while sig.recv().await.is_some() {
                if *tx.borrow() {
                    eprintln!("perfgate: {name} again: still stopping the engine");
                } else {
                    eprintln!(
                        "perfgate: {name}: interrupted: stopping the engine and keeping what was measured"
                    );
                    let _ = tx.send(true);
                }
            }
        });
    }
    rx
}
