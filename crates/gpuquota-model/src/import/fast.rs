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

/// Reads every document of `text` into `sink` and returns true, or returns false when
/// anything at all needs the exact path (the documents delivered so far are then to be
/// forgotten: `sink` was not reset).
///
/// Documents are delivered as soon as each is read, so that no second copy of the objects
/// is held while the source is read.
pub(super) fn parse(text: &str, sink: &mut dyn Sink) -> bool {
    if parse::looks_like_json(text) {
        let trimmed = text.trim_start_matches('\u{feff}').trim_start();
        if parse::json_duplicates(trimmed).is_err() {
            return false;
        }
        // The exact path strips `null` members from its tree; the typed reading would see
        // them (an unknown field warned about, a `null` kept in a verbatim value), so they
        // are taken out of the text first.
        let Some(stripped) = parse::strip_null_members(trimmed) else {
            return false;
        };
        for item in serde_json::Deserializer::from_str(&stripped).into_iter::<Doc>() {
            match item {
                Ok(doc) => sink.doc(doc),
                Err(_) => return false,
            }
        }
        return true;
    }
    super::yaml::documents_into(text, sink)
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
        let mut kind: Option<String> = None;
        let mut items: Option<Vec<Doc>> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "apiVersion" if api_version.is_none() => api_version = Some(map.next_value()?),
                "kind" if kind.is_none() => kind = Some(map.next_value()?),
                "apiVersion" | "kind" => return Err(fallback()),
                _ => {
                    let (Some(av), Some(k)) = (&api_version, &kind) else {
                        return Err(fallback());
                    };
                    if k == "List" || k.ends_with("List") {
                        if key == "items" && items.is_none() {
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
                        obj.insert("kind".into(), Value::String(k.clone()));
                        let v: Value = map.next_value()?;
                        obj.insert(key, v);
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
            (Some(_), Some(k), Some(items)) if k == "List" || k.ends_with("List") => {
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
                    obj.insert("kind".into(), Value::String(k));
                }
                Ok(Doc::Raw(Value::Object(obj)))
            }
            _ => Err(fallback()),
        }
    }
}

/// The rest of a document's mapping after `apiVersion` and `kind`, starting with the key
/// already read.
struct Rest<'a, A> {
    first: Option<String>,
    map: &'a mut A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Rest<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let key = match self.first.take() {
            Some(k) => k,
            None => match self.map.next_key::<String>()? {
                Some(k) if k == "apiVersion" || k == "kind" => return Err(fallback()),
                Some(k) => k,
                None => return Ok(None),
            },
        };
        seed.deserialize(de::value::StringDeserializer::<A::Error>::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}
