use super::*;
use crate::baseline::Baseline;
use crate::history;
use crate::report::sample;

/// The page's structure for snapshots: every chart's SVG body folded into one line naming its
/// element counts, the stylesheet elided, the version replaced. (The generated time is fixed by the tests.)
pub(crate) fn structure(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(i) = rest.find("<svg") {
        out.push_str(&rest[..i]);
        let end = rest[i..].find("</svg>").expect("closed svg") + i + "</svg>".len();
        let svg = &rest[i..end];
        let count = |tag: &str| svg.matches(tag).count();
        out.push_str(&format!(
            "<svg rects={} paths={} circles={} texts={}/>",
            count("<rect"),
            count("<polyline") + count("<path"),
            count("<circle"),
            count("<text")
        ));
        rest = &rest[end..];
    }
    out.push_str(rest);
    // The stylesheet is not structure.
    if let (Some(a), Some(b)) = (out.find("<style>"), out.find("</style>")) {
        out.replace_range(a + "<style>".len()..b, "…");
    }
    out.replace(env!("CARGO_PKG_VERSION"), "VERSION")
}

/// No external resource: no src/href to a URL, no CSS import, no fetch.
pub(crate) fn assert_self_contained(html: &str) {
    for bad in [
        "src=\"http",
        "href=\"http",
        "@import",
        "url(http",
        "fetch(",
        "<link",
        "<iframe",
    ] {
        assert!(!html.contains(bad), "the page references `{bad}`");
    }
}

fn check_page() -> String {
    let report = sample::report();
    let base: Vec<ScenarioResult> = vec![
        sample::record("org/model-a", 100, 1.0, 1.0),
        sample::record("org/model-a", 100, 1.02, 0.98),
        sample::record("org/model-a", 200, 1.0, 1.0),
        sample::record("org/model-b", 100, 1.0, 1.0),
        sample::record("org/model-b", 200, 1.0, 1.0),
    ];
    let cur = vec![
        sample::record("org/model-a", 100, 1.01, 0.99),
        sample::record("org/model-b", 100, 1.0, 1.0),
        sample::record("org/model-b", 200, 0.8, 1.25),
    ];
    let engine = parse_engine_metrics(
        concat!(
            r#"{"model":"org/model-b","scenario":"random-in1024-out128-n200","run_index":0,"engine":{"scrapes":12,"namespace":"vllm","kv_cache_usage_max":0.82,"kv_cache_usage_mean":0.5,"running_max":64,"waiting_max":3,"preemptions":2,"sources":{"a":"b"},"future_field":[1]}}"#,
            "\n\n",
            r#"{"model":"org/model-b","scenario":"random-in1024-out128-n200","run_index":1,"engine":{"scrapes":12,"kv_cache_usage_max":0.9,"kv_cache_usage_mean":0.6,"preemptions":1}}"#,
            "\n"
        ),
        "engine-metrics.jsonl",
    )
    .unwrap();
    let page = Page {
        title: "perfgate check".into(),
        report: Some(&report),
        sides: vec![
            Dataset {
                label: "baseline: vllm v0.10.1".into(),
                provenance: records_provenance(&base, &["base.toml".into()]),
                records: base,
                engine_runs: Vec::new(),
            },
            Dataset {
                label: "current".into(),
                provenance: records_provenance(&cur, &["cur.jsonl".into()]),
                records: cur,
                engine_runs: engine,
            },
        ],
        generated: "2025-01-01 00:00 UTC".into(),
    };
    render(&page).unwrap()
}

#[test]
fn check_page_structure() {
    let html = check_page();
    assert_self_contained(&html);
    // Per model: a throughput chart and the latency charts the records have (TTFT p50/p99,
    // TPOT p50/p99, ITL p50, E2E p50 is absent: only the mean is recorded).
    assert_eq!(html.matches("<svg").count(), 2 * 4, "{}", structure(&html));
    assert!(html.contains("Time to first token (TTFT) — p50 / p99"));
    assert!(html.contains("Inter-token latency (ITL) — p50"));
    assert!(!html.contains("End-to-end latency"));
    // The regressed row of model B, its filter, and the engine table with the summed preemptions.
    assert!(html.contains("<tr class=\"t-regressed\">"));
    assert!(html.contains("data-filter=\"inconclusive\""));
    assert!(html.contains("<td>3</td>"), "preemptions 2 + 1");
    assert!(
        html.contains("<td>90.0%</td>"),
        "KV cache max over the runs"
    );
    insta::assert_snapshot!(structure(&html));
}

#[test]
fn a_check_page_says_the_machines_differ() {
    let mut report = sample::report();
    let page = |report: &Report| {
        render(&Page {
            title: "perfgate check".into(),
            report: Some(report),
            sides: Vec::new(),
            generated: "g".into(),
        })
        .unwrap()
    };
    assert!(!page(&report).contains("class=\"warning\""));
    report.baseline.calibration_ms = Some(9.93);
    report.current.calibration_ms = Some(4.63);
    let html = page(&report);
    let note = crate::gate::machine_note(&report).unwrap();
    assert!(note.contains("2.1× faster"), "{note}");
    let escaped = note.replace('\'', "&#x27;");
    assert!(
        html.contains(&format!("<p class=\"warning\">Warning: {escaped}</p>")),
        "{}",
        structure(&html)
    );
}

#[test]
fn template_escapes_text() {
    let mut rec = sample::record("<script>alert(1)</script>", 100, 1.0, 1.0);
    rec.engine = Some("a&b".into());
    let page = Page {
        title: "t".into(),
        report: None,
        sides: vec![Dataset {
            label: "x".into(),
            provenance: records_provenance(std::slice::from_ref(&rec), &[]),
            records: vec![rec],
            engine_runs: Vec::new(),
        }],
        generated: "g".into(),
    };
    let html = render(&page).unwrap();
    assert!(!html.contains("<script>alert(1)"));
    assert!(html.contains("&lt;script&gt;alert(1)"));
    assert!(html.contains("a&amp;b"));
}

fn seed(path: &str) -> (String, Baseline) {
    let p = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    (
        path.to_string(),
        Baseline::load(std::path::Path::new(&p)).unwrap(),
    )
}

#[test]
fn compare_page_of_the_seeds() {
    let sides: Vec<Dataset> = [
        "baselines/v0.10.1.toml",
        "baselines/sglang-v0.5.1.toml",
        "baselines/lmdeploy-v0.10.0.toml",
    ]
    .iter()
    .map(|p| {
        let (path, b) = seed(p);
        Dataset {
            label: format!(
                "{} {}",
                b.engine.name,
                b.engine.version.clone().unwrap_or_default()
            ),
            provenance: baseline_provenance(&b, &path),
            records: b.to_records(),
            engine_runs: Vec::new(),
        }
    })
    .collect();
    let page = Page {
        title: "perfgate compare".into(),
        report: None,
        sides,
        generated: "2025-01-01 00:00 UTC".into(),
    };
    let html = render(&page).unwrap();
    assert_self_contained(&html);
    // Ten models (LMDeploy's four FP8 Qwen3 models differ from the others' unquantized ones)
    // × (throughput + TTFT + TPOT + ITL + E2E).
    assert_eq!(html.matches("<section class=\"model\"").count(), 10);
    assert_eq!(html.matches("<svg").count(), 10 * 5);
    assert!(html.contains("Δ vs vllm v0.10.1"));
    insta::assert_snapshot!(structure(&html));
}

#[test]
fn history_page() {
    let bs: Vec<(String, Baseline)> = (0..8)
        .map(|i| {
            let thr = 1000.0 * [1.0, 1.01, 0.99, 1.005, 0.8, 0.81, 0.795, 0.802][i];
            (
                format!("b{i}.toml"),
                sample::baseline(&format!("v0.{i}.0"), None, &[thr]),
            )
        })
        .collect();
    let h = history::build(&bs, &[], &crate::gate::GateConfig::default(), 3).unwrap();
    let html = render_history(&h, "perfgate history", "2025-01-01 00:00 UTC").unwrap();
    assert_self_contained(&html);
    assert!(html.contains("#5 vllm v0.4.0"), "{}", structure(&html));
    assert!(!html.contains("class=\"warning\""));
    insta::assert_snapshot!(structure(&html));

    // The same releases, v0.4.0 and on measured beside an H200 instead of an H100.
    let gpu = |name: &str| {
        let mut p = perfgate_record::telemetry::Platform::default();
        assert!(p.add_gpus(&format!("{name}, 550.54.15\n")));
        p
    };
    let moved: Vec<(String, Baseline)> = bs
        .into_iter()
        .enumerate()
        .map(|(i, (path, mut b))| {
            let p = gpu(if i >= 4 {
                "NVIDIA H200"
            } else {
                "NVIDIA H100 80GB HBM3"
            });
            for run in b
                .models
                .iter_mut()
                .flat_map(|m| &mut m.scenarios)
                .flat_map(|s| &mut s.runs)
            {
                run.platform = Some(p.clone());
            }
            (path, b)
        })
        .collect();
    let h = history::build(&moved, &[], &crate::gate::GateConfig::default(), 3).unwrap();
    let html = render_history(&h, "perfgate history", "g").unwrap();
    assert!(
        html.contains(
            "<p class=\"warning\">Warning: the machines differ at #5 (vllm v0.4.0): #5&#x27;s runs \
             measured on another platform than #4&#x27;s (GPUs 1 × NVIDIA H100 80GB HBM3 → 1 × \
             NVIDIA H200); a step there can be the machine&#x27;s</p>"
        ),
        "{}",
        structure(&html)
    );
    assert!(
        html.contains("<td>worse; the machines differ here</td>"),
        "{}",
        structure(&html)
    );
}
