//! The fast path's YAML reader: a serde `Deserializer` driven straight by saphyr-parser's
//! events, with its own budgets, for the plain manifests that make up almost every export.
//!
//! It reads a deliberately small part of YAML and gives up (the error [`Fallback`]) on
//! everything else, so that the exact path (serde-saphyr, with its full budgets and messages)
//! reads the source instead and decides. It gives up on:
//!
//! - anchors, aliases, tags and merge keys (`<<`): no alias is ever expanded here, so an
//!   alias bomb costs nothing on this path;
//! - nesting deeper than [`MAX_DEPTH`] levels (half serde-saphyr's limit of 64), more
//!   documents, nodes or events than half the budgets the exact path uses for the input's
//!   size ([`super::parse::yaml_options`]);
//! - a duplicate key in any mapping, a key that is not a scalar or whose plain text is not
//!   certainly a string;
//! - a plain scalar whose type is not certain: everything that YAML 1.1 or 1.2 could read
//!   as a boolean, a number or null other than the spellings listed in [`Plain`];
//! - a scalar document other than an empty one, and any parser error.
//!
//! What it accepts is typed exactly as serde-saphyr's `deserialize_any` types it (booleans
//! `true`/`false`, decimal integers as `u64` or negative `i64`, decimal fractions as `f64`,
//! other plain text and every quoted or block scalar as a string), which is what the exact
//! path's tree holds too. On the typed path a member whose value is `null` is skipped, as the
//! exact path strips `null` members before decoding. Empty and null documents are skipped
//! and not numbered, as serde-saphyr skips them.
//!
//! # Complexity
//! Linear in the input: every event is read once; duplicate keys are found with a linear scan
//! of the mapping's keys up to 16 keys and with one sort of them beyond.

use std::borrow::Cow;
use std::fmt;

use saphyr_parser::{Event, Parser, ScalarStyle, StrInput};
use serde::de::{
    self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};
use serde_json::Value;

use super::block::Block;
use super::fast::{Doc, Sink, Typed};
use super::importer::SourceReader;
use super::{Kind, Object, split_api_version};

/// The deepest nesting read here (mappings and sequences); deeper documents go to the exact
/// path, whose limit is 64.
pub(super) const MAX_DEPTH: usize = 32;

/// Every document of `text`, or `None` when the exact path must read it.
#[cfg(test)]
pub(super) fn documents(text: &str) -> Option<Vec<Doc>> {
    let mut docs = Vec::new();
    read(text, &mut docs).map(|_| docs)
}

/// Reads every document of `text` into `sink` and says which reader took it, or returns
/// `None` when the exact path must read it.
pub(super) fn read(text: &str, sink: &mut dyn Sink) -> Option<SourceReader> {
    // The plainest block YAML (and one-line flow collections) is scanned without copies.
    let mut reader = Reader::new(text, true);
    if read_stream(&mut reader, sink).is_ok() {
        return Some(SourceReader::YamlScanner);
    }
    let line = match &reader.source {
        Source::Block(b) => b.line(),
        Source::Parser(_) => 0,
    };
    sink.reset();
    // Anything else: serde-saphyr straight into the typed objects (it is the exact
    // path's parser, so both paths agree on what is YAML), unless a mapping may hold
    // a `null` member, which the typed reading would keep.
    if may_have_null_members(text) {
        return None;
    }
    match serde_saphyr::from_multiple_with_options::<Doc>(
        text,
        super::parse::yaml_options(text.len(), true),
    ) {
        Ok(docs) => {
            docs.into_iter().for_each(|d| sink.doc(d));
            Some(SourceReader::YamlTyped { line })
        }
        Err(_) => None,
    }
}

/// Every document of `text` deserialized as `T` by this reader (the block scanner first,
/// then saphyr-parser's events), with `null` members kept; empty and null documents are
/// skipped as serde-saphyr skips them. `None` when the reader gives up on the text (see the
/// module docs: anchors, tags, uncertain scalars, duplicate keys, a scalar document, the
/// budgets, any parser error) or when `T` refuses a document: the caller then reads the text
/// with serde-saphyr, which decides and words every problem.
pub(crate) fn plain_documents<'a, T: de::Deserialize<'a>>(text: &'a str) -> Option<Vec<T>> {
    if let Ok(docs) = documents_as(&mut Reader::new(text, true)) {
        return Some(docs);
    }
    documents_as(&mut Reader::new(text, false)).ok()
}

fn documents_as<'a, T: de::Deserialize<'a>>(r: &mut Reader<'a>) -> Result<Vec<T>, Fallback> {
    if !matches!(r.next()?, Ev::StreamStart) {
        return Err(Fallback);
    }
    let mut docs = Vec::new();
    loop {
        match r.next()? {
            Ev::StreamEnd => return Ok(docs),
            Ev::DocumentStart => {
                if let Ev::Scalar(text, style) = r.peek()? {
                    if *style != ScalarStyle::Plain || !matches!(plain(text), Some(Plain::Null)) {
                        return Err(Fallback);
                    }
                    r.next()?;
                } else {
                    docs.push(T::deserialize(ValueDe { r, strip: false })?);
                }
                if !matches!(r.next()?, Ev::DocumentEnd) {
                    return Err(Fallback);
                }
            }
            _ => return Err(Fallback),
        }
    }
}

/// True when a mapping of `text` may hold a member whose value is `null`, or when
/// saphyr-parser does not read the text.
///
/// The exact path strips `null` members from its tree before decoding; serde-saphyr's typed
/// reading keeps them (an unknown field with no value, as in `{quota: 1, limit}`, is warned
/// about; a `null` inside a verbatim value is kept), so such a source goes to the exact path.
/// A value counts as maybe `null` when it is a plain scalar spelt `""`, `~` or `null` in any
/// case, a tagged scalar, or an alias.
///
/// # Complexity
/// Linear in the text (one pass of saphyr-parser's events, no tree).
fn may_have_null_members(text: &str) -> bool {
    let mut parser = Parser::new_from_str(text);
    // One entry per open collection: `Some(expect_key)` for a mapping, `None` for a sequence.
    let mut open: Vec<Option<bool>> = Vec::new();
    loop {
        let Some(Ok((event, _))) = parser.next_event() else {
            return true;
        };
        let at_value = matches!(open.last(), Some(Some(false)));
        let is_node = matches!(
            event,
            Event::Scalar(..)
                | Event::Alias(_)
                | Event::SequenceStart(..)
                | Event::MappingStart(..)
        );
        match &event {
            Event::StreamEnd => return false,
            Event::Scalar(text, style, _, tag) if at_value => {
                let nullish = text.is_empty() || text == "~" || text.eq_ignore_ascii_case("null");
                if tag.is_some() || (*style == ScalarStyle::Plain && nullish) {
                    return true;
                }
            }
            Event::Alias(_) if at_value => return true,
            Event::SequenceEnd | Event::MappingEnd => {
                open.pop();
            }
            _ => {}
        }
        if is_node && let Some(Some(expect_key)) = open.last_mut() {
            *expect_key = !*expect_key;
        }
        match event {
            Event::MappingStart(..) => open.push(Some(true)),
            Event::SequenceStart(..) => open.push(None),
            _ => {}
        }
    }
}

/// An event of this reader: saphyr-parser's events without anchors, tags and aliases (a
/// source that has them is the exact path's), small enough to move cheaply.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Ev<'a> {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    MappingStart,
    MappingEnd,
    SequenceStart,
    SequenceEnd,
    /// A scalar's text and style.
    Scalar(Cow<'a, str>, ScalarStyle),
}

impl<'a> Ev<'a> {
    /// The event for saphyr-parser's `event`.
    ///
    /// # Errors
    /// [`Fallback`] for an anchor, a tag or an alias.
    pub(super) fn from_parser(event: Event<'a>) -> Result<Ev<'a>, Fallback> {
        Ok(match event {
            Event::StreamStart => Ev::StreamStart,
            Event::StreamEnd => Ev::StreamEnd,
            Event::DocumentStart(_) => Ev::DocumentStart,
            Event::DocumentEnd => Ev::DocumentEnd,
            Event::MappingStart(0, None) => Ev::MappingStart,
            Event::MappingEnd => Ev::MappingEnd,
            Event::SequenceStart(0, None) => Ev::SequenceStart,
            Event::SequenceEnd => Ev::SequenceEnd,
            Event::Scalar(text, style, 0, None) => Ev::Scalar(text, style),
            Event::Scalar(..)
            | Event::MappingStart(..)
            | Event::SequenceStart(..)
            | Event::Alias(_)
            | Event::Nothing => return Err(Fallback),
        })
    }
}

/// Where the events come from.
enum Source<'a> {
    /// The block scanner ([`super::block`]).
    Block(Block<'a>),
    /// saphyr-parser.
    Parser(Box<Parser<'a, StrInput<'a>>>),
}

/// The only error of this reader: the exact path must read the source.
#[derive(Debug)]
pub(super) struct Fallback;

impl fmt::Display for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("needs the exact path")
    }
}

impl std::error::Error for Fallback {}

impl de::Error for Fallback {
    fn custom<T: fmt::Display>(_: T) -> Fallback {
        Fallback
    }
}

/// The event source with its budgets.
struct Reader<'a> {
    source: Source<'a>,
    peeked: Option<Ev<'a>>,
    depth: usize,
    nodes: usize,
    events: usize,
    documents: usize,
    max_nodes: usize,
    max_events: usize,
    max_documents: usize,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str, block: bool) -> Reader<'a> {
        let n = text.len();
        Reader {
            source: if block {
                Source::Block(Block::new(text))
            } else {
                Source::Parser(Box::new(Parser::new_from_str(text)))
            },
            peeked: None,
            depth: 0,
            nodes: 0,
            events: 0,
            documents: 0,
            // Half of the exact path's budgets (parse::yaml_options).
            max_nodes: n.max(250_000) / 2,
            max_events: n.saturating_mul(2).max(1_000_000) / 2,
            max_documents: n.max(1_024) / 2,
        }
    }

    fn next(&mut self) -> Result<Ev<'a>, Fallback> {
        if let Some(ev) = self.peeked.take() {
            return Ok(ev);
        }
        let ev = match &mut self.source {
            Source::Block(b) => b.next_event()?,
            Source::Parser(p) => {
                Ev::from_parser(p.next_event().ok_or(Fallback)?.map_err(|_| Fallback)?.0)?
            }
        };
        self.events += 1;
        if self.events > self.max_events {
            return Err(Fallback);
        }
        match &ev {
            Ev::Scalar(..) => self.node()?,
            Ev::SequenceStart | Ev::MappingStart => {
                self.node()?;
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(Fallback);
                }
            }
            Ev::SequenceEnd | Ev::MappingEnd => self.depth = self.depth.saturating_sub(1),
            Ev::DocumentStart => {
                self.documents += 1;
                if self.documents > self.max_documents {
                    return Err(Fallback);
                }
            }
            Ev::StreamStart | Ev::StreamEnd | Ev::DocumentEnd => {}
        }
        Ok(ev)
    }

    fn node(&mut self) -> Result<(), Fallback> {
        self.nodes += 1;
        if self.nodes > self.max_nodes {
            return Err(Fallback);
        }
        Ok(())
    }

    fn peek(&mut self) -> Result<&Ev<'a>, Fallback> {
        if self.peeked.is_none() {
            let ev = self.next()?;
            self.peeked = Some(ev);
        }
        self.peeked.as_ref().ok_or(Fallback)
    }
}

/// What a plain scalar is, for the spellings this reader is sure of.
enum Plain {
    /// `""`, `~`, `null`, `Null`, `NULL` (serde-saphyr's null spellings).
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A decimal integer without sign or leading zero.
    Unsigned(u64),
    /// `-` and a decimal integer without leading zero, not 0.
    Negative(i64),
    /// Decimal digits, `.`, decimal digits (leading zero only before the point), optional `-`.
    Float(f64),
    /// Text that no YAML schema reads as anything but a string.
    Str,
}

/// Classifies a plain scalar; `None` when its type is not certain.
fn plain(s: &str) -> Option<Plain> {
    let b = s.as_bytes();
    let Some(&first) = b.first() else {
        return Some(Plain::Null);
    };
    if first.is_ascii_alphabetic() {
        // Booleans and nulls of YAML 1.1 and 1.2 in any case, and the non-finite spellings
        // some readers take for floats.
        const SPECIAL: &[&str] = &[
            "y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf", "infinity",
        ];
        if b.len() <= 8 && SPECIAL.iter().any(|w| s.eq_ignore_ascii_case(w)) {
            return match s {
                "true" => Some(Plain::Bool(true)),
                "false" => Some(Plain::Bool(false)),
                "null" | "Null" | "NULL" => Some(Plain::Null),
                _ => None,
            };
        }
        return Some(Plain::Str);
    }
    if s == "~" {
        return Some(Plain::Null);
    }
    if first.is_ascii_digit() {
        // Kubernetes uids (UUIDs, 8-4-4-4-12 hex digits): no YAML schema reads that shape as
        // anything but a string (no number has an inner `-`, no date has those groups).
        if is_uuid(b) {
            return Some(Plain::Str);
        }
        // Quantities (`500m`, `36Gi`) and timestamps contain a letter no number has.
        let numeric = |c: &u8| {
            c.is_ascii_hexdigit()
                || matches!(
                    c,
                    b'x' | b'X' | b'o' | b'O' | b'+' | b'-' | b'.' | b'_' | b':'
                )
        };
        if !b.iter().all(numeric) {
            return Some(Plain::Str);
        }
        return number(s);
    }
    if first == b'-' && b.get(1).is_some_and(u8::is_ascii_digit) {
        return match number(&s[1..])? {
            Plain::Unsigned(0) => None,
            Plain::Unsigned(v) => i64::try_from(v).ok().map(|v| Plain::Negative(-v)),
            Plain::Float(f) => Some(Plain::Float(-f)),
            _ => None,
        };
    }
    None
}

/// True for a UUID's text: 36 bytes, hex digits in groups of 8, 4, 4, 4 and 12 between `-`.
fn is_uuid(b: &[u8]) -> bool {
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// An unsigned decimal integer or fraction in its plainest spelling; `None` otherwise.
fn number(s: &str) -> Option<Plain> {
    let b = s.as_bytes();
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit());
    if !digits(int) || (int.len() > 1 && b[0] == b'0') {
        return None;
    }
    match frac {
        None => s.parse().ok().map(Plain::Unsigned),
        Some(f) if digits(f) && s.len() <= 40 => s.parse().ok().map(Plain::Float),
        Some(_) => None,
    }
}

/// A scalar event's text, style and type.
struct Scalar<'a> {
    text: Cow<'a, str>,
    kind: Plain,
}

fn scalar<'a>(text: Cow<'a, str>, style: ScalarStyle) -> Result<Scalar<'a>, Fallback> {
    let kind = if style == ScalarStyle::Plain {
        plain(&text).ok_or(Fallback)?
    } else {
        Plain::Str
    };
    Ok(Scalar { text, kind })
}

/// Reads every document of the stream into `sink`.
fn read_stream(r: &mut Reader<'_>, sink: &mut dyn Sink) -> Result<(), Fallback> {
    if !matches!(r.next()?, Ev::StreamStart) {
        return Err(Fallback);
    }
    loop {
        match r.next()? {
            Ev::StreamEnd => return Ok(()),
            Ev::DocumentStart => {
                match r.peek()? {
                    Ev::Scalar(text, style) => {
                        // Empty and null documents are skipped (and not numbered).
                        if *style != ScalarStyle::Plain || !matches!(plain(text), Some(Plain::Null))
                        {
                            return Err(Fallback);
                        }
                        r.next()?;
                    }
                    _ => sink.doc(read_doc(r)?),
                }
                if !matches!(r.next()?, Ev::DocumentEnd) {
                    return Err(Fallback);
                }
            }
            _ => return Err(Fallback),
        }
    }
}

/// Reads one document (or one item of a List) into a [`Doc`], as the fast path's
/// `DocVisitor` does for JSON.
fn read_doc(r: &mut Reader<'_>) -> Result<Doc, Fallback> {
    match r.next()? {
        Ev::SequenceStart => {
            let mut items = Vec::new();
            loop {
                if matches!(r.peek()?, Ev::SequenceEnd) {
                    r.next()?;
                    return Ok(Doc::List {
                        items,
                        in_items: false,
                    });
                }
                items.push(read_item(r)?);
            }
        }
        Ev::MappingStart => read_object(r),
        _ => Err(Fallback),
    }
}

/// An item of a sequence read as documents: `null` is skipped by the importer, as the
/// exact path skips it.
fn read_item(r: &mut Reader<'_>) -> Result<Doc, Fallback> {
    if let Ev::Scalar(text, ScalarStyle::Plain) = r.peek()?
        && matches!(plain(text), Some(Plain::Null))
    {
        r.next()?;
        return Ok(Doc::Null);
    }
    read_doc(r)
}

/// A mapping's keys so far, for the duplicate check.
#[derive(Default)]
struct Keys<'a> {
    keys: Vec<Cow<'a, str>>,
}

impl<'a> Keys<'a> {
    /// Records a key; a duplicate among the first 16 keys fails at once, later ones in
    /// [`Keys::finish`].
    fn add(&mut self, key: Cow<'a, str>) -> Result<(), Fallback> {
        if self.keys.len() < 16 && self.keys.contains(&key) {
            return Err(Fallback);
        }
        self.keys.push(key);
        Ok(())
    }

    /// The key recorded last.
    fn last(&self) -> &str {
        self.keys.last().map(AsRef::as_ref).unwrap_or_default()
    }

    fn finish(&mut self) -> Result<(), Fallback> {
        if self.keys.len() > 16 {
            self.keys.sort_unstable();
            if self.keys.windows(2).any(|w| w[0] == w[1]) {
                return Err(Fallback);
            }
        }
        Ok(())
    }
}

/// Reads a mapping key: a scalar that is certainly a string, not a merge key.
fn read_key<'a>(r: &mut Reader<'a>) -> Result<Option<Cow<'a, str>>, Fallback> {
    match r.next()? {
        Ev::MappingEnd => Ok(None),
        Ev::Scalar(text, style) => {
            if style == ScalarStyle::Plain
                && (!matches!(plain(&text), Some(Plain::Str)) || text == "<<")
            {
                return Err(Fallback);
            }
            Ok(Some(text))
        }
        _ => Err(Fallback),
    }
}

/// Reads a string scalar value (`apiVersion`, `kind`).
fn read_string<'a>(r: &mut Reader<'a>) -> Result<Cow<'a, str>, Fallback> {
    match r.next()? {
        Ev::Scalar(text, style) => {
            let s = scalar(text, style)?;
            match s.kind {
                Plain::Str => Ok(s.text),
                _ => Err(Fallback),
            }
        }
        _ => Err(Fallback),
    }
}

/// Reads a document's mapping after its `MappingStart`.
fn read_object(r: &mut Reader<'_>) -> Result<Doc, Fallback> {
    let mut keys = Keys::default();
    let mut api_version: Option<String> = None;
    let mut kind: Option<String> = None;
    let mut items: Option<Vec<Doc>> = None;
    while let Some(key) = read_key(r)? {
        keys.add(key.clone())?;
        match key.as_ref() {
            "apiVersion" if api_version.is_none() => {
                api_version = Some(read_string(r)?.into_owned());
            }
            "kind" if kind.is_none() => kind = Some(read_string(r)?.into_owned()),
            "apiVersion" | "kind" => return Err(Fallback),
            _ => {
                let (Some(av), Some(k)) = (&api_version, &kind) else {
                    return Err(Fallback);
                };
                if k == "List" || k.ends_with("List") {
                    if key == "items" && items.is_none() {
                        items = Some(read_items(r)?);
                    } else {
                        ValueDe { r, strip: false }.deserialize_ignored_any(de::IgnoredAny)?;
                    }
                    continue;
                }
                let (group, _) = split_api_version(av);
                let Some(typed) = Kind::from_group_kind(group, k) else {
                    // Read by the per-document path (a skipped kind, or a conversion).
                    let mut obj = serde_json::Map::new();
                    obj.insert("apiVersion".into(), Value::String(av.clone()));
                    obj.insert("kind".into(), Value::String(k.clone()));
                    let mut key = Some(key);
                    while let Some(k) = key.take().map_or_else(|| read_key(r), |k| Ok(Some(k)))? {
                        if obj.contains_key(k.as_ref()) {
                            return Err(Fallback);
                        }
                        let v: Value = de::Deserialize::deserialize(ValueDe { r, strip: false })?;
                        obj.insert(k.into_owned(), v);
                    }
                    return Ok(Doc::Raw(Value::Object(obj)));
                };
                let mut ignored = Vec::new();
                let rest = MapDe {
                    r,
                    first: Some(key),
                    keys,
                };
                let object = Object::deserialize_kind(typed, rest, &mut ignored)?;
                return Ok(Doc::Typed(Box::new(Typed {
                    api_version: av.clone(),
                    object,
                    ignored,
                })));
            }
        }
    }
    keys.finish()?;
    match (api_version, kind, items) {
        (Some(_), Some(k), Some(items)) if k == "List" || k.ends_with("List") => Ok(Doc::List {
            items,
            in_items: true,
        }),
        (av, k, None) => {
            let mut obj = serde_json::Map::new();
            if let Some(av) = av {
                obj.insert("apiVersion".into(), Value::String(av));
            }
            if let Some(k) = k {
                obj.insert("kind".into(), Value::String(k));
            }
            Ok(Doc::Raw(Value::Object(obj)))
        }
        _ => Err(Fallback),
    }
}

/// A List's `items`: a sequence of documents (`null` items are skipped).
fn read_items(r: &mut Reader<'_>) -> Result<Vec<Doc>, Fallback> {
    if !matches!(r.next()?, Ev::SequenceStart) {
        return Err(Fallback);
    }
    let mut items = Vec::new();
    loop {
        if matches!(r.peek()?, Ev::SequenceEnd) {
            r.next()?;
            return Ok(items);
        }
        items.push(read_item(r)?);
    }
}

/// A deserializer of the next node. With `strip`, mapping members whose value is `null` are
/// skipped (the typed path); without, they are kept (generic trees of other kinds).
pub(super) struct ValueDe<'r, 'a> {
    r: &'r mut Reader<'a>,
    strip: bool,
}

/// The rest of a document's mapping after `apiVersion` and `kind`, starting with the key
/// already read (`first`), as a map deserializer.
struct MapDe<'r, 'a> {
    r: &'r mut Reader<'a>,
    first: Option<Cow<'a, str>>,
    keys: Keys<'a>,
}

impl<'a> Deserializer<'a> for MapDe<'_, 'a> {
    type Error = Fallback;

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Fallback> {
        let MapDe { r, first, keys } = self;
        let mut access = Members {
            r,
            strip: true,
            first,
            pending: None,
            keys,
        };
        let v = visitor.visit_map(&mut access)?;
        access.end()?;
        Ok(v)
    }

    serde::forward_to_deserialize_any! {
        <W: Visitor<'a>>
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// The members of a mapping.
struct Members<'r, 'a> {
    r: &'r mut Reader<'a>,
    strip: bool,
    /// A key already read by the caller.
    first: Option<Cow<'a, str>>,
    /// The first key while the seed reads it.
    pending: Option<Cow<'a, str>>,
    keys: Keys<'a>,
}

impl Members<'_, '_> {
    /// Checks that the visitor read the whole mapping and that no key repeats.
    fn end(mut self) -> Result<(), Fallback> {
        // A visitor that stops early leaves members behind: refuse rather than guess.
        if self.first.is_some() || !matches!(self.r.next()?, Ev::MappingEnd) {
            return Err(Fallback);
        }
        self.keys.finish()
    }
}

impl<'a> MapAccess<'a> for Members<'_, 'a> {
    type Error = Fallback;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Fallback> {
        loop {
            // The key is kept for the duplicate check and lent to the seed from there.
            let key: &str = match self.first.take() {
                // Already in `keys` (the caller read and recorded it).
                Some(k) => {
                    self.pending = Some(k);
                    self.pending.as_deref().unwrap_or_default()
                }
                None => {
                    if matches!(self.r.peek()?, Ev::MappingEnd) {
                        return Ok(None);
                    }
                    let Some(k) = read_key(self.r)? else {
                        return Err(Fallback);
                    };
                    // A second `apiVersion` or `kind` at the top is a duplicate here too.
                    self.keys.add(k)?;
                    self.keys.last()
                }
            };
            if self.strip
                && let Ev::Scalar(text, ScalarStyle::Plain) = self.r.peek()?
                && matches!(plain(text), Some(Plain::Null))
            {
                // `key: null` is no key at all (the exact path strips null members).
                self.r.next()?;
                continue;
            }
            return seed
                .deserialize(de::value::StrDeserializer::<Fallback>::new(key))
                .map(Some);
        }
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, Fallback> {
        seed.deserialize(ValueDe {
            r: self.r,
            strip: self.strip,
        })
    }
}

/// The elements of a sequence.
struct Elements<'r, 'a> {
    r: &'r mut Reader<'a>,
    strip: bool,
}

impl<'a> SeqAccess<'a> for Elements<'_, 'a> {
    type Error = Fallback;

    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Fallback> {
        if matches!(self.r.peek()?, Ev::SequenceEnd) {
            return Ok(None);
        }
        seed.deserialize(ValueDe {
            r: self.r,
            strip: self.strip,
        })
        .map(Some)
    }
}

impl<'a> Deserializer<'a> for ValueDe<'_, 'a> {
    type Error = Fallback;

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Fallback> {
        match self.r.next()? {
            Ev::Scalar(text, style) => {
                let s = scalar(text, style)?;
                match s.kind {
                    Plain::Null => visitor.visit_unit(),
                    Plain::Bool(b) => visitor.visit_bool(b),
                    Plain::Unsigned(v) => visitor.visit_u64(v),
                    Plain::Negative(v) => visitor.visit_i64(v),
                    Plain::Float(f) => visitor.visit_f64(f),
                    Plain::Str => match s.text {
                        Cow::Borrowed(t) => visitor.visit_borrowed_str(t),
                        Cow::Owned(t) => visitor.visit_string(t),
                    },
                }
            }
            Ev::SequenceStart => {
                let mut access = Elements {
                    r: self.r,
                    strip: self.strip,
                };
                let v = visitor.visit_seq(&mut access)?;
                if !matches!(access.r.next()?, Ev::SequenceEnd) {
                    return Err(Fallback);
                }
                Ok(v)
            }
            Ev::MappingStart => {
                let mut access = Members {
                    r: self.r,
                    strip: self.strip,
                    first: None,
                    pending: None,
                    keys: Keys::default(),
                };
                let v = visitor.visit_map(&mut access)?;
                access.end()?;
                Ok(v)
            }
            _ => Err(Fallback),
        }
    }

    fn deserialize_option<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Fallback> {
        if let Ev::Scalar(text, ScalarStyle::Plain) = self.r.peek()?
            && matches!(plain(text), Some(Plain::Null))
        {
            self.r.next()?;
            return visitor.visit_none();
        }
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Fallback> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Fallback> {
        // Unit variants written as a string only.
        match self.r.next()? {
            Ev::Scalar(text, style) => {
                let s = scalar(text, style)?;
                match s.kind {
                    Plain::Str => visitor.visit_enum(s.text.as_ref().into_deserializer()),
                    _ => Err(Fallback),
                }
            }
            _ => Err(Fallback),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Fallback> {
        // Still checked (duplicate keys, budgets, certain scalars) as the exact path checks it.
        self.deserialize_any(de::IgnoredAny)?;
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        <W: Visitor<'a>>
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple
        tuple_struct map struct identifier
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The deserializer on saphyr-parser's events alone.
    fn on_events(text: &str) -> Option<Vec<Doc>> {
        let mut docs = Vec::new();
        read_stream(&mut Reader::new(text, false), &mut docs).ok()?;
        Some(docs)
    }

    #[test]
    fn plain_scalars_are_typed_only_when_certain() {
        assert!(matches!(plain("h200-nvl"), Some(Plain::Str)));
        assert!(matches!(plain("500m"), Some(Plain::Str)));
        assert!(matches!(plain("36Gi"), Some(Plain::Str)));
        assert!(matches!(plain("2026-12-01T00:00:00Z"), Some(Plain::Str)));
        // uids as Kubernetes writes them, also when they start with a digit
        assert!(matches!(
            plain("0b7c1c1e-0000-4000-8000-000000000001"),
            Some(Plain::Str)
        ));
        assert!(matches!(
            plain("12345678-1234-1234-1234-123456789012"),
            Some(Plain::Str)
        ));
        assert!(matches!(plain("8"), Some(Plain::Unsigned(8))));
        assert!(matches!(plain("-3"), Some(Plain::Negative(-3))));
        assert!(matches!(plain("0.5"), Some(Plain::Float(f)) if f == 0.5));
        assert!(matches!(plain("true"), Some(Plain::Bool(true))));
        assert!(matches!(plain(""), Some(Plain::Null)));
        assert!(matches!(plain("~"), Some(Plain::Null)));
        for unsure in [
            "yes",
            "No",
            "ON",
            "y",
            "True",
            "nan",
            "Inf",
            "1e3",
            "0x1F",
            "0o17",
            "017",
            "1_000",
            "1:30",
            "-0",
            "+1",
            ".5",
            "1.",
            "-.inf",
            "2026-12-01",
            "99999999999999999999",
            "0b7c1c1e-0000-4000-8000-00000000000",
        ] {
            assert!(plain(unsure).is_none(), "{unsure}");
        }
    }

    #[test]
    fn anchors_aliases_tags_and_duplicates_fall_back() {
        for text in [
            "apiVersion: v1\nkind: Namespace\nmetadata: &m {name: a}\n",
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: !!str a}\n",
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: a, name: b}\n",
            "apiVersion: v1\nkind: Namespace\nmetadata: {<<: {name: a}}\n",
            "a: 1\n",
            "just text\n",
        ] {
            assert!(on_events(text).is_none(), "{text}");
        }
        // saphyr-parser lets DEL through; the fast path never hands it such a source.
        assert!(
            documents("apiVersion: v1\nkind: Namespace\nmetadata: {name: a\u{7f}}\n").is_none()
        );
        let deep = format!(
            "apiVersion: v1\nkind: Namespace\nmetadata: {{labels: {}1{}}}\n",
            "[".repeat(40),
            "]".repeat(40)
        );
        assert!(on_events(&deep).is_none());
    }

    /// The upstream-style examples of the integration tests are plain manifests: the fast
    /// path reads every one of them (the differential test checks it agrees with the exact
    /// path on them).
    #[test]
    fn the_examples_take_the_fast_path() {
        for (name, text) in [
            (
                "kueue-single-clusterqueue",
                include_str!("../../tests/data/kueue-single-clusterqueue.yaml"),
            ),
            (
                "kueue-cohorts",
                include_str!("../../tests/data/kueue-cohorts.yaml"),
            ),
            (
                "kueue-v1beta1",
                include_str!("../../tests/data/kueue-v1beta1.yaml"),
            ),
            ("kai", include_str!("../../tests/data/kai.yaml")),
            ("core", include_str!("../../tests/data/core.yaml")),
        ] {
            assert!(documents(text).is_some(), "{name}");
        }
    }

    /// Flow-style manifests (a whole document as one flow mapping, flow values under block
    /// keys) are read by the block scanner, not handed to serde-saphyr.
    #[test]
    fn flow_manifests_take_the_scanner() {
        for text in [
            "---\n{apiVersion: kueue.x-k8s.io/v1beta2, kind: Workload, metadata: {name: w, namespace: ns}, spec: {queueName: lq, podSets: [{name: main, count: 2, template: {spec: {containers: [{name: main, resources: {requests: {cpu: \"3\", memory: 4Gi, nvidia.com/gpu: 1}}}]}}}]}}\n",
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: ns}\nspec: {podSets: [{name: main, count: 2}]}\n",
        ] {
            let mut docs = Vec::new();
            assert!(
                read_stream(&mut Reader::new(text, true), &mut docs).is_ok(),
                "{text}"
            );
            let Doc::Typed(t) = &docs[0] else {
                panic!("typed")
            };
            let Object::Workload(w) = &t.object else {
                panic!("a Workload")
            };
            assert_eq!(w.spec.pod_sets[0].count, 2);
            assert_eq!(w.metadata.name, "w");
        }
    }

    #[test]
    fn null_members_are_found_for_the_typed_reading() {
        for text in [
            "a: {quota: 1, limi1e38}\n",
            "a: {b: ~}\n",
            "a:\n  b:\n",
            "a: {b: NULL}\n",
            "a: {b: !!null ''}\n",
            "x: &n 1\na: {b: *n}\n",
            "a: [1\n",
        ] {
            assert!(may_have_null_members(text), "{text}");
        }
        for text in [
            "a: {b: 'null', c: [~, null]}\n",
            "a: &m {name: x}\nb: {c: [*m]}\n",
            "- ~\n- a: 1\n",
            "a:\n  b: nullable\n",
        ] {
            assert!(!may_have_null_members(text), "{text}");
        }
    }

    #[test]
    fn plain_manifests_are_read() {
        let text = "---\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n  labels: {dept: a}\n  annotations: {gone: null}\n";
        let workload = "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: ns}\nspec:\n  queueName: lq\n  priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: high}\n  podSets:\n  - name: main\n    count: 2\n    template: {spec: {containers: [{name: main, resources: {requests: {cpu: '3', memory: 4Gi, nvidia.com/gpu: 1}}}]}}\n";
        let docs = on_events(workload).expect("fast path");
        let Doc::Typed(t) = &docs[0] else {
            panic!("typed")
        };
        let Object::Workload(w) = &t.object else {
            panic!("a Workload")
        };
        assert_eq!(w.spec.pod_sets[0].count, 2);
        let requests = &w.spec.pod_sets[0].template.spec.containers[0]
            .resources
            .requests;
        assert_eq!(requests.len(), 3);
        let docs = on_events(text).expect("fast path");
        assert_eq!(docs.len(), 1);
        let Doc::Typed(t) = &docs[0] else {
            panic!("typed")
        };
        assert_eq!(t.object.display_name().as_deref(), Some("team-a"));
    }
}
