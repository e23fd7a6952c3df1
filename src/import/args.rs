//! The arguments of a benchmark run as a log shows them: a Python `Namespace(...)` line, a
//! command line (`vllm bench serve --model … \`), or the seeds' `Running benchmark … with
//! backend: X` line. All become one map from canonical argparse names (`dataset_name`,
//! `num_prompts`, …) to their text, so that the importer can tell which argument said what.

use std::collections::BTreeMap;

use crate::text::shell_words;

/// Arguments by canonical argparse destination name. `None` values (Python `None`) are dropped.
pub type ArgMap = BTreeMap<String, String>;

/// The canonical destination of an option as the benchmark tools spell them (argparse accepts
/// unambiguous prefixes, so `--random-input` means `--random-input-len` in SGLang).
pub fn canonical(name: &str) -> String {
    let n = name.trim_start_matches('-').replace('-', "_");
    match n.as_str() {
        "random_input" | "input_len" => "random_input_len".into(),
        "random_output" | "output_len" => "random_output_len".into(),
        "random_range" => "random_range_ratio".into(),
        "num_prompt" => "num_prompts".into(),
        _ => n,
    }
}

/// Parse a Python `Namespace(a=1, b='x', c=None, d=[1, 2])` repr. Returns `None` when `line`
/// does not hold one.
pub fn parse_namespace(line: &str) -> Option<ArgMap> {
    let start = line.find("Namespace(")? + "Namespace(".len();
    let s: Vec<char> = line[start..].chars().collect();
    let mut out = ArgMap::new();
    let mut i = 0;
    loop {
        while i < s.len() && (s[i] == ' ' || s[i] == ',') {
            i += 1;
        }
        if i >= s.len() || s[i] == ')' {
            break;
        }
        let key_start = i;
        while i < s.len() && s[i] != '=' && s[i] != ')' {
            i += 1;
        }
        if i >= s.len() || s[i] != '=' {
            break;
        }
        let key: String = s[key_start..i]
            .iter()
            .collect::<String>()
            .trim()
            .to_string();
        i += 1;
        let (value, next) = read_py_value(&s, i);
        i = next;
        if value != "None" {
            out.insert(key, unquote(&value));
        }
    }
    Some(out)
}

/// Read one Python repr value starting at `i`; returns its text and the index after it.
fn read_py_value(s: &[char], mut i: usize) -> (String, usize) {
    let start = i;
    let mut depth = 0i32;
    while i < s.len() {
        let c = s[i];
        match c {
            '\'' | '"' => {
                i += 1;
                while i < s.len() && s[i] != c {
                    if s[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                if depth == 0 {
                    break;
                }
                depth -= 1;
            }
            ',' if depth == 0 => break,
            _ => {}
        }
        i += 1;
    }
    let end = i.min(s.len());
    (
        s[start..end].iter().collect::<String>().trim().to_string(),
        end,
    )
}

fn unquote(v: &str) -> String {
    let b = v.as_bytes();
    if b.len() >= 2 && (b[0] == b'\'' || b[0] == b'"') && b[b.len() - 1] == b[0] {
        v[1..v.len() - 1].to_string()
    } else {
        v.to_string()
    }
}

/// Options of a command line (`--key value`, `--key=value`, bare `--flag` → `true`), keyed
/// canonically. Positional words are ignored.
pub fn parse_options(words: &[String]) -> ArgMap {
    let mut out = ArgMap::new();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        if let Some(opt) = w.strip_prefix("--") {
            if let Some((k, v)) = opt.split_once('=') {
                out.insert(canonical(k), v.to_string());
            } else if i + 1 < words.len() && !words[i + 1].starts_with("--") {
                out.insert(canonical(opt), words[i + 1].clone());
                i += 1;
            } else {
                out.insert(canonical(opt), "true".into());
            }
        }
        i += 1;
    }
    out
}

/// The benchmark command at the start of `line`, after any shell prompt, if the line runs one
/// of the known benchmark clients: the client's name followed by options (`-…`), a `\`
/// continuation or nothing. Prose that names a client is not a command: vLLM 0.33 prints
/// `WARNING: vllm bench serve no longer sets temperature==0 …` when `--temperature` is not
/// given.
pub fn benchmark_command(line: &str) -> Option<&str> {
    const MARKERS: [&str; 6] = [
        "vllm bench serve",
        "benchmark_serving.py",
        "sglang.bench_serving",
        "bench_serving.py",
        "profile_restful_api.py",
        "benchmarks.benchmark_serving",
    ];
    let runs = |pos: usize, m: &str| {
        let rest = line[pos + m.len()..].trim_start();
        rest.is_empty() || rest.starts_with('-') || rest.starts_with('\\')
    };
    let pos = MARKERS
        .iter()
        .filter_map(|m| line.find(m).filter(|&p| runs(p, m)))
        .min()?;
    // Start of the command: after a prompt such as `$ ` or `(base) user@host:~$ `.
    let head = &line[..pos];
    let start = head.rfind("$ ").map(|i| i + 2).unwrap_or(0);
    Some(line[start..].trim())
}

/// The options in the seeds' `Running benchmark --dataset-name … with backend: X` line.
pub fn parse_running_line(line: &str) -> Option<ArgMap> {
    let rest = line.trim().strip_prefix("Running benchmark")?;
    let (opts, backend) = match rest.rsplit_once(" with backend:") {
        Some((o, b)) => (o, Some(b.trim())),
        None => (rest, None),
    };
    let mut out = parse_options(&shell_words(opts));
    if let Some(b) = backend.filter(|b| !b.is_empty()) {
        out.insert("backend".into(), b.to_string());
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_values() {
        let ns = parse_namespace("Namespace(backend='vllm', base_url=None, port=8000, dataset_path='/a, b.json', model='Qwen/Qwen3-8B', num_prompts=10000, random_range_ratio=0.0, request_rate=inf, seed=1, multi=False, request_rate_range='2,34,2', extra={'a': [1, 2]}, disable_warmup=None)").unwrap();
        assert_eq!(ns["backend"], "vllm");
        assert_eq!(ns["dataset_path"], "/a, b.json");
        assert_eq!(ns["model"], "Qwen/Qwen3-8B");
        assert_eq!(ns["num_prompts"], "10000");
        assert_eq!(ns["request_rate"], "inf");
        assert_eq!(ns["request_rate_range"], "2,34,2");
        assert_eq!(ns["extra"], "{'a': [1, 2]}");
        assert!(!ns.contains_key("base_url"));
        assert!(!ns.contains_key("disable_warmup"));
        assert!(parse_namespace("no namespace here").is_none());
    }

    #[test]
    fn command_lines() {
        let cmd = "vllm bench serve --model 'meta/Llama 3' \\\n  --dataset-name=random --random-input 1024 --ignore-eos --num-prompts 200";
        let opts = parse_options(&shell_words(cmd));
        assert_eq!(opts["model"], "meta/Llama 3");
        assert_eq!(opts["dataset_name"], "random");
        assert_eq!(opts["random_input_len"], "1024");
        assert_eq!(opts["ignore_eos"], "true");
        assert_eq!(opts["num_prompts"], "200");
        assert_eq!(
            shell_words("a \"b c\" 'd e' f\\ g"),
            ["a", "b c", "d e", "f g"]
        );
        assert_eq!(shell_words("cut 'mid"), ["cut", "'mid"]);
        assert_eq!(
            benchmark_command("(base) me@host:~$ python3 benchmarks/benchmark_serving.py --x 1"),
            Some("python3 benchmarks/benchmark_serving.py --x 1")
        );
        assert_eq!(benchmark_command("bash benchmark_serving.sh vllm"), None);
        assert_eq!(
            benchmark_command("vllm bench serve \\"),
            Some("vllm bench serve \\")
        );
        assert_eq!(
            benchmark_command("$ vllm bench serve"),
            Some("vllm bench serve")
        );
        // vLLM 0.33's warning when `--temperature` is not given names the client: not a command.
        assert_eq!(
            benchmark_command(
                "WARNING: vllm bench serve no longer sets temperature==0 (greedy) in requests by default."
            ),
            None
        );
    }

    #[test]
    fn running_line() {
        let a = parse_running_line("Running benchmark --dataset-name random --num-prompts 500 --random-input-len 2000 --random-output-len 6000 --random-range-ratio 1.0 with backend: sglang").unwrap();
        assert_eq!(a["dataset_name"], "random");
        assert_eq!(a["random_range_ratio"], "1.0");
        assert_eq!(a["backend"], "sglang");
    }
}
