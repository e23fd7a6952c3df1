//! Every file perfgate writes whole goes through [`write()`]: the bytes go to a temporary file in
//! the target's directory, are flushed to disk, and the temporary file is renamed over the
//! target. A write that fails part-way (disk full, a signal, a crash) leaves the old file as it
//! was, never a truncated one — `baseline record --runs-from X -o X` reads and rewrites the same
//! file. The rename is atomic because source and target share a file system.
//!
//! The files a live run appends to as it measures are made by [`create`] the same way (a new
//! file renamed over the name), so a symbolic link planted there is replaced, never followed and
//! its target never truncated. Neither ever replaces a device node, a FIFO or a socket: such a
//! target is refused, naming it. A write past the file size limit (`ulimit -f`) fails with
//! "File too large" and removes its temporary file: [`ignore_file_size_signal`] turns the
//! SIGXFSZ that would kill perfgate mid-write into that error.

use std::fs::File;
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

/// A failed [`write()`].
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path}: {reason}")]
pub struct WriteError {
    pub path: String,
    // Not named `source`: the message already says it, and `{:#}` would say it twice.
    reason: std::io::Error,
}

impl WriteError {
    /// The I/O error alone (the path is in [`WriteError::path`]).
    pub fn into_io(self) -> std::io::Error {
        self.reason
    }
}

/// Create `path` afresh for appending: an empty new file is renamed over the name, so whatever
/// was there (an old file, a symbolic link) is replaced and nothing it pointed to is opened or
/// truncated. A device node, FIFO, socket or directory there is refused. The error names the path.
pub fn create(path: &Path) -> Result<File, WriteError> {
    let inner = || {
        let tmp = temporary(path)?;
        tmp.persist(path).map_err(|e| e.error)
    };
    inner().map_err(|reason| WriteError {
        path: path.display().to_string(),
        reason,
    })
}

/// Ignore SIGXFSZ (call once at start): a write past the file size limit (`ulimit -f`) then
/// fails with EFBIG ("File too large"), which [`write()`] reports after removing its temporary
/// file, instead of killing perfgate with the temporary file left behind. Children started
/// afterwards inherit the ignored signal; the engine's spawn restores the default.
pub fn ignore_file_size_signal() {
    use nix::sys::signal::{signal, SigHandler, Signal};
    // SAFETY: installs SIG_IGN, no handler code runs.
    let _ = unsafe { signal(Signal::SIGXFSZ, SigHandler::SigIgn) };
}

/// Refuse a target that is not a regular file (following a symbolic link): replacing a device
/// node or a FIFO with a regular file would break it (as root, `/dev/null` itself).
fn check_target(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(()); // absent (or a dangling link): a new file
    };
    let t = meta.file_type();
    let what = if t.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "it is a directory",
        ));
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        return Ok(());
    };
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("it is {what}, not a regular file (perfgate replaces its output files whole; write to a regular file)"),
    ))
}

/// A temporary file next to `path` (mode 0644, or the permissions of the file it replaces),
/// after [`check_target`].
fn temporary(path: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    check_target(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".perfgate-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    let perms = match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_file() => m.permissions(),
        _ => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::Permissions::from_mode(0o644)
        }
    };
    tmp.as_file().set_permissions(perms)?;
    Ok(tmp)
}

fn write_inner(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = temporary(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    // The rename itself is durable once the directory is synced; best effort.
    if let Ok(d) = File::open(dir) {
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
