//! The release archive's pages: `scripts/package-docs.sh` copies the README and what it links;
//! every relative link in every copied page must resolve inside the archive, so a page moved out
//! of the README (docs/) is never a dead link for someone who downloaded a release.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The relative link targets in a markdown text, without their `#anchor`: `[text](target)`.
fn relative_links(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        for (i, _) in line.match_indices("](") {
            let rest = &line[i + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = rest[..end].split('#').next().unwrap_or("");
            let external = target.contains("://") || target.starts_with("mailto:");
            if !target.is_empty() && !external {
                out.push(target.to_string());
            }
        }
    }
    out
}

/// The markdown files under `dir`, recursively.
fn pages(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(pages(&p));
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
    out
}

#[test]
fn links_are_read_from_prose_not_from_code_blocks() {
    let md = "See [a](docs/a.md#x) and [b](https://e/x).\n```\n[c](no.md)\n```\n[d](../d.md)";
    assert_eq!(relative_links(md), ["docs/a.md", "../d.md"]);
}

#[test]
fn every_link_in_the_release_archive_resolves_inside_it() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("perfgate-x86_64-unknown-linux-musl");
    let st = Command::new("scripts/package-docs.sh")
        .arg(&dest)
        .status()
        .unwrap();
    assert!(st.success());
    let root = dest.canonicalize().unwrap();
    let found = pages(&root);
    assert!(
        found.iter().any(|p| p.ends_with("README.md")) && found.len() > 10,
        "{found:?}"
    );
    let mut dead = Vec::new();
    for page in &found {
        for link in relative_links(&std::fs::read_to_string(page).unwrap()) {
            let at = page.parent().unwrap().join(&link);
            match at.canonicalize() {
                Ok(p) if p.starts_with(&root) => {}
                _ => dead.push(format!(
                    "{}: {link}",
                    page.strip_prefix(&root).unwrap().display()
                )),
            }
        }
    }
    assert!(
        dead.is_empty(),
        "links that leave the archive or lead nowhere: {dead:#?}"
    );
}
