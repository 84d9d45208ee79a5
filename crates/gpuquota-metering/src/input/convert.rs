//! Converting the document into an engine [`Input`], one function per section of the file
//! (settings, card types, departments, records, series, samples, services, busy fractions),
//! and the field parsers they share.

use std::collections::BTreeMap;

use gpuquota_model::workloads::sharing::ReplicasPerGpu;

use super::types::{Section, entries, missing};
use super::{CardTypeIn, DecimalIn, Document, HoldingIn, MigWeightsIn, QuotaIn, TimeIn};
use crate::MeteringError;
use crate::dcgm;
use crate::engine::{
    Basis, BorrowedMode, BusyFraction, CardType, Config, Department, GridSeries, IdleMode, Input,
    Owner, QuotaStep, RawSeries, Record, Service, Shape, TimeFormat, Tokens, Window,
};
use crate::mig::MigPolicy;
use crate::money::{Currency, L, RoundingMode, parse_decimal};
use crate::time::parse_rfc3339;

impl Document {
    /// Everything but the DCGM files; `values` gives each `series:` entry's values, in order.
    pub(super) fn base_input(
        &self,
        sharing: ReplicasPerGpu,
        values: &mut dyn FnMut(&HoldingIn) -> Option<Vec<Option<u64>>>,
    ) -> Result<Input, MeteringError> {
        let mut config = self.config()?;
        config.sharing = sharing.clone();
        let sharing = &sharing;
        let mut input = Input::new(config);
        self.card_types_into(&mut input)?;
        self.departments_into(&mut input)?;
        self.records_into(&mut input, sharing)?;
        self.series_into(&mut input, sharing, values)?;
        self.samples_into(&mut input, sharing)?;
        self.services_into(&mut input);
        self.busy_into(&mut input)?;
        Ok(input)
    }

    /// The `window`, `currency`, `asOf`, `rounding`, `migWeights`, `basis`, `borrowed`,
    /// `idle` and `lookback` settings.
    fn config(&self) -> Result<Config, MeteringError> {
        let is_text = matches!(self.window.start, TimeIn::Text(_));
        let window = Window {
            start: time(&self.window.start, "window.start")?,
            end: time(&self.window.end, "window.end")?,
        };
        let currency = Currency::from_code(
            &self
                .currency
                .as_deref()
                .unwrap_or("USD")
                .to_ascii_uppercase(),
        )?;
        let mut config = Config::new(window, currency);
        config.time_format = if is_text {
            TimeFormat::Rfc3339
        } else {
            TimeFormat::Seconds
        };
        config.as_of = self.as_of.as_ref().map(|t| time(t, "asOf")).transpose()?;
        if let Some(r) = &self.rounding {
            config.rounding = RoundingMode::parse(r).ok_or_else(|| bad_enum("rounding", r))?;
        }
        if let Some(m) = &self.mig_weights {
            config.mig_policy = match m {
                MigWeightsIn::Name(n) => match n.as_str() {
                    "compute-slices" => MigPolicy::ComputeSlices,
                    "memory-slices" => MigPolicy::MemorySlices,
                    "max-instances" => MigPolicy::MaxInstances,
                    _ => return Err(bad_enum("migWeights", n)),
                },
                MigWeightsIn::Table(t) => {
                    let mut table = BTreeMap::new();
                    for (p, v) in t {
                        table.insert(p.clone(), parse_ratio(v, &format!("migWeights.{p}"))?);
                    }
                    MigPolicy::Table(table)
                }
            };
        }
        if let Some(b) = &self.basis {
            config.basis = match b.as_str() {
                "allocated" => Basis::Allocated,
                "quota" => Basis::Quota,
                _ => return Err(bad_enum("basis", b)),
            };
        }
        if let Some(b) = &self.borrowed {
            config.borrowed = match b.as_str() {
                "informational" => BorrowedMode::Informational,
                "charged" => BorrowedMode::Charged,
                _ => return Err(bad_enum("borrowed", b)),
            };
        }
        if let Some(i) = &self.idle {
            config.idle = match i.as_str() {
                "platform" => IdleMode::Platform,
                "weighted" => IdleMode::Weighted,
                "even" => IdleMode::Even,
                _ => return Err(bad_enum("idle", i)),
            };
        }
        if let Some(l) = self.lookback {
            config.lookback = l;
        }
        Ok(config)
    }

    /// `cardTypes:`.
    fn card_types_into(&self, input: &mut Input) -> Result<(), MeteringError> {
        for (i, c) in self.card_types.iter().enumerate() {
            let price = match &c.price_per_hour {
                Some(p) => parse_decimal(&p.text(), 6, &format!("cardTypes[{i}].pricePerHour"))?,
                None => 0,
            };
            input.card_types.push(CardType {
                name: c.name.clone(),
                model: c.model.clone(),
                price_micro_per_hour: price,
                capacity: c.capacity,
                replicas_per_gpu: c.replicas_per_gpu,
            });
        }
        Ok(())
    }

    /// `departments:`, with their quota steps.
    fn departments_into(&self, input: &mut Input) -> Result<(), MeteringError> {
        for (i, d) in self.departments.iter().enumerate() {
            let mut quota = BTreeMap::new();
            for (card, q) in &d.quota {
                let field = format!("departments[{i}].quota.{card}");
                let steps = match q {
                    QuotaIn::Constant(v) => vec![QuotaStep {
                        from: i64::MIN,
                        cards_units: cards(v, &field)?,
                    }],
                    QuotaIn::Steps(s) => s
                        .iter()
                        .map(|s| {
                            Ok(QuotaStep {
                                from: time(&s.start, &field)?,
                                cards_units: cards(&s.cards, &field)?,
                            })
                        })
                        .collect::<Result<Vec<_>, MeteringError>>()?,
                };
                quota.insert(card.clone(), steps);
            }
            input.departments.push(Department {
                name: d.name.clone(),
                namespaces: d.namespaces.clone(),
                quota,
            });
        }
        Ok(())
    }

    /// `records:` (intervals).
    fn records_into(
        &self,
        input: &mut Input,
        sharing: &ReplicasPerGpu,
    ) -> Result<(), MeteringError> {
        for entry in entries(&self.records, Section::Records) {
            let (what, r) = entry?;
            let start = r.start.as_ref().ok_or_else(|| missing(&what, "start"))?;
            input.records.push(Record {
                owner: owner(r),
                card_type: r.card_type.clone(),
                shape: shape(r, &what, &self.card_types, sharing)?,
                start: time(start, &format!("{what}.start"))?,
                end: r
                    .end
                    .as_ref()
                    .map(|e| time(e, &format!("{what}.end")))
                    .transpose()?,
                holder: r.holder.clone(),
                service: r.service.clone(),
            });
        }
        Ok(())
    }

    /// `series:` (grids); `values` gives each entry's values, in order.
    fn series_into(
        &self,
        input: &mut Input,
        sharing: &ReplicasPerGpu,
        values: &mut dyn FnMut(&HoldingIn) -> Option<Vec<Option<u64>>>,
    ) -> Result<(), MeteringError> {
        for entry in entries(&self.series, Section::Series) {
            let (what, s) = entry?;
            input.series.push(GridSeries {
                owner: owner(s),
                card_type: s.card_type.clone(),
                shape: unit_shape(s, &what, &self.card_types, sharing)?,
                start: s
                    .start
                    .as_ref()
                    .map(|t| time(t, &format!("{what}.start")))
                    .transpose()?,
                step: s.step.ok_or_else(|| missing(&what, "step"))?,
                values: values(s).ok_or_else(|| missing(&what, "values"))?,
                lookback: s.lookback,
                service: s.service.clone(),
            });
        }
        Ok(())
    }

    /// `samples:` (raw points with staleness).
    fn samples_into(
        &self,
        input: &mut Input,
        sharing: &ReplicasPerGpu,
    ) -> Result<(), MeteringError> {
        for entry in entries(&self.samples, Section::Samples) {
            let (what, s) = entry?;
            let points = s
                .points
                .as_ref()
                .ok_or_else(|| missing(&what, "points"))?
                .iter()
                .map(|(t, v)| Ok((time(t, &format!("{what}.points"))?, *v)))
                .collect::<Result<Vec<_>, MeteringError>>()?;
            let stale_at = s
                .stale_at
                .iter()
                .flatten()
                .map(|t| time(t, &format!("{what}.staleAt")))
                .collect::<Result<Vec<_>, MeteringError>>()?;
            input.samples.push(RawSeries {
                owner: owner(s),
                card_type: s.card_type.clone(),
                shape: unit_shape(s, &what, &self.card_types, sharing)?,
                lookback: s.lookback,
                points,
                stale_at,
                holder: s.holder.clone(),
                service: s.service.clone(),
                busy_micro: None,
                label: None,
            });
        }
        Ok(())
    }

    /// `services:`, their tokens (the unattributed ones under their own name).
    fn services_into(&self, input: &mut Input) {
        for s in &self.services {
            let mut tokens: BTreeMap<String, Tokens> = s
                .tokens
                .iter()
                .map(|(d, t)| {
                    (
                        d.clone(),
                        Tokens {
                            input: t.input,
                            output: t.output,
                        },
                    )
                })
                .collect();
            if let Some(u) = s.unattributed {
                let e = tokens
                    .entry(crate::engine::UNATTRIBUTED.to_owned())
                    .or_default();
                e.input = e.input.saturating_add(u.input);
                e.output = e.output.saturating_add(u.output);
            }
            input.services.push(Service {
                name: s.name.clone(),
                department: s.department.clone(),
                input_weight: s.input_weight.unwrap_or(1),
                output_weight: s.output_weight.unwrap_or(1),
                tokens,
            });
        }
    }

    /// `busy:` fractions by holder.
    fn busy_into(&self, input: &mut Input) -> Result<(), MeteringError> {
        for (i, b) in self.busy.iter().enumerate() {
            let micro = parse_decimal(&b.fraction.text(), 6, &format!("busy[{i}].fraction"))?;
            input.busy.push(BusyFraction {
                holder: b.holder.clone(),
                micro,
            });
        }
        Ok(())
    }
}

pub(super) fn add_dcgm(
    input: &mut Input,
    sources: &[dcgm::Source],
    open: &mut dcgm::Opener<'_>,
) -> Result<(), MeteringError> {
    if sources.is_empty() {
        return Ok(());
    }
    let settings = dcgm::Settings {
        card_types: &input.card_types,
        window: input.config.window,
        lookback: input.config.lookback,
        sharing: &input.config.sharing,
    };
    let found = dcgm::read(sources, open, settings)?;
    input.holdings.extend(found.holdings);
    input.warnings.extend(found.warnings);
    Ok(())
}

pub(super) fn bad_enum(field: &str, value: &str) -> MeteringError {
    MeteringError::InvalidNumber {
        field: field.to_owned(),
        value: value.to_owned(),
        reason: "not one of the allowed values".to_owned(),
    }
}

pub(crate) fn time(t: &TimeIn, field: &str) -> Result<i64, MeteringError> {
    match t {
        TimeIn::Seconds(s) => Ok(*s),
        TimeIn::Text(s) => parse_rfc3339(s)
            .or_else(|| s.trim().parse::<i64>().ok())
            .ok_or_else(|| MeteringError::InvalidNumber {
                field: field.to_owned(),
                value: s.clone(),
                reason: "expected an RFC 3339 time (2025-04-01T00:00:00Z) or integer seconds"
                    .to_owned(),
            }),
    }
}

fn cards(v: &DecimalIn, field: &str) -> Result<i128, MeteringError> {
    // cards with up to 6 decimals, then exactly representable in 1/L
    let micro = parse_decimal(&v.text(), 6, field)?;
    let units = micro * L;
    if units % 1_000_000 != 0 {
        return Err(MeteringError::WeightNotRepresentable {
            what: field.to_owned(),
            numerator: u64::try_from(micro).unwrap_or(u64::MAX),
            denominator: 1_000_000,
        });
    }
    Ok(units / 1_000_000)
}

fn parse_ratio(v: &str, field: &str) -> Result<(u64, u64), MeteringError> {
    let bad = || MeteringError::InvalidNumber {
        field: field.to_owned(),
        value: v.to_owned(),
        reason: "expected a ratio such as 1/7".to_owned(),
    };
    match v.split_once('/') {
        Some((n, d)) => Ok((
            n.trim().parse().map_err(|_| bad())?,
            d.trim().parse().map_err(|_| bad())?,
        )),
        None => Ok((v.trim().parse().map_err(|_| bad())?, 1)),
    }
}

fn owner(h: &HoldingIn) -> Owner {
    match (&h.department, &h.namespace) {
        (Some(d), _) => Owner::Department(d.clone()),
        (None, Some(ns)) => Owner::Namespace(ns.clone()),
        (None, None) => Owner::Department(crate::engine::UNASSIGNED.to_owned()),
    }
}

/// At most one of `gpus`, `mig` and `replicas` says what a holding is.
fn one_kind(h: &HoldingIn, what: &str) -> Result<(), MeteringError> {
    let given: Vec<&str> = [
        ("gpus", h.gpus.is_some()),
        ("mig", h.mig.is_some()),
        ("replicas", h.replicas.is_some()),
    ]
    .iter()
    .filter(|(_, present)| *present)
    .map(|(name, _)| *name)
    .collect();
    if given.len() > 1 || (h.gpus.is_some() && h.count.is_some()) {
        let mut fields = given.join(", ");
        if h.gpus.is_some() && h.count.is_some() {
            fields.push_str(", count");
        }
        return Err(MeteringError::Parse(format!(
            "{what}: give only one of gpus (or count), mig and replicas, not {fields}"
        )));
    }
    Ok(())
}

/// `replicasPerGpu` of the holding, else of its card type, else of the device plugin's
/// sharing configuration for the holding's node (the `holder` key up to its first `/`).
fn per_gpu(h: &HoldingIn, card_types: &[CardTypeIn], sharing: &ReplicasPerGpu) -> Option<u64> {
    h.replicas_per_gpu
        .or_else(|| {
            card_types
                .iter()
                .find(|c| c.name == h.card_type)
                .and_then(|c| c.replicas_per_gpu)
        })
        .or_else(|| {
            let node = h.holder.as_deref()?.split('/').next()?;
            sharing.of(node)
        })
}

/// [`per_gpu`], or the error naming `what.replicasPerGpu` when no source gives it; `noun` is
/// what the holding is called in the message ("record" or "series").
fn required_per_gpu(
    h: &HoldingIn,
    what: &str,
    noun: &str,
    card_types: &[CardTypeIn],
    sharing: &ReplicasPerGpu,
) -> Result<u64, MeteringError> {
    per_gpu(h, card_types, sharing).ok_or_else(|| MeteringError::InvalidNumber {
        field: format!("{what}.replicasPerGpu"),
        value: String::new(),
        reason: format!(
            "replicas need replicasPerGpu (on the {noun}, its card type, or the device \
             plugin's sharing configuration of the holder's node)"
        ),
    })
}

fn shape(
    h: &HoldingIn,
    what: &str,
    card_types: &[CardTypeIn],
    sharing: &ReplicasPerGpu,
) -> Result<Shape, MeteringError> {
    one_kind(h, what)?;
    if let Some(p) = &h.mig {
        return Ok(Shape::Mig {
            profile: p.clone(),
            count: h.count.unwrap_or(1),
        });
    }
    if let Some(r) = h.replicas {
        let per = required_per_gpu(h, what, "record", card_types, sharing)?;
        return Ok(Shape::Fraction {
            replicas: r,
            per_gpu: per,
        });
    }
    Ok(Shape::Whole(h.gpus.or(h.count).unwrap_or(1)))
}

/// The shape of one counted holding of a series (values count instances, or replicas when
/// `replicas` or `replicasPerGpu` is given).
fn unit_shape(
    h: &HoldingIn,
    what: &str,
    card_types: &[CardTypeIn],
    sharing: &ReplicasPerGpu,
) -> Result<Shape, MeteringError> {
    one_kind(h, what)?;
    if let Some(p) = &h.mig {
        return Ok(Shape::Mig {
            profile: p.clone(),
            count: 1,
        });
    }
    if h.replicas.is_some() || h.replicas_per_gpu.is_some() {
        let per = required_per_gpu(h, what, "series", card_types, sharing)?;
        return Ok(Shape::Fraction {
            replicas: h.replicas.unwrap_or(1),
            per_gpu: per,
        });
    }
    Ok(Shape::Whole(h.gpus.unwrap_or(1)))
}

#[cfg(test)]
mod tests {
    use super::Document;

    /// The error of converting a document with `section` (a YAML flow sequence).
    fn error(section: &str) -> String {
        let text = format!(
            "window: {{start: 0, end: 3600}}\ncardTypes: [{{name: H200, pricePerHour: \"1\", capacity: 2}}]\n{section}\n"
        );
        let doc = Document::from_yaml(&text).expect("parses");
        doc.into_input(&[]).expect_err("refused").to_string()
    }

    /// Each section refuses the first time field it does not read, in the order start, end,
    /// step, values, points, staleAt, lookback, naming the entry.
    #[test]
    fn each_section_refuses_the_first_time_field_it_does_not_read() {
        assert!(
            error("records: [{department: a, cardType: H200, gpus: 1, start: 0, values: [1], step: 60, lookback: 5}]")
                .ends_with("records[0]: field step does not apply here"),
        );
        assert!(
            error("series: [{department: a, cardType: H200, gpus: 1, step: 60, values: [1], staleAt: [1], end: 5}]")
                .ends_with("series[0]: field end does not apply here"),
        );
        assert!(
            error("samples: [{department: a, cardType: H200, gpus: 1, points: [[0, 1]]}, {department: a, cardType: H200, gpus: 1, values: [1], start: 0}]")
                .ends_with("samples[1]: field start does not apply here"),
        );
        // a field the section reads is not refused: the entry's own check comes next
        assert!(
            error("records: [{department: a, cardType: H200, gpus: 1, end: 5}]")
                .ends_with("records[0]: missing field start"),
        );
    }
}
