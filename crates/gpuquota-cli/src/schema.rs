//! `gpuquota schema COMMAND`: the JSON Schema (draft 2020-12) of a command's JSON output,
//! generated from the report types the libraries serialise (`schemars`, each library's
//! `schema` feature), so the schema cannot drift from the output; and of the metering
//! document `meter` reads (`meter-input`) and of the scenario `sim` reads (`scenario`), from
//! the types they are read into.

use crate::common::{CliError, to_json};

/// What `gpuquota schema` describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SchemaOf {
    /// `gpuquota quotas --output json`.
    Quotas,
    /// `gpuquota kueue schedule --output json`.
    KueueSchedule,
    /// `gpuquota kueue shares --output json`.
    KueueShares,
    /// `gpuquota kueue quotas --output json`.
    KueueQuotas,
    /// `gpuquota kai fairshare --output json`.
    KaiFairshare,
    /// `gpuquota kai schedule --output json`.
    KaiSchedule,
    /// `gpuquota mig plan --output json`.
    MigPlan,
    /// `gpuquota mig profiles --output json` (one model, or every model).
    MigProfiles,
    /// `gpuquota meter --output json`.
    Meter,
    /// The input `gpuquota meter` reads (the metering document, as YAML or JSON).
    MeterInput,
    /// `gpuquota sim --output json`: the Kueue / ResourceQuota report or the KAI report,
    /// told apart by `engine`.
    Sim,
    /// `gpuquota sim diff --output json`.
    SimDiff,
    /// `gpuquota sim sweep --output json` and `gpuquota sim merge --output json`.
    SimSweep,
    /// `gpuquota advise --output json`.
    Advice,
    /// `gpuquota advise --shard I/N`: one shard's simulations.
    AdviceShard,
    /// The scenario `gpuquota sim` reads (a `Simulation` for the Kueue, ResourceQuota or KAI
    /// engine, Kueue's perf-generator config, or KAI's time-based-fairshare simulator
    /// config).
    Scenario,
}

/// Arguments of `gpuquota schema`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  gpuquota schema kueue-schedule            the JSON Schema of `kueue schedule -o json`
  gpuquota schema meter > meter.schema.json  save one to validate against")]
pub(crate) struct SchemaArgs {
    /// The command whose JSON output to describe.
    #[arg(value_enum, value_name = "COMMAND")]
    of: SchemaOf,
}

/// The schema of an input as it is read: fields with a default are optional; unknown fields
/// are warnings of the command itself, so objects are left open.
fn input<T: schemars::JsonSchema>() -> schemars::Schema {
    schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>()
}

/// The schema of `T` as it serialises (a field left out when empty is optional); every
/// object lists all its fields (`additionalProperties: false`), so a field the output gains
/// without its type saying so fails validation.
fn output<T: schemars::JsonSchema>() -> schemars::Schema {
    let closed = schemars::transform::RecursiveTransform(|s: &mut schemars::Schema| {
        if s.get("properties").is_some() && s.get("additionalProperties").is_none() {
            s.insert("additionalProperties".into(), false.into());
        }
    });
    schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .with_transform(closed)
        .into_generator()
        .into_root_schema_for::<T>()
}

/// The schema of `of`'s JSON output.
pub(crate) fn schema(of: SchemaOf) -> schemars::Schema {
    match of {
        SchemaOf::Quotas => output::<gpuquota::fairshare::picture::Picture>(),
        SchemaOf::KueueSchedule => output::<gpuquota::kueue::ScheduleReport>(),
        SchemaOf::KueueShares => output::<gpuquota::fairshare::shares::SharesReport>(),
        SchemaOf::KueueQuotas => output::<gpuquota::kueue::QuotasReport>(),
        SchemaOf::KaiFairshare => output::<gpuquota::kai::report::FairshareReport>(),
        SchemaOf::KaiSchedule => output::<gpuquota::kai::report::ScheduleReport>(),
        SchemaOf::MigPlan => output::<gpuquota::mig::Plan>(),
        SchemaOf::MigProfiles => output::<gpuquota::mig::Profiles<'static>>(),
        SchemaOf::Meter => output::<gpuquota::metering::report::ReportOut>(),
        SchemaOf::Sim => output::<gpuquota::sim::schema::SimJson>(),
        SchemaOf::SimDiff => output::<gpuquota::sim::diff::DiffReport>(),
        SchemaOf::SimSweep => output::<gpuquota::sim::sweep::Table>(),
        SchemaOf::Advice => output::<gpuquota::advise::Advice>(),
        SchemaOf::AdviceShard => output::<gpuquota::advise::shard::Shard>(),
        SchemaOf::MeterInput => input::<gpuquota::metering::Document>(),
        SchemaOf::Scenario => input::<gpuquota::sim::schema::ScenarioJson>(),
    }
}

pub(crate) fn run(args: SchemaArgs) -> Result<(), CliError> {
    out!("{}", to_json(&schema(args.of))?);
    Ok(())
}
