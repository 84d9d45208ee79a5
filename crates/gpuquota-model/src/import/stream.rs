//! JSON files read as a stream: each top-level value is decoded as soon as it has been read,
//! so the file's text is never held whole while the model is built.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use super::MAX_SOURCE_BYTES;
use super::fast::{self, Sink, Splitter};

/// How much is read at a time.
const CHUNK: usize = 1 << 16;

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// A file whose text starts like JSON (after byte-order marks and whitespace), opened, with
/// what has been read of it so far.
pub(super) struct JsonFile {
    reader: io::Take<File>,
    buf: Vec<u8>,
    /// Where the first value starts in `buf`.
    start: usize,
}

impl JsonFile {
    /// Opens `path` (through [`crate::source::open_file`]: a regular file only) and reads up
    /// to its first value; `None` when the file cannot be opened or read, or its text does not start with `{` or `[` after any byte-order marks and
    /// then ASCII whitespace (the importer then reads it whole, which decides and reports).
    ///
    /// # Complexity
    /// Linear in the bytes before the first value.
    pub(super) fn open(path: &Path) -> Option<JsonFile> {
        let file = crate::source::open_file(path).ok()?;
        let mut reader = file.take(MAX_SOURCE_BYTES as u64 + 1);
        let mut buf = Vec::with_capacity(CHUNK);
        let mut i = 0;
        let mut marks = true;
        loop {
            // Enough bytes to tell a byte-order mark from the rest.
            while buf.len() < i + BOM.len() {
                if fill(&mut reader, &mut buf).ok()? == 0 {
                    break;
                }
            }
            let rest = buf.get(i..)?;
            if marks && rest.starts_with(BOM) {
                i += BOM.len();
                continue;
            }
            marks = false;
            match rest.first()? {
                b' ' | b'\t' | b'\n' | b'\r' => i += 1,
                b'{' | b'[' => break,
                _ => return None,
            }
        }
        Some(JsonFile {
            reader,
            buf,
            start: i,
        })
    }

    /// Reads every value of the file into `sink`, as [`fast::parse`] reads a text; false when
    /// anything needs the exact path, the file is larger than [`MAX_SOURCE_BYTES`], it is not
    /// UTF-8, or it cannot be read to the end.
    ///
    /// # Complexity
    /// Linear in the file; the buffer holds the longest value plus one read.
    pub(super) fn read(mut self, sink: &mut dyn Sink) -> bool {
        let mut split = Splitter::default();
        split.forget_before(self.start);
        let mut total = self.buf.len();
        let mut consumed = 0;
        loop {
            match split.next(&self.buf) {
                Ok(Some(range)) => {
                    consumed = range.end;
                    let Some(doc) = self
                        .buf
                        .get(range)
                        .and_then(|b| std::str::from_utf8(b).ok())
                    else {
                        return false;
                    };
                    if !fast::json_document(doc, split.keys_unique(), split.may_have_null(), sink) {
                        return false;
                    }
                }
                Ok(None) => {
                    self.buf.drain(..consumed);
                    split.forget(consumed);
                    consumed = 0;
                    match fill(&mut self.reader, &mut self.buf) {
                        Ok(0) => return split.between_values(),
                        Ok(n) => {
                            total += n;
                            if total > MAX_SOURCE_BYTES {
                                return false;
                            }
                        }
                        Err(_) => return false,
                    }
                }
                Err(()) => return false,
            }
        }
    }
}

/// Appends up to [`CHUNK`] bytes of `reader` to `buf`; the number appended (0 at the end).
fn fill(reader: &mut impl Read, buf: &mut Vec<u8>) -> io::Result<usize> {
    let len = buf.len();
    buf.resize(len + CHUNK, 0);
    loop {
        match reader.read(buf.get_mut(len..).unwrap_or_default()) {
            Ok(n) => {
                buf.truncate(len + n);
                return Ok(n);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                buf.truncate(len);
                return Err(e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::JsonFile;
    use crate::import::fast::Doc;

    /// Writes `text` to a file of its own and reads it with the stream reader.
    fn read(name: &str, text: &[u8]) -> Option<(bool, usize)> {
        let path =
            std::env::temp_dir().join(format!("gpuquota-stream-{}-{name}", std::process::id()));
        std::fs::write(&path, text).ok()?;
        let file = JsonFile::open(&path);
        let mut docs: Vec<Doc> = Vec::new();
        let answer = file.map(|f| (f.read(&mut docs), docs.len()));
        std::fs::remove_file(&path).ok()?;
        answer
    }

    #[test]
    fn a_long_stream_is_read_to_the_end_in_pieces() {
        let one = "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"a-very-long-namespace-name-to-fill-the-pieces\"}}\n";
        let text = format!("\u{feff} \n{}", one.repeat(3000));
        assert!(text.len() > 4 * super::CHUNK);
        assert_eq!(read("long", text.as_bytes()), Some((true, 3000)));
    }

    #[test]
    fn what_is_not_plain_json_is_handed_back() {
        assert_eq!(read("yaml", b"apiVersion: v1\nkind: Namespace\n"), None);
        assert_eq!(read("blank", b" \n"), None);
        assert_eq!(read("mark-after-space", b" \xef\xbb\xbf{}"), None);
        assert_eq!(read("not-utf8", b"{\"a\": \"\xff\"}"), Some((false, 0)));
        assert_eq!(read("cut", b"{\"a\": 1"), Some((false, 0)));
        assert_eq!(read("two", b"[] [] {\"a\": 1, \"a\": 2}"), Some((false, 2)));
    }
}
