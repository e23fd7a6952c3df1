//! The output directory of a live run and what was measured so far: `results.jsonl` (one record
//! per scenario run, written as it is measured), `engine-metrics.jsonl`, `errors.jsonl` and
//! `logs/<model>.log`. Files are written as things happen, so an interrupted run keeps them.
//! The three JSON Lines files are made new by [`crate::atomic::create`]: a symbolic link left in
//! their place is replaced, never followed.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::gate::{ScenarioError, Side};
use crate::record::ScenarioResult;
use crate::suite;

use super::RunnerError;

/// The files of the output directory.
pub struct Output {
    dir: PathBuf,
    results: File,
    /// The SHA-256 of the lines written to `results.jsonl` so far.
    results_sha256: sha2::Sha256,
    engine_metrics: File,
    errors: File,
}

impl Output {
    pub fn create(dir: &Path) -> Result<Output, RunnerError> {
        let io = |path: &Path| {
            let path = path.display().to_string();
            move |source| RunnerError::Output { path, source }
        };
        std::fs::create_dir_all(dir.join("logs")).map_err(io(dir))?;
        let open = |name: &str| {
            crate::atomic::create(&dir.join(name)).map_err(|e| RunnerError::Output {
                path: e.path.clone(),
                source: e.into_io(),
            })
        };
        Ok(Output {
            dir: dir.to_path_buf(),
            results: open("results.jsonl")?,
            results_sha256: Default::default(),
            engine_metrics: open("engine-metrics.jsonl")?,
            errors: open("errors.jsonl")?,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The engine log of a model (every launch of the model appends to it).
    pub fn log_path(&self, model: &str) -> PathBuf {
        self.dir
            .join("logs")
            .join(format!("{}.log", suite::slug(model)))
    }

    /// One line of `engine-metrics.jsonl`.
    pub fn engine_metrics(&mut self, line: &serde_json::Value) {
        let _ = writeln!(self.engine_metrics, "{line}");
    }
}

/// What a live run measured so far.
#[derive(Debug, Default)]
pub struct Measured {
    pub records: Vec<ScenarioResult>,
    /// One per model × scenario that failed (the first reason wins).
    pub errors: Vec<ScenarioError>,
    /// SIGINT (Ctrl-C), SIGTERM or SIGHUP arrived.
    pub interrupted: bool,
    /// The SHA-256 (hex) of the lines written to `results.jsonl` (empty before the first).
    pub results_sha256: String,
}

impl Measured {
    /// Keep a measured record and append it to `results.jsonl`.
    pub fn record(&mut self, out: &mut Output, rec: ScenarioResult) {
        use sha2::Digest;
        let line = serde_json::to_string(&rec).unwrap_or_default() + "\n";
        let _ = out.results.write_all(line.as_bytes());
        out.results_sha256.update(line.as_bytes());
        let digest = out.results_sha256.clone().finalize();
        self.results_sha256 = digest.iter().map(|b| format!("{b:02x}")).collect();
        self.records.push(rec);
    }

    /// The current side of the check: `results.jsonl` in `dir` and the SHA-256 of what was
    /// written to it (a write that failed leaves the file with another digest, which
    /// `baseline promote` then refuses).
    pub fn results_side(&self, dir: &Path) -> Side {
        let mut side = Side::default();
        let sha256 = match self.results_sha256.is_empty() {
            true => crate::text::sha256_hex(b""),
            false => self.results_sha256.clone(),
        };
        side.add_source(dir.join("results.jsonl").display().to_string(), sha256);
        side
    }

    /// Record a failure (one error per model × scenario; the first reason wins) and log it.
    pub fn fail(
        &mut self,
        out: &mut Output,
        model: &str,
        scenario: &str,
        run: Option<u32>,
        msg: &str,
    ) {
        let line = serde_json::json!({
            "model": model, "scenario": scenario, "run_index": run, "message": msg,
        });
        let _ = writeln!(out.errors, "{line}");
        if !self
            .errors
            .iter()
            .any(|e| e.model == model && e.scenario == scenario)
        {
            self.errors.push(ScenarioError {
                model: model.to_string(),
                scenario: scenario.to_string(),
                message: msg.to_string(),
            });
        }
    }
}
