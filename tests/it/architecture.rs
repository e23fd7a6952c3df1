//! The dependency rules stated in `src/lib.rs` and `ARCHITECTURE.md`, checked on the source
//! itself: every module of `src/` has a layer (core, edge, orchestration, front), and a module
//! imports only modules of its own layer or below; core modules never name an edge crate (tokio,
//! reqwest, hyper, nix, clap, …); clap lives in the front layer (one counted exception); the
//! top-level modules import each other without a circle, and so do the files inside each folder;
//! `ARCHITECTURE.md`'s code map names every module with its layer; no `too_many_arguments`
//! allowance; no file of `src/` over 700 lines and no function over 120 (tests excepted), read
//! with a small lexer that blanks comments, strings and char literals so braces in them never
//! count.
//!
//! How it reads the source: comments and `#[cfg(test)]` modules (inline, or a folder's
//! `tests.rs`) are dropped; every `crate::a::b…` path (with `{…}` groups expanded) and every
//! `super::x` is an edge from the file to the module it names. A parent's `mod.rs` and its own files are one module's inside, so edges
//! between a folder's `mod.rs` and its files are not counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Pure: no processes, no network, no terminal, no flags. Imports only core modules.
const CORE: [&str; 17] = [
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
    "steady",
    "metrics",
    "baseline",
    "import",
    "gate",
    "history",
    "report",
];
/// The outside world: the measuring HTTP client, engine processes, GitHub, the file system's
/// atomic writes (the fake engine is a crate of its own, `crates/fakeserver`). Imports core
/// modules and other edges.
const EDGE: [&str; 5] = ["client", "engine", "monitor", "github", "atomic"];
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

/// perfgate's modules, wherever they live: every file of `src/`, and the files of each module
/// `src/lib.rs` re-exports from a crate of the workspace (`pub use perfgate_gate::{gate, …};`
/// reads `crates/gate/src/gate/` and `crates/gate/src/gate.rs`), with the same folder paths as
/// if they were in `src/`.
fn source() -> Vec<File> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    files(&root.join("src"), &[], &mut out);
    for (krate, modules) in reexports() {
        let dir = root.join("crates").join(&krate).join("src");
        let mut mine = Vec::new();
        files(&dir, &[], &mut mine);
        for m in &modules {
            assert!(
                mine.iter().any(|f| top(f) == *m),
                "src/lib.rs re-exports `{m}` from crates/{krate}, which has no {m}.rs or {m}/"
            );
        }
        out.extend(mine.into_iter().filter(|f| modules.contains(&top(f))));
    }
    assert!(out.len() > 40, "read only {} files", out.len());
    out
}

fn lib_rs() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap()
}

/// The workspace crates whose modules `src/lib.rs` re-exports, by folder under `crates/`, and
/// the modules it takes from each: `pub use perfgate_gate::{baseline, gate};` gives
/// `("gate", ["baseline", "gate"])`.
fn reexports() -> Vec<(String, Vec<String>)> {
    lib_rs()
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("pub use perfgate_")?;
            let (krate, list) = rest.split_once("::")?;
            let list = list.trim_end_matches(';').trim();
            let list = list
                .strip_prefix('{')
                .and_then(|x| x.strip_suffix('}'))
                .unwrap_or(list);
            let modules = list
                .split(',')
                .map(|m| m.trim().to_string())
                .filter(|m| !m.is_empty());
            Some((krate.to_string(), modules.collect()))
        })
        .collect()
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

/// The top-level modules of perfgate: those `src/lib.rs` declares (`pub mod x;`, `mod x;`) and
/// those it re-exports from the workspace's crates.
fn declared_modules() -> BTreeSet<String> {
    let lib = lib_rs();
    let own = lib.lines().filter_map(|l| {
        let l = l.trim();
        let rest = l
            .strip_prefix("pub mod ")
            .or_else(|| l.strip_prefix("mod "))?;
        Some(rest.trim_end_matches(';').trim().to_string())
    });
    own.chain(reexports().into_iter().flat_map(|(_, m)| m))
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
    let mut dirs = source_roots(root);
    dirs.extend(["tests", "benches", "examples"].map(|d| root.join(d)));
    for dir in dirs {
        let mut stack = vec![dir];
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

// ---- size limits: files and functions in src/ ----------------------------------------------

/// The most lines a non-test file of `src/` may have (`wc -l`: newline characters).
const MAX_FILE_LINES: usize = 700;
/// The most lines a function of `src/` may span, from its `fn` line to its closing brace.
const MAX_FN_LINES: usize = 120;

/// Files and functions allowed over the limits: none (a `src/path.rs` file or a
/// `src/path.rs::name` function would go here, with why). Nothing goes in without a reason.
const EXEMPT: &[&str] = &[];

/// `text` with the insides of comments, string literals (plain, byte, raw) and char literals
/// blanked to spaces, newlines kept: what is left are the braces and words the compiler sees.
/// A `'` starts a char literal only when a closing `'` follows one (possibly escaped)
/// character; otherwise it is a lifetime or a label and stays.
fn blank_literals(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = c.clone();
    let ident = |x: char| x.is_alphanumeric() || x == '_';
    // Blank c[from..to], keeping newlines.
    let blank = |from: usize, to: usize, out: &mut Vec<char>| {
        for o in &mut out[from..to.min(c.len())] {
            if *o != '\n' {
                *o = ' ';
            }
        }
    };
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        if c[i] == '/' && next == Some('/') {
            let end = (i..c.len()).find(|&j| c[j] == '\n').unwrap_or(c.len());
            blank(i, end, &mut out);
            i = end;
        } else if c[i] == '/' && next == Some('*') {
            // Block comments nest.
            let (mut depth, mut j) = (0usize, i);
            while j < c.len() {
                if c[j] == '/' && c.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if c[j] == '*' && c.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(i, j, &mut out);
            i = j;
        } else if c[i] == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            blank(i + 1, j, &mut out);
            i = j + 1;
        } else if c[i] == '\'' {
            // '\'' or '\u{7b}' (escaped), 'x' (one char): a char literal; 'a or 'outer: not.
            let end = if next == Some('\\') {
                (i + 3..c.len()).find(|&j| c[j] == '\'').map(|j| j + 1)
            } else if c.get(i + 2) == Some(&'\'') {
                Some(i + 3)
            } else {
                None
            };
            match end {
                Some(end) => {
                    blank(i + 1, end - 1, &mut out);
                    i = end;
                }
                None => i += 1,
            }
        } else if ident(c[i]) {
            // A whole word at once, so an `r` or `b` inside one never starts a literal; the
            // words `r` and `br` before `"` or `#…#"` start a raw string (`r#type` does not).
            let start = i;
            while i < c.len() && ident(c[i]) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let hashes = c[i..].iter().take_while(|&&x| x == '#').count();
            if (word == "r" || word == "br") && c.get(i + hashes) == Some(&'"') {
                let close: Vec<char> = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                let end = (i + hashes + 1..c.len())
                    .find(|&j| c[j..].starts_with(&close))
                    .map_or(c.len(), |j| j + close.len());
                blank(i, end, &mut out);
                i = end;
            }
        } else {
            i += 1;
        }
    }
    out.into_iter().collect()
}

/// The index just past the brace that closes the one at `open`, in blanked code.
fn closing(code: &[char], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, &x) in code.iter().enumerate().skip(open) {
        match x {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// Every function with a body in `text` outside `#[cfg(test)]` modules: (name, lines from its
/// `fn` line to its closing brace). Nested functions count on their own and in their parent.
fn function_lengths(text: &str) -> Vec<(String, usize)> {
    let code: Vec<char> = blank_literals(text).chars().collect();
    let line_at = |i: usize| code[..i].iter().filter(|&&x| x == '\n').count();
    let ident = |x: char| x.is_alphanumeric() || x == '_';
    let word_at = |i: usize, w: &str| {
        code[i..].starts_with(&w.chars().collect::<Vec<_>>())
            && (i == 0 || !ident(code[i - 1]))
            && code.get(i + w.len()).is_none_or(|&x| !ident(x))
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        if code[i..].starts_with(&"#[cfg(test)]".chars().collect::<Vec<_>>()) {
            // A test module: skip to its end (or past `mod tests;`).
            let mut j = i + "#[cfg(test)]".len();
            while j < code.len() && code[j].is_whitespace() {
                j += 1;
            }
            for vis in ["pub(crate)", "pub(super)", "pub"] {
                if word_at(j, vis) || code[j..].starts_with(&vis.chars().collect::<Vec<_>>()) {
                    j += vis.len();
                    while j < code.len() && code[j].is_whitespace() {
                        j += 1;
                    }
                    break;
                }
            }
            if word_at(j, "mod") {
                let stop = (j..code.len()).find(|&k| code[k] == '{' || code[k] == ';');
                i = match stop {
                    Some(k) if code[k] == '{' => closing(&code, k),
                    Some(k) => k + 1,
                    None => code.len(),
                };
                continue;
            }
        }
        if !word_at(i, "fn") {
            i += 1;
            continue;
        }
        let mut j = i + 2;
        while j < code.len() && code[j].is_whitespace() {
            j += 1;
        }
        let name: String = code[j..].iter().take_while(|&&x| ident(x)).collect();
        if name.is_empty() {
            // `fn(…)`, a function-pointer type.
            i = j;
            continue;
        }
        // The body's brace, or `;` for a declaration without one; `;` inside `[u8; 4]` or a
        // parenthesis is not the end.
        let mut depth = 0i32;
        let mut k = j + name.len();
        while k < code.len() {
            match code[k] {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                '{' | ';' if depth == 0 => break,
                _ => {}
            }
            k += 1;
        }
        if k < code.len() && code[k] == '{' {
            let end = closing(&code, k);
            out.push((name, line_at(end - 1) - line_at(i) + 1));
        }
        i = k;
    }
    out
}

/// A source file counted as a test: a folder's `tests.rs`, or anything under a `tests/` folder.
fn is_test_file(rel: &Path) -> bool {
    rel.file_name().is_some_and(|n| n == "tests.rs")
        || rel
            .parent()
            .is_some_and(|p| p.components().any(|c| c.as_os_str() == "tests"))
}

/// What is over the limits in `files` (path under the crate root, text), each as its `EXEMPT`
/// key with the count: `src/a.rs: 701 lines`, `src/a.rs::f: 121 lines`.
fn over_the_limits(files: &[(String, String)]) -> Vec<(String, usize)> {
    let mut over = Vec::new();
    for (path, text) in files {
        if is_test_file(Path::new(path)) {
            continue;
        }
        let lines = text.bytes().filter(|&b| b == b'\n').count();
        if lines > MAX_FILE_LINES {
            over.push((path.clone(), lines));
        }
        for (name, n) in function_lengths(text) {
            let key = format!("{path}::{name}");
            if n > MAX_FN_LINES && !over.iter().any(|(k, _)| *k == key) {
                over.push((key, n));
            }
        }
    }
    over
}

/// The source folders of every crate of the workspace: `src/` and each `crates/*/src/`.
fn source_roots(root: &Path) -> Vec<PathBuf> {
    let mut roots = vec![root.join("src")];
    for e in std::fs::read_dir(root.join("crates")).unwrap() {
        let src = e.unwrap().path().join("src");
        if src.is_dir() {
            roots.push(src);
        }
    }
    roots
}

fn src_files() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stack = source_roots(root);
    assert!(stack.len() >= 3, "crates/*/src not found");
    let mut out = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn no_file_over_700_lines_and_no_function_over_120_in_src() {
    let files = src_files();
    assert!(files.len() > 40, "read only {} files of src/", files.len());
    let over = over_the_limits(&files);
    let bad: Vec<String> = over
        .iter()
        .filter(|(k, _)| !EXEMPT.contains(&k.as_str()))
        .map(|(k, n)| format!("{k}: {n} lines"))
        .collect();
    assert!(
        bad.is_empty(),
        "over the limits ({MAX_FILE_LINES} lines a file, {MAX_FN_LINES} a function; tests may \
         go into a sibling tests.rs):\n{}",
        bad.join("\n")
    );
    let stale: Vec<&&str> = EXEMPT
        .iter()
        .filter(|e| !over.iter().any(|(k, _)| k == **e))
        .collect();
    assert!(
        stale.is_empty(),
        "EXEMPT names what is within the limits now; take it out: {stale:?}"
    );
}

#[test]
fn the_size_scanner_is_not_fooled_by_literals_comments_or_lifetimes() {
    let sample = r####"fn braces_in_literals() {
    let a = "}}} \" }";
    let b = r#"{ "x": "}" }"#;
    let c = ('{', '\'', '"', '\u{7d}');
    let e = b'}';
    // }
    /* { /* nested } */ } */
    let f = br##"}"#"##;
}
fn with_lifetime<'a>(x: &'a str) -> &'a str {
    'outer: loop { break 'outer; }
    x
}
trait T { fn decl(&self, a: [u8; 4]); fn with_body(&self) { } }
type F = fn(&[f64]) -> f64;
#[cfg(test)]
mod tests {
    fn hidden() { }
}
fn after() {
}
"####;
    let blanked = blank_literals(sample);
    assert_eq!(blanked.lines().count(), sample.lines().count());
    assert_eq!(
        blanked.matches('{').count(),
        blanked.matches('}').count(),
        "{blanked}"
    );
    assert!(!blanked.contains("nested") && blanked.contains("'outer"));
    let s = |n: &str, l: usize| (n.to_string(), l);
    assert_eq!(
        function_lengths(sample),
        vec![
            s("braces_in_literals", 9),
            s("with_lifetime", 4),
            s("with_body", 1),
            s("after", 2)
        ]
    );
    // A raw identifier or a word ending in r or b starts no literal.
    assert_eq!(
        function_lengths("fn r#type() {\n    let br = 1; let r = br;\n}\n"),
        vec![s("r", 3)]
    );
}

#[test]
fn the_size_limits_bite_at_701_lines_and_121_line_functions() {
    let body = |n: usize| format!("fn f() {{\n{}}}\n", "    x();\n".repeat(n - 2));
    let file = |path: &str, text: String| vec![(path.to_string(), text)];
    assert!(over_the_limits(&file("src/a.rs", body(MAX_FN_LINES))).is_empty());
    assert_eq!(
        over_the_limits(&file("src/a.rs", body(MAX_FN_LINES + 1))),
        vec![("src/a.rs::f".to_string(), MAX_FN_LINES + 1)]
    );
    let long = "// x\n".repeat(MAX_FILE_LINES);
    assert!(over_the_limits(&file("src/a.rs", long.clone())).is_empty());
    assert_eq!(
        over_the_limits(&file("src/a.rs", long.clone() + "\n")),
        vec![("src/a.rs".to_string(), MAX_FILE_LINES + 1)]
    );
    // Tests may be longer: a folder's tests.rs, a tests/ folder, an inline test module.
    let huge = body(MAX_FILE_LINES + 10);
    assert!(over_the_limits(&file("src/a/tests.rs", huge.clone())).is_empty());
    assert!(over_the_limits(&file("src/a/tests/b.rs", huge.clone())).is_empty());
    let inline = format!("#[cfg(test)]\nmod tests {{\n{}}}\n", body(MAX_FN_LINES + 5));
    assert!(over_the_limits(&file("src/a.rs", inline)).is_empty());
    assert!(!is_test_file(Path::new("src/tests_util.rs")));
}

/// The `[dependencies]` keys of a manifest, `-` written `_` (`shell-words` → `shell_words`).
fn dependencies(manifest: &str) -> Vec<String> {
    let mut inside = false;
    let mut out = Vec::new();
    for l in manifest.lines().map(str::trim) {
        if l.starts_with('[') {
            inside = l == "[dependencies]";
        } else if inside && !l.is_empty() && !l.starts_with('#') {
            if let Some((key, _)) = l.split_once('=') {
                out.push(key.trim().replace('-', "_"));
            }
        }
    }
    out
}

/// What breaks the crates' rule: a crate (by folder under `crates/`, with the modules perfgate
/// re-exports from it) holds only core and edge modules, depends on perfgate's crates of its own
/// layer or below (an edge crate also on `perfgate-stamp`), and a crate of core modules names
/// no edge crate (clap only for the counted derives). `deps` gives a crate's dependencies.
fn crate_faults(
    crates: &[(String, Vec<String>)],
    deps: impl Fn(&str) -> Vec<String>,
) -> Vec<String> {
    // A crate's layer is its highest module's.
    let layers: BTreeMap<String, usize> = crates
        .iter()
        .map(|(k, m)| {
            let l = m.iter().filter_map(|m| layer(m)).max();
            (format!("perfgate_{k}"), l.unwrap_or(usize::MAX))
        })
        .collect();
    let mut bad = Vec::new();
    for (krate, modules) in crates {
        let mine = layers[&format!("perfgate_{krate}")];
        if mine > 1 {
            bad.push(format!(
                "crates/{krate} holds {modules:?}: only core and edge modules"
            ));
            continue;
        }
        let clap_ok = modules
            .iter()
            .any(|m| CLAP_ALLOWED.iter().any(|(a, _)| a == m));
        for d in deps(krate) {
            let edge = mine == 0 && EDGE_CRATES.contains(&d.as_str()) && !(clap_ok && d == "clap");
            let up = layers.get(&d).is_some_and(|l| *l > mine);
            let stray = d.starts_with("perfgate")
                && !layers.contains_key(&d)
                && !(mine == 1 && d == "perfgate_stamp");
            if edge || up || stray {
                bad.push(format!("crates/{krate} depends on `{d}`"));
            }
        }
    }
    bad
}

#[test]
fn the_crates_of_modules_depend_only_on_their_layer_or_below() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crates = reexports();
    assert!(crates.len() >= 3, "read {crates:?} from src/lib.rs");
    let manifest = |krate: &str| {
        let path = root.join("crates").join(krate).join("Cargo.toml");
        let deps = dependencies(&std::fs::read_to_string(&path).unwrap());
        assert!(
            !deps.is_empty(),
            "no [dependencies] read from {}",
            path.display()
        );
        deps
    };
    let bad = crate_faults(&crates, manifest);
    assert!(bad.is_empty(), "crates reaching up:\n{}", bad.join("\n"));
    // The reader bites: a manifest with an edge crate among its dependencies.
    let m = "[package]\nname = \"x\"\n[dependencies]\n# c\nserde = \"1\"\nsocket-2 = \"0\"\n[dev-dependencies]\ntokio = \"1\"\n";
    assert_eq!(dependencies(m), ["serde", "socket_2"]);
    // The rule bites: a core crate on tokio, a core crate on an edge crate of perfgate, a crate
    // holding the front layer, a crate on a perfgate crate that holds no module.
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let crates = vec![
        ("record".to_string(), s(&["record"])),
        ("gate".to_string(), s(&["gate"])),
        ("client".to_string(), s(&["client"])),
        ("front".to_string(), s(&["app"])),
    ];
    let deps = |k: &str| match k {
        "record" => s(&["serde", "tokio", "clap"]),
        "gate" => s(&["perfgate_record", "perfgate_client", "clap"]),
        "client" => s(&[
            "tokio",
            "perfgate_stamp",
            "perfgate_record",
            "perfgate_fakeserver",
        ]),
        _ => s(&["clap"]),
    };
    assert_eq!(
        crate_faults(&crates, deps),
        [
            "crates/record depends on `tokio`",
            "crates/gate depends on `perfgate_client`",
            "crates/gate depends on `clap`",
            "crates/client depends on `perfgate_fakeserver`",
            "crates/front holds [\"app\"]: only core and edge modules",
        ]
    );
}
