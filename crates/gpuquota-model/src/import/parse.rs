//! Reading text into documents: JSON (one value or a stream) and multi-document YAML, with
//! duplicate keys refused in both and every message in words a user can act on.

use std::fmt;

#[cfg(feature = "serde")]
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::diag::{Code, codes};

/// The YAML reader's options for an input of `n` bytes.
///
/// The parser's default budget (1,024 documents, 250,000 nodes) guards against document and
/// node storms; a real cluster export can legitimately exceed it, so those limits grow with the
/// input, which the import's byte limit bounds. Alias, anchor and depth limits stay at the
/// parser's defaults. Duplicate keys are errors. With `typed`, an unquoted number or boolean
/// is not read into a string field (the API server, which converts YAML to JSON first, refuses
/// `name: 123` too).
pub(crate) fn yaml_options(n: usize, typed: bool) -> serde_saphyr::Options {
    let mut options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_documents: n.max(1_024),
            max_nodes: n.max(250_000),
            max_events: n.saturating_mul(2).max(1_000_000),
        },
    };
    options.no_schema = typed;
    options
}

/// True when the text should first be tried as JSON.
pub(crate) fn looks_like_json(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    t.starts_with('{') || t.starts_with('[')
}

/// Every document of `text` as a generic tree.
///
/// # Errors
/// The code and message of the first problem: malformed text, a duplicate key, a limit hit.
pub(crate) fn documents(text: &str) -> Result<Vec<Value>, (Code, String)> {
    if looks_like_json(text) {
        let trimmed = text.trim_start_matches('\u{feff}').trim_start();
        let mut out = Vec::new();
        let mut failed = None;
        STOP.set(None);
        for item in serde_json::Deserializer::from_str(trimmed).into_iter::<Checked>() {
            match item {
                Ok(Checked(v)) => out.push(v),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        // The code comes from what the visitor recorded, never from the error's text; the
        // text (with serde_json's position) is only shown.
        match (failed, STOP.take()) {
            (None, _) => return Ok(out),
            // A duplicate key is an answer; any other JSON error may be YAML flow syntax.
            (Some(e), Some(Stop::DuplicateKey)) => {
                return Err((codes::DUPLICATE_KEY, format!("JSON: {e}")));
            }
            (Some(e), Some(Stop::AtDepthLimit))
                if opens_value_at(trimmed, e.line(), e.column()) =>
            {
                return Err((
                    codes::LIMIT_EXCEEDED,
                    format!(
                        "JSON nesting is deeper than 128 levels, the reader's limit ({e}); \
                         manifests nest far less: check the brackets"
                    ),
                ));
            }
            (Some(_), _) => {}
        }
    }
    serde_saphyr::from_multiple_with_options::<Value>(text, yaml_options(text.len(), false))
        .map_err(|e| yaml_error(&e))
}

/// Why the JSON reading of [`documents`] stopped, as far as the visitor knows: recorded by
/// the visitor where it fails or reaches the depth limit, read (and cleared) by the caller to
/// pick the diagnostic code. A thread-local because serde_json's stream of values takes a
/// `Deserialize` type, not a seed that could carry a reference to the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// An object repeated a key (the error is the visitor's own).
    DuplicateKey,
    /// The value that failed lies at [`JSON_DEPTH_LIMIT`], where serde_json refuses an array
    /// or object before any visitor sees it; [`opens_value_at`] tells that refusal from a
    /// broken scalar at the same depth.
    AtDepthLimit,
}

thread_local! {
    static STOP: std::cell::Cell<Option<Stop>> = const { std::cell::Cell::new(None) };
}

/// The nesting level at which serde_json's reader refuses an array or object (its recursion
/// limit: 128 levels, the 128th container refused): the visitor counts the levels itself.
const JSON_DEPTH_LIMIT: u32 = 128;

/// True when serde_json's error position (`line`, `column`, both 1-based, the column in
/// bytes) in `text` is an `[` or `{` that starts a value: the byte before it, whitespace
/// skipped, is the `[`, `,` or `:` that a value follows. serde_json reports its depth refusal
/// there, before reading the bracket; any other error in a value at that depth lies after the
/// value's first byte (a broken escape `"\[`, a broken literal `t[`), or on a byte that opens
/// no container.
fn opens_value_at(text: &str, line: usize, column: usize) -> bool {
    let b = text.as_bytes();
    let start = if line <= 1 {
        0
    } else {
        match memchr::memchr_iter(b'\n', b).nth(line - 2) {
            Some(newline) => newline + 1,
            None => return false,
        }
    };
    let Some(at) = (start + column).checked_sub(1) else {
        return false;
    };
    if !matches!(b.get(at), Some(b'[' | b'{')) {
        return false;
    }
    let before = b[..at]
        .iter()
        .rev()
        .find(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'));
    matches!(before, Some(b'[' | b',' | b':'))
}

/// Checks a JSON text for duplicate keys without building it (the fast path's guard).
///
/// # Errors
/// The duplicate-key message, with line and column.
pub(crate) fn json_duplicates(text: &str) -> Result<(), String> {
    if scan_json_keys(text) == Some(true) {
        return Ok(());
    }
    for item in serde_json::Deserializer::from_str(text).into_iter::<NoDuplicates>() {
        item.map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The JSON text with every object member whose value is `null` removed (`{"a": null, "b": 1}`
/// becomes `{"b": 1}`), as the exact path strips such members from its tree before decoding;
/// borrowed when the text holds no `null` at all. `null` elements of arrays stay, as they do
/// on the exact path. `None` when the text is not well-formed enough to be sure (brackets
/// that do not match, a key without `:`); the exact path then reads it.
///
/// # Complexity
/// Linear in the text: one `memchr`-style search for `null`, and one copy when it is found.
pub(crate) fn strip_null_members(text: &str) -> Option<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    /// An open object: where the current member's output starts (its leading comma
    /// included), whether no member of it has been written yet, and whether a key comes next.
    struct Open {
        start: usize,
        empty: bool,
        expect_key: bool,
    }
    if !text.contains("null") {
        return Some(Cow::Borrowed(text));
    }
    let b = text.as_bytes();
    let ws = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    // One entry per open bracket: `Some` for an object, `None` for an array.
    let mut open: Vec<Option<Open>> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'{' => {
                out.push(c);
                open.push(Some(Open {
                    start: out.len(),
                    empty: true,
                    expect_key: true,
                }));
            }
            b'[' => {
                out.push(c);
                open.push(None);
            }
            b'}' | b']' => {
                if open.pop()?.is_some() != (c == b'}') {
                    return None;
                }
                out.push(c);
            }
            b',' => {
                if let Some(Some(o)) = open.last_mut() {
                    o.expect_key = true;
                    o.start = out.len();
                    if o.empty {
                        // Every member before this comma was removed: so is the comma.
                        i += 1;
                        continue;
                    }
                }
                out.push(c);
            }
            b'"' => {
                let mut j = i + 1;
                loop {
                    match b.get(j)? {
                        b'"' => break,
                        b'\\' => j += 2,
                        _ => j += 1,
                    }
                }
                if let Some(Some(o)) = open.last_mut()
                    && o.expect_key
                {
                    o.expect_key = false;
                    let mut k = j + 1;
                    while b.get(k).copied().is_some_and(ws) {
                        k += 1;
                    }
                    if b.get(k) != Some(&b':') {
                        return None;
                    }
                    k += 1;
                    while b.get(k).copied().is_some_and(ws) {
                        k += 1;
                    }
                    let after = k + 4;
                    if b.get(k..after) == Some(b"null")
                        && b.get(after)
                            .is_none_or(|&d| ws(d) || matches!(d, b',' | b'}' | b']'))
                    {
                        out.truncate(o.start);
                        i = after;
                        continue;
                    }
                    o.empty = false;
                }
                out.extend_from_slice(b.get(i..=j)?);
                i = j + 1;
                continue;
            }
            _ => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).ok().map(Cow::Owned)
}

/// A quick scan of JSON text for duplicate object keys: `Some(true)` when no object repeats
/// a key, `None` when the scan is not sure (a key with an escape sequence, which may spell
/// the same key differently, or text that is not well-formed; then the serde check decides).
///
/// The text is not validated here (the deserializer that follows does that); brackets and
/// strings are tracked just enough to know which strings are keys of which object.
///
/// # Complexity
/// Linear in the text, plus a sort of the keys of each object with more than 16 keys.
fn scan_json_keys(text: &str) -> Option<bool> {
    let b = text.as_bytes();
    // Keys of the open objects, innermost last; `open` holds each open bracket: the index
    // of its first key in `keys` for an object, `None` for an array.
    let mut keys: Vec<&[u8]> = Vec::new();
    let mut open: Vec<Option<usize>> = Vec::new();
    let mut expect_key = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' => {
                open.push(Some(keys.len()));
                expect_key = true;
            }
            b'[' => {
                open.push(None);
                expect_key = false;
            }
            b'}' => {
                let start = open.pop()??;
                let these = &mut keys[start..];
                if these.len() > 16 {
                    these.sort_unstable();
                    if these.windows(2).any(|w| w[0] == w[1]) {
                        return Some(false);
                    }
                }
                keys.truncate(start);
                expect_key = false;
            }
            b']' => {
                if open.pop()?.is_some() {
                    return None;
                }
                expect_key = false;
            }
            b',' => expect_key = matches!(open.last(), Some(Some(_))),
            b':' => expect_key = false,
            b'"' => {
                let start = i + 1;
                let mut j = start;
                let mut escaped = false;
                loop {
                    j += memchr::memchr2(b'"', b'\\', b.get(j..)?)?;
                    match b.get(j)? {
                        b'"' => break,
                        _ => {
                            escaped = true;
                            j += 2;
                        }
                    }
                }
                if expect_key {
                    if escaped {
                        return None;
                    }
                    let key = b.get(start..j)?;
                    let first = (*open.last()?)?;
                    let these = &keys[first..];
                    if these.len() < 16 && these.contains(&key) {
                        return Some(false);
                    }
                    keys.push(key);
                    expect_key = false;
                }
                i = j;
            }
            _ => {}
        }
        i += 1;
    }
    open.is_empty().then_some(true)
}

const DUPLICATE_PREFIX: &str = "duplicate key ";

/// A YAML reader error as a code and a message that says what is wrong and what to do,
/// without the parser's advice to its own callers.
pub fn yaml_error(e: &serde_saphyr::Error) -> (Code, String) {
    let at = e
        .location()
        .map(|l| format!(" at line {} column {}", l.line(), l.column()))
        .unwrap_or_default();
    match e.without_snippet() {
        serde_saphyr::Error::DuplicateMappingKey { key, .. } => {
            let key = key
                .as_deref()
                .map(|k| format!(" {k:?}"))
                .unwrap_or_default();
            (
                codes::DUPLICATE_KEY,
                format!(
                    "YAML: duplicate key{key}{at}: a key may appear only once in a mapping; \
                     remove or merge one of them"
                ),
            )
        }
        serde_saphyr::Error::MultipleDocuments { .. } => (
            codes::MALFORMED,
            format!(
                "YAML: several documents (`---`){at} where this input takes one; put each \
                 document in its own file"
            ),
        ),
        serde_saphyr::Error::Budget { breach, .. } => (codes::LIMIT_EXCEEDED, budget(breach, &at)),
        other => {
            let msg = other.to_string();
            let short: Vec<&str> = msg.lines().take(3).collect();
            (
                codes::MALFORMED,
                format!("malformed YAML: {}", serde_message(&short.join(" "))),
            )
        }
    }
}

fn budget(breach: &serde_saphyr::budget::BudgetBreach, at: &str) -> String {
    use serde_saphyr::budget::BudgetBreach as B;
    let (what, advice) = match breach {
        B::Depth { .. } => (
            "YAML nesting is deeper than 64 levels".to_owned(),
            "manifests nest far less: check the indentation",
        ),
        B::Aliases { aliases } => (
            format!("more than {} aliases (`*name`) ({aliases} seen)", 50_000),
            "expand the aliases or split the input",
        ),
        B::Anchors { anchors } => (
            format!("more than 50000 anchors (`&name`) ({anchors} seen)"),
            "split the input",
        ),
        B::AliasAnchorRatio { aliases, anchors } => (
            format!("{aliases} aliases for {anchors} anchors, which looks like an alias bomb"),
            "expand the aliases by hand",
        ),
        B::Documents { documents } => (
            format!("too many documents ({documents}) for the input's size"),
            "split the input into several files",
        ),
        B::Nodes { nodes } => (
            format!("too many YAML nodes ({nodes}) for the input's size"),
            "split the input into several files",
        ),
        B::Events { events } => (
            format!("too many YAML events ({events}) for the input's size"),
            "split the input into several files",
        ),
        B::ScalarBytes { total_scalar_bytes } => (
            format!("more than 64 MiB of scalar text ({total_scalar_bytes} bytes)"),
            "split the input into several files",
        ),
        B::MergeKeys { merge_keys } => (
            format!("more than 10000 merge keys (`<<`) ({merge_keys} seen)"),
            "expand the merges or split the input",
        ),
        _ => (
            "the input exceeds one of the YAML reader's safety limits".to_owned(),
            "split the input into several files or simplify its anchors and aliases",
        ),
    };
    format!("YAML: {what}{at}; {advice}")
}

/// A deserialization message with serde's internal phrasing replaced by what a user can act
/// on (untagged enums say which forms are accepted).
pub fn serde_message(msg: &str) -> String {
    serde_message_with(msg, &[])
}

/// [`serde_message`] with the accepted forms of the caller's untagged enums: `forms` maps a
/// type name (`DecimalIn`) to the forms it accepts in words (`a string such as "4.50", or a
/// number`). A failure of a listed enum becomes `expected <forms>; the value has none of
/// these forms`, followed by serde's location if it gave one; an unlisted one names the type.
pub fn serde_message_with(msg: &str, forms: &[(&str, &str)]) -> String {
    const PREFIX: &str = "data did not match any variant of untagged enum ";
    let Some(at) = msg.find(PREFIX) else {
        return msg.to_owned();
    };
    let (before, rest) = (&msg[..at], &msg[at + PREFIX.len()..]);
    let name = rest
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()
        .unwrap_or(rest);
    let tail = rest.strip_prefix(name).unwrap_or("");
    match forms.iter().find(|(n, _)| *n == name) {
        Some((_, accepted)) => {
            format!("{before}expected {accepted}; the value has none of these forms{tail}")
        }
        None => format!(
            "{before}the value has none of the forms {name} accepts (see the documentation of {name}){tail}"
        ),
    }
}

/// A JSON value built with duplicate keys refused.
struct Checked(Value);

impl<'de> de::Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Checked, D::Error> {
        ValueSeed { depth: 1 }.deserialize(d).map(Checked)
    }
}

/// A value at nesting level `depth` (1 for a document; the elements and member values of a
/// container at level n are at n + 1).
struct ValueSeed {
    depth: u32,
}

impl<'de> DeserializeSeed<'de> for ValueSeed {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        let visitor = ValueVisitor { depth: self.depth };
        if self.depth < JSON_DEPTH_LIMIT {
            return d.deserialize_any(visitor);
        }
        // serde_json refuses a container here before the visitor runs: record where the
        // reading is, and clear the record when the value (a scalar) reads.
        STOP.set(Some(Stop::AtDepthLimit));
        let v = d.deserialize_any(visitor)?;
        STOP.set(None);
        Ok(v)
    }
}

struct ValueVisitor {
    depth: u32,
}

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        ValueSeed { depth: self.depth }.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(ValueSeed {
            depth: self.depth + 1,
        })? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                STOP.set(Some(Stop::DuplicateKey));
                return Err(de::Error::custom(format_args!(
                    "{DUPLICATE_PREFIX}{key:?}: a key may appear only once in an object; \
                     remove or merge one of them"
                )));
            }
            let v = map.next_value_seed(ValueSeed {
                depth: self.depth + 1,
            })?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// A JSON value checked for duplicate keys and thrown away.
struct NoDuplicates;

impl<'de> de::Deserialize<'de> for NoDuplicates {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<NoDuplicates, D::Error> {
        d.deserialize_any(NoDuplicatesVisitor)
    }
}

struct NoDuplicatesVisitor;

/// A key, borrowed from the input where it has no escapes.
pub(super) enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl<'de> Key<'de> {
    /// The key's text.
    pub(super) fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }

    /// Hands the key to `seed` as a string (borrowed where it was).
    pub(super) fn deserialize_into<T: DeserializeSeed<'de>, E: de::Error>(
        self,
        seed: T,
    ) -> Result<T::Value, E> {
        match self {
            Key::Borrowed(s) => seed.deserialize(de::value::BorrowedStrDeserializer::new(s)),
            Key::Owned(s) => seed.deserialize(de::value::StringDeserializer::new(s)),
        }
    }
}

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key<'de>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key::Borrowed(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v.to_owned()))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Visitor<'de> for NoDuplicatesVisitor {
    type Value = NoDuplicates;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_i64<E>(self, _: i64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_u64<E>(self, _: u64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_f64<E>(self, _: f64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_str<E>(self, _: &str) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_unit<E>(self) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NoDuplicates, A::Error> {
        while seq.next_element::<NoDuplicates>()?.is_some() {}
        Ok(NoDuplicates)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NoDuplicates, A::Error> {
        let mut keys: Vec<Key<'de>> = Vec::new();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            // Objects have a handful of keys: a linear scan beats hashing.
            if keys.len() < 32 {
                if keys.iter().any(|k| k.as_str() == key.as_str()) {
                    return Err(de::Error::custom(format_args!(
                        "{DUPLICATE_PREFIX}{:?}",
                        key.as_str()
                    )));
                }
                keys.push(key);
            } else {
                keys.push(key);
            }
            map.next_value::<NoDuplicates>()?;
        }
        if keys.len() > 32 {
            let mut all: Vec<&str> = keys.iter().map(Key::as_str).collect();
            all.sort_unstable();
            if let Some(w) = all.windows(2).find(|w| w[0] == w[1]) {
                return Err(de::Error::custom(format_args!(
                    "{DUPLICATE_PREFIX}{:?}",
                    w[0]
                )));
            }
        }
        Ok(NoDuplicates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_members_are_stripped_from_json_text() {
        let strip = |t: &str| strip_null_members(t).map(|c| c.into_owned());
        assert_eq!(
            strip("{\"a\": null, \"b\": 1}").as_deref(),
            Some("{ \"b\": 1}")
        );
        assert_eq!(
            strip("{\"a\": 1, \"b\": null}").as_deref(),
            Some("{\"a\": 1}")
        );
        assert_eq!(
            strip("{\"a\":null,\"b\":null,\"c\":{\"d\":null},\"e\":[null,{\"f\":null}]}")
                .as_deref(),
            Some("{\"c\":{},\"e\":[null,{}]}")
        );
        assert_eq!(
            strip("{\"a\": \"null\", \"nullable\": nullx}").as_deref(),
            Some("{\"a\": \"null\", \"nullable\": nullx}")
        );
        assert_eq!(strip("{\"a\": 1}").as_deref(), Some("{\"a\": 1}"));
        assert_eq!(strip("null"), Some("null".into()));
        assert_eq!(strip("{\"a\": [null}"), None);
        assert_eq!(strip("{\"a\" null}"), None);
        // The stripped text parses to the exact path's stripped tree.
        let text = "{\"k\": {\"x\": null, \"y\": [1, null], \"z\": {\"w\": null}}, \"n\": null}";
        let mut tree: Value = serde_json::from_str(text).unwrap();
        super::super::importer::strip_nulls(&mut tree);
        let stripped: Value = serde_json::from_str(&strip(text).unwrap()).unwrap();
        assert_eq!(stripped, tree);
    }

    #[test]
    fn json_duplicates_are_errors_with_position() {
        let (code, msg) = documents("{\"a\": 1,\n \"a\": 2}").unwrap_err();
        assert_eq!(code, codes::DUPLICATE_KEY);
        assert!(
            msg.contains("duplicate key \"a\"") && msg.contains("line 2"),
            "{msg}"
        );
        assert!(json_duplicates("{\"a\": {\"b\": 1, \"b\": 2}}").is_err());
        assert!(json_duplicates("{\"a\": {\"b\": 1, \"c\": 2}}").is_ok());
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\": 1")).collect();
        let dup = format!("{{{}, \"k3\": 2}}", many.join(", "));
        assert!(json_duplicates(&dup).is_err());
        assert_eq!(scan_json_keys(&dup), Some(false));
        assert_eq!(
            scan_json_keys("{\"a\": {\"a\": [{\"a\": \"}\\\"\"}], \"b\": 1}} {\"a\": 2}"),
            Some(true)
        );
        assert_eq!(
            scan_json_keys("[{\"x\": 1}, {\"x\": 1, \"x\": 2}]"),
            Some(false)
        );
        // An escaped key may spell another key: the serde check decides.
        assert_eq!(scan_json_keys("{\"a\": 1, \"\\u0061\": 2}"), None);
        assert!(json_duplicates("{\"a\": 1, \"\\u0061\": 2}").is_err());
        assert_eq!(scan_json_keys("{\"a\": [1}"), None);
    }

    #[test]
    fn yaml_messages_name_the_limit_not_the_api() {
        let (code, msg) = documents("a: 1\na: 2\n").unwrap_err();
        assert_eq!(code, codes::DUPLICATE_KEY);
        assert!(!msg.contains("DuplicateKeyPolicy"), "{msg}");
        assert!(msg.contains("\"a\"") && msg.contains("line 2"), "{msg}");
        let deep = format!("{}1{}", "[".repeat(100), "]".repeat(100));
        let (code, msg) = documents(&format!("a: {deep}\n")).unwrap_err();
        assert_eq!(code, codes::LIMIT_EXCEEDED, "{msg}");
        assert!(msg.contains("deeper than 64 levels"), "{msg}");
        assert!(!msg.contains('{') && !msg.contains("Depth"), "{msg}");
    }

    #[test]
    fn untagged_messages_name_the_forms() {
        let m = serde_message("data did not match any variant of untagged enum Source");
        assert!(m.contains("none of the forms Source accepts"), "{m}");
        let forms = [("TimeIn", "RFC 3339 text or integer seconds")];
        assert_eq!(
            serde_message_with(
                "window.start: data did not match any variant of untagged enum TimeIn at line 2 column 10",
                &forms
            ),
            "window.start: expected RFC 3339 text or integer seconds; the value has none of these forms at line 2 column 10"
        );
        assert_eq!(
            serde_message_with("invalid type: map", &forms),
            "invalid type: map"
        );
    }

    #[test]
    fn a_nested_duplicate_key_is_a_duplicate_key_with_its_position() {
        let text = "{\"a\": {\"b\": [{\"c\": 1,\n  \"c\": 2}]}}";
        assert_eq!(
            documents(text),
            Err((
                codes::DUPLICATE_KEY,
                "JSON: duplicate key \"c\": a key may appear only once in an object; \
                 remove or merge one of them at line 2 column 5"
                    .to_owned()
            ))
        );
        // In the second document of a stream too.
        let (code, msg) = documents("{\"a\": 1}\n[{\"x\": {\"y\": 1, \"y\": 1}}]").unwrap_err();
        assert_eq!(code, codes::DUPLICATE_KEY);
        assert_eq!(
            msg,
            "JSON: duplicate key \"y\": a key may appear only once in an object; \
             remove or merge one of them at line 2 column 19"
        );
    }

    #[test]
    fn json_nesting_at_the_readers_limit_is_limit_exceeded() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(documents(&nested(127)).map(|v| v.len()), Ok(1));
        for n in [128, 129] {
            assert_eq!(
                documents(&nested(n)),
                Err((
                    codes::LIMIT_EXCEEDED,
                    "JSON nesting is deeper than 128 levels, the reader's limit (recursion \
                     limit exceeded at line 1 column 128); manifests nest far less: check the \
                     brackets"
                        .to_owned()
                ))
            );
        }
        // Objects, with the refused bracket on its own line after an element.
        let text = format!("{}[1,\n  {{}}]{}", "{\"k\": ".repeat(126), "}".repeat(126));
        assert_eq!(
            documents(&text),
            Err((
                codes::LIMIT_EXCEEDED,
                "JSON nesting is deeper than 128 levels, the reader's limit (recursion \
                 limit exceeded at line 2 column 3); manifests nest far less: check the \
                 brackets"
                    .to_owned()
            ))
        );
    }

    #[test]
    fn a_broken_scalar_at_the_depth_limit_is_not_a_nesting_error() {
        // The 128th level holds a scalar that does not parse (one error lies on a `[`): JSON
        // fails there, but not for its depth, so the text goes on to the YAML reader.
        for inner in ["tru", "\"\\[\"", "t[", "-["] {
            let text = format!("{}{inner}{}", "[".repeat(127), "]".repeat(127));
            let (_, msg) = documents(&text).unwrap_err();
            assert!(!msg.starts_with("JSON"), "{inner}: {msg}");
        }
    }

    #[test]
    fn words_of_a_message_inside_a_value_pick_no_code() {
        for value in [
            "duplicate key \\\"a\\\": a key may appear only once",
            "recursion limit exceeded at line 1 column 2",
        ] {
            let text = format!("{{\"error\": \"{value}\", \"b\": ]}}");
            let (code, msg) = documents(&text).unwrap_err();
            assert_eq!(code, codes::MALFORMED, "{text}: {msg}");
            assert!(msg.starts_with("malformed YAML: "), "{msg}");
        }
    }
}
