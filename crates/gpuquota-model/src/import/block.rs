//! A scanner for the plainest block YAML, the form `kubectl get -o yaml` and serializers
//! write: it turns such text into the same events saphyr-parser gives for it, without
//! copying a scalar, and gives up ([`Fallback`]) on every other construct, so that the
//! event parser reads the source instead.
//!
//! Read here: `---` lines between documents; block mappings whose keys are plain one-line
//! scalars followed by `: ` (or `:` at the end of the line); block sequences (`- `, also
//! at the indentation of the key they belong to), with a compact mapping on the dash's line;
//! one-line values: plain scalars, single- or double-quoted scalars without escapes, and
//! flow collections that close on their line (`{name: x, count: 2}`, `[a, b]`, nested; a
//! whole document, a sequence item or a value), as generators and Kueue's documentation
//! write them; blank lines and whole-line comments. Everything else is refused: tabs,
//! carriage returns, a byte-order mark, directives, `...`, a `#` after content (also inside
//! a flow collection), a flow collection over several lines, with an empty entry, a
//! trailing comma, a key without a value or a single pair in a sequence, block scalars
//! (`|`, `>`), anchors, aliases and tags, a value that goes on on the next line, a complex
//! key or a quoted key in block style, `- - x`, an implicit key longer than 1,024 bytes.
//!
//! # Complexity
//! Linear in the input: each line's bytes are classified in one pass (newline, characters
//! YAML does not allow, `#`, `:`), and a line's entry is split where that pass found the
//! colon, so a line is read once, not once per check.

use std::borrow::Cow;

use saphyr_parser::ScalarStyle;

use super::yaml::{Ev, Fallback};

/// Byte classes of [`CLASS`].
const NEWLINE: u8 = 1;
/// A C0 control character other than the newline, or DEL: never read here.
const CONTROL: u8 = 2;
/// A byte of a multi-byte character: the line's characters are checked one by one.
const HIGH: u8 = 4;
const HASH: u8 = 8;
const COLON: u8 = 16;
/// Not a byte class: set on a line with more than one `:`.
const COLONS: u8 = 32;

/// The class of every byte, for the one pass over a line.
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = match i as u8 {
            b'\n' => NEWLINE,
            0..=0x1f | 0x7f => CONTROL,
            0x80..=0xff => HIGH,
            b'#' => HASH,
            b':' => COLON,
            _ => 0,
        };
        i += 1;
    }
    t
};

/// One significant line: its indentation (spaces) and its content (from the first non-space
/// byte to the last non-space byte) as an entry, with where a mapping entry's colon is and
/// what the pass over the line saw.
#[derive(Clone, Copy)]
struct Line<'a> {
    indent: usize,
    entry: Entry<'a>,
    /// Where the next line starts.
    after: usize,
}

/// Text that may be a mapping entry (a whole line's content, or what follows a dash).
#[derive(Clone, Copy)]
struct Entry<'a> {
    text: &'a str,
    /// The byte index in `text` of the colon that ends the key: the first `": "`, or the
    /// last byte when it is `:` and there is no `": "`; `None` when there is neither.
    colon: Option<usize>,
    /// The classes seen on the line ([`HASH`], [`COLON`], [`COLONS`]).
    flags: u8,
}

impl<'a> Entry<'a> {
    /// The entry after the first `skip` bytes of `self.text`, which hold no colon.
    fn after(self, skip: usize) -> Entry<'a> {
        Entry {
            text: &self.text[skip..],
            colon: self.colon.and_then(|c| c.checked_sub(skip)),
            flags: self.flags,
        }
    }
}

impl Line<'_> {
    fn is_dash(&self) -> bool {
        let b = self.entry.text.as_bytes();
        b[0] == b'-' && (b.len() == 1 || b[1] == b' ')
    }
}

/// One raw line: without its newline and trailing spaces, where its first colon is, the
/// classes seen, and where the next line starts.
struct Raw<'a> {
    line: &'a str,
    first_colon: Option<usize>,
    flags: u8,
    after: usize,
}

/// The scanner: the text, where the next line starts, and the events of the current document.
pub(super) struct Block<'a> {
    text: &'a str,
    pos: usize,
    /// The next significant line of the current document, once looked at.
    peeked: Option<Option<Line<'a>>>,
    /// A document has been started (explicitly by `---` or implicitly by content).
    in_document: bool,
    started: bool,
    ended: bool,
    events: Vec<Ev<'a>>,
    next: usize,
    /// Where the last line looked at starts (for [`Block::line`]).
    at: usize,
}

impl<'a> Block<'a> {
    pub(super) fn new(text: &'a str) -> Block<'a> {
        Block {
            text,
            pos: 0,
            peeked: None,
            in_document: false,
            started: false,
            ended: false,
            events: Vec::new(),
            next: 0,
            at: 0,
        }
    }

    /// The line (1-based) the scanner looked at last: where it gave up, after a
    /// [`Fallback`] (near the document's end when the deserializer gave up on the events of
    /// a whole document).
    pub(super) fn line(&self) -> usize {
        let at = self.at.min(self.text.len());
        1 + self.text.as_bytes()[..at]
            .iter()
            .filter(|&&c| c == b'\n')
            .count()
    }

    /// The next event, as saphyr-parser would give it for this text.
    pub(super) fn next_event(&mut self) -> Result<Ev<'a>, Fallback> {
        if let Some(ev) = self.events.get_mut(self.next) {
            self.next += 1;
            return Ok(std::mem::replace(ev, Ev::StreamEnd));
        }
        if !self.started {
            self.started = true;
            if self.text.starts_with('\u{feff}') {
                return Err(Fallback);
            }
            return Ok(Ev::StreamStart);
        }
        if self.ended {
            return Err(Fallback);
        }
        self.events.clear();
        self.next = 0;
        if !self.document()? {
            self.ended = true;
            return Ok(Ev::StreamEnd);
        }
        self.next_event()
    }

    /// Reads the next document into `events`; false at the end of the text.
    fn document(&mut self) -> Result<bool, Fallback> {
        // Skip to the first content line or document marker.
        loop {
            self.at = self.pos;
            let Some(raw) = self.raw_line()? else {
                return Ok(false);
            };
            if raw.line == "---" {
                self.pos = raw.after;
                self.in_document = true;
                break;
            }
            let content = trim_start(raw.line);
            if content.is_empty() || content.starts_with('#') {
                self.pos = raw.after;
                continue;
            }
            if self.in_document {
                // Content after a document without a marker: not this scanner's to split.
                return Err(Fallback);
            }
            // An implicit first document.
            self.in_document = true;
            break;
        }
        self.peeked = None;
        self.events.push(Ev::DocumentStart);
        match self.peek()? {
            None => self.events.push(plain_scalar("~")),
            Some(line) => {
                self.block(line)?;
                if self.peek()?.is_some() {
                    return Err(Fallback);
                }
            }
        }
        self.events.push(Ev::DocumentEnd);
        Ok(true)
    }

    /// The line at `pos`, read in one pass; `None` at the end of the text.
    ///
    /// # Errors
    /// [`Fallback`] when the line holds a character YAML does not allow in a stream, or a
    /// tab or carriage return.
    fn raw_line(&self) -> Result<Option<Raw<'a>>, Fallback> {
        let b = self.text.as_bytes();
        let start = self.pos;
        if start >= b.len() {
            return Ok(None);
        }
        let mut flags = 0u8;
        let mut first_colon = None;
        let mut end = start;
        while let Some(&c) = b.get(end) {
            let class = CLASS[usize::from(c)];
            if class != 0 {
                if class == NEWLINE {
                    break;
                }
                if class == COLON {
                    if first_colon.is_some() {
                        flags |= COLONS;
                    } else {
                        first_colon = Some(end - start);
                    }
                }
                flags |= class;
            }
            end += 1;
        }
        let after = if end < b.len() { end + 1 } else { end };
        if flags & CONTROL != 0 {
            return Err(Fallback);
        }
        // `end` is at a newline or the end of the text: a character boundary.
        let raw = self.text.get(start..end).ok_or(Fallback)?;
        if flags & HIGH != 0 && !printable(raw) {
            return Err(Fallback);
        }
        Ok(Some(Raw {
            line: trim_end(raw),
            first_colon,
            flags,
            after,
        }))
    }

    /// The next significant line of the document (blank and comment lines skipped), `None`
    /// at a document marker or the end of the text.
    fn peek(&mut self) -> Result<Option<Line<'a>>, Fallback> {
        if let Some(line) = self.peeked {
            return Ok(line);
        }
        loop {
            self.at = self.pos;
            let Some(raw) = self.raw_line()? else {
                self.peeked = Some(None);
                return Ok(None);
            };
            let line = raw.line;
            if matches!(line.as_bytes().first(), Some(b'-' | b'.' | b'%')) {
                if line == "---" {
                    self.peeked = Some(None);
                    return Ok(None);
                }
                if line.starts_with("---") || line.starts_with("...") || line.starts_with('%') {
                    return Err(Fallback);
                }
            }
            let content = trim_start(line);
            if content.is_empty() || content.starts_with('#') {
                self.pos = raw.after;
                continue;
            }
            let indent = line.len() - content.len();
            // Spaces hold no colon: the first colon is in `content`.
            let first_colon = raw.first_colon.and_then(|c| c.checked_sub(indent));
            let line = Line {
                indent,
                entry: Entry {
                    text: content,
                    colon: entry_colon(content, first_colon, raw.flags),
                    flags: raw.flags,
                },
                after: raw.after,
            };
            self.peeked = Some(Some(line));
            return Ok(Some(line));
        }
    }

    /// Consumes the peeked line (and the blank and comment lines `peek` looked past).
    fn consume(&mut self, line: &Line<'_>) {
        self.pos = line.after;
        self.peeked = None;
    }

    /// A block collection starting at `line` (peeked, not consumed).
    fn block(&mut self, line: Line<'a>) -> Result<(), Fallback> {
        if matches!(line.entry.text.as_bytes()[0], b'{' | b'[') {
            self.consume(&line);
            return self.value(line.entry.text, line.entry.flags);
        }
        if line.is_dash() {
            self.sequence(line.indent)
        } else {
            self.mapping(line.indent, None)
        }
    }

    /// A block sequence whose dashes are at `indent`.
    fn sequence(&mut self, indent: usize) -> Result<(), Fallback> {
        self.events.push(Ev::SequenceStart);
        while let Some(line) = self.peek()? {
            if line.indent < indent || line.indent == indent && !line.is_dash() {
                break;
            }
            if line.indent > indent {
                return Err(Fallback);
            }
            self.consume(&line);
            let content = line.entry.text;
            let rest = trim_start(&content[1..]);
            let skip = content.len() - rest.len();
            let column = indent + skip;
            if rest.is_empty() {
                match self.peek()? {
                    Some(next) if next.indent > indent => self.block(next)?,
                    _ => self.events.push(plain_scalar("~")),
                }
            } else if rest == "-" || rest.starts_with("- ") {
                return Err(Fallback);
            } else if matches!(rest.as_bytes()[0], b'{' | b'[') {
                self.value(rest, line.entry.flags)?;
                self.no_continuation(indent)?;
            } else {
                let entry = line.entry.after(skip);
                if entry.colon.is_some() {
                    self.mapping(column, Some(entry))?;
                } else {
                    self.value(rest, entry.flags)?;
                    self.no_continuation(indent)?;
                }
            }
        }
        self.events.push(Ev::SequenceEnd);
        Ok(())
    }

    /// A block mapping whose keys are at `indent`; `first` is its first entry when it starts
    /// on a dash's line.
    fn mapping(&mut self, indent: usize, mut first: Option<Entry<'a>>) -> Result<(), Fallback> {
        self.events.push(Ev::MappingStart);
        loop {
            let entry = match first.take() {
                Some(e) => e,
                None => match self.peek()? {
                    None => break,
                    Some(line) if line.indent < indent => break,
                    Some(line) if line.indent > indent || line.is_dash() => {
                        return Err(Fallback);
                    }
                    Some(line) => {
                        self.consume(&line);
                        line.entry
                    }
                },
            };
            let (key, value) = split_key(entry)?;
            self.events.push(plain_scalar(key));
            if value.is_empty() {
                match self.peek()? {
                    Some(next) if next.indent > indent => self.block(next)?,
                    Some(next) if next.indent == indent && next.is_dash() => {
                        self.sequence(indent)?;
                    }
                    _ => self.events.push(plain_scalar("~")),
                }
            } else {
                self.value(value, entry.flags)?;
                self.no_continuation(indent)?;
            }
        }
        self.events.push(Ev::MappingEnd);
        Ok(())
    }

    /// A one-line value could go on on the next line when that line is indented deeper
    /// than the collection holding the value: refused.
    fn no_continuation(&mut self, indent: usize) -> Result<(), Fallback> {
        match self.peek()? {
            Some(next) if next.indent > indent => Err(Fallback),
            _ => Ok(()),
        }
    }

    /// A one-line value (trailing spaces already trimmed); `flags`: its line's classes.
    fn value(&mut self, v: &'a str, flags: u8) -> Result<(), Fallback> {
        let b = v.as_bytes();
        match b[0] {
            b'"' => {
                let inner = quoted(v, b'"')?;
                if inner.as_bytes().contains(&b'\\') {
                    return Err(Fallback);
                }
                self.events
                    .push(Ev::Scalar(Cow::Borrowed(inner), ScalarStyle::DoubleQuoted));
            }
            b'\'' => {
                let inner = quoted(v, b'\'')?;
                self.events
                    .push(Ev::Scalar(Cow::Borrowed(inner), ScalarStyle::SingleQuoted));
            }
            b'{' | b'[' => {
                // A `#` may start a comment inside a flow collection: not read here.
                if flags & HASH != 0 {
                    return Err(Fallback);
                }
                let end = self.flow(v, 0)?;
                if end != v.len() {
                    return Err(Fallback);
                }
            }
            _ => {
                if !plain_text(v, flags) {
                    return Err(Fallback);
                }
                self.events.push(plain_scalar(v));
            }
        }
        Ok(())
    }
}

impl<'a> Block<'a> {
    /// A flow collection starting at byte `at` of `v` (a `{` or `[`), all on one line: its
    /// events, and where it ends (after its closing bracket).
    ///
    /// Read: mappings of `key: value` entries and sequences of values, separated by `,`
    /// with spaces around; keys plain one-line scalars or quoted scalars followed by `: `;
    /// values flow collections, quoted scalars (double-quoted without escapes,
    /// single-quoted without `''`) and plain scalars. Refused: a collection not closed on
    /// its line, an entry without a value, `? `, an empty entry or a trailing comma, a
    /// single pair in a sequence (`[a: 1]`), and every scalar the block reading refuses.
    fn flow(&mut self, v: &'a str, at: usize) -> Result<usize, Fallback> {
        let b = v.as_bytes();
        let mapping = b[at] == b'{';
        let close = if mapping { b'}' } else { b']' };
        self.events.push(if mapping {
            Ev::MappingStart
        } else {
            Ev::SequenceStart
        });
        let mut i = skip_spaces(b, at + 1);
        if b.get(i) == Some(&close) {
            self.events.push(if mapping {
                Ev::MappingEnd
            } else {
                Ev::SequenceEnd
            });
            return Ok(i + 1);
        }
        loop {
            if mapping {
                i = self.flow_key(v, i)?;
            }
            i = self.flow_node(v, i)?;
            i = skip_spaces(b, i);
            match b.get(i) {
                Some(&c) if c == close => break,
                Some(b',') => {
                    i = skip_spaces(b, i + 1);
                    // An empty entry or a trailing comma.
                    if matches!(b.get(i), None | Some(b',' | b'}' | b']')) {
                        return Err(Fallback);
                    }
                }
                _ => return Err(Fallback),
            }
        }
        self.events.push(if mapping {
            Ev::MappingEnd
        } else {
            Ev::SequenceEnd
        });
        Ok(i + 1)
    }

    /// A flow mapping's key at byte `i` of `v` and the `: ` after it; where its value starts.
    fn flow_key(&mut self, v: &'a str, i: usize) -> Result<usize, Fallback> {
        let b = v.as_bytes();
        let (key, after) = match b.get(i) {
            Some(&q @ (b'"' | b'\'')) => {
                let (inner, after) = flow_quoted(v, i, q)?;
                self.events.push(Ev::Scalar(Cow::Borrowed(inner), style(q)));
                (None, after)
            }
            _ => {
                // A plain key ends at the first `: `; a flow indicator before it is refused.
                let rest = v.get(i..).ok_or(Fallback)?;
                let end = rest
                    .bytes()
                    .position(|c| matches!(c, b',' | b'[' | b']' | b'{' | b'}' | b':'))
                    .ok_or(Fallback)?;
                let key = &rest[..end];
                if rest.as_bytes()[end] != b':' || rest.as_bytes().get(end + 1) != Some(&b' ') {
                    return Err(Fallback);
                }
                (Some(key), i + end)
            }
        };
        if let Some(key) = key {
            if key.is_empty()
                || key.len() > 1_024
                || key.ends_with(' ')
                || !plain_text(key, HASH | COLONS)
            {
                return Err(Fallback);
            }
            self.events.push(plain_scalar(key));
        }
        if b.get(after) != Some(&b':') || b.get(after + 1) != Some(&b' ') {
            return Err(Fallback);
        }
        Ok(skip_spaces(b, after + 2))
    }

    /// A value in a flow collection at byte `i` of `v`: a nested collection, a quoted
    /// scalar or a plain scalar; where it ends.
    fn flow_node(&mut self, v: &'a str, i: usize) -> Result<usize, Fallback> {
        let b = v.as_bytes();
        match b.get(i) {
            Some(b'{' | b'[') => self.flow(v, i),
            Some(&q @ (b'"' | b'\'')) => {
                let (inner, after) = flow_quoted(v, i, q)?;
                self.events.push(Ev::Scalar(Cow::Borrowed(inner), style(q)));
                Ok(after)
            }
            Some(_) => {
                // A plain scalar ends at a flow indicator.
                let rest = v.get(i..).ok_or(Fallback)?;
                let end = rest
                    .bytes()
                    .position(|c| matches!(c, b',' | b'[' | b']' | b'{' | b'}'))
                    .unwrap_or(rest.len());
                let text = trim_end(&rest[..end]);
                if text.is_empty() || !plain_text(text, HASH | COLONS) {
                    return Err(Fallback);
                }
                // A `{` or `[` right after a plain scalar is refused by the caller.
                self.events.push(plain_scalar(text));
                Ok(i + text.len())
            }
            None => Err(Fallback),
        }
    }
}

/// The scalar style of a quote character.
fn style(quote: u8) -> ScalarStyle {
    if quote == b'"' {
        ScalarStyle::DoubleQuoted
    } else {
        ScalarStyle::SingleQuoted
    }
}

/// The inside of a quoted scalar opening at byte `i` of `v` with `quote`, without escapes
/// (a backslash in a double-quoted one) or doubled quotes (in a single-quoted one), and
/// where it ends.
fn flow_quoted(v: &str, i: usize, quote: u8) -> Result<(&str, usize), Fallback> {
    let rest = v.get(i + 1..).ok_or(Fallback)?;
    let len = rest.bytes().position(|c| c == quote).ok_or(Fallback)?;
    let inner = &rest[..len];
    let after = i + 1 + len + 1;
    if quote == b'"' && inner.as_bytes().contains(&b'\\') {
        return Err(Fallback);
    }
    if quote == b'\'' && v.as_bytes().get(after) == Some(&b'\'') {
        return Err(Fallback);
    }
    Ok((inner, after))
}

/// The index of the first byte of `b` at or after `i` that is not a space.
fn skip_spaces(b: &[u8], mut i: usize) -> usize {
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    i
}

/// `s` without its leading spaces.
fn trim_start(s: &str) -> &str {
    let n = s.bytes().take_while(|&c| c == b' ').count();
    &s[n..]
}

/// `s` without its trailing spaces.
fn trim_end(s: &str) -> &str {
    let n = s.bytes().rev().take_while(|&c| c == b' ').count();
    &s[..s.len() - n]
}

/// Where `content`'s key ends (see [`Entry::colon`]), from its first colon: only a line
/// with more than one colon is searched again.
fn entry_colon(content: &str, first_colon: Option<usize>, flags: u8) -> Option<usize> {
    let c = first_colon?;
    let b = content.as_bytes();
    if flags & COLONS == 0 {
        return match b.get(c + 1) {
            None | Some(b' ') => Some(c),
            Some(_) => None,
        };
    }
    match content.find(": ") {
        Some(i) => Some(i),
        None if content.ends_with(':') => Some(content.len() - 1),
        None => None,
    }
}

/// True when a line holds only characters YAML allows in a stream (comments included), tabs
/// and carriage returns excepted: no C0 or C1 control character, no DEL, no U+FEFF, U+FFFE or
/// U+FFFF.
fn printable(line: &str) -> bool {
    let b = line.as_bytes();
    if b.iter().any(|&c| c < 0x20 || c == 0x7f) {
        return false;
    }
    b.is_ascii()
        || !line.chars().any(|c| {
            matches!(
                c,
                '\u{80}'..='\u{9f}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
            )
        })
}

fn plain_scalar(s: &str) -> Ev<'_> {
    Ev::Scalar(Cow::Borrowed(s), ScalarStyle::Plain)
}

/// The inside of a one-line quoted scalar that is the whole value and holds no quote.
fn quoted(v: &str, quote: u8) -> Result<&str, Fallback> {
    let b = v.as_bytes();
    if b.len() < 2 || b[b.len() - 1] != quote {
        return Err(Fallback);
    }
    let inner = &v[1..v.len() - 1];
    if inner.as_bytes().contains(&quote) {
        return Err(Fallback);
    }
    Ok(inner)
}

/// True when `s` (non-empty, no leading or trailing space) is a one-line plain scalar whose
/// value is its text: no indicator first, no `: ` or `#` inside, no `:` at the end. `flags`
/// are the classes of the line `s` is on: without [`HASH`] there is no `#` to look for, and
/// without [`COLONS`] the line's only colon (if any) is not inside `s` as `": "` or at its end
/// (it ends the key, or it is followed by a character other than a space).
fn plain_text(s: &str, flags: u8) -> bool {
    let b = s.as_bytes();
    let Some(&first) = b.first() else {
        return false;
    };
    let indicator = matches!(
        first,
        b'-' | b'?'
            | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
    );
    // `-` starts a plain scalar when a non-space follows (`-3`, `-x`).
    if indicator && !(first == b'-' && b.len() > 1 && b[1] != b' ') {
        return false;
    }
    if flags & HASH != 0 && b.contains(&b'#') {
        return false;
    }
    flags & COLONS == 0 || !(colon_space(b) || s.ends_with(':'))
}

/// Whether `b` holds `": "` (as `str::contains(": ")`, without building a substring searcher
/// for each of the many short scalars of a flow line).
fn colon_space(b: &[u8]) -> bool {
    memchr::memchr_iter(b':', b).any(|i| b.get(i + 1) == Some(&b' '))
}

/// Splits a mapping entry `key: value` (or `key:` at the end of the line) into the plain key
/// and the value (trimmed).
///
/// # Errors
/// [`Fallback`] when it is no entry, or an entry whose key this scanner does not read.
fn split_key(entry: Entry<'_>) -> Result<(&str, &str), Fallback> {
    let c = entry.colon.ok_or(Fallback)?;
    let key = &entry.text[..c];
    let value = entry.text.get(c + 2..).map_or("", trim_start);
    if key.len() > 1_024 || key.ends_with(' ') || !plain_text(key, entry.flags) {
        return Err(Fallback);
    }
    Ok((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colon_space_is_a_substring_search() {
        for (s, want) in [
            ("", false),
            (":", false),
            (": ", true),
            ("a:b", false),
            ("a:b: c", true),
            ("a :b", false),
            ("a::", false),
            ("a:: b", true),
        ] {
            assert_eq!(colon_space(s.as_bytes()), want, "{s:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn colon_space_agrees_with_str_contains(s in "[a: ]{0,12}") {
            proptest::prop_assert_eq!(colon_space(s.as_bytes()), s.contains(": "));
        }
    }

    /// The events of `text` from this scanner, or `None` when it gives up.
    fn events(text: &str) -> Option<Vec<Ev<'_>>> {
        let mut b = Block::new(text);
        let mut out = Vec::new();
        loop {
            let ev = b.next_event().ok()?;
            let end = matches!(ev, Ev::StreamEnd);
            out.push(ev);
            if end {
                return Some(out);
            }
        }
    }

    /// The events saphyr-parser gives (the explicit/implicit document start flag is not
    /// kept: the deserializer does not read it).
    fn reference(text: &str) -> Vec<Ev<'_>> {
        saphyr_parser::Parser::new_from_str(text)
            .map(|r| Ev::from_parser(r.expect("valid YAML").0).expect("no anchor, tag or alias"))
            .collect()
    }

    #[test]
    fn plain_block_yaml_gives_the_parsers_events() {
        for text in [
            "",
            "---\n",
            "---\n---\n",
            "a: 1\n",
            "# c\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n  labels:\n    dept: a\n",
            "spec:\n  podSets:\n  - name: main\n    count: 2\n    template:\n      spec:\n        containers:\n        - name: main\n          resources:\n            requests:\n              cpu: \"5\"\n              memory: 32Gi\n  priority: 1000\n---\nx: []\ny: {}\nz: 'q'\n",
            "a:\n  - 1\n  -\n  - b: 2\n    c: 3\n  - x\nd:\n\n  # note\n  e: -3\n",
            "a:\n- 1\n- 2\nb: c\n",
            "- a\n- b: 1\n",
            "a: http://x/y\nb: 2026-03-01T00:00:00Z\nc:\n",
            "a: {b: 1}\n",
            "a: [1]\n",
            "{a: 1, b: [x, 'y', \"z\"], c: {}, d: []}\n",
            "---\n{apiVersion: v1, kind: Namespace, metadata: {name: team-a, labels: {dept: a}}}\n---\n[1, -2, 0.5, ~, true]\n",
            "- {name: main, count: 2}\n- [a,b]\n-  { a: 1 }\n",
            "a:\n  {b: 1}\nc:\n- [ ]\n",
            "x: {\"q\": 1, 'r': 2, s: http://x/y, t: 2026-03-01T00:00:00Z, u: a b, v: -3, w: é}\n",
            "spec: {podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, resources: {requests: {cpu: \"5\", memory: 32Gi, nvidia.com/gpu: 1}}}]}}}]}\n",
        ] {
            assert_eq!(events(text), Some(reference(text)), "{text:?}");
        }
    }

    #[test]
    fn anything_else_is_refused() {
        for text in [
            "a: b\n  c\n",
            "a: |\n  x\n",
            "a: \"x\\ny\"\n",
            "a: 'it''s'\n",
            "a: b # c\n",
            "a: &x 1\n",
            "a: *x\n",
            "a: !!str 1\n",
            "\"a\": 1\n",
            "? a\n: 1\n",
            "a:\tb\n",
            "a: b\r\n",
            "\u{feff}a: 1\n",
            "%YAML 1.2\n---\na: 1\n",
            "a: 1\n...\n",
            "- - a\n",
            "a: 1\n b: 2\n",
            "a :1\n",
            "a: b: c\n",
            "a: 1\n---\nb: 2\nc\n",
            "a: {b: 1,\n  c: 2}\n",
            "a: [1,\n  2]\n",
            "a: {b: 1} # c\n",
            "a: {b: 1,}\n",
            "a: {b: 1,, c: 2}\n",
            "a: {b}\n",
            "a: {b: }\n",
            "a: {b:1}\n",
            "a: {? b: 1}\n",
            "a: [b: 1]\n",
            "a: {b: \"x\\ny\"}\n",
            "a: ['it''s']\n",
            "a: {b: 1}}\n",
            "a: {b: 1} x\n",
            "a: {b: [1}\n",
            "a: [x{y}]\n",
            "{a: 1}: 2\n",
            "# a\u{7f}\na: 1\n",
            "a: b\u{1}\n",
            "a: b\u{85}\n",
        ] {
            assert!(events(text).is_none(), "{text:?}");
        }
    }

    /// saphyr-parser's events, or `None` when it refuses the text.
    fn reference_or_error(text: &str) -> Option<Vec<Ev<'_>>> {
        saphyr_parser::Parser::new_from_str(text)
            .map(|r| r.ok().and_then(|(ev, _)| Ev::from_parser(ev).ok()))
            .collect()
    }

    mod differential {
        use super::{events, reference_or_error};
        use proptest::prelude::*;

        /// One line of a block-YAML-like text, from pieces that exercise the one-pass line
        /// reading: colons inside keys and values, `#`, quotes, dashes, flow markers,
        /// non-ASCII text, comments and blank lines, at varying indentation.
        fn line() -> impl Strategy<Value = String> {
            let key = prop::sample::select(vec![
                "a",
                "b",
                "name",
                "nvidia.com/gpu",
                "a:b",
                "k:",
                "a#b",
                "x y",
                "-x",
                "\"q\"",
                "é",
                "on",
            ]);
            let value = prop::sample::select(vec![
                "1",
                "x",
                "a: b",
                "a:b",
                "b:",
                ":x",
                "'q'",
                "\"q:x\"",
                "\"a # b\"",
                "#c",
                "x #c",
                "x#c",
                "{}",
                "[]",
                "-3",
                "- x",
                "http://x/y",
                "é:ü",
                "\"\"",
                "''",
                "2026-03-01T00:16:39Z",
                "\"2026-03-01T00:16:39Z\"",
            ]);
            let indent = prop::sample::select(vec![0usize, 0, 2, 2, 4, 6]);
            let body = prop_oneof![
                4 => (key.clone(), value).prop_map(|(k, v)| format!("{k}: {v}")),
                2 => key.prop_map(|k| format!("{k}:")),
                1 => Just("# note".to_owned()),
                1 => Just(String::new()),
                1 => Just("---".to_owned()),
                1 => Just("x".to_owned()),
            ];
            (
                indent,
                prop::bool::weighted(0.3),
                body,
                prop::bool::weighted(0.1),
            )
                .prop_map(|(indent, dash, body, trailing)| {
                    let dash = if dash { "- " } else { "" };
                    let trailing = if trailing { "  " } else { "" };
                    format!("{}{dash}{body}{trailing}", " ".repeat(indent))
                })
        }

        /// A block node rendered at `indent` after a key (`key: ` already written) or a dash.
        #[derive(Clone, Debug)]
        enum Node {
            Scalar(&'static str),
            Map(Vec<(&'static str, Node)>),
            /// A sequence; `true`: its dashes at the indentation of the key holding it.
            Seq(Vec<Node>, bool),
        }

        fn render(node: &Node, indent: usize, out: &mut String) {
            let pad = " ".repeat(indent);
            match node {
                Node::Scalar(v) => {
                    out.push(' ');
                    out.push_str(v);
                    out.push('\n');
                }
                Node::Map(entries) if entries.is_empty() => out.push_str(" {}\n"),
                Node::Map(entries) => {
                    out.push('\n');
                    for (k, v) in entries {
                        out.push_str(&format!("{pad}{k}:"));
                        render(v, indent + 2, out);
                    }
                }
                Node::Seq(items, _) if items.is_empty() => out.push_str(" []\n"),
                Node::Seq(items, compact) => {
                    out.push('\n');
                    let pad = if *compact {
                        " ".repeat(indent - 2)
                    } else {
                        pad
                    };
                    for item in items {
                        out.push_str(&format!("{pad}-"));
                        render(item, pad.len() + 2, out);
                    }
                }
            }
        }

        /// `node` in flow style, on one line.
        fn render_flow(node: &Node, out: &mut String) {
            match node {
                Node::Scalar(v) => out.push_str(v),
                Node::Map(entries) => {
                    out.push('{');
                    for (i, (k, v)) in entries.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        out.push_str(k);
                        out.push_str(": ");
                        render_flow(v, out);
                    }
                    out.push('}');
                }
                Node::Seq(items, spaced) => {
                    out.push('[');
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push_str(if *spaced { ", " } else { "," });
                        }
                        render_flow(item, out);
                    }
                    out.push(']');
                }
            }
        }

        fn node() -> impl Strategy<Value = Node> {
            let key = prop_oneof![
                8 => prop::sample::select(vec!["a", "b", "name", "nvidia.com/gpu", "é", "on"]),
                1 => prop::sample::select(vec!["a:b", "a#b", "x y", "-x", "a:"]),
            ];
            let scalar = prop_oneof![
                8 => prop::sample::select(vec![
                    "1", "x", "a:b", ":x", "'q'", "\"q:x\"", "\"a # b\"", "-3", "http://x/y",
                    "é:ü", "\"\"", "''", "~", "2026-03-01T00:16:39Z",
                    "\"2026-03-01T00:16:39Z\"", "x#c",
                ]),
                1 => prop::sample::select(vec![
                    "b:", "a: b", "x #c", "#c", "- x", "{a: 1}", "[x]", "a,b", "x]", "'it''s'",
                    "\"a\\\"b\"", "? a", "-", "a :b", "{}", "[]",
                ]),
            ]
            .prop_map(Node::Scalar);
            scalar.prop_recursive(4, 32, 4, move |inner| {
                prop_oneof![
                    prop::collection::vec((key.clone(), inner.clone()), 0..4).prop_map(Node::Map),
                    (prop::collection::vec(inner, 0..4), any::<bool>())
                        .prop_map(|(items, compact)| Node::Seq(items, compact)),
                ]
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

            /// Block trees as serializers write them: what the scanner reads, it reads as
            /// saphyr-parser does.
            #[test]
            fn block_trees_read_as_saphyr_parser_reads_them(
                docs in prop::collection::vec(prop::collection::vec((prop::sample::select(vec!["apiVersion", "kind", "spec", "status"]), node()), 1..4), 1..3)
            ) {
                let mut text = String::new();
                for doc in &docs {
                    text.push_str("---\n");
                    for (k, v) in doc {
                        text.push_str(k);
                        text.push(':');
                        render(v, 2, &mut text);
                    }
                }
                if let Some(ours) = events(&text) {
                    prop_assert_eq!(Some(ours), reference_or_error(&text), "{:?}", text);
                }
            }

            /// The same trees with some values in flow style (`key: {a: 1, b: [x, y]}`, a
            /// whole document as one flow mapping, flow collections as sequence items).
            #[test]
            fn flow_trees_read_as_saphyr_parser_reads_them(
                docs in prop::collection::vec((prop::collection::vec((prop::sample::select(vec!["apiVersion", "kind", "spec", "status"]), node(), 0..3u8), 1..4), any::<bool>()), 1..3)
            ) {
                let mut text = String::new();
                for (doc, whole) in &docs {
                    text.push_str("---\n");
                    if *whole {
                        let map = Node::Map(doc.iter().map(|(k, v, _)| (*k, v.clone())).collect());
                        render_flow(&map, &mut text);
                        text.push('\n');
                        continue;
                    }
                    for (k, v, style) in doc {
                        text.push_str(k);
                        text.push(':');
                        match (style, v) {
                            (0, _) | (_, Node::Scalar(_)) => {
                                text.push(' ');
                                render_flow(v, &mut text);
                                text.push('\n');
                            }
                            (1, Node::Seq(items, _)) => {
                                text.push('\n');
                                for item in items {
                                    text.push_str("  - ");
                                    render_flow(item, &mut text);
                                    text.push('\n');
                                }
                                if items.is_empty() {
                                    text.push_str("  []\n");
                                }
                            }
                            _ => render(v, 2, &mut text),
                        }
                    }
                }
                let ours = events(&text);
                if let Some(ours) = &ours {
                    prop_assert_eq!(Some(ours.clone()), reference_or_error(&text), "{:?}", text);
                }
            }

            /// Whatever the scanner reads, it reads as saphyr-parser does; what saphyr-parser
            /// refuses, the scanner refuses too.
            #[test]
            fn the_scanner_agrees_with_saphyr_parser(lines in prop::collection::vec(line(), 1..12)) {
                let text = lines.join("\n") + "\n";
                if let Some(ours) = events(&text) {
                    prop_assert_eq!(Some(ours), reference_or_error(&text), "{:?}", text);
                }
            }
        }
    }
}
