//! Every file perfgate writes whole goes through [`write`]: the bytes go to a temporary file in
//! the target's directory, are flushed to disk, and the temporary file is renamed over the
//! target. A write that fails part-way (disk full, a signal, a crash) leaves the old file as it
//! was, never a truncated one — `baseline record --runs-from X -o X` reads and rewrites the same
//! file. The rename is atomic because source and target share a file system.

use std::io::Write;
use std::path::Path;

/// Replace `path` with `bytes` atomically. A new file gets mode 0644; an existing one keeps its
/// permissions. The error names the path once.
pub fn write(path: &Path, bytes: impl AsRef<[u8]>) -> Result<(), WriteError> {
    write_inner(path, bytes.as_ref()).map_err(|reason| WriteError {
        path: path.display().to_string(),
        reason,
    })
}

/// A failed [`write`].
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path}: {reason}")]
pub struct WriteError {
    pub path: String,
    // Not named `source`: the message already says it, and `{:#}` would say it twice.
    reason: std::io::Error,
}

fn write_inner(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if path.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "it is a directory",
        ));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".perfgate-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    let perms = match std::fs::metadata(path) {
        Ok(m) => m.permissions(),
        Err(_) => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::Permissions::from_mode(0o644)
        }
    };
    tmp.as_file().set_permissions(perms)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    // The rename itself is durable once the directory is synced; best effort.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        std::fs::write(&p, "old").unwrap();
        write(&p, "new contents").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new contents");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file left behind");
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_says_it_once() {
        let dir = tempfile::tempdir().unwrap();
        let e = write(dir.path(), "x").unwrap_err().to_string();
        assert_eq!(e.matches("directory").count(), 1, "{e}");
        // The directory of the target cannot take the temporary file: the target is untouched.
        let sub = dir.path().join("ro");
        std::fs::create_dir(&sub).unwrap();
        let p = sub.join("keep.toml");
        std::fs::write(&p, "precious").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o555)).unwrap();
        let r = write(&p, "replacement");
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).unwrap();
        if r.is_err() {
            // (As root the directory stays writable and the write succeeds; nothing to check.)
            assert_eq!(std::fs::read_to_string(&p).unwrap(), "precious");
        }
    }
}
