//! Diagnostics: the one shape every crate of the workspace reports input problems and
//! decision warnings in.
//!
//! A [`Diagnostic`] names how serious it is ([`Severity`]), a stable machine-readable
//! [`Code`], where the input came from (file and document), the object (kind and name), the
//! field path in Kubernetes' notation and a message. Each crate declares the codes it emits as
//! constants next to the code that emits them (`gpuquota_model::diag::codes` holds the
//! model's); tools filter and count diagnostics by code, never by message text.
//!
//! ```
//! use gpuquota_model::diag::{Diagnostic, Diagnostics, codes};
//!
//! let mut all = Diagnostics::default();
//! all.push(
//!     Diagnostic::warning(codes::UNKNOWN_FIELD, "unknown field; did you mean \"nominalQuota\"?")
//!         .object("ClusterQueue", "batch")
//!         .field("spec.resourceGroups[0].flavors[0].resources[0].nominalQuta"),
//! );
//! assert!(!all.has_errors());
//! assert_eq!(
//!     all.iter().next().map(ToString::to_string).as_deref(),
//!     Some("ClusterQueue \"batch\": spec.resourceGroups[0].flavors[0].resources[0].nominalQuta: \
//!           unknown field; did you mean \"nominalQuota\"?")
//! );
//! // Under `--strict` every warning counts as an error.
//! assert!(all.has_errors_strict(true));
//! ```

use std::fmt;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Severity {
    /// The input cannot be used as given: the command fails (exit 1).
    Error,
    /// The input is used, but something was ignored, tolerated or is worth a look; an error
    /// under `--strict`.
    Warning,
}

impl Severity {
    /// `error` or `warning`, the prefix the command line prints.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stable, machine-readable diagnostic code such as `unknown-field` or `preemption-loop`.
///
/// Codes are kebab-case strings that never change once released; each crate declares its own
/// as constants, so adding a code never touches another crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Code(&'static str);

impl Code {
    /// A code from its kebab-case name.
    pub const fn new(name: &'static str) -> Code {
        Code(name)
    }

    /// The code's name.
    pub const fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

/// A code is a string in JSON (`"unknown-field"`).
#[cfg(feature = "schema")]
impl schemars::JsonSchema for Code {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Code".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A stable diagnostic code, e.g. `unknown-field`."
        })
    }
}

/// The codes the model crate emits (import, parsing, validation).
pub mod codes {
    use super::Code;

    /// A file or input could not be read (I/O error).
    pub const READ_FAILED: Code = Code::new("read-failed");
    /// An input is larger than the reader's limit.
    pub const INPUT_TOO_LARGE: Code = Code::new("input-too-large");
    /// An input is not UTF-8 text.
    pub const NOT_UTF8: Code = Code::new("not-utf8");
    /// Malformed YAML or JSON.
    pub const MALFORMED: Code = Code::new("malformed");
    /// A field of the wrong type or shape.
    pub const INVALID_TYPE: Code = Code::new("invalid-type");
    /// A key given twice in one mapping.
    pub const DUPLICATE_KEY: Code = Code::new("duplicate-key");
    /// A field the object's schema does not have (ignored).
    pub const UNKNOWN_FIELD: Code = Code::new("unknown-field");
    /// A kind the command does not read (skipped).
    pub const UNKNOWN_KIND: Code = Code::new("unknown-kind");
    /// An API version upstream does not serve for the kind.
    pub const UNKNOWN_API_VERSION: Code = Code::new("unknown-api-version");
    /// The input holds no object the command can use.
    pub const NO_OBJECTS: Code = Code::new("no-objects");
    /// A limit of the reader (documents, nodes, depth) was hit.
    pub const LIMIT_EXCEEDED: Code = Code::new("limit-exceeded");
    /// A field error as the API server reports it (`Invalid value`, `Required value`, ...).
    pub const INVALID: Code = Code::new("invalid");
    /// A reference to an object that is not in the given files.
    pub const NOT_FOUND: Code = Code::new("not-found");
    /// The same object given twice.
    pub const DUPLICATE_OBJECT: Code = Code::new("duplicate-object");
    /// A document that is not an object (a bare scalar); skipped.
    pub const NOT_AN_OBJECT: Code = Code::new("not-an-object");
    /// A field the API server accepts but an engine ignores (e.g. a ResourceQuota's
    /// `limits.nvidia.com/gpu`).
    pub const IGNORED_BY_ENGINES: Code = Code::new("ignored-by-engines");
    /// An integer quantity an engine adds up or multiplies exceeds its exact arithmetic.
    pub const OVERFLOW: Code = Code::new("overflow");
}

/// One problem or warning: which input, which object, which field, what is wrong.
///
/// Displays as `[source: ]Kind "name": field: message`, leaving out the parts that are empty.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The stable code.
    pub code: Code,
    /// Where the input came from (`file.yaml (document 3)`), if known.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "String::is_empty"))]
    pub source: String,
    /// The object's kind (`ClusterQueue`), or empty.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "String::is_empty"))]
    pub kind: String,
    /// The object's name (`namespace/name` for namespaced kinds), or empty.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "String::is_empty"))]
    pub name: String,
    /// The field path (`spec.resourceGroups[0].coveredResources`), or empty.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "String::is_empty"))]
    pub field: String,
    /// What is wrong, in words.
    pub message: String,
    /// The engine that raised it (`kueue`, `kai`, `mig`, `meter`), or empty for input problems
    /// every engine shares.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "str::is_empty"))]
    pub engine: &'static str,
}

impl Diagnostic {
    /// A new diagnostic with only severity, code and message set.
    pub fn new(severity: Severity, code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity,
            code,
            source: String::new(),
            kind: String::new(),
            name: String::new(),
            field: String::new(),
            message: message.into(),
            engine: "",
        }
    }

    /// A new error.
    pub fn error(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Error, code, message)
    }

    /// A new warning.
    pub fn warning(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Warning, code, message)
    }

    /// Sets the source (file name and document).
    #[must_use]
    pub fn source(mut self, source: impl Into<String>) -> Diagnostic {
        self.source = source.into();
        self
    }

    /// Sets the object's kind and name.
    #[must_use]
    pub fn object(mut self, kind: impl Into<String>, name: impl Into<String>) -> Diagnostic {
        self.kind = kind.into();
        self.name = name.into();
        self
    }

    /// Sets the field path.
    #[must_use]
    pub fn field(mut self, field: impl Into<String>) -> Diagnostic {
        self.field = field.into();
        self
    }

    /// Sets the engine that raised the diagnostic.
    #[must_use]
    pub fn engine(mut self, engine: &'static str) -> Diagnostic {
        self.engine = engine;
        self
    }

    /// True for an error, or for any diagnostic when `strict` is set.
    pub fn is_error(&self, strict: bool) -> bool {
        strict || self.severity == Severity::Error
    }
}

/// The type of a field error, as Kubernetes names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorType {
    /// `Invalid value`: the value is malformed or out of range.
    Invalid,
    /// `Required value`: the field must be set.
    Required,
    /// `Unsupported value`: the value is not one of an enumeration.
    NotSupported,
    /// `Duplicate value`: the value must be unique.
    Duplicate,
    /// `Forbidden`: the field may not be set (here, or in this combination).
    Forbidden,
    /// `Too many`: a list is longer than allowed.
    TooMany,
    /// `Too long`: a string is longer than allowed.
    TooLong,
    /// `Not found`: a reference names an object that does not exist.
    NotFound,
}

impl ErrorType {
    /// Kubernetes' phrase for the type.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::Invalid => "Invalid value",
            ErrorType::Required => "Required value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooMany => "Too many",
            ErrorType::TooLong => "Too long",
            ErrorType::NotFound => "Not found",
        }
    }
}

impl fmt::Display for ErrorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// True when `path` is a well-formed field path, as every diagnostic's [`Diagnostic::field`]
/// must be: names joined by `.`, each optionally followed by subscripts `[…]` holding an index
/// or a key (`spec.resourceGroups[0].flavors[1].name`,
/// `metadata.annotations[gpuquota.dev/repeat]`, `spec.cluster[0]`). No empty name (`a..b`,
/// a leading or trailing `.`), no empty or unclosed subscript (`[]`, `a[0`), no subscript
/// without a name before it, no white space outside subscripts. The empty path (no field)
/// is well formed.
///
/// ```
/// use gpuquota_model::diag::is_field_path;
///
/// assert!(is_field_path("spec.workloads[0].trace.file"));
/// assert!(is_field_path("metadata.annotations[gpuquota.dev/repeat]"));
/// assert!(!is_field_path("spec..end"));
/// assert!(!is_field_path("spec.workloads[].file"));
/// assert!(!is_field_path("spec."));
/// ```
///
/// # Complexity
/// Linear in the path.
pub fn is_field_path(path: &str) -> bool {
    if path.is_empty() {
        return true;
    }
    let mut rest = path;
    loop {
        // a name
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let name = &rest[..end];
        if name.is_empty() || name.contains([']', ' ', '\t', '\n']) {
            return false;
        }
        rest = &rest[end..];
        // its subscripts
        while let Some(inner) = rest.strip_prefix('[') {
            let Some(close) = inner.find(']') else {
                return false;
            };
            let key = &inner[..close];
            if key.is_empty() || key.contains('[') {
                return false;
            }
            rest = &inner[close + 1..];
        }
        match rest.strip_prefix('.') {
            Some(next) => rest = next,
            None => return rest.is_empty(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.source.is_empty() {
            write!(f, "{}: ", self.source)?;
        }
        if !self.kind.is_empty() {
            f.write_str(&self.kind)?;
            if !self.name.is_empty() {
                write!(f, " {:?}", self.name)?;
            }
            f.write_str(": ")?;
        } else if !self.name.is_empty() {
            write!(f, "{:?}: ", self.name)?;
        }
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

/// A list of diagnostics in the order they were raised.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Adds one.
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }

    /// Adds all of `other`.
    pub fn extend(&mut self, other: impl IntoIterator<Item = Diagnostic>) {
        self.0.extend(other);
    }

    /// The diagnostics.
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.0.iter()
    }

    /// Number of diagnostics.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// True when at least one is an error.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| d.severity == Severity::Error)
    }

    /// True when at least one is an error, counting warnings as errors when `strict`.
    pub fn has_errors_strict(&self, strict: bool) -> bool {
        self.0.iter().any(|d| d.is_error(strict))
    }

    /// The errors only.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter().filter(|d| d.severity == Severity::Error)
    }

    /// The warnings only.
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter().filter(|d| d.severity == Severity::Warning)
    }

    /// Sorts into a deterministic order (severity, source, kind, name, field, code, message).
    pub fn sort(&mut self) {
        self.0.sort_by(|a, b| {
            (
                a.severity, &a.source, &a.kind, &a.name, &a.field, a.code, &a.message,
            )
                .cmp(&(
                    b.severity, &b.source, &b.kind, &b.name, &b.field, b.code, &b.message,
                ))
        });
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{}: {d}", d.severity)?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

impl<'a> IntoIterator for &'a Diagnostics {
    type Item = &'a Diagnostic;
    type IntoIter = std::slice::Iter<'a, Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl FromIterator<Diagnostic> for Diagnostics {
    fn from_iter<I: IntoIterator<Item = Diagnostic>>(iter: I) -> Diagnostics {
        Diagnostics(iter.into_iter().collect())
    }
}

/// The closest of `candidates` to `word` by edit distance, if it is close enough to be a
/// likely misspelling (at most a third of the word's length, and at least one edit).
///
/// Used for "did you mean" hints on unknown fields and kinds. Ties go to the candidate that
/// comes first.
///
/// # Complexity
/// `O(c × |word| × |candidate|)` for `c` candidates.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    let mut best: Option<(usize, &'a str)> = None;
    for &c in candidates {
        let d = edit_distance(&word.to_ascii_lowercase(), &c.to_ascii_lowercase());
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_leaves_out_empty_parts() {
        let d = Diagnostic::error(codes::MALFORMED, "malformed YAML at line 3").source("a.yaml");
        assert_eq!(d.to_string(), "a.yaml: malformed YAML at line 3");
        let d = Diagnostic::warning(codes::UNKNOWN_KIND, "kind ClusterQeue is not read; skipped")
            .source("b.yaml (document 2)")
            .object("ClusterQeue", "batch");
        assert_eq!(
            d.to_string(),
            "b.yaml (document 2): ClusterQeue \"batch\": kind ClusterQeue is not read; skipped"
        );
    }

    #[test]
    fn did_you_mean_finds_close_names_only() {
        let fields = ["nominalQuota", "borrowingLimit", "lendingLimit", "name"];
        assert_eq!(did_you_mean("nominalQuta", &fields), Some("nominalQuota"));
        assert_eq!(did_you_mean("lendinglimit", &fields), Some("lendingLimit"));
        assert_eq!(did_you_mean("surprise", &fields), None);
        assert_eq!(
            did_you_mean("ClusterQeue", &["ClusterQueue", "Cohort"]),
            Some("ClusterQueue")
        );
    }

    #[test]
    fn strict_turns_warnings_into_errors() {
        let all: Diagnostics = [Diagnostic::warning(codes::UNKNOWN_FIELD, "x")]
            .into_iter()
            .collect();
        assert!(!all.has_errors());
        assert!(!all.has_errors_strict(false));
        assert!(all.has_errors_strict(true));
    }

    #[test]
    fn field_paths_are_checked_for_form() {
        for good in [
            "",
            "kind",
            "spec.resourceGroups[0].flavors[1].resources[0].nominalQuota",
            "metadata.annotations[gpuquota.dev/repeat]",
            "metadata.labels[kai.scheduler/queue]",
            "spec.cluster[0]",
            "data[config.yaml].sharing",
            "a[0][1].b",
        ] {
            assert!(is_field_path(good), "{good}");
        }
        for bad in [
            ".",
            "spec.",
            ".spec",
            "spec..end",
            "a[]",
            "a[].b",
            "a[0",
            "a]0",
            "[0]",
            "a.[0]",
            "a[0]b",
            "a b",
            "a[0]..b",
            "a[[0]]",
        ] {
            assert!(!is_field_path(bad), "{bad}");
        }
    }

    proptest::proptest! {
        /// Paths built as the builders build them (`format!("{parent}.{name}")`,
        /// `format!("{parent}[{i}]")`, `format!("{parent}[{key}]")`) are well formed; the
        /// defects of a careless join (`..`, a trailing `.`, `[]`) never are.
        #[test]
        fn built_paths_are_well_formed(
            steps in proptest::collection::vec(
                (0u8..3, "[a-zA-Z][a-zA-Z0-9]{0,8}", 0usize..100, "[a-z0-9][a-z0-9./-]{0,12}"),
                1..8,
            ),
            first in "[a-z][a-zA-Z]{0,8}",
            defect in 0u8..3,
        ) {
            let mut path = first;
            for (kind, name, index, key) in &steps {
                match kind {
                    0 => path = format!("{path}.{name}"),
                    1 => path = format!("{path}[{index}]"),
                    _ => path = format!("{path}[{key}]"),
                }
            }
            proptest::prop_assert!(is_field_path(&path), "{}", path);
            let broken = match defect {
                0 => format!("{path}."),
                1 => format!("{path}[]"),
                _ => format!("{path}..x"),
            };
            proptest::prop_assert!(!is_field_path(&broken), "{}", broken);
        }
    }
}
