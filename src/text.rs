//! Small text helpers shared by the parsers: byte offset → line and column for error messages,
//! shell-style word splitting for recorded command lines, SHA-256 digests, and file-name parts
//! made from text others chose. Depends on nothing in the crate.

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

#[cfg(test)]
mod tests {
    use super::*;

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
