//! Small text helpers shared by the parsers: byte offset → line and column for error messages,
//! shell-style word splitting for recorded command lines, SHA-256 digests, and file-name parts
//! made from text others chose. Depends on nothing in the crate.

use std::fmt::Write as _;

/// 1-based line and column of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(offset, |i| offset - i - 1) + 1;
    (line, col)
}

/// The start of every line of a text, for many offset → line look-ups in one pass each
/// (a binary search, where [`line_col`] counts from the text's start every time).
#[derive(Debug, Clone)]
pub struct LineIndex {
    /// Byte offset of each `\n`.
    newlines: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        LineIndex {
            newlines: text
                .bytes()
                .enumerate()
                .filter_map(|(i, b)| (b == b'\n').then_some(i))
                .collect(),
        }
    }

    /// 1-based line of a byte offset (as [`line_col`]'s line).
    pub fn line(&self, offset: usize) -> usize {
        self.newlines.partition_point(|&n| n < offset) + 1
    }
}

/// `msg` with every stretch between quote marks (`"` or `` ` ``) longer than `keep` characters
/// cut to its first `keep` and a note of its size: a parser's message quotes the offending
/// value, which in a hostile file is tens of megabytes.
pub fn shorten_quoted(msg: &str, keep: usize) -> String {
    fn push(out: &mut String, part: &str, keep: usize) {
        match part.char_indices().nth(keep) {
            Some((cut, _)) => {
                out.push_str(&part[..cut]);
                let _ = write!(out, "… ({} bytes)", part.len());
            }
            None => out.push_str(part),
        }
    }
    let mut out = String::with_capacity(msg.len().min(4 * keep + 256));
    let mut from = 0;
    for (at, q) in msg.match_indices(['"', '`']) {
        push(&mut out, &msg[from..at], keep);
        out.push_str(q);
        from = at + q.len();
    }
    push(&mut out, &msg[from..], keep);
    out
}

/// Split a shell command line into words (POSIX rules, by the `shell-words` crate: single and
/// double quotes, backslash escapes, line continuations; nothing is expanded). A line with an
/// unbalanced quote (a log cut mid-command) falls back to splitting on whitespace.
pub fn shell_words(cmd: &str) -> Vec<String> {
    ::shell_words::split(cmd)
        .unwrap_or_else(|_| cmd.split_whitespace().map(str::to_string).collect())
}

/// The SHA-256 of `bytes` in lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `name` made fit for a file name of at most `max` bytes: control characters and `/` become
/// `_`, and a longer name is cut (at a character boundary) and ends in `~` and 8 hex digits of
/// the whole name's SHA-256, so two long names that share their start still differ.
pub fn file_name_part(name: &str, max: usize) -> String {
    let clean: String = name
        .chars()
        .map(|c| if c.is_control() || c == '/' { '_' } else { c })
        .collect();
    if clean.len() <= max {
        return clean;
    }
    let suffix = format!("~{}", &sha256_hex(name.as_bytes())[..8]);
    let mut cut = max.saturating_sub(suffix.len());
    while !clean.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{suffix}", &clean[..cut])
}

/// The error and its causes on one line, like `{err:#}`, but a cause whose text the message
/// already holds (an I/O error that a wrapper quoted) is not printed a second time.
pub fn error_chain(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if text.is_empty() || out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_quoted_values_are_shortened() {
        let huge = "x".repeat(1_000_000);
        let msg = format!("invalid type: string \"{huge}\", expected `u32`");
        let short = shorten_quoted(&msg, 40);
        assert!(short.len() < 200, "{short}");
        assert!(short.starts_with("invalid type: string \"xxxx"), "{short}");
        assert!(
            short.ends_with("… (1000000 bytes)\", expected `u32`"),
            "{short}"
        );
        assert_eq!(shorten_quoted("a \"b\" `c`", 40), "a \"b\" `c`");
    }

    #[test]
    fn the_line_index_agrees_with_line_col() {
        let text = "a\nbc\n\nd\n";
        let idx = LineIndex::new(text);
        for off in 0..=text.len() + 2 {
            assert_eq!(idx.line(off), line_col(text, off).0, "offset {off}");
        }
    }

    #[test]
    fn file_name_parts_lose_control_characters_and_long_names_keep_a_hash() {
        assert_eq!(file_name_part("a\x1b[31m/b\n", 100), "a_[31m_b_");
        let long = "é".repeat(200);
        let p = file_name_part(&long, 100);
        assert!(p.len() <= 100 && p.starts_with("éé"), "{p}");
        assert!(p.contains('~'), "{p}");
        let other = format!("{}x", "é".repeat(199));
        assert_ne!(file_name_part(&other, 100), p);
        assert_eq!(file_name_part("Qwen3-8B", 100), "Qwen3-8B");
    }
}
