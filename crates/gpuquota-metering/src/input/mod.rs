//! The input file of `gpuquota meter` (YAML or JSON): parsing, unknown-field warnings and
//! conversion into an engine [`Input`]. `gpuquota schema meter-input` prints the JSON Schema of
//! [`Document`], generated from these types (feature `schema`).
//!
//! The module is split by phase: `types` holds the `…In` types `serde` reads, `read` the
//! parser's options and messages, `convert` the conversion of each section into the engine's
//! input.

pub(crate) mod convert;
mod read;
mod types;

use gpuquota_model::diag::Diagnostics;
#[cfg(feature = "yaml")]
use gpuquota_model::diag::{Diagnostic, codes};
use gpuquota_model::source::Stream;
use gpuquota_model::workloads::sharing::ReplicasPerGpu;

pub use types::{
    BusyIn, CardTypeIn, DcgmEntryIn, DcgmIn, DecimalIn, DepartmentIn, HoldingIn, MigWeightsIn,
    QuotaIn, QuotaStepIn, ServiceIn, TimeIn, TokensIn, WindowIn,
};

use crate::MeteringError;
use crate::dcgm;
use crate::engine::Input;
use convert::add_dcgm;
use read::unknown_field;
#[cfg(feature = "yaml")]
use read::{locate, parse_err, yaml_options};

/// The whole input file of `gpuquota meter`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Document {
    /// The window.
    pub window: WindowIn,
    /// Open intervals are closed here (default: the window end).
    pub as_of: Option<TimeIn>,
    /// ISO 4217 code (default USD).
    pub currency: Option<String>,
    /// Rounding mode name.
    pub rounding: Option<String>,
    /// MIG weights.
    pub mig_weights: Option<MigWeightsIn>,
    /// `allocated` or `quota`.
    pub basis: Option<String>,
    /// `informational` or `charged`.
    pub borrowed: Option<String>,
    /// `platform`, `weighted` or `even`.
    pub idle: Option<String>,
    /// Default lookback in seconds (300).
    pub lookback: Option<i64>,
    /// Card types.
    #[cfg_attr(feature = "serde", serde(default))]
    pub card_types: Vec<CardTypeIn>,
    /// Departments.
    #[cfg_attr(feature = "serde", serde(default))]
    pub departments: Vec<DepartmentIn>,
    /// Allocation intervals.
    #[cfg_attr(feature = "serde", serde(default))]
    pub records: Vec<HoldingIn>,
    /// Evaluated grids.
    #[cfg_attr(feature = "serde", serde(default))]
    pub series: Vec<HoldingIn>,
    /// Raw scrapes.
    #[cfg_attr(feature = "serde", serde(default))]
    pub samples: Vec<HoldingIn>,
    /// DCGM metrics files (paths relative to the input file, or entries with options).
    #[cfg_attr(feature = "serde", serde(default))]
    pub dcgm: Vec<DcgmIn>,
    /// Shared services.
    #[cfg_attr(feature = "serde", serde(default))]
    pub services: Vec<ServiceIn>,
    /// Busy fractions.
    #[cfg_attr(feature = "serde", serde(default))]
    pub busy: Vec<BusyIn>,
    /// Kubernetes manifests (paths relative to the input file) with the Nodes and the NVIDIA
    /// device plugin's sharing ConfigMap: replicas per GPU for time-sliced holdings.
    #[cfg_attr(feature = "serde", serde(default))]
    pub cluster: Vec<String>,
    /// Fields that were not recognised (filled by [`Document::from_yaml`]).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub unknown_fields: Vec<String>,
}

impl Document {
    /// Parses YAML (or JSON, which is YAML) and records every unknown field by path.
    ///
    /// The document is deserialized straight into its types (no intermediate tree); the YAML
    /// parser's node and event budgets grow with the input (which the reader bounds), so a
    /// compact `series:` grid of a thousand GPU-months is accepted.
    ///
    /// # Errors
    /// [`MeteringError::Parse`] with the parser's message (it names the line and field), one
    /// line per failing entry for type errors.
    ///
    /// # Complexity
    /// Linear in the input.
    #[cfg(feature = "yaml")]
    pub fn from_yaml(text: &str) -> Result<Document, MeteringError> {
        let mut unknown = Vec::new();
        let typed = if text.trim_start().starts_with('{') {
            let mut de = serde_json::Deserializer::from_str(text);
            serde_ignored::deserialize(&mut de, |path| unknown.push(path.to_string()))
                .and_then(|d: Document| de.end().map(|()| d))
                .ok()
        } else {
            None
        };
        let typed = match typed {
            Some(d) => Some(d),
            None => {
                unknown.clear();
                serde_saphyr::with_deserializer_from_str_with_options(
                    text,
                    yaml_options(text.len()),
                    |de| serde_ignored::deserialize(de, |path| unknown.push(path.to_string())),
                )
                .ok()
            }
        };
        if let Some(mut doc) = typed {
            doc.unknown_fields = unknown;
            return Ok(doc);
        }
        // The error path: parse into a tree to say which entries fail, and why.
        let value: serde_json::Value =
            serde_saphyr::from_str_with_options(text, yaml_options(text.len()))
                .map_err(|e| parse_err(gpuquota_model::import::yaml_error(&e).1))?;
        if value.is_null() {
            return Err(MeteringError::Parse(
                "empty input: expected a mapping with window, cardTypes and records".to_owned(),
            ));
        }
        let mut unknown = Vec::new();
        let mut doc: Document = serde_ignored::deserialize(&value, |path| {
            unknown.push(path.to_string());
        })
        .map_err(|e| locate(&value, &e))?;
        doc.unknown_fields = unknown;
        Ok(doc)
    }

    /// The unknown fields as diagnostics (code `unknown-field`, a warning): the field path in
    /// Kubernetes' notation (`cardTypes[0].pricePerHur`) and, where a known field of that
    /// object is close, a "did you mean".
    pub fn diagnostics(&self, source: &str) -> Diagnostics {
        self.unknown_fields
            .iter()
            .map(|path| unknown_field(source, path))
            .collect()
    }

    /// Converts the document into an engine input; `dcgm_files` holds the name and text of
    /// each file listed in `dcgm:` (in the same order; the options of the `i`-th entry apply
    /// to the `i`-th file). Files not given are not read.
    ///
    /// # Errors
    /// A typed [`MeteringError`] naming the record and field.
    pub fn into_input(&self, dcgm_files: &[(String, String)]) -> Result<Input, MeteringError> {
        let mut input = self.base_input(ReplicasPerGpu::default(), &mut |s| s.values.clone())?;
        let sources = dcgm_files
            .iter()
            .enumerate()
            .map(|(i, (name, _))| match self.dcgm.get(i) {
                Some(entry) => entry.source(i, name),
                None => Ok(dcgm::Source {
                    name: name.clone(),
                    ..dcgm::Source::default()
                }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut open = |i: usize| -> Result<Stream, MeteringError> {
            let (name, text) = &dcgm_files[i];
            Ok(Stream::from_reader(
                name.clone(),
                std::io::Cursor::new(text.clone().into_bytes()),
                gpuquota_model::source::MAX_STREAM_BYTES,
            ))
        };
        add_dcgm(&mut input, &sources, &mut open)?;
        Ok(input)
    }

    /// Converts the document into an engine input, reading every `dcgm:` entry through
    /// `open` (given the entry's index and path; the command line opens the path relative
    /// to the input file with [`gpuquota_model::source::open_stream`], the one bounded reader).
    ///
    /// # Errors
    /// A typed [`MeteringError`] naming the record and field, or the file that cannot be read.
    pub fn into_input_with(
        &self,
        open: &mut dyn FnMut(usize, &str) -> Result<Stream, MeteringError>,
    ) -> Result<Input, MeteringError> {
        self.into_input_with_sharing(open, ReplicasPerGpu::default())
    }

    /// The replicas per GPU by node of the `cluster:` files, given as (name, text) in the
    /// order listed: the Nodes and the device plugin's sharing ConfigMap among them
    /// ([`gpuquota_model::workloads::sharing::replicas_per_gpu`]).
    ///
    /// # Errors
    /// [`MeteringError::Read`] with the first import error of the files.
    #[cfg(feature = "yaml")]
    pub fn sharing_from(files: &[(String, String)]) -> Result<ReplicasPerGpu, MeteringError> {
        let mut importer = gpuquota_model::Importer::new();
        for (name, text) in files {
            importer.add_str(name, text);
        }
        let imported = importer.finish().map_err(|e| {
            MeteringError::Read(e.0.into_iter().next().unwrap_or_else(|| {
                Diagnostic::error(codes::INVALID, "cluster: the files do not import")
            }))
        })?;
        Ok(gpuquota_model::workloads::sharing::replicas_per_gpu(
            &imported.model,
        ))
    }

    /// As [`Document::into_input_with`], with the replicas per GPU of the device plugin's
    /// sharing configuration ([`Document::sharing_from`]) for holdings whose record and card
    /// type name none.
    ///
    /// # Errors
    /// As [`Document::into_input_with`].
    pub fn into_input_with_sharing(
        &self,
        open: &mut dyn FnMut(usize, &str) -> Result<Stream, MeteringError>,
        sharing: ReplicasPerGpu,
    ) -> Result<Input, MeteringError> {
        let mut input = self.base_input(sharing, &mut |s| s.values.clone())?;
        self.add_dcgm_with(&mut input, open)?;
        Ok(input)
    }

    /// [`Document::into_input_with`] that consumes the document: the `series:` values move
    /// into the engine input instead of being copied, so a large grid is held once (a month
    /// of one-minute points for 1,000 GPUs is 43.2 M values, 16 bytes each).
    ///
    /// # Errors
    /// As [`Document::into_input_with`].
    ///
    /// # Complexity
    /// Linear in the number of records and series, without copying the grid values.
    pub fn into_input_owned_with(
        self,
        open: &mut dyn FnMut(usize, &str) -> Result<Stream, MeteringError>,
    ) -> Result<Input, MeteringError> {
        self.into_input_owned_with_sharing(open, ReplicasPerGpu::default())
    }

    /// [`Document::into_input_with_sharing`] that consumes the document, as
    /// [`Document::into_input_owned_with`] does.
    ///
    /// # Errors
    /// As [`Document::into_input_with`].
    pub fn into_input_owned_with_sharing(
        mut self,
        open: &mut dyn FnMut(usize, &str) -> Result<Stream, MeteringError>,
        sharing: ReplicasPerGpu,
    ) -> Result<Input, MeteringError> {
        let mut values: Vec<Option<Vec<Option<u64>>>> =
            self.series.iter_mut().map(|s| s.values.take()).collect();
        let mut next = values.iter_mut();
        let mut input = self.base_input(sharing, &mut |_| next.next().and_then(Option::take))?;
        self.add_dcgm_with(&mut input, open)?;
        Ok(input)
    }

    fn add_dcgm_with(
        &self,
        input: &mut Input,
        open: &mut dyn FnMut(usize, &str) -> Result<Stream, MeteringError>,
    ) -> Result<(), MeteringError> {
        let sources = self
            .dcgm
            .iter()
            .enumerate()
            .map(|(i, e)| e.source(i, e.path()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut opener = |i: usize| open(i, self.dcgm[i].path());
        add_dcgm(input, &sources, &mut opener)
    }
}
