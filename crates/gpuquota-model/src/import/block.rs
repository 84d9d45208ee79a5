//! A scanner for the plainest block YAML, the form `kubectl get -o yaml` and serializers
//! write: it turns such text into the same events saphyr-parser gives for it, without
//! copying a scalar, and gives up ([`Fallback`]) on every other construct, so that the
//! event parser reads the source instead.
//!
//! Read here: `---` lines between documents; block mappings whose keys are plain one-line
//! scalars followed by `: ` (or `:` at the end of the line); block sequences (`- `, also
//! at the indentation of the key they belong to), with a compact mapping on the dash's line;
//! one-line values: plain scalars, single- or double-quoted scalars without escapes, `{}`
//! and `[]`; blank lines and whole-line comments. Everything else is refused: tabs, carriage
//! returns, a byte-order mark, directives, `...`, a `#` after content, flow collections
//! with content, block scalars (`|`, `>`), anchors, aliases and tags, a value that goes on
//! on the next line, a quoted or complex key, `- - x`, an implicit key longer than 1,024
//! bytes.
//!
//! # Complexity
//! Linear in the input: every line is looked at a bounded number of times.

use std::borrow::Cow;

use saphyr_parser::{Event, ScalarStyle};

use super::yaml::Fallback;

/// One line with its indentation (spaces) and content (from the first non-space byte to the
/// last non-space byte).
#[derive(Clone, Copy)]
struct Line<'a> {
    indent: usize,
    content: &'a str,
}

impl Line<'_> {
    fn is_dash(&self) -> bool {
        self.content == "-" || self.content.starts_with("- ")
    }
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
    events: Vec<Event<'a>>,
    next: usize,
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
        }
    }

    /// The next event, as saphyr-parser would give it for this text.
    pub(super) fn next_event(&mut self) -> Result<Event<'a>, Fallback> {
        if self.next < self.events.len() {
            let ev = std::mem::replace(&mut self.events[self.next], Event::Nothing);
            self.next += 1;
            return Ok(ev);
        }
        if !self.started {
            self.started = true;
            if self.text.starts_with('\u{feff}') {
                return Err(Fallback);
            }
            return Ok(Event::StreamStart);
        }
        if self.ended {
            return Err(Fallback);
        }
        self.events.clear();
        self.next = 0;
        if !self.document()? {
            self.ended = true;
            return Ok(Event::StreamEnd);
        }
        self.next_event()
    }

    /// Reads the next document into `events`; false at the end of the text.
    fn document(&mut self) -> Result<bool, Fallback> {
        // Skip to the first content line or document marker.
        loop {
            let Some((raw, after)) = self.raw_line() else {
                return Ok(false);
            };
            if !printable(raw) {
                return Err(Fallback);
            }
            let trimmed = raw.trim_end_matches(' ');
            if trimmed == "---" {
                self.pos = after;
                self.in_document = true;
                break;
            }
            let content = trimmed.trim_start_matches(' ');
            if content.is_empty() || content.starts_with('#') {
                self.pos = after;
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
        self.events.push(Event::DocumentStart(true));
        match self.peek()? {
            None => self.events.push(plain_scalar("~")),
            Some(line) => {
                self.block(line)?;
                if self.peek()?.is_some() {
                    return Err(Fallback);
                }
            }
        }
        self.events.push(Event::DocumentEnd);
        Ok(true)
    }

    /// The line at `pos` (without its newline) and where the next one starts.
    fn raw_line(&self) -> Option<(&'a str, usize)> {
        if self.pos >= self.text.len() {
            return None;
        }
        let rest = &self.text[self.pos..];
        Some(match rest.find('\n') {
            Some(i) => (&rest[..i], self.pos + i + 1),
            None => (rest, self.text.len()),
        })
    }

    /// The next significant line of the document (blank and comment lines skipped), `None`
    /// at a document marker or the end of the text.
    fn peek(&mut self) -> Result<Option<Line<'a>>, Fallback> {
        if let Some(line) = self.peeked {
            return Ok(line);
        }
        loop {
            let Some((raw, after)) = self.raw_line() else {
                self.peeked = Some(None);
                return Ok(None);
            };
            if !printable(raw) {
                return Err(Fallback);
            }
            let trimmed = raw.trim_end_matches(' ');
            if trimmed == "---" {
                self.peeked = Some(None);
                return Ok(None);
            }
            if trimmed.starts_with("---") || trimmed.starts_with("...") || trimmed.starts_with('%')
            {
                return Err(Fallback);
            }
            let content = trimmed.trim_start_matches(' ');
            if content.is_empty() || content.starts_with('#') {
                self.pos = after;
                continue;
            }
            let line = Line {
                indent: trimmed.len() - content.len(),
                content,
            };
            self.peeked = Some(Some(line));
            return Ok(Some(line));
        }
    }

    /// Consumes the peeked line.
    fn consume(&mut self) {
        if let Some((_, after)) = self.raw_line() {
            // Skip the blank and comment lines `peek` looked past, then the line itself.
            self.pos = after;
        }
        self.peeked = None;
    }

    /// A block collection starting at `line` (peeked, not consumed).
    fn block(&mut self, line: Line<'a>) -> Result<(), Fallback> {
        if line.is_dash() {
            self.sequence(line.indent)
        } else {
            self.mapping(line.indent, None)
        }
    }

    /// A block sequence whose dashes are at `indent`.
    fn sequence(&mut self, indent: usize) -> Result<(), Fallback> {
        self.events.push(Event::SequenceStart(0, None));
        while let Some(line) = self.peek()? {
            if line.indent < indent || line.indent == indent && !line.is_dash() {
                break;
            }
            if line.indent > indent {
                return Err(Fallback);
            }
            self.consume();
            let rest = line.content[1..].trim_start_matches(' ');
            let column = indent + (line.content.len() - rest.len());
            if rest.is_empty() {
                match self.peek()? {
                    Some(next) if next.indent > indent => self.block(next)?,
                    _ => self.events.push(plain_scalar("~")),
                }
            } else if rest == "-" || rest.starts_with("- ") {
                return Err(Fallback);
            } else if split_key(rest)?.is_some() {
                self.mapping(column, Some(rest))?;
            } else {
                self.value(rest)?;
                self.no_continuation(indent)?;
            }
        }
        self.events.push(Event::SequenceEnd);
        Ok(())
    }

    /// A block mapping whose keys are at `indent`; `first` is its first entry when it starts
    /// on a dash's line.
    fn mapping(&mut self, indent: usize, mut first: Option<&'a str>) -> Result<(), Fallback> {
        self.events.push(Event::MappingStart(0, None));
        loop {
            let content = match first.take() {
                Some(c) => c,
                None => match self.peek()? {
                    None => break,
                    Some(line) if line.indent < indent => break,
                    Some(line) if line.indent > indent || line.is_dash() => {
                        return Err(Fallback);
                    }
                    Some(line) => {
                        self.consume();
                        line.content
                    }
                },
            };
            let Some((key, value)) = split_key(content)? else {
                return Err(Fallback);
            };
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
                self.value(value)?;
                self.no_continuation(indent)?;
            }
        }
        self.events.push(Event::MappingEnd);
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

    /// A one-line value (trailing spaces already trimmed).
    fn value(&mut self, v: &'a str) -> Result<(), Fallback> {
        let b = v.as_bytes();
        match b[0] {
            b'"' => {
                let inner = quoted(v, b'"')?;
                if inner.contains('\\') {
                    return Err(Fallback);
                }
                self.events.push(Event::Scalar(
                    Cow::Borrowed(inner),
                    ScalarStyle::DoubleQuoted,
                    0,
                    None,
                ));
            }
            b'\'' => {
                let inner = quoted(v, b'\'')?;
                self.events.push(Event::Scalar(
                    Cow::Borrowed(inner),
                    ScalarStyle::SingleQuoted,
                    0,
                    None,
                ));
            }
            b'{' if v == "{}" => {
                self.events.push(Event::MappingStart(0, None));
                self.events.push(Event::MappingEnd);
            }
            b'[' if v == "[]" => {
                self.events.push(Event::SequenceStart(0, None));
                self.events.push(Event::SequenceEnd);
            }
            _ => {
                if !plain_text(v) {
                    return Err(Fallback);
                }
                self.events.push(plain_scalar(v));
            }
        }
        Ok(())
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

fn plain_scalar(s: &str) -> Event<'_> {
    Event::Scalar(Cow::Borrowed(s), ScalarStyle::Plain, 0, None)
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
/// value is its text: no indicator first, no `: ` or `#` inside, no `:` at the end.
fn plain_text(s: &str) -> bool {
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
    !s.contains('#') && !s.contains(": ") && !s.ends_with(':')
}

/// Splits `key: value` (or `key:` at the end of the line) into the plain key and the value
/// (trimmed); `None` when the content is not a mapping entry at all.
///
/// # Errors
/// [`Fallback`] when it looks like an entry whose key this scanner does not read.
fn split_key(content: &str) -> Result<Option<(&str, &str)>, Fallback> {
    let (key, value) = match content.find(": ") {
        Some(i) => (&content[..i], content[i + 2..].trim_start_matches(' ')),
        None if content.ends_with(':') => (&content[..content.len() - 1], ""),
        None => {
            // `"quoted": x` or `{a: 1}`-like content without `: ` is no entry here; a
            // quoted key with `: ` inside is refused by `plain_text` below.
            return Ok(None);
        }
    };
    if key.len() > 1_024 || key.ends_with(' ') || !plain_text(key) {
        return Err(Fallback);
    }
    Ok(Some((key, value)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The events of `text` from this scanner, or `None` when it gives up.
    fn events(text: &str) -> Option<Vec<Event<'_>>> {
        let mut b = Block::new(text);
        let mut out = Vec::new();
        loop {
            let ev = b.next_event().ok()?;
            let end = matches!(ev, Event::StreamEnd);
            out.push(ev);
            if end {
                return Some(out);
            }
        }
    }

    /// The events saphyr-parser gives, with the explicit/implicit document start flag set
    /// as this scanner sets it (the deserializer does not read it).
    fn reference(text: &str) -> Vec<Event<'_>> {
        saphyr_parser::Parser::new_from_str(text)
            .map(|r| match r.expect("valid YAML").0 {
                Event::DocumentStart(_) => Event::DocumentStart(true),
                ev => ev,
            })
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
        ] {
            assert_eq!(events(text), Some(reference(text)), "{text:?}");
        }
    }

    #[test]
    fn anything_else_is_refused() {
        for text in [
            "a: b\n  c\n",
            "a: |\n  x\n",
            "a: {b: 1}\n",
            "a: [1]\n",
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
            "# a\u{7f}\na: 1\n",
            "a: b\u{1}\n",
            "a: b\u{85}\n",
        ] {
            assert!(events(text).is_none(), "{text:?}");
        }
    }
}
