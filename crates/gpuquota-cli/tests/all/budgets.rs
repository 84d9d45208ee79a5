//! `kueue schedule` and `kai schedule` with `--budgets FILE --usage REPORT.json`: the usage
//! report is what `gpuquota meter` writes for the period so far.

use crate::common;
use common::{gpuquota, text};

fn write(test: &str, files: &[(&str, &str)]) -> Vec<String> {
    common::write_in("budgets", test, files)
}

/// 9 GPU-hours of H200 used by department `team` on 1 April so far.
const METER: &str = r#"
window: {start: "2026-04-01T00:00:00Z", end: "2026-04-01T12:00:00Z"}
cardTypes: [{name: H200, pricePerHour: "4.50", capacity: 8}]
departments: [{name: team, namespaces: [team]}, {name: research, namespaces: [research]}]
records:
  - {department: team, cardType: H200, gpus: 3, start: "2026-04-01T00:00:00Z", end: "2026-04-01T03:00:00Z"}
"#;

const KUEUE: &str = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h200}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: batch}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: h200, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: team}
spec: {clusterQueue: batch}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: research}
spec: {clusterQueue: batch}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: a, namespace: team, creationTimestamp: "2026-04-01T10:00:00Z"}
spec:
  queueName: lq
  podSets: [{name: main, count: 4, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}}}]}}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: r, namespace: research, creationTimestamp: "2026-04-01T11:00:00Z"}
spec:
  queueName: lq
  podSets: [{name: main, count: 4, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}}}]}}}]
"#;

fn budget(when: &str, hours: &str) -> String {
    format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {{name: team-daily}}\nspec: {{namespaces: [team], gpuHours: \"{hours}\", cardType: H200, period: 24h, whenSpent: {when}}}\n"
    )
}

/// `kueue schedule` JSON with the budget, and its stderr.
fn kueue(test: &str, when: &str, hours: &str) -> (serde_json::Value, String) {
    let b = budget(when, hours);
    let files = write(
        test,
        &[("c.yaml", KUEUE), ("b.yaml", &b), ("m.yaml", METER)],
    );
    let m = gpuquota(&["meter", &files[2]]);
    assert_eq!(m.status.code(), Some(0), "{}", text(&m.stderr));
    let usage = write(test, &[("usage.json", &text(&m.stdout))]);
    let out = gpuquota(&[
        "kueue",
        "schedule",
        &files[0],
        "--budgets",
        &files[1],
        "--usage",
        &usage[0],
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    (
        serde_json::from_slice(&out.stdout).expect("JSON"),
        text(&out.stderr),
    )
}

#[test]
fn kueue_wait_lists_the_held_workload_as_budget_exhausted() {
    let (j, err) = kueue("wait", "Wait", "8");
    assert_eq!(j["admitted"][0]["workload"], "research/r");
    assert_eq!(j["pending"][0]["workload"], "team/a");
    assert_eq!(j["pending"][0]["reason"], "BudgetExhausted");
    assert_eq!(
        j["pending"][0]["message"],
        "Budget \"team-daily\" is spent: 9.000000 of 8.000000 GPU-hours used this period; it renews at 2026-04-02T00:00:00Z"
    );
    assert!(
        err.contains("note: Budget \"team-daily\" is spent"),
        "{err}"
    );
}

#[test]
fn kueue_budget_not_spent_changes_nothing() {
    let (j, err) = kueue("unspent", "Wait", "9.5");
    assert_eq!(j["admitted"][0]["workload"], "team/a");
    assert_eq!(j["pending"][0]["workload"], "research/r");
    assert_eq!(err, "");
}

#[test]
fn kueue_deprioritize_puts_the_workload_behind_every_other() {
    let (j, _) = kueue("depri", "Deprioritize", "8");
    assert_eq!(j["admitted"][0]["workload"], "research/r");
    assert_eq!(j["pending"][0]["workload"], "team/a");
    assert_ne!(j["pending"][0]["reason"], "BudgetExhausted");
}

#[test]
fn kueue_notify_only_notes() {
    let (j, err) = kueue("notify", "Notify", "8");
    assert_eq!(j["admitted"][0]["workload"], "team/a");
    assert!(err.contains("(Notify)"), "{err}");
}

#[test]
fn budgets_need_usage_and_bad_budgets_fail() {
    let b = budget("Later", "8");
    let files = write("bad", &[("c.yaml", KUEUE), ("b.yaml", &b)]);
    let out = gpuquota(&["kueue", "schedule", &files[0], "--budgets", &files[1]]);
    assert_ne!(out.status.code(), Some(0));
    let out = gpuquota(&[
        "kueue",
        "schedule",
        &files[0],
        "--budgets",
        &files[1],
        "--usage",
        &files[0],
    ]);
    assert_ne!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "");
}

const KAI: &str = r#"apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: dept}
spec:
  resources:
    gpu: {quota: 8, overQuotaWeight: 1, limit: -1}
    cpu: {quota: -1, overQuotaWeight: 1, limit: -1}
    memory: {quota: -1, overQuotaWeight: 1, limit: -1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team}
spec:
  parentQueue: dept
  resources:
    gpu: {quota: 4, overQuotaWeight: 1, limit: -1}
    cpu: {quota: -1, overQuotaWeight: 1, limit: -1}
    memory: {quota: -1, overQuotaWeight: 1, limit: -1}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8", pods: "110"}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: pg, namespace: team, uid: u}
spec: {queue: team, minMember: 1, priorityClassName: build}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: team, annotations: {pod-group-name: pg}}
spec: {schedulerName: kai-scheduler, containers: [{name: c, resources: {limits: {nvidia.com/gpu: 2}}}]}
status: {phase: Pending}
"#;

#[test]
fn kai_wait_holds_the_pod_group_back() {
    let b = "apiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {name: team-daily}\nspec: {queue: team, gpuHours: 8, period: 24h}\n";
    let files = write("kai", &[("c.yaml", KAI), ("b.yaml", b), ("m.yaml", METER)]);
    let before = gpuquota(&["kai", "schedule", "--output", "json", &files[0]]);
    assert!(
        text(&before.stdout).contains("team/p"),
        "{}",
        text(&before.stdout)
    );
    let m = gpuquota(&["meter", &files[2]]);
    let mut report: serde_json::Value = serde_json::from_slice(&m.stdout).expect("JSON");
    // the department of queue `team` is named `team`
    report["lines"][0]["department"] = "team".into();
    let usage = write("kai", &[("usage.json", &report.to_string())]);
    let out = gpuquota(&[
        "kai",
        "schedule",
        "--output",
        "json",
        &files[0],
        "--budgets",
        &files[1],
        "--budget-usage",
        &usage[0],
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        !text(&out.stdout).contains("team/p"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr)
            .contains("note: PodGroup team/pg (queue team) is held back: BudgetExhausted"),
        "{}",
        text(&out.stderr)
    );
}

/// A strict reading of OpenMetrics text: every sample's family was declared with TYPE,
/// UNIT and HELP before it, a UNIT is the name's suffix, values are numbers, the text ends
/// with `# EOF`; returns (name, labels, value) per sample.
fn strict_openmetrics(t: &str) -> Vec<(String, String, f64)> {
    assert!(t.ends_with("# EOF\n"), "ends with # EOF");
    let mut declared: std::collections::BTreeMap<String, (bool, bool, bool)> = Default::default();
    let mut out = Vec::new();
    for line in t.lines() {
        if line == "# EOF" {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# ") {
            let mut p = rest.splitn(3, ' ');
            let (kind, name, arg) = (p.next().unwrap(), p.next().unwrap(), p.next().unwrap());
            let e = declared.entry(name.to_owned()).or_default();
            match kind {
                "TYPE" => {
                    assert_eq!(arg, "gauge");
                    e.0 = true;
                }
                "UNIT" => {
                    assert!(
                        name.ends_with(&format!("_{arg}")),
                        "{name} ends with its unit"
                    );
                    e.1 = true;
                }
                "HELP" => e.2 = true,
                k => panic!("unknown descriptor {k}"),
            }
            continue;
        }
        let (key, value) = line.rsplit_once(' ').expect("name{labels} value");
        let name = key.split('{').next().unwrap();
        assert_eq!(
            declared.get(name),
            Some(&(true, true, true)),
            "{name} declared"
        );
        let labels = key[name.len()..].to_owned();
        assert!(labels.starts_with('{') && labels.ends_with('}'));
        out.push((
            name.to_owned(),
            labels,
            value.parse::<f64>().expect("a number"),
        ));
    }
    out
}

#[test]
fn meter_openmetrics_writes_used_budget_and_remaining() {
    let b = budget("Wait", "8");
    let files = write("om", &[("b.yaml", &b), ("m.yaml", METER)]);
    let out = gpuquota(&[
        "meter",
        &files[1],
        "--output",
        "openmetrics",
        "--budgets",
        &files[0],
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    let samples = strict_openmetrics(&t);
    let get = |n: &str| {
        samples
            .iter()
            .find(|s| s.0 == n)
            .unwrap_or_else(|| panic!("{n} in\n{t}"))
            .2
    };
    assert_eq!(get("gpuquota_gpu_used_hours"), 9.0);
    assert_eq!(get("gpuquota_budget_gpu_hours"), 8.0);
    assert_eq!(get("gpuquota_budget_used_gpu_hours"), 9.0);
    assert_eq!(get("gpuquota_budget_remaining_gpu_hours"), -1.0);
    assert!(t.contains(
        "gpuquota_budget_remaining_gpu_hours{budget=\"team-daily\",department=\"team\",card_type=\"H200\"} -1.000000\n"
    ));
    // the crate's own exposition reader agrees
    let parsed = gpuquota::metering::dcgm::parse_exposition("om", &t).expect("parses");
    assert_eq!(parsed.len(), samples.len());
    assert_eq!(parsed[0].label("card_type"), Some("H200"));
}

#[test]
fn sim_reads_the_shipped_seed_files_and_diffs_them() {
    let seed = concat!(env!("CARGO_MANIFEST_DIR"), "/../gpuquota-sim/data/seed/");
    let (a, b) = (
        format!("{seed}resourcequota.yaml"),
        format!("{seed}kueue.yaml"),
    );
    let svg = write("diff", &[("x", "")])[0].replace("/x", "/diff.svg");
    let out = gpuquota(&["sim", "diff", &a, &b, "--output", "json", "--plot", &svg]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(j["a"], "seed-resourcequota");
    // none under ResourceQuota; under Kueue 8 a night (the 02:00 fine-tuning reclaims the
    // H200) for the 17 nights the 1800-hour budget admits (17 × 112 H200-hours = 1904)
    assert_eq!(j["departments"]["batch"]["preemptions"]["delta"], 136);
    assert!(
        std::fs::read_to_string(&svg)
            .expect("svg written")
            .starts_with("<svg")
    );
    let out = gpuquota(&["sim", &b]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(j["budgets"][0]["budget"], "batch-monthly");
    assert_eq!(j["chargeback"]["currency"], "EUR");
}

/// `validate` checks Budgets like every other kind: one naming a queue and a namespace the
/// input does not hold is a `Not found` warning per reference (exit 0), an error with
/// `--complete` (exit 1); the namespace of a LocalQueue exists.
#[test]
fn validate_warns_about_a_budget_naming_what_does_not_exist() {
    let budget = "apiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {name: ghost}\nspec: {queue: nosuch, gpuHours: 10, period: 24h}\n---\napiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {name: teams}\nspec: {namespaces: [team, ghost], gpuHours: 10, period: 24h}\n";
    let files = write("validate-refs", &[("q.yaml", KUEUE), ("b.yaml", budget)]);
    let out = gpuquota(&["validate", &files[0], &files[1]]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "warning: Budget \"ghost\": spec.queue: Not found: \"nosuch\": no ClusterQueue or KAI Queue of this name\n\
         warning: Budget \"teams\": spec.namespaces[1]: Not found: \"ghost\": no Namespace of this name and no object in it\n"
    );
    let out = gpuquota(&["validate", "--complete", &files[0], &files[1]]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("error: Budget \"ghost\": spec.queue: Not found: \"nosuch\"")
            && err.contains("error: Budget \"teams\": spec.namespaces[1]: Not found: \"ghost\"")
            && err.ends_with("error: 2 problem(s) in 8 object(s)\n"),
        "{err}"
    );
}
