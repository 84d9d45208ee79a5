//! An engine given another engine's objects is an error naming what is missing, a KAI job
//! naming an unknown queue a warning naming it, and a Budget naming a queue, namespace or
//! card type the scenario does not hold a warning naming the budget and the field.

use std::path::Path;

use gpuquota_model::Diagnostic;

fn data(rel: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(rel),
    )
    .expect("test data")
}

/// A `Simulation` of `engine` over `cluster` (and `jobs`, when given).
fn sim(engine: &str, jobs: bool) -> String {
    let mut s = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: x}}\nspec:\n  engine: {engine}\n  cluster: [cluster.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-02T00:00:00Z\"\n"
    );
    if jobs {
        s.push_str("  workloads:\n  - file: jobs.yaml\n");
    }
    s
}

fn reader(cluster: String, jobs: String) -> impl Fn(&str) -> Result<(String, String), Diagnostic> {
    move |f: &str| {
        let text = if f == "cluster.yaml" { &cluster } else { &jobs };
        Ok((f.to_owned(), text.clone()))
    }
}

fn messages(d: &gpuquota_model::Diagnostics) -> Vec<String> {
    d.iter().map(ToString::to_string).collect()
}

#[test]
fn engine_kai_over_kueue_objects_names_what_is_missing() {
    let read = reader(data("preemption-loop/cluster.yaml"), String::new());
    let err = gpuquota_sim::fuzzing::scenario("x.yaml", &sim("kai", false), "x", &read)
        .expect_err("no KAI Queue");
    assert_eq!(
        messages(&err),
        [
            "x.yaml: spec.engine: engine kai needs KAI Queues and the jobs' PodGroups or Pods; the files hold 3 ClusterQueues, 2 LocalQueues, 2 Workloads and no Queue (Kueue objects are simulated with spec.engine: kueue)"
        ]
    );
}

#[test]
fn engine_kueue_or_resourcequota_over_kai_objects_names_what_is_missing() {
    // kai/cluster.yaml: 2 Nodes, 3 Queues; kai/jobs.yaml: a Job (its PodGroup), 2 more
    // PodGroups and 6 Pods in all
    for (engine, want) in [
        (
            "kueue",
            "x.yaml: spec.engine: engine kueue needs Kueue ClusterQueues, LocalQueues and Workloads (or jobs queued to them); the files hold 3 Queues, 3 PodGroups, 6 Pods, 2 Nodes and no ClusterQueue (KAI Queues and PodGroups are simulated with spec.engine: kai)",
        ),
        (
            "resourcequota",
            "x.yaml: spec.engine: engine resourcequota needs Kueue Workloads (or jobs queued to a LocalQueue) under namespace ResourceQuotas; the files hold 3 Queues, 3 PodGroups, 6 Pods, 2 Nodes and no Workload (KAI Queues and PodGroups are simulated with spec.engine: kai)",
        ),
    ] {
        let read = reader(data("kai/cluster.yaml"), data("kai/jobs.yaml"));
        let err = gpuquota_sim::fuzzing::scenario("x.yaml", &sim(engine, true), "x", &read)
            .expect_err("no ClusterQueue");
        assert_eq!(messages(&err), [want], "{engine}");
    }
}

#[test]
fn a_kai_job_naming_an_unknown_queue_is_a_warning_naming_it() {
    let jobs = data("kai/jobs.yaml").replace("queue: data-science", "queue: data-scienc");
    let read = reader(data("kai/cluster.yaml"), jobs);
    let sim = gpuquota_sim::fuzzing::scenario("x.yaml", &sim("kai", true), "x", &read)
        .expect("valid scenario");
    let out = gpuquota_sim::fuzzing::run_kai(&sim).expect("simulates");
    let w: Vec<String> = out.warnings.iter().map(ToString::to_string).collect();
    // the PodGroup finetune (spec.queue) and the pod serve (label kai.scheduler/queue)
    assert_eq!(
        w,
        [
            "Pod \"ds/serve\": job ds/serve names queue \"data-scienc\", which is not a leaf Queue of the files: it stays pending (QueueDoesNotExist)",
            "PodGroup \"ds/finetune\": job ds/finetune names queue \"data-scienc\", which is not a leaf Queue of the files: it stays pending (QueueDoesNotExist)",
        ]
    );
    let pending: Vec<&str> = out
        .jobs
        .iter()
        .filter(|w| {
            w.pending
                .as_ref()
                .is_some_and(|p| p.0 == "QueueDoesNotExist")
        })
        .map(|w| w.key.as_str())
        .collect();
    assert_eq!(pending, ["ds/finetune", "ds/serve"]);
}

/// The loop cluster (ClusterQueues q0, q1, q2 of flavor `f`, namespace `ns`) with budgets
/// naming a queue, a namespace and a card type it does not hold: each a warning naming the
/// budget and the field; the budget naming what exists is not reported.
#[test]
fn budgets_naming_what_the_scenario_lacks_are_warned_about() {
    let mut cluster = data("preemption-loop/cluster.yaml");
    for (name, spec) in [
        ("ok", "{queue: q1, gpuHours: 10, period: 24h, cardType: f}"),
        ("q-ghost", "{queue: nosuch, gpuHours: 10, period: 24h}"),
        (
            "ns-ghost",
            "{namespaces: [ns, ghost], gpuHours: 10, period: 24h}",
        ),
        (
            "card-ghost",
            "{queue: q2, gpuHours: 10, period: 24h, cardType: A100}",
        ),
    ] {
        cluster.push_str(&format!(
            "---\napiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {{name: {name}}}\nspec: {spec}\n"
        ));
    }
    let read = reader(cluster, String::new());
    let sim = gpuquota_sim::fuzzing::scenario("x.yaml", &sim("kueue", false), "x", &read)
        .expect("valid scenario");
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    let budget_warnings: Vec<String> = r
        .diagnostics
        .iter()
        .filter(|d| d.kind == "Budget")
        .map(|d| format!("{} {d}", d.code.as_str()))
        .collect();
    assert_eq!(
        budget_warnings,
        [
            "not-found Budget \"card-ghost\": spec.cardType: Not found: \"A100\": no card type of this name in the scenario (its card types: f; spec.metering.cardTypes, or each ResourceFlavor without it); the budget is never charged",
            "not-found Budget \"ns-ghost\": spec.namespaces[1]: Not found: \"ghost\": no Namespace of this name and no object in it",
            "not-found Budget \"q-ghost\": spec.queue: Not found: \"nosuch\": no ClusterQueue or KAI Queue of this name",
        ]
    );
    // they are the JSON's warnings too
    let j = r.to_json();
    let text = j["warnings"].to_string();
    assert!(
        text.contains("Budget \\\"q-ghost\\\": spec.queue: Not found"),
        "{text}"
    );
}

/// KAI mode: the nodes carry no product label, so the run has no named card type.
#[test]
fn a_kai_budget_naming_an_unknown_card_type_is_warned_about() {
    let mut cluster = data("kai/cluster.yaml");
    cluster.push_str("---\napiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {name: h200}\nspec: {queue: batch, gpuHours: 10, period: 24h, cardType: H200}\n");
    let read = reader(cluster, data("kai/jobs.yaml"));
    let sim = gpuquota_sim::fuzzing::scenario("x.yaml", &sim("kai", true), "x", &read)
        .expect("valid scenario");
    let out = gpuquota_sim::fuzzing::run_kai(&sim).expect("simulates");
    let w: Vec<String> = out.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        w,
        [
            "Budget \"h200\": spec.cardType: Not found: \"H200\": no card type of this name in the scenario (its card types: none; spec.metering.cardTypes, or each ResourceFlavor without it); the budget is never charged"
        ]
    );
}
