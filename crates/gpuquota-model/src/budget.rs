//! GPU-hour budgets: the `Budget` kind (`gpuquota.dev/v1alpha1`), a fixed number of GPU-hours
//! per period for one queue or a set of namespaces, and what happens when it is spent.
//!
//! Kueue and KAI have no GPU-hour budget; the nearest upstream control is Slurm's
//! `GrpTRESMins` (an association's jobs wait once its TRES-minutes are used). A `Budget` is
//! read from the same manifest files as every other object, by the one importer, and checked
//! by [`mod@crate::validate`].
//!
//! ```
//! # #[cfg(feature = "yaml")] {
//! use gpuquota_model::budget::{Period, Scope, WhenSpent};
//! use gpuquota_model::import_str;
//!
//! let yaml = r#"
//! apiVersion: gpuquota.dev/v1alpha1
//! kind: Budget
//! metadata: {name: batch-daily}
//! spec:
//!   queue: batch
//!   gpuHours: "8"
//!   cardType: H200
//!   period: 24h
//!   anchor: "2026-04-01T00:00:00Z"
//!   whenSpent: Wait
//! "#;
//! let model = import_str("budgets.yaml", yaml)?.model;
//! let rule = model.budgets["batch-daily"].rule().expect("valid budget");
//! assert_eq!(rule.scope, Scope::Queue("batch".into()));
//! assert_eq!(rule.micro_gpu_hours, 8_000_000);
//! assert_eq!(rule.period, Period::Every { ms: 86_400_000 });
//! assert_eq!(rule.when_spent, WhenSpent::Wait);
//! // periods are [anchor + k·period, anchor + (k+1)·period)
//! let t = rule.anchor_ms.unwrap() + 30 * 3_600_000;
//! assert_eq!(rule.period_at(t, 0), (rule.anchor_ms.unwrap() + 86_400_000, rule.anchor_ms.unwrap() + 2 * 86_400_000));
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The object, field by field
//!
//! ```yaml
//! apiVersion: gpuquota.dev/v1alpha1
//! kind: Budget
//! metadata: {name: batch-daily}     # cluster-scoped; an RFC 1123 subdomain
//! spec:
//!   queue: batch                    # a ClusterQueue (Kueue) or a KAI Queue ...
//!   namespaces: [analytics]         # ... or the namespaces whose workloads it covers (one of the two)
//!   gpuHours: "8"                   # per period: a non-negative decimal, at most 6 decimals
//!   cardType: H200                  # optional: only this card type counts (metering's card types)
//!   period: 24h                     # a positive Go duration, or `monthly`
//!   anchor: "2026-04-01T00:00:00Z"  # optional RFC 3339: where the periods are counted from
//!   whenSpent: Wait                 # Wait (default) | Deprioritize | Notify
//!   stopRunning: false              # true: running work is stopped when the budget is spent
//! ```
//!
//! - `spec.queue`: the budget covers every workload that queues in this ClusterQueue (through
//!   a LocalQueue) or this KAI Queue. Exactly one of `queue` and `namespaces` is required.
//! - `spec.namespaces`: the budget covers every workload of these namespaces, whatever its
//!   queue (the only scope the `resourcequota` engine can apply, as it has no queues).
//! - `spec.gpuHours`: the GPU-hours granted per period. Usage is weighted as metering weighs
//!   it (`gpuquota-metering`): a whole GPU counts 1, a MIG instance its share of the card
//!   (compute slices by default: `1g.24gb` on an H200 is 1/7), a time-sliced or MPS replica
//!   `1/replicasPerGpu`, and a workload with several pods counts each pod. A quantity
//!   (`"8"`, `8`, `"0.5"`) with at most six decimals (micro-GPU-hours are exact).
//! - `spec.cardType`: without it every GPU counts; with it only usage on that card type.
//! - `spec.period`, `spec.anchor`: a Go duration (`24h`, `168h`) divides time into periods
//!   `[anchor + k·period, anchor + (k+1)·period)` for every integer `k`; `monthly` into
//!   calendar months starting on the anchor's day of the month and time of day (a day beyond
//!   a month's end is that month's last day). Without `anchor` the periods are counted from
//!   the start of the run that applies the budget (a simulation's `spec.start`, a `meter`
//!   report's window start), and for `monthly` from the first of that month, 00:00 UTC.
//! - `spec.whenSpent`: what happens to the covered workloads once the period's usage reaches
//!   `gpuHours`: `Wait`, no new admission until the next period (the workload is pending
//!   with reason `BudgetExhausted`, a message with the hours used and when the budget
//!   renews); `Deprioritize`, admitted only as the lowest-priority work, which every other
//!   workload may preempt; `Notify`, nothing changes, the state is only reported.
//! - `spec.stopRunning`: `false` (default): work already running keeps running when the
//!   budget is spent; `true`: it is stopped at the instant the budget is spent (and then
//!   waits, or requeues at the lowest priority, as `whenSpent` says). Forbidden with `Notify`.
//!
//! # How usage is counted
//!
//! Usage is charged continuously, to the period in which it happens: a run from `a` to `b`
//! charges `∫ weight dt` over `[a, b)`, split at period boundaries. An admitted workload is
//! never cut short by the budget (unless `stopRunning`): if it runs past the point where the
//! budget is spent it is charged in full, the period's remaining hours go negative, and the
//! next period starts again at `gpuHours` (it does not inherit the overrun).

use crate::diag::{Diagnostic, Diagnostics, ErrorType, codes};
use crate::meta::ObjectMeta;
use crate::quantity::Quantity;
use crate::time::Timestamp;

/// The API group and version of a `Budget`.
pub const API_VERSION: &str = "gpuquota.dev/v1alpha1";
/// The pending reason of a workload held back by a spent `Wait` budget.
pub const BUDGET_EXHAUSTED: &str = "BudgetExhausted";

/// A `Budget` object as written.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Budget {
    /// Metadata (cluster-scoped).
    #[cfg_attr(feature = "serde", serde(default))]
    pub metadata: ObjectMeta,
    /// The budget.
    #[cfg_attr(feature = "serde", serde(default))]
    pub spec: BudgetSpec,
}

/// `spec` of a [`Budget`] (see the module docs, field by field).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct BudgetSpec {
    /// A ClusterQueue or KAI Queue.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub queue: Option<String>,
    /// Namespaces covered.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub namespaces: Option<Vec<String>>,
    /// GPU-hours per period.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub gpu_hours: Option<Quantity>,
    /// Only this card type counts.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub card_type: Option<String>,
    /// A Go duration or `monthly`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub period: Option<String>,
    /// Where periods are counted from.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub anchor: Option<Timestamp>,
    /// `Wait`, `Deprioritize` or `Notify`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub when_spent: Option<String>,
    /// Stop running work when the budget is spent.
    #[cfg_attr(
        feature = "serde",
        serde(
            default,
            deserialize_with = "crate::strict::opt_bool",
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub stop_running: Option<bool>,
}

/// What a budget covers.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// The workloads of a ClusterQueue or KAI Queue.
    Queue(String),
    /// The workloads of these namespaces (sorted, unique).
    Namespaces(Vec<String>),
}

impl Scope {
    /// True when a workload of `namespace` queueing in `queue` (`""` for none) is covered.
    pub fn covers(&self, namespace: &str, queue: &str) -> bool {
        match self {
            Scope::Queue(q) => !queue.is_empty() && q == queue,
            Scope::Namespaces(ns) => ns.binary_search_by(|n| n.as_str().cmp(namespace)).is_ok(),
        }
    }
}

/// How time is divided into periods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Period {
    /// Fixed periods of this many milliseconds.
    Every {
        /// Length in ms (> 0).
        ms: i64,
    },
    /// Calendar months.
    Monthly,
}

/// What happens once a budget is spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum WhenSpent {
    /// No new admission until the next period.
    #[default]
    Wait,
    /// Admitted only as the lowest-priority, preemptible work.
    Deprioritize,
    /// Only reported.
    Notify,
}

impl WhenSpent {
    /// `Wait`, `Deprioritize` or `Notify`.
    pub fn as_str(self) -> &'static str {
        match self {
            WhenSpent::Wait => "Wait",
            WhenSpent::Deprioritize => "Deprioritize",
            WhenSpent::Notify => "Notify",
        }
    }
}

/// A validated budget, in exact units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetRule {
    /// `metadata.name`.
    pub name: String,
    /// What it covers.
    pub scope: Scope,
    /// GPU-hours per period in millionths.
    pub micro_gpu_hours: i128,
    /// Only this card type counts.
    pub card_type: Option<String>,
    /// The periods.
    pub period: Period,
    /// The anchor in ms since the Unix epoch, when given.
    pub anchor_ms: Option<i64>,
    /// What happens once spent.
    pub when_spent: WhenSpent,
    /// Stop running work once spent.
    pub stop_running: bool,
}

/// One problem of a `Budget`: field path, Kubernetes error type, value and detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetProblem {
    /// Field path (`spec.gpuHours`).
    pub field: String,
    /// Error type.
    pub error_type: ErrorType,
    /// The value as written (quoted), when shown.
    pub value: Option<String>,
    /// What is wrong.
    pub detail: String,
}

fn problem(
    field: &str,
    error_type: ErrorType,
    value: Option<String>,
    detail: &str,
) -> BudgetProblem {
    BudgetProblem {
        field: field.to_owned(),
        error_type,
        value,
        detail: detail.to_owned(),
    }
}

impl BudgetProblem {
    /// This problem of the Budget `name` as a diagnostic: code `invalid`, naming the Budget
    /// and the field, message `TYPE[: VALUE][: DETAIL]` (`Required value: one of spec.queue
    /// and spec.namespaces is required`), as the validator reports every field error.
    pub fn diagnostic(&self, name: &str) -> Diagnostic {
        let mut message = self.error_type.as_str().to_owned();
        if let Some(v) = &self.value {
            message.push_str(": ");
            message.push_str(v);
        }
        if !self.detail.is_empty() {
            message.push_str(": ");
            message.push_str(&self.detail);
        }
        Diagnostic::error(codes::INVALID, message)
            .object("Budget", name)
            .field(self.field.clone())
    }
}

/// The rules of every Budget of `model`, in name order.
///
/// # Errors
/// Every problem of every invalid Budget ([`BudgetProblem::diagnostic`]), never a partial
/// list of rules.
pub fn rules(model: &crate::Model) -> Result<Vec<BudgetRule>, Diagnostics> {
    let mut rules = Vec::new();
    let mut errors = Diagnostics::default();
    for (name, b) in &model.budgets {
        match b.rule() {
            Ok(r) => rules.push(r),
            Err(ps) => errors.extend(ps.iter().map(|p| p.diagnostic(name))),
        }
    }
    if errors.is_empty() {
        Ok(rules)
    } else {
        Err(errors)
    }
}

const MS_PER_DAY: i64 = 86_400_000;

impl Budget {
    /// The budget in exact units, or every problem of its spec (never a partial rule).
    ///
    /// # Errors
    /// Every [`BudgetProblem`] at once.
    pub fn rule(&self) -> Result<BudgetRule, Vec<BudgetProblem>> {
        let s = &self.spec;
        let mut out = Vec::new();
        let scope = scope_of(s, &mut out);
        let micro = gpu_hours_of(s, &mut out);
        if let Some(c) = &s.card_type
            && c.is_empty()
        {
            out.push(problem(
                "spec.cardType",
                ErrorType::Invalid,
                Some("\"\"".into()),
                "must name a card type, or be left out",
            ));
        }
        let period = period_of(s, &mut out);
        let when_spent = when_spent_of(s, &mut out);
        let stop_running = s.stop_running.unwrap_or(false);
        if stop_running && when_spent == WhenSpent::Notify {
            out.push(problem(
                "spec.stopRunning",
                ErrorType::Forbidden,
                None,
                "may not be true when whenSpent is Notify (Notify only reports)",
            ));
        }
        let anchor_ms = s
            .anchor
            .and_then(|a| i64::try_from(a.unix_nanos().div_euclid(1_000_000)).ok());
        match (scope, micro, period) {
            (Some(scope), Some(micro_gpu_hours), Some(period)) if out.is_empty() => {
                Ok(BudgetRule {
                    name: self.metadata.name.clone(),
                    scope,
                    micro_gpu_hours,
                    card_type: s.card_type.clone(),
                    period,
                    anchor_ms,
                    when_spent,
                    stop_running,
                })
            }
            _ => Err(out),
        }
    }
}

/// `spec.queue` or `spec.namespaces` (exactly one; namespaces valid, distinct, kept sorted).
fn scope_of(s: &BudgetSpec, out: &mut Vec<BudgetProblem>) -> Option<Scope> {
    match (&s.queue, &s.namespaces) {
        (Some(_), Some(_)) => {
            out.push(problem(
                "spec.namespaces",
                ErrorType::Forbidden,
                None,
                "may not be set together with spec.queue",
            ));
            None
        }
        (None, None) => {
            out.push(problem(
                "spec.queue",
                ErrorType::Required,
                None,
                "one of spec.queue and spec.namespaces is required",
            ));
            None
        }
        (Some(q), None) => {
            if q.is_empty() {
                out.push(problem(
                    "spec.queue",
                    ErrorType::Required,
                    None,
                    "must name a ClusterQueue or KAI Queue",
                ));
            }
            Some(Scope::Queue(q.clone()))
        }
        (None, Some(ns)) => {
            if ns.is_empty() {
                out.push(problem(
                    "spec.namespaces",
                    ErrorType::Required,
                    None,
                    "must list at least one namespace",
                ));
            }
            let mut sorted = ns.clone();
            for (i, n) in ns.iter().enumerate() {
                if !is_dns_label(n) {
                    out.push(problem(
                        &format!("spec.namespaces[{i}]"),
                        ErrorType::Invalid,
                        Some(format!("{n:?}")),
                        "must be a lowercase RFC 1123 label",
                    ));
                }
                if ns[..i].contains(n) {
                    out.push(problem(
                        &format!("spec.namespaces[{i}]"),
                        ErrorType::Duplicate,
                        Some(format!("{n:?}")),
                        "",
                    ));
                }
            }
            sorted.sort();
            sorted.dedup();
            Some(Scope::Namespaces(sorted))
        }
    }
}

/// `spec.gpuHours` in millionths (required, at least 0, at most 6 decimals).
fn gpu_hours_of(s: &BudgetSpec, out: &mut Vec<BudgetProblem>) -> Option<i128> {
    match &s.gpu_hours {
        None => {
            out.push(problem(
                "spec.gpuHours",
                ErrorType::Required,
                None,
                "the GPU-hours granted per period",
            ));
            None
        }
        Some(q) => {
            let shown = Some(format!("{:?}", q.to_string()));
            match micro_of(q) {
                Some(m) if m >= 0 => Some(m),
                Some(_) => {
                    out.push(problem(
                        "spec.gpuHours",
                        ErrorType::Invalid,
                        shown,
                        "must be greater than or equal to 0",
                    ));
                    None
                }
                None => {
                    out.push(problem(
                        "spec.gpuHours",
                        ErrorType::Invalid,
                        shown,
                        "must have at most 6 decimals and at most 10^18 GPU-hours",
                    ));
                    None
                }
            }
        }
    }
}

/// `spec.period`: `monthly`, or a positive Go duration (rounded up to whole ms).
fn period_of(s: &BudgetSpec, out: &mut Vec<BudgetProblem>) -> Option<Period> {
    match s.period.as_deref() {
        None => {
            out.push(problem(
                "spec.period",
                ErrorType::Required,
                None,
                "a Go duration (24h) or monthly",
            ));
            None
        }
        Some("monthly") => Some(Period::Monthly),
        Some(p) => match crate::kai::parse_go_duration(p) {
            Some(ns) if ns > 0 => {
                let ms = (ns + 999_999) / 1_000_000;
                i64::try_from(ms).ok().map(|ms| Period::Every { ms })
            }
            _ => {
                out.push(problem(
                    "spec.period",
                    ErrorType::Invalid,
                    Some(format!("{p:?}")),
                    "must be a positive Go duration (24h, 168h) or monthly",
                ));
                None
            }
        },
    }
}

/// `spec.whenSpent` (default `Wait`).
fn when_spent_of(s: &BudgetSpec, out: &mut Vec<BudgetProblem>) -> WhenSpent {
    match s.when_spent.as_deref() {
        None | Some("Wait") => WhenSpent::Wait,
        Some("Deprioritize") => WhenSpent::Deprioritize,
        Some("Notify") => WhenSpent::Notify,
        Some(v) => {
            out.push(problem(
                "spec.whenSpent",
                ErrorType::NotSupported,
                Some(format!("{v:?}")),
                "supported values: \"Wait\", \"Deprioritize\", \"Notify\"",
            ));
            WhenSpent::Wait
        }
    }
}

impl BudgetRule {
    /// The effective anchor (ms since the epoch) given the start of the run applying it.
    pub fn anchor(&self, default_anchor_ms: i64) -> i64 {
        match (self.anchor_ms, self.period) {
            (Some(a), _) => a,
            (None, Period::Every { .. }) => default_anchor_ms,
            (None, Period::Monthly) => {
                let (y, m, _) = civil(default_anchor_ms.div_euclid(MS_PER_DAY));
                crate::time::days_from_civil(y, m, 1) * MS_PER_DAY
            }
        }
    }

    /// The period `[start, end)` (ms since the epoch) containing `t`.
    ///
    /// # Complexity
    /// O(1).
    pub fn period_at(&self, t: i64, default_anchor_ms: i64) -> (i64, i64) {
        let a = self.anchor(default_anchor_ms);
        match self.period {
            Period::Every { ms } => {
                let k = (t - a).div_euclid(ms);
                let s = a.saturating_add(k.saturating_mul(ms));
                (s, s.saturating_add(ms))
            }
            Period::Monthly => {
                let (ya, ma, _) = civil(a.div_euclid(MS_PER_DAY));
                let (yt, mt, _) = civil(t.div_euclid(MS_PER_DAY));
                let mut k = (yt * 12 + mt) - (ya * 12 + ma);
                if month_start(a, k) > t {
                    k -= 1;
                }
                while month_start(a, k + 1) <= t {
                    k += 1;
                }
                (month_start(a, k), month_start(a, k + 1))
            }
        }
    }
}

/// The start of the `k`-th month after anchor `a` (same day, clamped, and time of day).
fn month_start(a: i64, k: i64) -> i64 {
    let days = a.div_euclid(MS_PER_DAY);
    let tod = a.rem_euclid(MS_PER_DAY);
    let (y, m, d) = civil(days);
    let idx = y * 12 + (m - 1) + k;
    let (ny, nm) = (idx.div_euclid(12), idx.rem_euclid(12) + 1);
    let last = crate::time::days_from_civil(if nm == 12 { ny + 1 } else { ny }, nm % 12 + 1, 1)
        - crate::time::days_from_civil(ny, nm, 1);
    (crate::time::days_from_civil(ny, nm, d.min(last)) * MS_PER_DAY).saturating_add(tod)
}

fn civil(days: i64) -> (i64, i64, i64) {
    crate::time::civil_from_days(days)
}

/// Millionths of the quantity, exactly, or `None` (more than 6 decimals, or too large).
fn micro_of(q: &Quantity) -> Option<i128> {
    let (mantissa, exponent) = q.as_decimal();
    let e = exponent.checked_add(6)?;
    let v = if e >= 0 {
        mantissa.checked_mul(10i128.checked_pow(u32::try_from(e).ok()?)?)?
    } else {
        let d = 10i128.checked_pow(u32::try_from(-e).ok()?)?;
        if mantissa % d != 0 {
            return None;
        }
        mantissa / d
    };
    (v.abs() <= 1_000_000_000_000_000_000_000_000).then_some(v)
}

fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import_str;

    #[test]
    fn rules_name_the_budget_and_field_with_the_invalid_code() {
        let yaml = "apiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {name: a}\nspec: {queue: q, gpuHours: 1, period: 24h}\n---\napiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {name: b}\nspec: {gpuHours: 1, period: 24h, whenSpent: Notify, stopRunning: true}\n";
        let m = import_str("b.yaml", yaml).expect("imports").model;
        let errors = rules(&m).expect_err("b is invalid");
        let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "Budget \"b\": spec.queue: Required value: one of spec.queue and spec.namespaces is required",
                "Budget \"b\": spec.stopRunning: Forbidden: may not be true when whenSpent is Notify (Notify only reports)",
            ]
        );
        assert!(
            errors
                .iter()
                .all(|d| d.code == codes::INVALID && d.is_error(false))
        );
        let only_a = import_str("a.yaml", yaml.split("---\n").next().expect("a"))
            .expect("imports")
            .model;
        let a = rules(&only_a).expect("valid");
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].name, "a");
        assert_eq!(a[0].micro_gpu_hours, 1_000_000);
    }

    fn rule(spec: &str) -> Result<BudgetRule, Vec<BudgetProblem>> {
        let yaml = format!(
            "apiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {{name: b}}\nspec: {spec}\n"
        );
        let m = import_str("b.yaml", &yaml).expect("imports").model;
        m.budgets["b"].rule()
    }

    #[test]
    fn monthly_periods_are_calendar_months_from_the_first() {
        let r = rule("{queue: q, gpuHours: 100, period: monthly}").expect("valid");
        let apr10 = Timestamp::parse("2026-04-10T12:00:00Z")
            .expect("ts")
            .unix_seconds()
            * 1000;
        let (s, e) = r.period_at(apr10, apr10);
        assert_eq!(
            s,
            Timestamp::parse("2026-04-01T00:00:00Z")
                .expect("ts")
                .unix_seconds()
                * 1000
        );
        assert_eq!(
            e,
            Timestamp::parse("2026-05-01T00:00:00Z")
                .expect("ts")
                .unix_seconds()
                * 1000
        );
        let r = rule("{queue: q, gpuHours: 1, period: monthly, anchor: \"2026-01-31T06:00:00Z\"}")
            .expect("valid");
        let mar1 = Timestamp::parse("2026-03-01T00:00:00Z")
            .expect("ts")
            .unix_seconds()
            * 1000;
        let (s, e) = r.period_at(mar1, 0);
        assert_eq!(
            s,
            Timestamp::parse("2026-02-28T06:00:00Z")
                .expect("ts")
                .unix_seconds()
                * 1000
        );
        assert_eq!(
            e,
            Timestamp::parse("2026-03-31T06:00:00Z")
                .expect("ts")
                .unix_seconds()
                * 1000
        );
    }

    #[test]
    fn fixed_periods_extend_before_the_anchor() {
        let r =
            rule("{queue: q, gpuHours: \"0.5\", period: 24h, anchor: \"1970-01-02T00:00:00Z\"}")
                .expect("valid");
        assert_eq!(r.micro_gpu_hours, 500_000);
        assert_eq!(r.period_at(0, 0), (0, MS_PER_DAY));
        assert_eq!(r.period_at(-1, 0), (-MS_PER_DAY, 0));
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let p = rule("{queue: q, namespaces: [a], gpuHours: \"0.0000001\", period: soon, whenSpent: Later, stopRunning: true}")
            .unwrap_err();
        let fields: Vec<&str> = p.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.namespaces",
                "spec.gpuHours",
                "spec.period",
                "spec.whenSpent"
            ]
        );
        let p = rule("{namespaces: [a, a, B], gpuHours: -1, period: 1h, whenSpent: Notify, stopRunning: true}")
            .unwrap_err();
        let shown: Vec<String> = p
            .iter()
            .map(|p| format!("{} {}", p.field, p.error_type.as_str()))
            .collect();
        assert_eq!(
            shown,
            [
                "spec.namespaces[1] Duplicate value",
                "spec.namespaces[2] Invalid value",
                "spec.gpuHours Invalid value",
                "spec.stopRunning Forbidden"
            ]
        );
        assert_eq!(
            rule("{gpuHours: 1, period: 1h}").unwrap_err()[0].error_type,
            ErrorType::Required
        );
    }

    #[test]
    fn validation_names_kind_object_and_field() {
        let yaml = "apiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {name: b}\nspec: {queue: q, gpuHours: 1, period: 1h, whenSpent: Later, colour: red}\n";
        let imported = import_str("b.yaml", yaml).expect("imports");
        assert_eq!(imported.warnings.len(), 1);
        assert!(imported.warnings[0].to_string().contains("spec.colour"));
        let errors = crate::validate(&imported.model).unwrap_err();
        assert_eq!(
            errors.0[0].to_string(),
            "Budget \"b\": spec.whenSpent: Unsupported value: \"Later\": supported values: \"Wait\", \"Deprioritize\", \"Notify\""
        );
    }

    #[test]
    fn scope_covers_by_queue_or_namespace() {
        let q = Scope::Queue("batch".into());
        assert!(q.covers("any", "batch"));
        assert!(!q.covers("batch", ""));
        let n = Scope::Namespaces(vec!["a".into(), "c".into()]);
        assert!(n.covers("c", "x") && !n.covers("b", "x"));
    }
}
