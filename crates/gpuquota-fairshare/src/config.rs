//! The fair-sharing knobs of Kueue's `Configuration` (`config.kueue.x-k8s.io` v1beta1/v1beta2):
//! `fairSharing` (enable, `preemptionStrategies`) and `admissionFairSharing`.

use std::collections::BTreeMap;

use gpuquota_model::ResourceName;
use gpuquota_model::kai::parse_go_duration;
use gpuquota_model::kueue::Configuration;

use crate::error::{ConfigErrors, FairShareError};
use crate::preemption::FairSharingStrategy;

/// Validated fair-sharing settings.
#[derive(Debug, Clone, PartialEq)]
pub struct FairSharingSettings {
    /// Fair sharing on (the `fairSharing` stanza present — v1beta1 also needs `enable: true` —
    /// or the CLI's `--fair-sharing`).
    pub enabled: bool,
    /// The preemption strategies, in order (default: both, S2-a then S2-b).
    pub strategies: Vec<FairSharingStrategy>,
    /// Admission fair sharing, when configured.
    pub admission: Option<AdmissionFairSharingSettings>,
}

/// Validated `admissionFairSharing`.
#[derive(Debug, Clone, PartialEq)]
pub struct AdmissionFairSharingSettings {
    /// `usageHalfLifeTime` in nanoseconds (≥ 0; 0 means α = 0).
    pub usage_half_life_nanos: i128,
    /// `usageSamplingInterval` in nanoseconds (> 0, default 5m).
    pub usage_sampling_interval_nanos: i128,
    /// `resourceWeights` (≥ 0; a resource not listed weighs 1).
    pub resource_weights: BTreeMap<ResourceName, f64>,
}

/// Kueue's default `usageSamplingInterval` (5 minutes).
pub const DEFAULT_SAMPLING_INTERVAL_NANOS: i128 = 5 * 60 * 1_000_000_000;

/// The default strategy list: `[LessThanOrEqualToFinalShare, LessThanInitialShare]`.
pub const DEFAULT_STRATEGIES: [FairSharingStrategy; 2] = [
    FairSharingStrategy::LessThanOrEqualToFinalShare,
    FairSharingStrategy::LessThanInitialShare,
];

impl Default for FairSharingSettings {
    fn default() -> Self {
        FairSharingSettings {
            enabled: false,
            strategies: DEFAULT_STRATEGIES.to_vec(),
            admission: None,
        }
    }
}

/// Parses and validates a strategy list; empty means the default list.
///
/// # Errors
/// Unknown names, or a list other than `[S2-a]`, `[S2-b]`, `[S2-a, S2-b]` (Kueue's validation).
pub fn parse_strategies(list: &[String]) -> Result<Vec<FairSharingStrategy>, FairShareError> {
    if list.is_empty() {
        return Ok(DEFAULT_STRATEGIES.to_vec());
    }
    let mut out = Vec::new();
    for (i, s) in list.iter().enumerate() {
        match FairSharingStrategy::parse(s) {
            Some(st) => out.push(st),
            None => {
                return Err(FairShareError::invalid(
                    "Configuration",
                    format!("fairSharing.preemptionStrategies[{i}]"),
                    format!(
                        "unsupported value \"{s}\": supported values: \"LessThanOrEqualToFinalShare\", \"LessThanInitialShare\""
                    ),
                ));
            }
        }
    }
    use FairSharingStrategy::{LessThanInitialShare as B, LessThanOrEqualToFinalShare as A};
    if !matches!(out.as_slice(), [A] | [B] | [A, B]) {
        return Err(FairShareError::invalid(
            "Configuration",
            "fairSharing.preemptionStrategies",
            "must be [LessThanOrEqualToFinalShare], [LessThanInitialShare] or [LessThanOrEqualToFinalShare, LessThanInitialShare]",
        ));
    }
    Ok(out)
}

fn duration(field: &str, s: &str) -> Result<i128, FairShareError> {
    parse_go_duration(s).ok_or_else(|| {
        FairShareError::invalid("Configuration", field, format!("invalid duration \"{s}\""))
    })
}

/// Reads the fair-sharing settings from an optional `Configuration`; `force_enable` is the
/// CLI's `--fair-sharing`. Every problem is reported.
///
/// # Errors
/// [`ConfigErrors`] listing each invalid field.
pub fn settings_from_configuration(
    config: Option<&Configuration>,
    force_enable: bool,
) -> Result<FairSharingSettings, ConfigErrors> {
    let mut errors = Vec::new();
    let mut s = FairSharingSettings {
        enabled: force_enable || config.is_some_and(Configuration::fair_sharing_enabled),
        ..FairSharingSettings::default()
    };
    if let Some(fs) = config.and_then(|c| c.fair_sharing.as_ref()) {
        match parse_strategies(&fs.preemption_strategies) {
            Ok(v) => s.strategies = v,
            Err(e) => errors.push(e),
        }
    }
    if let Some(afs) = config.and_then(|c| c.admission_fair_sharing.as_ref()) {
        let mut a = AdmissionFairSharingSettings {
            usage_half_life_nanos: 0,
            usage_sampling_interval_nanos: DEFAULT_SAMPLING_INTERVAL_NANOS,
            resource_weights: BTreeMap::new(),
        };
        if let Some(h) = &afs.usage_half_life_time {
            match duration("admissionFairSharing.usageHalfLifeTime", h) {
                Ok(v) if v < 0 => errors.push(FairShareError::invalid(
                    "Configuration",
                    "admissionFairSharing.usageHalfLifeTime",
                    "must be greater than or equal to 0",
                )),
                Ok(v) => a.usage_half_life_nanos = v,
                Err(e) => errors.push(e),
            }
        }
        if let Some(h) = &afs.usage_sampling_interval {
            match duration("admissionFairSharing.usageSamplingInterval", h) {
                Ok(v) if v <= 0 => errors.push(FairShareError::invalid(
                    "Configuration",
                    "admissionFairSharing.usageSamplingInterval",
                    "must be greater than 0",
                )),
                Ok(v) => a.usage_sampling_interval_nanos = v,
                Err(e) => errors.push(e),
            }
        }
        for (r, q) in &afs.resource_weights {
            if q.is_negative() {
                errors.push(FairShareError::invalid(
                    "Configuration",
                    format!("admissionFairSharing.resourceWeights[{r}]"),
                    "must be greater than or equal to 0",
                ));
                continue;
            }
            let (m, e) = q.as_decimal();
            let w: f64 = format!("{m}e{e}").parse().unwrap_or(f64::INFINITY);
            a.resource_weights.insert(r.clone(), w);
        }
        s.admission = Some(a);
    }
    if errors.is_empty() {
        Ok(s)
    } else {
        Err(ConfigErrors(errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuquota_model::kueue::FairSharingConfig;

    fn cfg(api: &str, enable: Option<bool>, strategies: &[&str]) -> Configuration {
        Configuration {
            api_version: api.into(),
            fair_sharing: Some(FairSharingConfig {
                enable,
                preemption_strategies: strategies.iter().map(|s| s.to_string()).collect(),
            }),
            ..Configuration::default()
        }
    }

    #[test]
    fn enablement_by_version() {
        let v1 = cfg("config.kueue.x-k8s.io/v1beta1", None, &[]);
        assert!(
            !settings_from_configuration(Some(&v1), false)
                .unwrap()
                .enabled
        );
        let v1on = cfg("config.kueue.x-k8s.io/v1beta1", Some(true), &[]);
        assert!(
            settings_from_configuration(Some(&v1on), false)
                .unwrap()
                .enabled
        );
        let v2 = cfg("config.kueue.x-k8s.io/v1beta2", None, &[]);
        let s = settings_from_configuration(Some(&v2), false).unwrap();
        assert!(s.enabled);
        assert_eq!(s.strategies, DEFAULT_STRATEGIES.to_vec());
        assert!(settings_from_configuration(None, true).unwrap().enabled);
        assert!(!settings_from_configuration(None, false).unwrap().enabled);
    }

    #[test]
    fn strategy_lists() {
        let ok = |l: &[&str]| {
            parse_strategies(&l.iter().map(|s| s.to_string()).collect::<Vec<_>>()).is_ok()
        };
        assert!(ok(&["LessThanOrEqualToFinalShare"]));
        assert!(ok(&["LessThanInitialShare"]));
        assert!(ok(&["LessThanOrEqualToFinalShare", "LessThanInitialShare"]));
        assert!(!ok(&[
            "LessThanInitialShare",
            "LessThanOrEqualToFinalShare"
        ]));
        assert!(!ok(&["LessThanInitialShare", "LessThanInitialShare"]));
        assert!(!ok(&["Bogus"]));
    }
}
