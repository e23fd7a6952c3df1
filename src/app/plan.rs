//! `perfgate plan`: records (or a baseline) and costs in, the cheapest designs out.

use super::Exit;
use crate::cli::plan::PlanArgs;
use crate::gate::plan::{self, PlanFile, PlanInputs};

pub(crate) fn exec(a: PlanArgs) -> anyhow::Result<Exit> {
    let (mut recs, cfg, _) = super::inputs::load_baseline(&a.files[0])?;
    for f in &a.files[1..] {
        recs.extend(super::inputs::load_baseline(f)?.0);
    }
    let cfg = super::inputs::gate_config(cfg, a.gate.as_deref())?;
    let mut walls = Vec::new();
    if let Some(p) = &a.launches_tsv {
        walls = plan::launch_seconds(&std::fs::read_to_string(p)?, &p.display().to_string())?;
    }
    let costs = plan::costs_of(&recs, &walls, a.startup_s)?;
    let (question, compare) = (a.question(cfg.alpha()), a.compare());
    let inputs = PlanInputs {
        cfg: &cfg,
        question,
        costs,
        compare,
    };
    let p = plan::plan(&recs, &inputs)?;
    match a.json {
        true => println!("{}", serde_json::to_string_pretty(&p)?),
        false => print!("{}", crate::report::plan::render(&p)),
    }
    if let Some(out) = &a.save {
        crate::atomic::write(out, PlanFile::text_of(&p))?;
    }
    Ok(Exit::Pass)
}
