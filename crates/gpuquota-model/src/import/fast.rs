//! The fast path of the import: each document is deserialized straight into its typed object,
//! with no generic tree in between.
//!
//! A document's `apiVersion` and `kind` come first in every manifest kubectl writes and in
//! almost every one written by hand; once both are read, the rest of the mapping is handed to
//! the kind's derived `Deserialize` (wrapped to record unknown fields). A document whose other
//! fields come before `apiVersion`/`kind`, or whose kind gpuquota does not read, is buffered as
//! a generic tree and goes through the per-document path (which also hosts conversions of
//! other kinds). Any error at all makes [`parse`] return `None`, and the importer reads the
//! source again on the exact path that reports every problem with its field path: the fast
//! path decides nothing on its own.

use std::fmt;

#[cfg(feature = "serde")]
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::parse::Key;
use super::{Kind, Object, parse, split_api_version};
use crate::schema::Step;

/// One document as the fast path read it.
#[derive(Debug)]
pub(super) enum Doc {
    /// An empty document or `null`.
    Null,
    /// A typed object of a kind gpuquota reads.
    Typed(Box<Typed>),
    /// A document for the per-document path.
    Raw(Value),
    /// A `List` (`in_items`) or a top-level JSON array.
    List { items: Vec<Doc>, in_items: bool },
}

/// A typed object with its `apiVersion` and the fields that were ignored.
#[derive(Debug)]
pub(super) struct Typed {
    pub(super) api_version: String,
    pub(super) object: Object,
    pub(super) ignored: Vec<(String, Vec<Step>)>,
}

/// Where the fast path delivers documents, one at a time, as they are read.
pub(super) trait Sink {
    /// The next document.
    fn doc(&mut self, doc: Doc);
    /// Forgets every document delivered so far (a reader gave up; the next one starts over).
    fn reset(&mut self);
}

/// Collects the documents.
impl Sink for Vec<Doc> {
    fn doc(&mut self, doc: Doc) {
        self.push(doc);
    }

    fn reset(&mut self) {
        self.clear();
    }
}

/// Reads every document of `text` into `sink` and says which reader took it, or returns
/// `None` when anything at all needs the exact path (the documents delivered so far are
/// then to be forgotten: `sink` was not reset).
///
/// Documents are delivered as soon as each is read, so that no second copy of the objects
/// is held while the source is read.
pub(super) fn parse(text: &str, sink: &mut dyn Sink) -> Option<super::importer::SourceReader> {
    use super::importer::SourceReader;
    if parse::looks_like_json(text) {
        let trimmed = text.trim_start_matches('\u{feff}').trim_start();
        let mut split = Splitter::default();
        loop {
            match split.next(trimmed.as_bytes()) {
                Ok(Some(range)) => {
                    // Values begin and end with an ASCII bracket: char boundaries.
                    let doc = trimmed.get(range)?;
                    if !json_document(doc, split.keys_unique(), split.may_have_null(), sink) {
                        return None;
                    }
                }
                Ok(None) => return split.between_values().then_some(SourceReader::Json),
                Err(()) => return None,
            }
        }
    }
    super::yaml::read(text, sink)
}

/// Reads one top-level JSON value (an object or an array, as [`Splitter`] cut it out) into
/// `sink`; false when the exact path must read the source. `keys_unique`: the splitter is
/// sure that no object of the value repeats a key (otherwise the value is checked here);
/// `may_have_null`: false when the splitter saw no `null` literal outside the strings.
///
/// # Complexity
/// Linear in the value's text.
pub(super) fn json_document(
    doc: &str,
    keys_unique: bool,
    may_have_null: bool,
    sink: &mut dyn Sink,
) -> bool {
    if !keys_unique && parse::json_duplicates(doc).is_err() {
        return false;
    }
    // The exact path strips `null` members from its tree; the typed reading would see
    // them (an unknown field warned about, a `null` kept in a verbatim value), so they
    // are taken out of the text first. Without a `null` literal there is nothing to strip.
    let stripped = if may_have_null {
        let Some(stripped) = parse::strip_null_members(doc) else {
            return false;
        };
        stripped
    } else {
        std::borrow::Cow::Borrowed(doc)
    };
    match serde_json::from_str::<Doc>(&stripped) {
        Ok(doc) => {
            sink.doc(doc);
            true
        }
        Err(_) => false,
    }
}

/// Cuts a stream of JSON text into its top-level values (objects and arrays) without parsing
/// them: strings and brackets are followed just enough to see where each value ends, so
/// that each can be checked and decoded on its own while the next is still being read.
/// Whether a value is well-formed is left to the decoder that reads it.
///
/// On the same pass it looks for object keys given twice (the fast path's guard, which
/// [`parse::json_duplicates`] would otherwise check in a second pass over each value):
/// [`Splitter::keys_unique`] says whether the last value cut out is sure to repeat no key.
///
/// The text may arrive in pieces: [`Splitter::next`] is called again on the longer buffer,
/// and [`Splitter::forget`] moves the positions when the caller drops a consumed prefix.
#[derive(Debug, Default)]
pub(super) struct Splitter {
    /// The next byte to look at.
    pos: usize,
    /// Where the value being read starts (when `depth > 0`).
    start: usize,
    /// Open brackets of that value.
    depth: usize,
    in_string: bool,
    /// The previous byte was a backslash inside a string.
    escape: bool,
    /// Bytes dropped by [`Splitter::forget`] so far: positions in `keys` and `key_start`
    /// count from the beginning of the stream.
    base: usize,
    /// One entry per open bracket of the value: for an object, where its keys start in
    /// `keys`; `None` for an array.
    open: Vec<Option<usize>>,
    /// The keys of the open objects, innermost last, as ranges of the stream.
    keys: Vec<std::ops::Range<usize>>,
    /// The next string of the innermost object is a key.
    expect_key: bool,
    /// Where the key being read starts, while in a key.
    key_start: Option<usize>,
    /// The key being read has an escape sequence.
    key_escaped: bool,
    /// The value is not sure to repeat no key (a key given twice, a key with an escape
    /// sequence that may spell another key differently, brackets that do not match).
    unsure: bool,
    /// The value has an `n` outside its strings (a `null` literal, or text that is no JSON).
    null: bool,
}

/// Objects with up to this many keys are checked key by key; larger ones are sorted.
const LINEAR_KEYS: usize = 16;

impl Splitter {
    /// The range of the next complete value in `text` (the same text, or a longer one, as
    /// the last call saw, less what [`Splitter::forget`] dropped); `Ok(None)` when `text`
    /// ends first, `Err` on a byte that cannot begin an object or an array (only JSON
    /// whitespace may stand between values).
    ///
    /// # Complexity
    /// Linear in the bytes not looked at yet, plus a sort of the keys of each object with
    /// more than 16 keys.
    pub(super) fn next(&mut self, text: &[u8]) -> Result<Option<std::ops::Range<usize>>, ()> {
        while self.pos < text.len() {
            if self.in_string {
                if self.escape {
                    self.escape = false;
                    self.pos += 1;
                    continue;
                }
                let rest = text.get(self.pos..).unwrap_or_default();
                let Some(k) = string_stop(rest) else {
                    self.pos = text.len();
                    break;
                };
                self.pos += k + 1;
                if rest.get(k) == Some(&b'\\') {
                    self.escape = true;
                    self.key_escaped = true;
                } else {
                    self.in_string = false;
                    if let Some(start) = self.key_start.take() {
                        self.end_key(text, start..self.base + self.pos - 1);
                    }
                }
                continue;
            }
            let Some(&c) = text.get(self.pos) else { break };
            self.pos += 1;
            match c {
                b'"' if self.depth > 0 => {
                    self.in_string = true;
                    if self.expect_key {
                        self.expect_key = false;
                        self.key_start = Some(self.base + self.pos);
                        self.key_escaped = false;
                    }
                }
                b'{' | b'[' => {
                    if self.depth == 0 {
                        self.start = self.pos - 1;
                        self.open.clear();
                        self.keys.clear();
                        self.unsure = false;
                        self.null = false;
                    }
                    self.depth += 1;
                    let object = c == b'{';
                    self.open.push(object.then_some(self.keys.len()));
                    self.expect_key = object;
                }
                b'}' | b']' if self.depth > 0 => {
                    self.depth -= 1;
                    self.close(text, c == b'}');
                    if self.depth == 0 {
                        return Ok(Some(self.start..self.pos));
                    }
                }
                b',' if self.depth > 0 => {
                    self.expect_key = matches!(self.open.last(), Some(Some(_)));
                }
                b':' if self.depth > 0 => self.expect_key = false,
                b'n' if self.depth > 0 => self.null = true,
                b' ' | b'\t' | b'\n' | b'\r' => {}
                _ if self.depth > 0 => {}
                _ => return Err(()),
            }
        }
        Ok(None)
    }

    /// A key of the innermost object has been read (`key`, a range of the stream).
    fn end_key(&mut self, text: &[u8], key: std::ops::Range<usize>) {
        if self.key_escaped {
            self.unsure = true;
        }
        if self.unsure {
            return;
        }
        let Some(&Some(first)) = self.open.last() else {
            self.unsure = true;
            return;
        };
        let these = self.keys.get(first..).unwrap_or_default();
        if these.len() < LINEAR_KEYS {
            let bytes = self.bytes(text, &key);
            // Lengths first: most sibling keys differ in length, and a range's length is
            // known without looking at the text.
            let len = key.len();
            if bytes.is_none()
                || these
                    .iter()
                    .any(|k| k.len() == len && self.bytes(text, k) == bytes)
            {
                self.unsure = true;
                return;
            }
        }
        self.keys.push(key);
    }

    /// The innermost bracket closes (`object`: with `}`).
    fn close(&mut self, text: &[u8], object: bool) {
        self.expect_key = false;
        match self.open.pop() {
            Some(Some(first)) if object => {
                if !self.unsure && self.keys.len() > first + LINEAR_KEYS {
                    let mut these: Vec<Option<&[u8]>> = self
                        .keys
                        .get(first..)
                        .unwrap_or_default()
                        .iter()
                        .map(|k| self.bytes(text, k))
                        .collect();
                    these.sort_unstable();
                    if these.first().is_some_and(Option::is_none)
                        || these.windows(2).any(|w| w.first() == w.get(1))
                    {
                        self.unsure = true;
                    }
                }
                self.keys.truncate(first);
            }
            Some(None) if !object => {}
            _ => self.unsure = true,
        }
    }

    /// The bytes of a range of the stream still in `text`.
    fn bytes<'t>(&self, text: &'t [u8], range: &std::ops::Range<usize>) -> Option<&'t [u8]> {
        text.get(range.start.checked_sub(self.base)?..range.end.checked_sub(self.base)?)
    }

    /// True when the last value [`Splitter::next`] cut out repeats no key in any of its
    /// objects; false when it may (then [`parse::json_duplicates`] decides).
    pub(super) fn keys_unique(&self) -> bool {
        !self.unsure
    }

    /// False when the last value cut out has no `null` literal (no `n` outside its strings),
    /// so that there are no `null` members to strip.
    pub(super) fn may_have_null(&self) -> bool {
        self.null
    }

    /// True when no value is open (the text so far ends between values).
    pub(super) fn between_values(&self) -> bool {
        self.depth == 0
    }

    /// Starts looking at byte `n` (what comes before is known to be no value).
    pub(super) fn forget_before(&mut self, n: usize) {
        self.pos = n;
    }

    /// The caller dropped the first `n` bytes, all of them already looked at and none of
    /// them in the open value.
    pub(super) fn forget(&mut self, n: usize) {
        self.pos -= n;
        self.start = self.start.saturating_sub(n);
        self.base += n;
    }
}

/// Where the string whose rest is `rest` stops: the offset of its closing quote or of its
/// next backslash. Most strings of a manifest are short, and `memchr`'s setup costs more
/// than such a string: the first 32 bytes are looked at eight at a time in a `u64` (a byte
/// equal to `"` or `\\` becomes a zero byte, found with the carry trick of "Bit Twiddling
/// Hacks", <https://graphics.stanford.edu/~seander/bithacks.html#ZeroInWord>), then
/// `memchr` takes over.
///
/// # Complexity
/// Linear in the offset returned.
fn string_stop(rest: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    const QUOTE: u64 = u64::from_le_bytes([b'"'; 8]);
    const BACKSLASH: u64 = u64::from_le_bytes([b'\\'; 8]);
    /// The high bit of each zero byte of `x` (and maybe of bytes above the lowest zero
    /// byte, which the lowest set bit is not affected by).
    fn zeros(x: u64) -> u64 {
        x.wrapping_sub(ONES) & !x & HIGH
    }
    let mut at = 0;
    while at < 32 {
        let Some(chunk) = rest.get(at..at + 8) else {
            let tail = rest.get(at..)?;
            return tail
                .iter()
                .position(|&b| b == b'"' || b == b'\\')
                .map(|k| at + k);
        };
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let found = zeros(word ^ QUOTE) | zeros(word ^ BACKSLASH);
        if found != 0 {
            // Little-endian: the lowest set bit is in the first matching byte.
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let tail = rest.get(at..)?;
    memchr::memchr2(b'"', b'\\', tail).map(|k| at + k)
}

impl<'de> de::Deserialize<'de> for Doc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Doc, D::Error> {
        d.deserialize_any(DocVisitor)
    }
}

struct DocVisitor;

fn fallback<E: de::Error>() -> E {
    E::custom("needs the exact path")
}

impl<'de> Visitor<'de> for DocVisitor {
    type Value = Doc;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Doc, E> {
        Ok(Doc::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Doc, E> {
        Ok(Doc::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Doc, A::Error> {
        let mut items = Vec::new();
        while let Some(d) = seq.next_element::<Doc>()? {
            items.push(d);
        }
        Ok(Doc::List {
            items,
            in_items: false,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Doc, A::Error> {
        let mut api_version: Option<String> = None;
        let mut kind: Option<Key<'de>> = None;
        let mut items: Option<Vec<Doc>> = None;
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match key.as_str() {
                "apiVersion" if api_version.is_none() => api_version = Some(map.next_value()?),
                "kind" if kind.is_none() => kind = Some(map.next_value()?),
                "apiVersion" | "kind" => return Err(fallback()),
                _ => {
                    let (Some(av), Some(k)) = (&api_version, &kind) else {
                        return Err(fallback());
                    };
                    let k = k.as_str();
                    if k == "List" || k.ends_with("List") {
                        if key.as_str() == "items" && items.is_none() {
                            items = Some(map.next_value()?);
                        } else {
                            map.next_value::<IgnoredAny>()?;
                        }
                        continue;
                    }
                    let (group, _) = split_api_version(av);
                    let Some(typed) = Kind::from_group_kind(group, k) else {
                        // Read by the per-document path (a skipped kind, or a conversion).
                        let mut obj = serde_json::Map::new();
                        obj.insert("apiVersion".into(), Value::String(av.clone()));
                        obj.insert("kind".into(), Value::String(k.to_owned()));
                        let v: Value = map.next_value()?;
                        obj.insert(key.as_str().to_owned(), v);
                        while let Some(key) = map.next_key::<String>()? {
                            if obj.contains_key(&key) {
                                return Err(fallback());
                            }
                            let v: Value = map.next_value()?;
                            obj.insert(key, v);
                        }
                        return Ok(Doc::Raw(Value::Object(obj)));
                    };
                    let mut ignored = Vec::new();
                    let rest = Rest {
                        first: Some(key),
                        map: &mut map,
                    };
                    let object = Object::deserialize_kind(
                        typed,
                        de::value::MapAccessDeserializer::new(rest),
                        &mut ignored,
                    )?;
                    return Ok(Doc::Typed(Box::new(Typed {
                        api_version: av.clone(),
                        object,
                        ignored,
                    })));
                }
            }
        }
        // Only `apiVersion` and `kind` (or a List).
        match (api_version, kind, items) {
            (Some(_), Some(k), Some(items))
                if k.as_str() == "List" || k.as_str().ends_with("List") =>
            {
                Ok(Doc::List {
                    items,
                    in_items: true,
                })
            }
            (av, k, None) => {
                let mut obj = serde_json::Map::new();
                if let Some(av) = av {
                    obj.insert("apiVersion".into(), Value::String(av));
                }
                if let Some(k) = k {
                    obj.insert("kind".into(), Value::String(k.as_str().to_owned()));
                }
                Ok(Doc::Raw(Value::Object(obj)))
            }
            _ => Err(fallback()),
        }
    }
}

/// The rest of a document's mapping after `apiVersion` and `kind`, starting with the key
/// already read.
struct Rest<'a, 'de, A> {
    first: Option<Key<'de>>,
    map: &'a mut A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Rest<'_, 'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let key = match self.first.take() {
            Some(k) => k,
            None => match self.map.next_key::<Key<'de>>()? {
                Some(k) if k.as_str() == "apiVersion" || k.as_str() == "kind" => {
                    return Err(fallback());
                }
                Some(k) => k,
                None => return Ok(None),
            },
        };
        key.deserialize_into(seed).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

#[cfg(test)]
mod tests {
    use super::Splitter;

    /// Every value found in `text` fed in pieces of `step` bytes, or `None` on a refusal.
    fn values(text: &str, step: usize) -> Option<Vec<String>> {
        let mut split = Splitter::default();
        let mut buf = Vec::new();
        let mut out = Vec::new();
        let mut consumed = 0;
        for piece in text.as_bytes().chunks(step) {
            buf.extend_from_slice(piece);
            while let Some(r) = split.next(&buf).ok()? {
                out.push(String::from_utf8(buf[r.clone()].to_vec()).ok()?);
                consumed = r.end;
            }
            buf.drain(..consumed);
            split.forget(consumed);
            consumed = 0;
        }
        split.between_values().then_some(out)
    }

    #[test]
    fn values_are_cut_where_they_end_whatever_the_pieces() {
        let text =
            "\n{\"a\": \"}{\\\"]\", \"b\": [1, {\"c\": []}]}{\"d\":\"\\\\\"} [\"x\"]\r\n\t{}\n";
        let expected = [
            "{\"a\": \"}{\\\"]\", \"b\": [1, {\"c\": []}]}",
            "{\"d\":\"\\\\\"}",
            "[\"x\"]",
            "{}",
        ];
        for step in 1..=text.len() {
            assert_eq!(values(text, step).unwrap(), expected, "pieces of {step}");
        }
    }

    /// Strings longer than the bytes looked at one by one, with escapes and brackets far
    /// into them, and `null` seen only outside strings.
    #[test]
    fn long_strings_and_null_literals_whatever_the_pieces() {
        let long = format!("{}\\\"}}]{}", "x".repeat(30), "y".repeat(40));
        let text = format!(
            "{{\"{long}\": \"null\", \"b\": \"{long}\"}} [{{\"n\": null}}] {{\"nn\": [true, false, 1]}}"
        );
        let expected = [
            format!("{{\"{long}\": \"null\", \"b\": \"{long}\"}}"),
            "[{\"n\": null}]".to_owned(),
            "{\"nn\": [true, false, 1]}".to_owned(),
        ];
        for step in 1..=text.len() {
            assert_eq!(values(&text, step).unwrap(), expected, "pieces of {step}");
            let mut split = Splitter::default();
            let mut buf = Vec::new();
            let mut nulls = Vec::new();
            for piece in text.as_bytes().chunks(step) {
                buf.extend_from_slice(piece);
                while let Ok(Some(_)) = split.next(&buf) {
                    nulls.push(split.may_have_null());
                }
            }
            assert_eq!(nulls, [false, true, false], "pieces of {step}");
        }
    }

    /// The word-at-a-time search agrees with a byte-by-byte one for a quote or a backslash
    /// at every offset of strings of every length around the word and `memchr` boundaries,
    /// next to bytes that differ from them by one bit.
    #[test]
    fn string_stops_are_found_at_every_offset() {
        for len in 0..80 {
            for at in 0..=len {
                for stop in [b'"', b'\\'] {
                    let mut s: Vec<u8> = (0..len)
                        .map(|i| [b'#', b'a', b'\x22' ^ 0x80, b'|'][i % 4])
                        .collect();
                    if at < len {
                        s[at] = stop;
                    }
                    let naive = s.iter().position(|&b| b == b'"' || b == b'\\');
                    assert_eq!(super::string_stop(&s), naive, "length {len}, at {at}");
                }
            }
        }
    }

    /// Whether each value of `text` is sure to repeat no key, fed in pieces of `step` bytes.
    fn unique(text: &str, step: usize) -> Vec<bool> {
        let mut split = Splitter::default();
        let mut buf = Vec::new();
        let mut out = Vec::new();
        for piece in text.as_bytes().chunks(step) {
            buf.extend_from_slice(piece);
            let mut consumed = 0;
            while let Ok(Some(r)) = split.next(&buf) {
                out.push(split.keys_unique());
                consumed = r.end;
            }
            buf.drain(..consumed);
            split.forget(consumed);
        }
        out
    }

    #[test]
    fn repeated_keys_are_found_on_the_same_pass_whatever_the_pieces() {
        let many: Vec<String> = (0..20).map(|i| format!("\"k{i}\": {i}")).collect();
        let many = many.join(", ");
        let text = format!(
            "{{\"a\": 1, \"b\": {{\"a\": 1}}, \"c\": [{{\"a\": \"a\"}}, {{\"a\": 2}}]}}\n\
             {{\"a\": 1, \"b\": 2, \"a\": 3}}\n\
             {{\"x\": {{\"y\": 1, \"y\": 2}}}}\n\
             {{\"\\u0061\": 1, \"a\": 2}}\n\
             {{{many}}}\n\
             {{{many}, \"k7\": 0}}\n\
             {{\"a\": [1}}, 2]\n\
             [\"a\", \"a\", {{\"s\": \"a\", \"t\": \"a\"}}]\n"
        );
        let expected = [true, false, false, false, true, false, false, true];
        for step in 1..=text.len() {
            assert_eq!(unique(&text, step), expected, "pieces of {step}");
        }
        // The splitter's verdict agrees with the second pass where it is sure.
        for (value, sure) in text.lines().zip(expected) {
            assert!(
                crate::import::parse::json_duplicates(value).is_ok() || !sure,
                "{value}"
            );
        }
    }

    #[test]
    fn anything_but_whitespace_between_values_is_refused() {
        for text in ["{} 3", "{},{}", "\"s\"", "}", "{}\u{a0}{}", "null"] {
            assert_eq!(values(text, 1), None, "{text:?}");
        }
        // An unclosed value is not complete.
        assert_eq!(values("{\"a\": [1}", 4), None);
        assert_eq!(values("{\"a\": \"}", 4), None);
        assert_eq!(values("  \n", 1), Some(vec![]));
    }
}
