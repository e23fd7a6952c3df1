//! A bisect's state in its output folder (`bisect-state.json`): the arguments that define the
//! search and every finished step (request, verdict, evidence, cost), rewritten atomically after
//! each step. A restarted bisect with the same folder and arguments replays the search and takes
//! the finished steps from the file instead of measuring them again; other arguments against the
//! same folder are refused, naming what differs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::search::{Comparator, Comparison, Request, Step};
use super::BisectError;

pub const STATE_FILE: &str = "bisect-state.json";

/// The arguments that define a search, as `name → value` (what a resume must match).
pub type Identity = BTreeMap<String, String>;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StateFile {
    schema_version: u32,
    arguments: Identity,
    steps: Vec<Step>,
}

/// A 64-bit FNV-1a digest, hex: enough to notice that a file changed.
pub fn digest(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The finished steps saved in `dir` for these arguments (none for a new folder). A folder
/// holding another search is an error that names the arguments that differ.
pub fn load(dir: &Path, id: &Identity) -> Result<Vec<Step>, BisectError> {
    let path = dir.join(STATE_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(BisectError::Usage(format!(
                "cannot read {}: {e}",
                path.display()
            )))
        }
    };
    let file: StateFile = serde_json::from_str(&text)
        .map_err(|e| BisectError::Usage(format!("{}: not a bisect state: {e}", path.display())))?;
    let mut diff = Vec::new();
    for key in file.arguments.keys().chain(id.keys()) {
        let (a, b) = (file.arguments.get(key), id.get(key));
        if a != b
            && !diff
                .iter()
                .any(|d: &String| d.starts_with(&format!("{key}:")))
        {
            let show = |v: Option<&String>| v.map_or("(none)".to_string(), |s| s.clone());
            diff.push(format!("{key}: saved {}, now {}", show(a), show(b)));
        }
    }
    if !diff.is_empty() {
        return Err(BisectError::Usage(format!(
            "{} holds a bisect with other arguments ({}); pass the same arguments to resume it, \
             or another --output-dir",
            dir.display(),
            diff.join("; ")
        )));
    }
    Ok(file.steps)
}

/// Write the finished steps (atomically).
pub fn save(dir: &Path, id: &Identity, steps: &[Step]) -> Result<(), BisectError> {
    let file = StateFile {
        schema_version: 1,
        arguments: id.clone(),
        steps: steps.to_vec(),
    };
    let text = serde_json::to_string_pretty(&file).expect("the state serializes");
    crate::atomic::write(&dir.join(STATE_FILE), text + "\n")
        .map_err(|e| BisectError::Infra(e.to_string()))
}

/// A comparator that answers from the saved steps while the search asks what they asked, and
/// otherwise measures with `inner` and saves every finished step before the next one starts.
pub struct Resume<'a> {
    inner: &'a mut dyn Comparator,
    dir: PathBuf,
    id: Identity,
    saved: Vec<Step>,
    /// Every finished step so far (loaded or measured), in order.
    pub done: Vec<Step>,
    /// Steps answered from the file.
    pub reused: usize,
    /// A save that failed (the search is stopped by it).
    pub error: Option<String>,
}

impl<'a> Resume<'a> {
    pub fn new(inner: &'a mut dyn Comparator, dir: &Path, id: Identity, saved: Vec<Step>) -> Self {
        Resume {
            inner,
            dir: dir.to_path_buf(),
            id,
            saved,
            done: Vec::new(),
            reused: 0,
            error: None,
        }
    }
}

impl Comparator for Resume<'_> {
    fn compare(&mut self, req: &Request) -> Comparison {
        let k = req.step - 1;
        if let Some(s) = self.saved.get(k) {
            if s.request.base == req.base && s.request.cand == req.cand {
                eprintln!(
                    "perfgate: bisect step {}: loaded from {} ({}), not measured again",
                    req.step,
                    STATE_FILE,
                    s.result.verdict.word()
                );
                self.reused += 1;
                self.done.push(s.clone());
                return s.result.clone();
            }
            eprintln!(
                "perfgate: warning: the saved step {} compared other revisions: it and later saved \
                 steps are measured again",
                req.step
            );
            self.saved.truncate(k);
        }
        let result = self.inner.compare(req);
        if result.stop.is_none() {
            self.done.push(Step {
                request: *req,
                result: result.clone(),
            });
            if let Err(e) = save(&self.dir, &self.id, &self.done) {
                self.error = Some(e.to_string());
                let mut r = result;
                r.stop = Some(e.to_string());
                return r;
            }
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::super::search::{self, Budget, Verdict};
    use super::*;

    struct Counting {
        at: usize,
        calls: usize,
        stop_at_call: Option<usize>,
    }

    impl Comparator for Counting {
        fn compare(&mut self, req: &Request) -> Comparison {
            self.calls += 1;
            Comparison {
                verdict: if req.base < self.at && req.cand >= self.at {
                    Verdict::Different
                } else {
                    Verdict::Same
                },
                changes: Vec::new(),
                pairs: 2,
                engine_minutes: 0.5,
                gpu_minutes: 0.5,
                note: String::new(),
                stop: (self.stop_at_call == Some(self.calls)).then(|| "interrupted".into()),
            }
        }
    }

    fn id(good: &str) -> Identity {
        [("good".to_string(), good.to_string())].into()
    }

    #[test]
    fn a_restarted_search_reloads_its_finished_steps_and_measures_only_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let b = Budget {
            n: 16,
            alpha: 0.05,
            equivalence_alpha: 0.05,
            margin: 2,
        };
        // First attempt: stopped (interrupted) during its 4th step.
        let mut inner = Counting {
            at: 11,
            calls: 0,
            stop_at_call: Some(4),
        };
        let saved = load(dir.path(), &id("r0")).unwrap();
        let mut r = Resume::new(&mut inner, dir.path(), id("r0"), saved);
        let s = search::run(b, &mut r);
        assert!(matches!(s.end, search::End::Stopped(_)));
        assert_eq!(r.done.len(), 3);
        // Second attempt: the 3 finished steps come from the file.
        let mut inner = Counting {
            at: 11,
            calls: 0,
            stop_at_call: None,
        };
        let saved = load(dir.path(), &id("r0")).unwrap();
        assert_eq!(saved.len(), 3);
        let mut r = Resume::new(&mut inner, dir.path(), id("r0"), saved);
        let s = search::run(b, &mut r);
        assert_eq!(r.reused, 3);
        let calls = inner.calls;
        assert_eq!(s.culprits[0].index, 11);
        assert_eq!(calls, s.steps.len() - 3);
        // Other arguments are refused, naming what differs.
        let e = load(dir.path(), &id("r1")).unwrap_err().to_string();
        assert!(e.contains("good: saved r0, now r1"), "{e}");
    }

    #[test]
    fn digests_tell_files_apart() {
        assert_eq!(digest(b""), "cbf29ce484222325");
        assert_ne!(digest(b"a"), digest(b"b"));
    }
}
