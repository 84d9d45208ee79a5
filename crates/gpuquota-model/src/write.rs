//! The one way gpuquota writes a file: whole or not at all, never through a symbolic link,
//! never over an existing file unless asked.
//!
//! Every error is an [`std::io::Error`] whose message names the path (`PATH: exists; --force
//! replaces it`, `PATH: is a symbolic link; not written`, or the system's reason after
//! `PATH: `), so a command prints it as it is.

use std::io::{Error, ErrorKind};
use std::path::Path;

/// An error naming `path`.
fn named(path: &Path, kind: ErrorKind, what: impl std::fmt::Display) -> Error {
    Error::new(kind, format!("{}: {what}", path.display()))
}

/// Writes `bytes` to the file at `path`.
///
/// - A symbolic link at `path` is refused (its target is never opened), as is anything there
///   that is not a regular file.
/// - An existing file is refused unless `force` (the commands' `--force`), and then replaced.
/// - The bytes go to a new temporary file beside `path` (created exclusively, never through a
///   link), are flushed to disk, and the temporary file is then renamed to `path` — without
///   `force` hard-linked, which fails rather than replace a file that appeared meanwhile — so
///   a reader sees the old file or the whole new one, never a part. On any error the
///   temporary file is removed.
///
/// # Errors
/// The path's error as the [module docs](self) describe it.
pub fn file(path: &Path, bytes: &[u8], force: bool) -> std::io::Result<()> {
    file_with(path, force, |f| {
        use std::io::Write as _;
        f.write_all(bytes)
    })
}

/// [`file()`] with the temporary file filled by `fill`.
fn file_with(
    path: &Path,
    force: bool,
    fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let fail = |e: Error| named(path, e.kind(), e);
    check_target(path, force)?;
    let name = path
        .file_name()
        .ok_or_else(|| named(path, ErrorKind::InvalidInput, "not a file name"))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    // the temporary file: new (O_CREAT | O_EXCL, which never follows a link), beside `path`
    let mut attempt = 0u32;
    let (tmp, mut file) = loop {
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".{}.{attempt}.tmp", std::process::id()));
        let tmp = dir.join(tmp_name);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1;
            }
            Err(e) => return Err(fail(e)),
        }
    };
    let written = fill(&mut file).and_then(|()| file.sync_all());
    drop(file);
    let placed = written.map_err(fail).and_then(|()| {
        if force {
            std::fs::rename(&tmp, path).map_err(fail)
        } else {
            match std::fs::hard_link(&tmp, path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    check_target(path, false).and_then(|()| Err(fail(e)))
                }
                // a file system without hard links: the check above, then the rename
                Err(_) => check_target(path, false)
                    .and_then(|()| std::fs::rename(&tmp, path).map_err(fail)),
            }
        }
    });
    // after a rename the name is gone already; after a link or an error it is removed
    let _ = std::fs::remove_file(&tmp);
    placed
}

/// Whether [`file()`] may write at `path`, checked before any work: not when there is a
/// symbolic link, anything but a regular file, or (unless `force`) an existing file.
///
/// # Errors
/// What is at `path`, as the [module docs](self) describe it.
pub fn check_target(path: &Path, force: bool) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(named(path, e.kind(), e)),
        Ok(m) if m.file_type().is_symlink() => Err(named(
            path,
            ErrorKind::InvalidInput,
            "is a symbolic link; not written",
        )),
        Ok(m) if !m.is_file() => Err(named(
            path,
            ErrorKind::InvalidInput,
            "exists and is not a regular file; not written",
        )),
        Ok(_) if force => Ok(()),
        Ok(_) => Err(named(
            path,
            ErrorKind::AlreadyExists,
            "exists; --force replaces it",
        )),
    }
}

/// Creates the directory `dir` (and its parents) for the files written into it; a directory
/// that is already there is used as it is.
///
/// # Errors
/// The system's reason, after `DIR: `.
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| named(dir, e.kind(), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh empty directory for one test.
    fn scratch(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("gpuquota-write-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn entries(dir: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn writes_a_new_file_and_leaves_nothing_else() {
        let dir = scratch("new");
        let target = dir.join("a.yaml");
        file(&target, b"kind: A\n", false).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "kind: A\n");
        assert_eq!(entries(&dir), ["a.yaml"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_existing_file_is_refused_without_force_and_replaced_with_it() {
        let dir = scratch("exists");
        let target = dir.join("a.svg");
        std::fs::write(&target, "old").unwrap();
        let err = file(&target, b"new", false).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("{}: exists; --force replaces it", target.display())
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        file(&target, b"new", true).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(entries(&dir), ["a.svg"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_refused_even_with_force_and_its_target_untouched() {
        let dir = scratch("link");
        let victim = dir.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let target = dir.join("plot.svg");
        std::os::unix::fs::symlink(&victim, &target).unwrap();
        // a dangling link too: it would otherwise create the file it points at
        let dangling = dir.join("dangling.svg");
        std::os::unix::fs::symlink(dir.join("created"), &dangling).unwrap();
        for force in [false, true] {
            for path in [&target, &dangling] {
                let err = file(path, b"<svg/>", force).unwrap_err();
                assert_eq!(
                    err.to_string(),
                    format!("{}: is a symbolic link; not written", path.display())
                );
            }
        }
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(entries(&dir), ["dangling.svg", "plot.svg", "victim"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_temporary_file_is_beside_the_target_and_removed_on_error() {
        let dir = scratch("tmp");
        let target = dir.join("month.yaml");
        let mut seen = Vec::new();
        let err = file_with(&target, false, |f| {
            use std::io::Write as _;
            f.write_all(b"half")?;
            seen = entries(&dir);
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), format!("{}: disk full", target.display()));
        assert_eq!(seen, [format!(".month.yaml.{}.0.tmp", std::process::id())]);
        assert_eq!(entries(&dir), Vec::<String>::new());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_at_the_target_is_refused() {
        let dir = scratch("dir");
        let err = file(&dir, b"x", true).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: exists and is not a regular file; not written",
                dir.display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
