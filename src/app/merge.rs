//! `perfgate merge`: one report from the per-model reports of matrix jobs (see
//! [`crate::gate::merge`] for what merging means for the statistics).

use std::path::Path;

use super::Exit;
use crate::cli::merge::MergeArgs;
use crate::gate::merge::merge_reports;
use crate::gate::Report;

pub(crate) fn exec(args: MergeArgs) -> anyhow::Result<Exit> {
    let mut inputs = Vec::new();
    for p in &args.reports {
        inputs.push((p.display().to_string(), super::inputs::read_report(p)?));
    }
    let merged = merge_reports(inputs)?;
    write_json(&args.output, &merged)?;
    let c = &merged.counts;
    eprintln!(
        "perfgate: merged {} reports into {}: {:?} ({} regressed, {} inconclusive, {} error, {} pass)",
        args.reports.len(),
        args.output.display(),
        merged.verdict,
        c.regressed,
        c.inconclusive,
        c.error,
        c.pass
    );
    Ok(Exit::Pass)
}

fn write_json(path: &Path, report: &Report) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(report)?;
    Ok(crate::atomic::write(path, text + "\n")?)
}
