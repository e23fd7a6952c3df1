//! The revisions of a bisect: an ordered list (a file, or `git rev-list` of a repository), each
//! revision validated before it goes anywhere near a command, and the `{rev}` substitution of the
//! templates: a revision reaches a command only as one environment variable (`PERFGATE_REV`)
//! that the template's shell expands as one quoted word, or as one already-quoted word (an
//! image), never spliced into shell text.

use std::path::Path;

use super::BisectError;

/// The environment variable that carries the revision to the templates' commands.
pub const REV_VAR: &str = "PERFGATE_REV";

/// A revision as text: non-empty, at most 200 characters, no leading `-` (it could be read as an
/// option), no whitespace or control characters.
pub fn validate(rev: &str) -> Result<(), String> {
    if rev.is_empty() {
        return Err("a revision is empty".into());
    }
    if rev.chars().count() > 200 {
        return Err(format!(
            "revision `{}…` is longer than 200 characters",
            &rev[..20.min(rev.len())]
        ));
    }
    if rev.starts_with('-') {
        return Err(format!("revision `{rev}` starts with `-`"));
    }
    if let Some(c) = rev.chars().find(|c| c.is_control() || c.is_whitespace()) {
        return Err(format!(
            "revision {:?} holds a space or control character ({:?})",
            rev, c
        ));
    }
    Ok(())
}

/// The revisions from `good` to `bad` (both included) of an ordered list, oldest first.
pub fn range(
    list: Vec<String>,
    good: &str,
    bad: &str,
    source: &str,
) -> Result<Vec<String>, BisectError> {
    let find = |r: &str, flag: &str| {
        list.iter().position(|x| x == r).ok_or_else(|| {
            BisectError::Usage(format!(
                "{source}: {flag} {r} is not in the list of revisions"
            ))
        })
    };
    let (g, b) = (find(good, "--good")?, find(bad, "--bad")?);
    if g >= b {
        return Err(BisectError::Usage(format!(
            "{source}: --good {good} must come before --bad {bad} (the list is oldest first)"
        )));
    }
    Ok(list[g..=b].to_vec())
}

/// Read a revisions file: one revision a line, oldest first; blank lines and `#` comments are
/// skipped. A bad line is an error naming the file and line.
pub fn read_file(path: &Path) -> Result<Vec<String>, BisectError> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| BisectError::Usage(format!("cannot read {shown}: {e}")))?;
    let mut out: Vec<String> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        validate(t).map_err(|e| BisectError::Usage(format!("{shown}:{}: {e}", i + 1)))?;
        if out.iter().any(|x| x == t) {
            return Err(BisectError::Usage(format!(
                "{shown}:{}: revision {t} is listed twice",
                i + 1
            )));
        }
        out.push(t.to_string());
    }
    Ok(out)
}

/// The first-parent commits from `good` to `bad` of a git repository, oldest first (`good`
/// resolved to its full id and included).
pub fn from_git(repo: &Path, good: &str, bad: &str) -> Result<Vec<String>, BisectError> {
    let git = |args: &[&str]| -> Result<String, BisectError> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| BisectError::Usage(format!("cannot run git: {e}")))?;
        if !out.status.success() {
            return Err(BisectError::Usage(format!(
                "git {} in {}: {}",
                args.join(" "),
                repo.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let resolve = |r: &str| -> Result<String, BisectError> {
        Ok(git(&[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{r}^{{commit}}"),
        ])?
        .trim()
        .to_string())
    };
    let (g, b) = (resolve(good)?, resolve(bad)?);
    let listed = git(&[
        "rev-list",
        "--reverse",
        "--first-parent",
        "--ancestry-path",
        &format!("{g}..{b}"),
    ])?;
    let mut out = vec![g];
    out.extend(
        listed
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from),
    );
    if out.len() < 2 {
        return Err(BisectError::Usage(format!(
            "{}: no commits from {good} to {bad} (is {good} an ancestor of {bad}?)",
            repo.display()
        )));
    }
    Ok(out)
}

/// A command template with `{rev}` made a reference to [`REV_VAR`] (a quoted shell expansion).
pub fn command_template(template: &str) -> String {
    template.replace("{rev}", &format!("\"${REV_VAR}\""))
}

/// An image template with `{rev}` replaced by the (validated) revision: the image is quoted as
/// one word when the launch command is rendered.
pub fn image_template(template: &str, rev: &str) -> String {
    template.replace("{rev}", rev)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_that_could_be_options_or_break_lines_are_refused() {
        assert!(validate("3f2a1c9").is_ok());
        assert!(validate("v0.10.1").is_ok());
        assert!(validate("release/0.11").is_ok());
        assert!(validate("").is_err());
        assert!(validate("-rf").unwrap_err().contains("starts with `-`"));
        assert!(validate("a\nb").is_err());
        assert!(validate("a b").is_err());
        assert!(validate("a\u{1b}[31m").is_err());
        assert!(validate(&"x".repeat(201)).is_err());
    }

    #[test]
    fn a_file_is_read_in_order_and_a_bad_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("revs.txt");
        std::fs::write(&p, "# oldest first\nr0\n\nr1\n r2 \nr3\n").unwrap();
        let list = read_file(&p).unwrap();
        assert_eq!(list, ["r0", "r1", "r2", "r3"]);
        assert_eq!(
            range(list.clone(), "r1", "r3", "f").unwrap(),
            ["r1", "r2", "r3"]
        );
        let e = range(list.clone(), "r3", "r1", "f")
            .unwrap_err()
            .to_string();
        assert!(e.contains("must come before"), "{e}");
        let e = range(list, "r9", "r1", "f").unwrap_err().to_string();
        assert!(e.contains("--good r9 is not in the list"), "{e}");
        std::fs::write(&p, "r0\n--exec=x\n").unwrap();
        let e = read_file(&p).unwrap_err().to_string();
        assert!(e.contains("revs.txt:2:"), "{e}");
        std::fs::write(&p, "r0\nr0\n").unwrap();
        assert!(read_file(&p).unwrap_err().to_string().contains("twice"));
    }

    #[test]
    fn templates_take_the_revision_as_one_word() {
        assert_eq!(
            command_template("build/{rev}/llama-server --port {port}"),
            "build/\"$PERFGATE_REV\"/llama-server --port {port}"
        );
        // The shell expands it as one word, whatever it holds.
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(command_template("printf '%s|' {rev}"))
            .env(REV_VAR, "a;$(touch x)`b`")
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "a;$(touch x)`b`|");
        assert_eq!(image_template("vllm:{rev}", "abc1"), "vllm:abc1");
    }
}
