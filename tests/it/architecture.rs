//! The dependency rules stated in `src/lib.rs` and `ARCHITECTURE.md`, checked on the source
//! itself: every module of `src/` has a layer (core, edge, orchestration, front), and a module
//! imports only modules of its own layer or below; core modules never name an edge crate (tokio,
//! reqwest, hyper, nix, clap, …); clap lives in the front layer (one counted exception); the
//! top-level modules import each other without a circle, and so do the files inside each folder;
//! `ARCHITECTURE.md`'s code map names every module with its layer; no `too_many_arguments`
//! allowance.
//!
//! How it reads the source: comments and `#[cfg(test)]` modules (inline, or a folder's
//! `tests.rs`) are dropped; every `crate::a::b…` path (with `{…}` groups expanded) and every
//! `super::x` is an edge from the file to the module it names. A parent's `mod.rs` and its own files are one module's inside, so edges
//! between a folder's `mod.rs` and its files are not counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Pure: no processes, no network, no terminal, no flags. Imports only core modules.
const CORE: [&str; 16] = [
    "text",
    "telemetry",
    "redact",
    "record",
    "export",
    "workload",
    "launch",
    "suite",
    "dataset",
    "tokenizer",
    "metrics",
    "baseline",
    "import",
    "gate",
    "history",
    "report",
];
/// The outside world: the measuring HTTP client, engine processes, GitHub, the fake engine, the
/// file system's atomic writes. Imports core modules and other edges.
const EDGE: [&str; 6] = [
    "client",
    "engine",
    "monitor",
    "github",
    "fakeserver",
    "atomic",
];
/// Wires edges into a run: the live suite runner and the bisection over revisions.
const ORCHESTRATION: [&str; 2] = ["runner", "bisect"];
/// The command line: the flags (`cli`) and what each command does with them (`app`).
const FRONT: [&str; 2] = ["app", "cli"];

/// The layer of a top-level module (0 core, 1 edge, 2 orchestration, 3 front), or `None` for a
/// module no list names.
fn layer(module: &str) -> Option<usize> {
    [&CORE[..], &EDGE[..], &ORCHESTRATION[..], &FRONT[..]]
        .iter()
        .position(|l| l.contains(&module))
}

const LAYER_NAMES: [&str; 4] = ["core", "edge", "orchestration", "front"];

/// Crates a core module never names.
const EDGE_CRATES: [&str; 16] = [
    "tokio",
    "reqwest",
    "octocrab",
    "hyper",
    "hyper_util",
    "http",
    "httparse",
    "futures_util",
    "socket2",
    "nix",
    "libc",
    "prometheus_parse",
    "indicatif",
    "clap",
    "clap_complete",
    "clap_mangen",
];

/// The flag parser's crates: only the front layer names them.
const CLAP_CRATES: [&str; 3] = ["clap", "clap_complete", "clap_mangen"];

/// The one module outside the front layer that names clap, and how many times: `record`
/// derives `clap::ValueEnum` for the three enums the flags take as values (`RangeConvention`,
/// `RampUpStrategy`, `DatasetName`). Known debt (issue 26): a new use anywhere, or a fourth one
/// here, fails the test.
const CLAP_ALLOWED: [(&str, usize); 1] = [("record", 3)];

/// A source file: its folder path under `src/` (`["runner"]`) and its own name (`"launch"`, or
/// `"mod"` for a folder's `mod.rs`).
struct File {
    path: PathBuf,
    folder: Vec<String>,
    name: String,
    code: String,
}

fn files(dir: &Path, folder: &[String], out: &mut Vec<File>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let stem = p.file_stem().unwrap().to_str().unwrap().to_string();
        if p.is_dir() {
            if stem == "snapshots" {
                continue;
            }
            let mut f = folder.to_vec();
            f.push(stem);
            files(&p, &f, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            // A folder's `tests.rs` is its `#[cfg(test)] mod tests;`: dropped like one inline.
            if (folder.is_empty() && (stem == "lib" || stem == "main")) || stem == "tests" {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            out.push(File {
                path: p.clone(),
                folder: folder.to_vec(),
                name: stem,
                code: code_of(&text),
            });
        }
    }
}

/// The text without comments and without `#[cfg(test)]` modules (they close the file here).
fn code_of(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        if t.starts_with("#[cfg(test)]") {
            let next = lines[i + 1..]
                .iter()
                .map(|l| l.trim())
                .find(|l| !l.is_empty());
            if next.is_some_and(|n| n.starts_with("mod ") || n.starts_with("pub(crate) mod ")) {
                break;
            }
        }
        if t.starts_with("//") {
            continue;
        }
        let l = match l.find("// ") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        };
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// Every path after `prefix` (`crate::` or `super::`), groups expanded: `crate::{a, b::c}` gives
/// `[a]` and `[b, c]`.
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = code[from..].find(prefix) {
        let at = from + i;
        from = at + prefix.len();
        let before = code[..at].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let mut chars = code[from..].chars().peekable();
        parse_tree(&mut chars, Vec::new(), &mut out);
    }
    out
}

fn parse_tree(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    head: Vec<String>,
    out: &mut Vec<Vec<String>>,
) {
    while chars.peek().is_some_and(|c| c.is_whitespace()) {
        chars.next();
    }
    if chars.peek() == Some(&'{') {
        chars.next();
        loop {
            parse_tree(chars, head.clone(), out);
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            match chars.next() {
                Some(',') => continue,
                _ => break,
            }
        }
        return;
    }
    let mut ident = String::new();
    while let Some(&c) = chars.peek() {
        if c.is_alphanumeric() || c == '_' {
            ident.push(c);
            chars.next();
        } else {
            break;
        }
    }
    let mut path = head;
    if !ident.is_empty() {
        path.push(ident);
    }
    let rest: String = chars.clone().take(2).collect();
    if rest == "::" {
        chars.next();
        chars.next();
        parse_tree(chars, path, out);
    } else if !path.is_empty() {
        out.push(path);
    }
}

/// The modules a file names, as paths from the crate root.
fn targets(f: &File) -> Vec<Vec<String>> {
    let mut t = paths_after(&f.code, "crate::");
    // `super` of a folder's file is the folder; of a folder's mod.rs, the folder's parent.
    let mut parent = f.folder.clone();
    if f.name == "mod" {
        parent.pop();
    }
    for p in paths_after(&f.code, "super::") {
        let mut full = parent.clone();
        full.extend(p);
        t.push(full);
    }
    t
}

fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            match state.get(m.as_str()).copied().unwrap_or(0) {
                1 => {
                    let i = stack.iter().position(|s| s == m).unwrap();
                    let mut c = stack[i..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(m, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

fn source() -> Vec<File> {
    let mut out = Vec::new();
    files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &[],
        &mut out,
    );
    assert!(out.len() > 40, "read only {} files", out.len());
    out
}

fn top(f: &File) -> String {
    f.folder.first().cloned().unwrap_or_else(|| f.name.clone())
}

/// How many times `code` names the crate `krate` as a path root (`krate::…`).
fn names_crate(code: &str, krate: &str) -> usize {
    let word = format!("{krate}::");
    code.match_indices(&word)
        .filter(|(i, _)| {
            !code[..*i]
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
        })
        .count()
}

/// The top-level modules `src/lib.rs` declares (`pub mod x;`, `mod x;`).
fn declared_modules() -> BTreeSet<String> {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    lib.lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l
                .strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("mod "))?;
            Some(rest.trim_end_matches(';').trim().to_string())
        })
        .collect()
}

#[test]
fn every_module_has_exactly_one_layer() {
    let all: Vec<&str> = CORE
        .iter()
        .chain(&EDGE)
        .chain(&ORCHESTRATION)
        .chain(&FRONT)
        .copied()
        .collect();
    let listed: BTreeSet<String> = all.iter().map(|m| m.to_string()).collect();
    assert_eq!(
        listed.len(),
        all.len(),
        "a module is in two layers: {all:?}"
    );
    let on_disk: BTreeSet<String> = source().iter().map(top).collect();
    let declared = declared_modules();
    assert!(
        declared.len() >= 20,
        "read only {declared:?} from src/lib.rs"
    );
    let unlisted: Vec<_> = on_disk
        .union(&declared)
        .filter(|m| !listed.contains(*m))
        .collect();
    assert!(
        unlisted.is_empty(),
        "modules with no layer in tests/it/architecture.rs (add each to CORE, EDGE, \
         ORCHESTRATION or FRONT, and to ARCHITECTURE.md): {unlisted:?}"
    );
    let stale: Vec<_> = listed.iter().filter(|m| !declared.contains(*m)).collect();
    assert!(
        stale.is_empty(),
        "layers name modules src/lib.rs does not declare: {stale:?}"
    );
}

#[test]
fn modules_import_only_their_own_layer_or_below() {
    let mut bad = Vec::new();
    let mut edges = 0;
    for f in source() {
        let me = top(&f);
        let Some(mine) = layer(&me) else { continue };
        for t in targets(&f) {
            if t[0] == me {
                continue;
            }
            let Some(theirs) = layer(&t[0]) else { continue };
            edges += 1;
            if theirs > mine {
                bad.push(format!(
                    "{} ({}) imports crate::{} ({})",
                    f.path.display(),
                    LAYER_NAMES[mine],
                    t.join("::"),
                    LAYER_NAMES[theirs]
                ));
            }
        }
    }
    assert!(
        edges > 100,
        "only {edges} edges found: the reader is broken"
    );
    assert!(bad.is_empty(), "imports up the layers:\n{}", bad.join("\n"));
}

#[test]
fn core_modules_never_name_an_edge_crate() {
    let mut bad = Vec::new();
    for f in source().iter().filter(|f| layer(&top(f)) == Some(0)) {
        for krate in EDGE_CRATES.iter().filter(|k| !CLAP_CRATES.contains(k)) {
            if names_crate(&f.code, krate) > 0 {
                bad.push(format!("{} names `{krate}`", f.path.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "core modules reaching the edges:\n{}",
        bad.join("\n")
    );
}

#[test]
fn only_the_front_layer_names_clap() {
    let mut uses: BTreeMap<String, usize> = BTreeMap::new();
    for f in source().iter().filter(|f| layer(&top(f)) != Some(3)) {
        let n: usize = CLAP_CRATES.iter().map(|k| names_crate(&f.code, k)).sum();
        if n > 0 {
            *uses.entry(top(f)).or_default() += n;
        }
    }
    let allowed: BTreeMap<String, usize> = CLAP_ALLOWED
        .iter()
        .map(|(m, n)| (m.to_string(), *n))
        .collect();
    assert_eq!(
        uses, allowed,
        "clap named outside src/app and src/cli (module: uses); only the counted exception in \
         CLAP_ALLOWED may, and when it goes, CLAP_ALLOWED goes with it"
    );
    // The rule bites: the counter sees a derive and a `use`, not a word inside another path.
    let code = "#[derive(clap::ValueEnum)]\nuse clap::Parser;\nlet x = my_clap::y; a::clap::b;";
    assert_eq!(names_crate(code, "clap"), 2);
}

/// `ARCHITECTURE.md`'s code map: every `` ### `module` (layer) `` heading.
fn architecture_md_layers() -> BTreeMap<String, String> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md"))
            .unwrap();
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("### `")?;
            let (name, rest) = rest.split_once('`')?;
            let layer = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
            Some((name.to_string(), layer.to_string()))
        })
        .collect()
}

#[test]
fn architecture_md_maps_every_module_to_its_layer() {
    let want: BTreeMap<String, String> = [&CORE[..], &EDGE[..], &ORCHESTRATION[..], &FRONT[..]]
        .iter()
        .enumerate()
        .flat_map(|(i, l)| {
            l.iter()
                .map(move |m| (m.to_string(), LAYER_NAMES[i].to_string()))
        })
        .collect();
    assert_eq!(
        architecture_md_layers(),
        want,
        "ARCHITECTURE.md's code map (### `module` (layer)) and the layers of this test differ"
    );
}

#[test]
fn no_import_circle_between_modules_or_between_the_files_of_a_folder() {
    let src = source();
    let known: BTreeSet<Vec<String>> = src
        .iter()
        .map(|f| {
            let mut p = f.folder.clone();
            if f.name != "mod" {
                p.push(f.name.clone());
            }
            p
        })
        .collect();
    let mut tops: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut inner: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut edges = 0;
    for f in &src {
        let me = top(f);
        tops.entry(me.clone()).or_default();
        for t in targets(f) {
            if t[0] != me {
                if known.iter().any(|k| k.len() == 1 && k[0] == t[0]) {
                    tops.entry(me.clone()).or_default().insert(t[0].clone());
                    edges += 1;
                }
                continue;
            }
            // Inside one folder: between its files (not its mod.rs), at any depth.
            if f.name == "mod" || f.folder.is_empty() {
                continue;
            }
            let mut own = f.folder.clone();
            own.push(f.name.clone());
            let depth = f.folder.len();
            if t.len() > depth && t[..depth] == f.folder[..] {
                let sib = t[..=depth].to_vec();
                if sib != own && known.contains(&sib) {
                    inner
                        .entry(own.join("::"))
                        .or_default()
                        .insert(sib.join("::"));
                    edges += 1;
                }
            }
        }
    }
    assert!(
        edges > 100,
        "only {edges} edges found: the reader is broken"
    );
    assert!(tops["suite"].contains("baseline"), "{tops:?}");
    assert!(tops["runner"].contains("client"), "{tops:?}");
    if let Some(c) = cycle(&tops) {
        panic!("an import circle between modules: {}", c.join(" -> "));
    }
    if let Some(c) = cycle(&inner) {
        panic!(
            "an import circle between files of a folder: {}",
            c.join(" -> ")
        );
    }
}

#[test]
fn the_reader_sees_groups_super_and_circles() {
    let code = code_of(
        "use crate::{a, b::{c, d}};\n// use crate::z;\nuse super::e;\nfn f() { crate::g::h(); }\n#[cfg(test)]\nmod tests { use crate::y; }\n",
    );
    let mut p = paths_after(&code, "crate::");
    p.sort();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        p,
        vec![s(&["a"]), s(&["b", "c"]), s(&["b", "d"]), s(&["g", "h"])]
    );
    assert_eq!(paths_after(&code, "super::"), vec![s(&["e"])]);
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_string(), BTreeSet::from(["b".to_string()])),
        ("b".to_string(), BTreeSet::from(["a".to_string()])),
    ]
    .into();
    assert_eq!(cycle(&g), Some(s(&["a", "b", "a"])));
}

#[test]
fn no_long_argument_lists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    for dir in ["src", "tests", "benches", "examples"] {
        let mut stack = vec![root.join(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    all.push(p);
                }
            }
        }
    }
    let allowance = ["allow(clippy::", "too_many", "_arguments"].concat();
    for p in &all {
        let text = std::fs::read_to_string(p).unwrap();
        assert!(
            !text.contains(&allowance),
            "{} allows {allowance}",
            p.display()
        );
    }
}

/// `src/app/` only parses, wires and maps errors to exit codes: at most this many lines in all,
/// and no file longer than [`APP_FILE_BUDGET`]. Logic grows in the modules that own it.
const APP_TOTAL_BUDGET: usize = 1_500;
const APP_FILE_BUDGET: usize = 300;

/// What breaks the app's line budget, given each file's name and line count.
fn app_budget_broken(files: &[(String, usize)]) -> Vec<String> {
    let mut bad: Vec<String> = files
        .iter()
        .filter(|(_, n)| *n > APP_FILE_BUDGET)
        .map(|(f, n)| format!("{f}: {n} lines (at most {APP_FILE_BUDGET} per file)"))
        .collect();
    let total: usize = files.iter().map(|(_, n)| n).sum();
    if total > APP_TOTAL_BUDGET {
        bad.push(format!(
            "src/app/ holds {total} lines (at most {APP_TOTAL_BUDGET})"
        ));
    }
    bad
}

#[test]
fn app_is_wiring_within_its_line_budget() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/app");
    let mut stack = vec![dir];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let n = std::fs::read_to_string(&p).unwrap().lines().count();
                files.push((p.display().to_string(), n));
            }
        }
    }
    assert!(
        files.len() >= 5,
        "read only {} files of src/app",
        files.len()
    );
    let bad = app_budget_broken(&files);
    assert!(
        bad.is_empty(),
        "src/app/ is over its budget:\n{}",
        bad.join("\n")
    );
    // The rule bites: one file over, or all of them together over.
    let one = |n| vec![("a.rs".to_string(), n)];
    assert!(app_budget_broken(&one(APP_FILE_BUDGET)).is_empty());
    assert_eq!(app_budget_broken(&one(APP_FILE_BUDGET + 1)).len(), 1);
    let many = vec![("b.rs".to_string(), 250); 7];
    assert_eq!(app_budget_broken(&many).len(), 1);
}
