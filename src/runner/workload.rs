//! The requests of a `perfgate run`: the dataset's prompts, a timed trace's (`--trace`) or
//! ShareGPT's conversations (`--multi-turn`), with LoRA adapters assigned (`--lora-modules`).
//! Notes are printed as they are made.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;

use crate::client::load::Work;
use crate::dataset::{self, DatasetSpec, Prompt};
use crate::tokenizer::Tokenize;
use crate::workload::{conversation, lora, trace};

/// The workload flags of `perfgate run`.
#[derive(Debug, Clone, Default)]
pub struct Workload<'a> {
    /// `--trace` (or `--dataset-name timed_trace`): a timed trace to replay instead of the
    /// dataset, and the seconds per unit of its timestamps.
    pub trace: Option<&'a Path>,
    pub trace_unit_s: f64,
    pub lora_modules: &'a [String],
    pub lora_assignment: lora::LoraAssignment,
    /// `--multi-turn`: play the dataset's conversations turn by turn (at most `max_turns` each).
    pub multi_turn: bool,
    pub max_turns: Option<usize>,
}

/// Build the requests `spec` and `w` describe with `tok`.
pub fn work(spec: &DatasetSpec, tok: &dyn Tokenize, w: &Workload<'_>) -> anyhow::Result<Work> {
    if w.multi_turn {
        let convs = conversations(spec, tok, w)?;
        return Ok(Work::Conversations(Arc::new(convs)));
    }
    let (mut prompts, notes) = match w.trace {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--trace {}", path.display()))?;
            let rows = trace::parse_in(path, &text, w.trace_unit_s).map_err(anyhow::Error::msg)?;
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
    Ok(Work::Prompts(Arc::new(prompts)))
}

/// `--multi-turn`: the conversations of the ShareGPT file, a LoRA adapter per conversation.
fn conversations(
    spec: &DatasetSpec,
    tok: &dyn Tokenize,
    w: &Workload<'_>,
) -> anyhow::Result<Vec<Vec<Prompt>>> {
    anyhow::ensure!(
        spec.name == dataset::DatasetName::Sharegpt,
        "--multi-turn plays ShareGPT conversations: pass --dataset-name sharegpt"
    );
    let path = spec
        .path
        .as_deref()
        .context("--multi-turn needs --dataset-path (a ShareGPT JSON file)")?;
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let all = conversation::parse_sharegpt(path, &text).map_err(anyhow::Error::msg)?;
    let (n, out) = (spec.num_prompts, spec.sharegpt_output_len);
    let (mut convs, note) = conversation::prompts(all, n, w.max_turns, out, tok, spec.seed)
        .with_context(|| format!("--multi-turn {}", path.display()))?;
    eprintln!("perfgate: {note}");
    let mut firsts: Vec<Prompt> = convs.iter().map(|_| Prompt::default()).collect();
    lora::assign(&mut firsts, w.lora_modules, w.lora_assignment, spec.seed);
    for (turns, first) in convs.iter_mut().zip(firsts) {
        for t in turns.iter_mut() {
            t.model.clone_from(&first.model);
        }
    }
    Ok(convs)
}
