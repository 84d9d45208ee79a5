//! Reading inputs: every file any command opens goes through this one bounded reader.
//!
//! [`read_text`] reads a whole file (or standard input for the path `-`) up to
//! [`MAX_INPUT_BYTES`], checks that it is UTF-8 (a leading byte-order mark is dropped, so
//! that every format reads a file with one as one without: YAML, JSON, CSV traces, metrics
//! text; [`Stream`] drops it from the first line) and reports a failure as a [`Diagnostic`]
//! naming the file, the byte offset and line of the first bad byte, with a hint for UTF-16.
//! [`open_stream`] opens a file for line-by-line streaming (large metric scrapes) with a byte
//! limit of its own ([`MAX_STREAM_BYTES`]): reading past it is an error, never a hang.
//! Both open files through [`open_file`], which refuses anything but a regular file (a FIFO,
//! a socket, a device, a directory) at once, naming the path, before it is opened: opening a
//! FIFO for reading would wait for a writer, and reading a device may never end. Standard
//! input (`-`) is read as it is, whatever it is connected to.
//!
//! ```
//! use gpuquota_model::source::{check_utf8, MAX_INPUT_BYTES};
//!
//! assert!(check_utf8("a.yaml", b"kind: Node\n".to_vec()).is_ok());
//! let bad = check_utf8("b.yaml", b"kind: N\xffode\n".to_vec()).unwrap_err();
//! assert_eq!(bad.to_string(), "b.yaml: input is not UTF-8 text: invalid byte at offset 7 (line 1)");
//! assert!(MAX_INPUT_BYTES >= 64 << 20);
//! ```

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::diag::{Diagnostic, codes};

/// The largest whole input accepted (bytes): manifests, meter documents, plan requests.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// The largest streamed input accepted (bytes): metric scrapes read line by line.
pub const MAX_STREAM_BYTES: u64 = 64 << 30;

/// The name a path is reported under (`<stdin>` for `-`).
pub fn display_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    }
}

/// What a path that is not a regular file is, in the user's words (`None` for a regular file).
fn not_regular(kind: std::fs::FileType) -> Option<&'static str> {
    if kind.is_file() {
        return None;
    }
    if kind.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
        if kind.is_block_device() || kind.is_char_device() {
            return Some("a device");
        }
    }
    Some("not a regular file")
}

/// The `read-failed` diagnostic for a path that is `what` instead of a regular file.
fn refuse(name: String, what: &str) -> Diagnostic {
    Diagnostic::error(
        codes::READ_FAILED,
        format!(
            "cannot read: the path is {what}, not a regular file; give a file, or `-` to read standard input"
        ),
    )
    .source(name)
}

/// Opens the regular file at `path` for reading; anything else (a FIFO, a socket, a device,
/// a directory) is refused, naming the path, without being opened or read.
///
/// The path's type is checked before opening (opening a FIFO would wait for a writer), and
/// the opened file's type again (the path may have been replaced in between). Symbolic
/// links are followed: a link to a regular file is read. Standard input (`-`) is not a path
/// here: callers read it themselves.
///
/// # Errors
/// A `read-failed` [`Diagnostic`] naming the file when it is missing, cannot be opened, or is
/// not a regular file.
///
/// # Complexity
/// Two `stat` calls and one `open`; nothing is read.
pub fn open_file(path: &Path) -> Result<std::fs::File, Diagnostic> {
    let failed = |e: std::io::Error| {
        Diagnostic::error(codes::READ_FAILED, format!("cannot read: {e}"))
            .source(display_name(path))
    };
    let before = std::fs::metadata(path).map_err(failed)?;
    if let Some(what) = not_regular(before.file_type()) {
        return Err(refuse(display_name(path), what));
    }
    let file = std::fs::File::open(path).map_err(failed)?;
    let after = file.metadata().map_err(failed)?;
    if let Some(what) = not_regular(after.file_type()) {
        return Err(refuse(display_name(path), what));
    }
    Ok(file)
}

/// Reads `path` (standard input for `-`) as UTF-8 text of at most [`MAX_INPUT_BYTES`].
///
/// # Errors
/// A [`Diagnostic`] (code `read-failed`, `input-too-large` or `not-utf8`) naming the file.
///
/// # Complexity
/// Linear in the input, which is read at most once.
pub fn read_text(path: &Path) -> Result<String, Diagnostic> {
    read_text_limited(path, MAX_INPUT_BYTES)
}

/// [`read_text`] with an explicit byte limit.
///
/// # Errors
/// As [`read_text`].
pub fn read_text_limited(path: &Path, limit: u64) -> Result<String, Diagnostic> {
    let name = display_name(path);
    let mut bytes = Vec::new();
    let read = if path.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .take(limit + 1)
            .read_to_end(&mut bytes)
    } else {
        match open_file(path) {
            Ok(f) => f.take(limit + 1).read_to_end(&mut bytes),
            Err(d) => return Err(d),
        }
    };
    if let Err(e) = read {
        return Err(
            Diagnostic::error(codes::READ_FAILED, format!("cannot read: {e}")).source(name),
        );
    }
    if bytes.len() as u64 > limit {
        return Err(Diagnostic::error(
            codes::INPUT_TOO_LARGE,
            format!("input is larger than the limit of {limit} bytes; split it into several files"),
        )
        .source(name));
    }
    check_utf8(&name, bytes).map(without_bom)
}

/// The UTF-8 byte-order mark, which some editors write first in a file.
pub const BOM: char = '\u{feff}';

/// `text` without a leading byte-order mark: every format is read as if it had none.
fn without_bom(mut text: String) -> String {
    if text.starts_with(BOM) {
        text.drain(..BOM.len_utf8());
    }
    text
}

/// Turns bytes into text, or says where the first byte that is not UTF-8 is.
///
/// # Errors
/// A `not-utf8` [`Diagnostic`] with the byte offset and line; UTF-16 input (a byte-order mark
/// or NUL bytes between ASCII) gets a hint to convert it.
pub fn check_utf8(name: &str, bytes: Vec<u8>) -> Result<String, Diagnostic> {
    match String::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => {
            let bytes = e.as_bytes();
            let offset = e.utf8_error().valid_up_to();
            let line = 1 + bytes[..offset].iter().filter(|&&b| b == b'\n').count();
            let utf16 = bytes.starts_with(&[0xff, 0xfe])
                || bytes.starts_with(&[0xfe, 0xff])
                || (bytes.len() >= 4 && (bytes[1] == 0 || bytes[0] == 0));
            let mut message =
                format!("input is not UTF-8 text: invalid byte at offset {offset} (line {line})");
            if utf16 {
                message.push_str(
                    "; it looks like UTF-16: convert it first, e.g. `iconv -f UTF-16 -t UTF-8`",
                );
            }
            Err(Diagnostic::error(codes::NOT_UTF8, message).source(name.to_owned()))
        }
    }
}

/// A line reader over a file or standard input that stops with an error past a byte limit.
pub struct Stream {
    name: String,
    inner: Box<dyn BufRead>,
    read: u64,
    limit: u64,
    line: u64,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("name", &self.name)
            .field("read", &self.read)
            .field("line", &self.line)
            .finish()
    }
}

/// Opens `path` (standard input for `-`) for streaming with the limit [`MAX_STREAM_BYTES`].
///
/// # Errors
/// A `read-failed` [`Diagnostic`] when the file cannot be opened.
pub fn open_stream(path: &Path) -> Result<Stream, Diagnostic> {
    let name = display_name(path);
    let inner: Box<dyn BufRead> = if path.as_os_str() == "-" {
        Box::new(BufReader::with_capacity(1 << 16, std::io::stdin()))
    } else {
        Box::new(BufReader::with_capacity(1 << 16, open_file(path)?))
    };
    Ok(Stream {
        name,
        inner,
        read: 0,
        limit: MAX_STREAM_BYTES,
        line: 0,
    })
}

impl Stream {
    /// A stream over any reader (for tests and embedders), with a byte limit.
    pub fn from_reader(
        name: impl Into<String>,
        reader: impl BufRead + 'static,
        limit: u64,
    ) -> Stream {
        Stream {
            name: name.into(),
            inner: Box::new(reader),
            read: 0,
            limit,
            line: 0,
        }
    }

    /// The name the stream reports under.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The 1-based number of the line last read (0 before the first).
    pub fn line_number(&self) -> u64 {
        self.line
    }

    /// The first byte that is not ASCII white space, without consuming it (`None` at the end
    /// of the input); the white space and a leading byte-order mark before it are consumed
    /// (the newlines among them still count as lines). For readers that choose a format
    /// from the first byte without reading a whole line.
    ///
    /// # Errors
    /// A [`Diagnostic`] on an I/O error or past the byte limit.
    pub fn peek_non_space(&mut self) -> Result<Option<u8>, Diagnostic> {
        loop {
            let buf = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) => return Err(self.io_error(&e)),
            };
            if buf.is_empty() {
                return Ok(None);
            }
            let bom = if self.read == 0 && buf.starts_with(b"\xef\xbb\xbf") {
                3
            } else {
                0
            };
            let skip = bom
                + buf[bom..]
                    .iter()
                    .position(|b| !b.is_ascii_whitespace())
                    .unwrap_or(buf.len() - bom);
            let first = buf.get(skip).copied();
            self.line += buf[..skip].iter().filter(|b| **b == b'\n').count() as u64;
            self.inner.consume(skip);
            self.read += skip as u64;
            if self.read > self.limit {
                return Err(self.too_large());
            }
            if first.is_some() {
                return Ok(first);
            }
        }
    }

    /// Reads raw bytes into `buf` (for readers that split lines or tokens themselves; line
    /// numbers are not kept), at most up to the byte limit; `Ok(0)` at the end of the input.
    /// The bytes are not checked for UTF-8.
    ///
    /// # Errors
    /// A [`Diagnostic`] on an I/O error or past the byte limit.
    pub fn read_bytes(&mut self, buf: &mut [u8]) -> Result<usize, Diagnostic> {
        let n = loop {
            match self.inner.read(buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io_error(&e)),
            }
        };
        self.read += n as u64;
        if self.read > self.limit {
            return Err(self.too_large());
        }
        Ok(n)
    }

    fn io_error(&self, e: &std::io::Error) -> Diagnostic {
        let code = if e.kind() == std::io::ErrorKind::InvalidData {
            codes::INPUT_TOO_LARGE
        } else {
            codes::READ_FAILED
        };
        Diagnostic::error(code, format!("cannot read: {e}")).source(self.name.clone())
    }

    fn too_large(&self) -> Diagnostic {
        Diagnostic::error(
            codes::INPUT_TOO_LARGE,
            format!("input is larger than the limit of {} bytes", self.limit),
        )
        .source(self.name.clone())
    }

    /// Reads the next line into `buf` (cleared first, line ending removed); `Ok(false)` at the
    /// end of the input.
    ///
    /// # Errors
    /// A [`Diagnostic`] on an I/O error, past the byte limit, or on a line that is not UTF-8.
    pub fn next_line(&mut self, buf: &mut String) -> Result<bool, Diagnostic> {
        buf.clear();
        let mut bytes = std::mem::take(buf).into_bytes();
        // Never read past the limit, even within one line (`/dev/zero` has no newline).
        let room = self.limit.saturating_sub(self.read).saturating_add(1);
        let n = match (&mut self.inner).take(room).read_until(b'\n', &mut bytes) {
            Ok(n) => n,
            // a reader's own limit (a line too long to be the format read) is a limit, not a
            // file that cannot be read
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                return Err(
                    Diagnostic::error(codes::INPUT_TOO_LARGE, format!("cannot read: {e}"))
                        .source(self.name.clone()),
                );
            }
            Err(e) => {
                return Err(
                    Diagnostic::error(codes::READ_FAILED, format!("cannot read: {e}"))
                        .source(self.name.clone()),
                );
            }
        };
        if n == 0 {
            return Ok(false);
        }
        self.read += n as u64;
        self.line += 1;
        if self.read > self.limit {
            return Err(Diagnostic::error(
                codes::INPUT_TOO_LARGE,
                format!("input is larger than the limit of {} bytes", self.limit),
            )
            .source(self.name.clone()));
        }
        if bytes.last() == Some(&b'\n') {
            bytes.pop();
            if bytes.last() == Some(&b'\r') {
                bytes.pop();
            }
        }
        match String::from_utf8(bytes) {
            Ok(s) => {
                // a byte-order mark before the first line is not part of it
                *buf = if self.line == 1 { without_bom(s) } else { s };
                Ok(true)
            }
            Err(e) => Err(Diagnostic::error(
                codes::NOT_UTF8,
                format!(
                    "line {} is not UTF-8 text (invalid byte at column {})",
                    self.line,
                    e.utf8_error().valid_up_to() + 1
                ),
            )
            .source(self.name.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Peeking skips a byte-order mark and white space (counting its newlines as lines) and
    /// leaves the first other byte to be read; raw reads stop at the byte limit.
    #[test]
    fn peek_and_raw_reads() {
        let text = "\u{feff} \n\n{\"a\": 1}\nx\n";
        let mut s = Stream::from_reader("t", std::io::Cursor::new(text.as_bytes().to_vec()), 100);
        assert_eq!(s.peek_non_space().unwrap(), Some(b'{'));
        assert_eq!(s.line_number(), 2);
        let mut line = String::new();
        assert!(s.next_line(&mut line).unwrap());
        assert_eq!((line.as_str(), s.line_number()), ("{\"a\": 1}", 3));
        let mut s = Stream::from_reader("t", std::io::Cursor::new(vec![b'a'; 10]), 8);
        let mut buf = [0u8; 4];
        assert_eq!(s.read_bytes(&mut buf).unwrap(), 4);
        assert_eq!(s.read_bytes(&mut buf).unwrap(), 4);
        assert_eq!(
            s.read_bytes(&mut buf).unwrap_err().to_string(),
            "t: input is larger than the limit of 8 bytes"
        );
        let mut empty = Stream::from_reader("e", std::io::Cursor::new(b" \n".to_vec()), 8);
        assert_eq!(empty.peek_non_space().unwrap(), None);
    }

    #[test]
    fn a_byte_order_mark_is_dropped() {
        let dir = std::env::temp_dir().join(format!("gpuquota-bom-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bom.json");
        std::fs::write(&path, b"\xef\xbb\xbf{\"a\": 1}\n").unwrap();
        assert_eq!(read_text(&path).unwrap(), "{\"a\": 1}\n");
        let mut s = open_stream(&path).unwrap();
        let mut buf = String::new();
        assert!(s.next_line(&mut buf).unwrap());
        assert_eq!(buf, "{\"a\": 1}");
        // only the first: a second mark, or one on a later line, is text
        std::fs::write(&path, "\u{feff}\u{feff}a\n\u{feff}b\n").unwrap();
        assert_eq!(read_text(&path).unwrap(), "\u{feff}a\n\u{feff}b\n");
        let mut s = open_stream(&path).unwrap();
        assert!(s.next_line(&mut buf).unwrap());
        assert_eq!(buf, "\u{feff}a");
        assert!(s.next_line(&mut buf).unwrap());
        assert_eq!(buf, "\u{feff}b");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn utf16_gets_a_hint() {
        let bytes = vec![0xff, 0xfe, b'k', 0, b'i', 0];
        let e = check_utf8("x.yaml", bytes).unwrap_err();
        assert!(e.message.contains("UTF-16"), "{e}");
        assert_eq!(e.code, codes::NOT_UTF8);
    }

    #[test]
    fn stream_stops_at_its_limit() {
        let text = "a\nbb\nccc\n".repeat(10);
        let mut s = Stream::from_reader("t", std::io::Cursor::new(text.into_bytes()), 10);
        let mut buf = String::new();
        assert!(s.next_line(&mut buf).unwrap());
        assert_eq!(buf, "a");
        assert!(s.next_line(&mut buf).unwrap());
        assert!(s.next_line(&mut buf).unwrap());
        assert_eq!(buf, "ccc");
        let e = s.next_line(&mut buf).unwrap_err();
        assert_eq!(e.code, codes::INPUT_TOO_LARGE);
        // One endless line is cut at the limit, not read into memory.
        let mut s =
            Stream::from_reader("zero", std::io::BufReader::new(std::io::repeat(0)), 1 << 20);
        assert_eq!(
            s.next_line(&mut buf).unwrap_err().code,
            codes::INPUT_TOO_LARGE
        );
    }

    #[test]
    fn missing_file_is_a_read_error() {
        let e = read_text(Path::new("/nonexistent/gpuquota/x.yaml")).unwrap_err();
        assert_eq!(e.code, codes::READ_FAILED);
        assert!(
            e.to_string()
                .starts_with("/nonexistent/gpuquota/x.yaml: cannot read")
        );
    }
}

#[cfg(test)]
#[cfg(unix)]
mod fifo_tests {
    use super::*;

    /// A FIFO in a fresh directory under the target directory's temp area.
    pub(crate) fn fifo(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("gpuquota-source-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("pipe.yaml");
        let status = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success());
        path
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // the wall clock bounds the wait, nothing else
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let path = fifo("read");
        let started = std::time::Instant::now();
        let e = read_text(&path).unwrap_err();
        assert_eq!(e.code, codes::READ_FAILED);
        assert_eq!(
            e.to_string(),
            format!(
                "{}: cannot read: the path is a FIFO (named pipe), not a regular file; give a file, or `-` to read standard input",
                path.display()
            )
        );
        let e = open_stream(&path).unwrap_err();
        assert_eq!(e.code, codes::READ_FAILED);
        assert!(e.message.contains("a FIFO"), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn devices_and_directories_are_refused() {
        let e = read_text(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero: cannot read: the path is a device, not a regular file; give a file, or `-` to read standard input"
        );
        let e = read_text(Path::new("/")).unwrap_err();
        assert!(e.message.contains("the path is a directory"), "{e}");
        assert_eq!(e.code, codes::READ_FAILED);
    }
}
