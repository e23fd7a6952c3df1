//! Engine command templates: rendering the placeholders, quoting, and the docker container a
//! command starts.

use super::SuiteError;

/// A model's extra arguments minus the flags the preset's template already passes (with their
/// values): imported launch commands repeat `--host 0.0.0.0` or `--enable-metrics`.
pub fn without_template_flags(template: &str, extra: &[String]) -> Vec<String> {
    let words = template.replace('{', " {");
    let has = |flag: &str| {
        words
            .split_whitespace()
            .any(|w| w == flag || w.starts_with(&format!("{flag}=")))
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < extra.len() {
        let a = &extra[i];
        let flag = a.split('=').next().unwrap_or(a);
        if a.starts_with("--") && has(flag) {
            let takes_value =
                !a.contains('=') && extra.get(i + 1).is_some_and(|v| !v.starts_with('-'));
            i += if takes_value { 2 } else { 1 };
            continue;
        }
        out.push(a.clone());
        i += 1;
    }
    out
}

/// The values a command template is filled with.
#[derive(Debug, Clone)]
pub struct Vars<'a> {
    pub model: &'a str,
    pub served_model_name: &'a str,
    pub tp: u32,
    pub port: u16,
    pub image: &'a str,
    pub container: &'a str,
    pub extra_args: &'a [String],
}

/// Fill a command template. Values are shell-quoted where needed; `{{` and `}}` are literal
/// braces, and shell parameter expansions such as `${HF_HOME:-…}` are left alone.
pub fn render(template: &str, v: &Vars<'_>) -> Result<String, SuiteError> {
    let mut out = String::with_capacity(template.len() + 64);
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        // `${…}` is the shell's, not ours.
        if tail.starts_with('{') && out.ends_with('$') {
            let close = tail.find('}').map_or(tail.len(), |c| c + 1);
            out.push_str(&tail[..close]);
            rest = &tail[close..];
            continue;
        }
        if let Some(after) = tail.strip_prefix('}') {
            out.push('}');
            rest = after;
            continue;
        }
        let Some(close) = tail.find('}') else {
            out.push_str(tail);
            rest = "";
            break;
        };
        let name = &tail[1..close];
        let value = match name {
            "model" => shell_quote(v.model),
            "served_model_name" => shell_quote(v.served_model_name),
            "tp" => v.tp.to_string(),
            "port" => v.port.to_string(),
            "image" => shell_quote(v.image),
            "container" => shell_quote(v.container),
            "extra_args" => v
                .extra_args
                .iter()
                .map(|a| format!(" {}", shell_quote(a)))
                .collect(),
            other => {
                return Err(SuiteError::UnknownPlaceholder {
                    name: other.to_string(),
                })
            }
        };
        out.push_str(&value);
        rest = &tail[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Quote a word for `sh` only when it needs it.
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '_' | '-' | '.' | '/' | ':' | '@' | '%' | '+' | '=' | ',')
        });
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The prefix of the container names perfgate owns: only such a container is stopped and
/// removed by name (`docker stop`, `docker rm -f`).
pub const CONTAINER_PREFIX: &str = "perfgate-";

/// The label of every container perfgate starts by a name it owns: `perfgate.owner=<pid>` of the
/// perfgate that started it. Only a container carrying it (and perfgate's name) is stopped and
/// removed: a container of the same name that perfgate did not start is left alone.
pub const OWNER_LABEL: &str = "perfgate.owner";

/// `cmd` with `--label perfgate.owner=<owner>` added right after its `docker run` (unchanged
/// without one).
pub fn with_owner_label(cmd: &str, owner: &str) -> String {
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in cmd.char_indices().chain(std::iter::once((cmd.len(), ' '))) {
        let sep = c.is_whitespace() || c == '\\';
        match (sep, start) {
            (true, Some(s)) => {
                words.push((s, i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    let at = words
        .windows(2)
        .find(|w| &cmd[w[0].0..w[0].1] == "docker" && &cmd[w[1].0..w[1].1] == "run")
        .map(|w| w[1].1);
    match at {
        Some(end) => format!(
            "{} --label {OWNER_LABEL}={owner}{}",
            &cmd[..end],
            &cmd[end..]
        ),
        None => cmd.to_string(),
    }
}

/// `docker run` options that take no value (the others take the next word, unless written
/// `--opt=value`): enough to find where the image, and so the engine's own arguments, begin.
const DOCKER_FLAGS: [&str; 16] = [
    "--rm",
    "-d",
    "--detach",
    "-i",
    "--interactive",
    "-t",
    "--tty",
    "-it",
    "-ti",
    "--init",
    "--privileged",
    "--read-only",
    "-P",
    "--publish-all",
    "--no-healthcheck",
    "--oom-kill-disable",
];

/// The container name of a rendered `docker run … --name NAME … IMAGE …` command when perfgate
/// owns it: given as a `docker run` option (before the image: a `--name` among the engine's
/// arguments is the engine's) and starting with [`CONTAINER_PREFIX`]. Any other container is
/// left alone: the engine's process group is stopped instead.
pub fn docker_container(cmd: &str) -> Option<String> {
    let words: Vec<&str> = cmd
        .split(|c: char| c.is_whitespace() || c == '\\')
        .filter(|w| !w.is_empty())
        .collect();
    let run_at = words
        .windows(2)
        .position(|w| w[0] == "docker" && w[1] == "run")?;
    let rest = &words[run_at + 2..];
    let mut i = 0;
    let mut name = None;
    while i < rest.len() {
        let w = rest[i];
        if !w.starts_with('-') {
            break; // the image: what follows is the engine's
        }
        if w == "--name" {
            name = rest
                .get(i + 1)
                .map(|n| n.trim_matches(['\'', '"']).to_string());
            i += 2;
        } else if let Some(n) = w.strip_prefix("--name=") {
            name = Some(n.trim_matches(['\'', '"']).to_string());
            i += 1;
        } else if w.contains('=') || DOCKER_FLAGS.contains(&w) {
            i += 1;
        } else {
            i += 2;
        }
    }
    name.filter(|n| n.starts_with(CONTAINER_PREFIX))
}
