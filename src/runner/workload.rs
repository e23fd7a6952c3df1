//! The prompts of a `perfgate run`: the dataset's, or a timed trace's (`--trace`), with LoRA
//! adapters assigned (`--lora-modules`). Notes are printed as they are made.

use std::path::Path;

use anyhow::Context;

use crate::dataset::{self, DatasetSpec, Prompt};
use crate::tokenizer::Tokenize;
use crate::workload::{lora, trace};

/// The workload flags of `perfgate run`.
#[derive(Debug, Clone, Default)]
pub struct Workload<'a> {
    /// `--trace`: a timed trace to replay instead of the dataset.
    pub trace: Option<&'a Path>,
    pub lora_modules: &'a [String],
    pub lora_assignment: lora::LoraAssignment,
}

/// Build the prompts `spec` and `w` describe with `tok`.
pub fn prompts(
    spec: &DatasetSpec,
    tok: &dyn Tokenize,
    w: &Workload,
) -> anyhow::Result<Vec<Prompt>> {
    let (mut prompts, notes) = match w.trace {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--trace {}", path.display()))?;
            let rows = trace::parse(path, &text).map_err(anyhow::Error::msg)?;
            trace::prompts(&rows, spec.num_prompts, tok, spec.seed)
                .with_context(|| format!("--trace {}", path.display()))?
        }
        None => {
            let ds = dataset::build(spec, tok)
                .with_context(|| format!("dataset `{}`", spec.name.as_str()))?;
            (ds.prompts, ds.notes)
        }
    };
    for note in &notes {
        eprintln!("perfgate: {note}");
    }
    lora::assign(&mut prompts, w.lora_modules, w.lora_assignment, spec.seed);
    Ok(prompts)
}
