//! Small text helpers shared by the parsers: byte offset → line and column for error messages,
//! and shell-style word splitting for recorded command lines. Depends on nothing in the crate.

/// 1-based line and column of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(offset, |i| offset - i - 1) + 1;
    (line, col)
}

/// Split a shell command line into words (POSIX rules, by the `shell-words` crate: single and
/// double quotes, backslash escapes, line continuations; nothing is expanded). A line with an
/// unbalanced quote (a log cut mid-command) falls back to splitting on whitespace.
pub fn shell_words(cmd: &str) -> Vec<String> {
    ::shell_words::split(cmd)
        .unwrap_or_else(|_| cmd.split_whitespace().map(str::to_string).collect())
}
