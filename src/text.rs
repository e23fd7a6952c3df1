//! Small text helpers shared by the parsers: byte offset → line and column for error messages,
//! and shell-style word splitting for recorded command lines. Depends on nothing in the crate.

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
}
