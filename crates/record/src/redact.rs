//! Keeps secrets out of what perfgate prints or writes: every message that may echo something a
//! server or GitHub sent back (error bodies, `::warning` lines, the final error) goes through
//! [`text`] first. Secrets are known two ways: by value (the GitHub token and `OPENAI_API_KEY`,
//! registered when read, and the usual environment variables) and by shape (an `Authorization`
//! header's credentials, `Bearer …`, GitHub token prefixes, `sk-…` API keys), so a secret that
//! perfgate never saw itself is caught too.

use std::sync::Mutex;

/// What a secret is replaced with.
pub const MASK: &str = "[REDACTED]";

/// Secrets registered by value.
static SECRETS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Environment variables whose values are secrets wherever they show up.
const SECRET_VARS: [&str; 4] = [
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "OPENAI_API_KEY",
    "PERFGATE_TOKEN",
];

/// Values shorter than this are not masked by value (masking `a` everywhere would garble every
/// message); their shape rules still apply.
const MIN_SECRET: usize = 6;

/// Remember `secret` so that [`text`] masks it from now on.
pub fn register(secret: &str) {
    let s = secret.trim();
    if s.len() < MIN_SECRET {
        return;
    }
    let mut v = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

/// `s` with every secret masked.
pub fn text(s: &str) -> String {
    let mut out = s.to_string();
    let mut known: Vec<String> = SECRETS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for var in SECRET_VARS {
        if let Ok(v) = std::env::var(var) {
            let v = v.trim();
            if v.len() >= MIN_SECRET {
                known.push(v.to_string());
            }
        }
    }
    // Longest first, so a secret that contains another is masked whole.
    known.sort_by_key(|k| std::cmp::Reverse(k.len()));
    for k in &known {
        if out.contains(k.as_str()) {
            out = out.replace(k.as_str(), MASK);
        }
    }
    by_shape(&out)
}

/// Text that someone else wrote (an engine's log, a server's error body) made safe to print to a
/// terminal or a CI log and to write to a report: secrets masked ([`text`]), control characters
/// other than line feed and tab removed (no terminal escape sequence, no carriage return that
/// rewrites a line), and a line that would start with `::` (a GitHub Actions workflow command
/// such as `::error`, `::add-mask`, `::stop-commands`) is prefixed with a space.
pub fn untrusted(s: &str) -> String {
    let clean: String = text(s)
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect();
    clean
        .split('\n')
        .map(|l| {
            if l.trim_start().starts_with("::") {
                format!(" {}", l.trim_start())
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A URL for a message: credentials (`user:pass@`) replaced by the mask.
pub fn url(u: &str) -> String {
    let Some(scheme_end) = u.find("://") else {
        return text(u);
    };
    let rest = &u[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => text(&format!(
            "{}{MASK}@{}",
            &u[..scheme_end + 3],
            &rest[at + 1..]
        )),
        None => text(u),
    }
}

/// `s` cut to at most `max` characters, saying how long it was: a 100 MB value in a file is
/// named in a message, not printed.
pub fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max).collect();
    format!("{head}… ({} bytes in all)", s.len())
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'+' | b'/' | b'=')
}

/// Mask secrets recognised by their shape.
fn by_shape(s: &str) -> String {
    let b = s.as_bytes();
    let lower = s.to_ascii_lowercase();
    let lb = lower.as_bytes();
    // Byte ranges to mask, found first and applied after.
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let token_end = |mut i: usize| {
        while i < b.len() && is_token_byte(b[i]) {
            i += 1;
        }
        i
    };
    let skip_spaces = |mut i: usize| {
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'"' | b'\'' | b':' | b'=') {
            i += 1;
        }
        i
    };
    // `Authorization: <scheme> <credentials>` and `Bearer|token|Basic <credentials>`.
    for key in ["authorization", "bearer ", "token ", "basic "] {
        let mut from = 0;
        while let Some(p) = lower[from..].find(key) {
            let at = from + p;
            from = at + key.len();
            // A word of its own: not the tail of another word.
            if at > 0 && lb[at - 1].is_ascii_alphanumeric() {
                continue;
            }
            let mut i = skip_spaces(at + key.len());
            if key == "authorization" {
                // The scheme word, if any, is kept; the credentials after it are masked.
                let scheme_end = token_end(i);
                let scheme = &lower[i..scheme_end];
                if matches!(scheme, "bearer" | "token" | "basic") {
                    i = skip_spaces(scheme_end);
                }
            }
            let end = token_end(i);
            let cred = &b[i..end];
            // After `Authorization` anything is a credential; after a bare scheme word only
            // what looks like one (long, letters and digits), so "token budget" stays readable.
            let looks_secret = cred.len() >= 12
                && cred.iter().any(u8::is_ascii_digit)
                && cred.iter().any(u8::is_ascii_alphabetic);
            if (key == "authorization" && cred.len() >= 4) || looks_secret {
                cuts.push((i, end));
            }
        }
    }
    // Tokens recognised by their prefix anywhere.
    for prefix in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-"] {
        let mut from = 0;
        while let Some(p) = s[from..].find(prefix) {
            let at = from + p;
            from = at + prefix.len();
            if at > 0 && is_token_byte(b[at - 1]) {
                continue;
            }
            let end = token_end(at + prefix.len());
            if end - at >= prefix.len() + 8 {
                cuts.push((at, end));
            }
        }
    }
    if cuts.is_empty() {
        return s.to_string();
    }
    cuts.sort_unstable();
    let mut out = String::with_capacity(s.len());
    let mut pos = 0;
    for (a, e) in cuts {
        if e <= pos {
            continue;
        }
        let a = a.max(pos);
        out.push_str(&s[pos..a]);
        out.push_str(MASK);
        pos = e;
    }
    out.push_str(&s[pos..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorization_echoes_are_masked() {
        let body =
            r#"{"message":"Bad credentials","echo":{"Authorization":"token ghx9Secret123456"}}"#;
        let r = text(body);
        assert!(!r.contains("ghx9Secret123456"), "{r}");
        assert!(r.contains("Bad credentials"), "{r}");
        let r = text("authorization: Bearer abc.DEF-123_456 and more");
        assert_eq!(r, "authorization: Bearer [REDACTED] and more");
        assert_eq!(
            text("HTTP 401: bearer zzzz1zzzzzzz"),
            "HTTP 401: bearer [REDACTED]"
        );
        let calm = "token limit exceeded; basic auth off";
        assert_eq!(text(calm), calm);
    }

    #[test]
    fn tokens_are_masked_by_shape_and_by_value() {
        let r = text("bad token ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 given");
        assert_eq!(r, "bad token [REDACTED] given");
        let r = text("key sk-proj-abcdefghijklmnop rejected");
        assert_eq!(r, "key [REDACTED] rejected");
        register("plain-secret-value-42");
        assert_eq!(text("x plain-secret-value-42 y"), format!("x {MASK} y"));
        // Ordinary words are untouched.
        let calm = "the tokenizer has 151643 tokens; basic checks passed";
        assert_eq!(text(calm), calm);
    }

    #[test]
    fn untrusted_text_loses_secrets_escapes_and_workflow_commands() {
        let log = "ok\n\u{1b}[2J\u{1b}]0;title\u{7}token ghs_ABCDEFGHIJKLMNOP0123\r\n  ::error::forged\n::add-mask::x\tz";
        let r = untrusted(log);
        assert_eq!(
            r,
            "ok\n[2J]0;titletoken [REDACTED]\n ::error::forged\n ::add-mask::x\tz"
        );
        assert!(r.lines().all(|l| !l.starts_with("::")), "{r}");
    }

    #[test]
    fn url_credentials_are_masked() {
        assert_eq!(
            url("http://user:hunter2@127.0.0.1:8000/v1?x=1"),
            "http://[REDACTED]@127.0.0.1:8000/v1?x=1"
        );
        assert_eq!(
            url("http://127.0.0.1:8000/a@b"),
            "http://127.0.0.1:8000/a@b"
        );
    }
}
