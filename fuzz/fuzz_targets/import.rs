//! The importers (format detection, vLLM JSON, SGLang JSONL, LMDeploy CSV, console logs,
//! perfgate JSONL) and the baseline TOML reader: any text imports or fails with an error,
//! never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfgate::import::{import_text, ImportOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let opts = ImportOptions {
        model: Some("m".into()),
        num_prompts: Some(10),
        ..Default::default()
    };
    let _ = import_text(text, "f.json", &opts);
    let _ = import_text(text, "f.csv", &opts);
    let _ = perfgate::record::parse_jsonl(text, "r.jsonl");
    let _ = perfgate::baseline::Baseline::parse(text, "b.toml");
});
