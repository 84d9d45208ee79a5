//! A manifest with many mistakes: every one is reported, with kind, name and field path.

use gpuquota_model::import_str;
use gpuquota_model::validate::{ErrorType, problems, validate};

const MISTAKES: &str = include_str!("../data/mistakes.yaml");

#[test]
fn every_mistake_is_reported_with_its_field_path() {
    use ErrorType::*;
    let model = import_str("mistakes.yaml", MISTAKES).unwrap().model;
    let found: Vec<(String, String, String, ErrorType)> = problems(&model)
        .into_iter()
        .map(|p| (p.kind.to_string(), p.name, p.field, p.error_type))
        .collect();
    let rg = "spec.resourceGroups";
    let expected: Vec<(&str, &str, String, ErrorType)> = vec![
        (
            "ResourceFlavor",
            "GPU_Flavor",
            "metadata.name".into(),
            Invalid,
        ),
        (
            "ResourceFlavor",
            "GPU_Flavor",
            "spec.nodeTaints[0].effect".into(),
            NotSupported,
        ),
        (
            "ClusterQueue",
            "batch",
            "spec.queueingStrategy".into(),
            NotSupported,
        ),
        ("ClusterQueue", "batch", format!("{rg}[0]"), Invalid),
        (
            "ClusterQueue",
            "batch",
            format!("{rg}[0].flavors[0].resources[0].nominalQuota"),
            Invalid,
        ),
        (
            "ClusterQueue",
            "batch",
            format!("{rg}[0].flavors[0].resources[0].borrowingLimit"),
            Invalid,
        ),
        (
            "ClusterQueue",
            "batch",
            format!("{rg}[1].coveredResources[0]"),
            Duplicate,
        ),
        (
            "ClusterQueue",
            "batch",
            format!("{rg}[1].flavors[0].name"),
            Duplicate,
        ),
        (
            "ClusterQueue",
            "batch",
            format!("{rg}[1].flavors[0].resources[0].lendingLimit"),
            Invalid,
        ),
        (
            "ClusterQueue",
            "batch",
            format!("{rg}[1].flavors[0].resources[0].lendingLimit"),
            Invalid,
        ),
        ("ClusterQueue", "batch", "spec.preemption".into(), Invalid),
        (
            "ClusterQueue",
            "batch",
            format!("{rg}[0].flavors[0].name"),
            NotFound,
        ),
        (
            "ClusterQueue",
            "batch",
            format!("{rg}[1].flavors[0].name"),
            NotFound,
        ),
        ("Cohort", "a", "spec.parentName".into(), Invalid),
        ("Cohort", "b", "spec.parentName".into(), Invalid),
        (
            "LocalQueue",
            "analytics/lq",
            "spec.clusterQueue".into(),
            NotFound,
        ),
        (
            "Workload",
            "analytics/w",
            "spec.podSets[0].minCount".into(),
            Invalid,
        ),
        (
            "Workload",
            "analytics/w",
            "spec.podSets[0].template.spec.containers[0].resources.requests[pods]".into(),
            Forbidden,
        ),
        ("Workload", "analytics/w", "spec.queueName".into(), NotFound),
        ("Workload", "analytics/w", "spec.priority".into(), Required),
        (
            "Workload",
            "analytics/w",
            "spec.priorityClassRef.name".into(),
            NotFound,
        ),
        // `limits.nvidia.com/gpu` is accepted (a warning, see `resource_quota_gpu_limits_warn`).
        (
            "ResourceQuota",
            "analytics/cap",
            "spec.hard[nvidia.com/gpu]".into(),
            Invalid,
        ),
        (
            "ResourceQuota",
            "analytics/cap",
            "spec.hard[requests.cpu]".into(),
            Invalid,
        ),
        ("Queue", "orphan", "spec.resources".into(), Required),
        ("Queue", "orphan", "spec.parentQueue".into(), NotFound),
        ("ClusterQueue", "batch", "metadata.name".into(), Duplicate),
    ];
    let expected: Vec<(String, String, String, ErrorType)> = expected
        .into_iter()
        .map(|(k, n, f, t)| (k.to_owned(), n.to_owned(), f, t))
        .collect();
    assert_eq!(found, expected);
    let err = validate(&model).unwrap_err();
    assert_eq!(err.len(), 26);
    assert!(err.to_string().starts_with("26 validation error(s)\n"));
}

#[test]
fn messages_follow_kubernetes_field_error_style() {
    let model = import_str("mistakes.yaml", MISTAKES).unwrap().model;
    let messages: Vec<String> = problems(&model).iter().map(ToString::to_string).collect();
    for expected in [
        "ClusterQueue \"batch\": spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: \"-2\": must be greater than or equal to 0",
        "ClusterQueue \"batch\": spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: Invalid value: \"4\": must be nil when cohort is empty",
        "ClusterQueue \"batch\": spec.resourceGroups[1].flavors[0].resources[0].lendingLimit: Invalid value: \"3\": must be less than or equal to the nominalQuota",
        "ClusterQueue \"batch\": spec.resourceGroups[0]: Invalid value: \"object\": flavors must have the same number of resources as the coveredResources",
        "ClusterQueue \"batch\": spec.queueingStrategy: Unsupported value: \"FIFO\": supported values: \"StrictFIFO\", \"BestEffortFIFO\"",
        "ClusterQueue \"batch\": spec.resourceGroups[1].coveredResources[0]: Duplicate value: \"nvidia.com/gpu\"",
        "ClusterQueue \"batch\": spec.preemption: Invalid value: \"object\": reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never",
        "Cohort \"a\": spec.parentName: Invalid value: \"b\": cohort cycle: a -> b -> a",
        "Workload \"analytics/w\": spec.podSets[0].minCount: Invalid value: 3: minCount should be positive and less or equal to count",
        "Workload \"analytics/w\": spec.podSets[0].template.spec.containers[0].resources.requests[pods]: Forbidden: the key is reserved for internal kueue use",
        "Queue \"orphan\": spec.resources: Required value: resources must be specified",
        "LocalQueue \"analytics/lq\": spec.clusterQueue: Not found: \"missing\": no ClusterQueue of this name",
    ] {
        assert!(
            messages.iter().any(|m| m == expected),
            "missing {expected:?} in {messages:#?}"
        );
    }
}

fn problems_of(text: &str) -> Vec<String> {
    let model = import_str("t.yaml", text).unwrap().model;
    problems(&model)
        .iter()
        .map(|p| format!("{}: {}", p.field, p.error_type))
        .collect()
}

const CQ_HEAD: &str = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n";

#[test]
fn cluster_queue_rules_one_by_one() {
    // Rule 6: resources in a different order than coveredResources.
    assert_eq!(
        problems_of(&format!(
            "{CQ_HEAD}  resourceGroups:\n  - coveredResources: [cpu, memory]\n    flavors:\n    - name: f\n      resources:\n      - {{name: memory, nominalQuota: 1}}\n      - {{name: cpu, nominalQuota: 1}}\n"
        )),
        [
            "spec.resourceGroups[0].flavors[0].resources[0].name: Invalid value",
            "spec.resourceGroups[0].flavors[0].resources[1].name: Invalid value"
        ]
    );
    // Rule 9: resource names must be qualified names.
    assert_eq!(
        problems_of(&format!(
            "{CQ_HEAD}  resourceGroups:\n  - coveredResources: ['@cpu']\n    flavors:\n    - name: f\n      resources:\n      - {{name: '@cpu', nominalQuota: 1}}\n"
        )),
        ["spec.resourceGroups[0].coveredResources[0]: Invalid value"]
    );
    // Rule 11: a missing nominalQuota is required.
    assert_eq!(
        problems_of(&format!(
            "{CQ_HEAD}  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: f\n      resources:\n      - {{name: cpu}}\n"
        )),
        ["spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Required value"]
    );
    // Rules 2-3: empty groups.
    assert_eq!(
        problems_of(&format!(
            "{CQ_HEAD}  resourceGroups:\n  - coveredResources: []\n    flavors: []\n"
        )),
        [
            "spec.resourceGroups[0].coveredResources: Required value",
            "spec.resourceGroups[0].flavors: Required value"
        ]
    );
    // Rule 20: preference needs both TryNextFlavor.
    assert_eq!(
        problems_of(&format!(
            "{CQ_HEAD}  flavorFungibility:\n    whenCanPreempt: MayStopSearch\n    preference: BorrowingOverPreemption\n"
        )),
        ["spec.flavorFungibility.preference: Invalid value"]
    );
    // Rule 21: stopPolicy enum.
    assert_eq!(
        problems_of(&format!("{CQ_HEAD}  stopPolicy: Pause\n")),
        ["spec.stopPolicy: Unsupported value"]
    );
    // Rule 22: fair-sharing weight: 1n rejected, 2n and 0 accepted.
    assert_eq!(
        problems_of(&format!("{CQ_HEAD}  fairSharing: {{weight: 1n}}\n")),
        ["spec.fairSharing.weight: Invalid value"]
    );
    assert_eq!(
        problems_of(&format!("{CQ_HEAD}  fairSharing: {{weight: 2n}}\n")),
        Vec::<String>::new()
    );
    assert_eq!(
        problems_of(&format!("{CQ_HEAD}  fairSharing: {{weight: 0}}\n")),
        Vec::<String>::new()
    );
    // Rule 23: cohort name pattern.
    assert_eq!(
        problems_of(&format!("{CQ_HEAD}  cohortName: '@prod'\n")),
        ["spec.cohortName: Invalid value"]
    );
    // Rule 24: an `In` selector needs values.
    assert_eq!(
        problems_of(&format!(
            "{CQ_HEAD}  namespaceSelector:\n    matchExpressions:\n    - {{key: team, operator: In}}\n"
        )),
        ["spec.namespaceSelector.matchExpressions[0].values: Required value"]
    );
    // Rule 25: onFlavors must be flavors of the queue.
    assert_eq!(
        problems_of(&format!(
            "{CQ_HEAD}  admissionChecksStrategy:\n    admissionChecks:\n    - {{name: check, onFlavors: [other]}}\n"
        )),
        ["spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]: Unsupported value"]
    );
    // Rule 18: preemption enums.
    assert_eq!(
        problems_of(&format!(
            "{CQ_HEAD}  preemption: {{withinClusterQueue: Always}}\n"
        )),
        ["spec.preemption.withinClusterQueue: Unsupported value"]
    );
}

#[test]
fn cohort_limits_need_a_parent() {
    let text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: top}\nspec:\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: f\n      resources:\n      - {name: cpu, nominalQuota: 3, borrowingLimit: 0, lendingLimit: 5}\n";
    let model = import_str("t.yaml", text).unwrap().model;
    let messages: Vec<String> = problems(&model).iter().map(ToString::to_string).collect();
    assert_eq!(
        messages,
        [
            "Cohort \"top\": spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: Invalid value: \"0\": must be nil when parent is empty",
            "Cohort \"top\": spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid value: \"5\": must be nil when parent is empty",
        ]
    );
}

#[test]
fn workload_rules() {
    let text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: ns}\nspec:\n  maximumExecutionTimeSeconds: 0\n  podSets:\n  - {name: a, count: -1, minCount: 1, template: {spec: {containers: []}}}\n  - {name: a, count: 2, minCount: 1, template: {spec: {containers: [{name: c, resources: {requests: {cpu: '-1'}}}]}}}\n";
    assert_eq!(
        problems_of(text),
        [
            "spec.podSets[0].count: Invalid value",
            "spec.podSets[0].minCount: Invalid value",
            "spec.podSets[1].name: Duplicate value",
            "spec.podSets[1].template.spec.containers[0].resources.requests[cpu]: Invalid value",
            "spec.podSets: Invalid value",
            "spec.maximumExecutionTimeSeconds: Invalid value",
        ]
    );
    let empty =
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w}\nspec: {}\n";
    assert_eq!(problems_of(empty), ["spec.podSets: Required value"]);
}

#[test]
fn implicit_cohorts_and_shared_names_are_not_problems() {
    let text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: x}\nspec: {cohortName: nobody-declared-me}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: x}\nspec: {parentName: also-implicit}\n";
    assert_eq!(problems_of(text), Vec::<String>::new());
}

#[test]
fn resource_quota_gpu_limits_warn() {
    use gpuquota_model::Severity;
    use gpuquota_model::diag::codes;
    let model = import_str("mistakes.yaml", MISTAKES).unwrap().model;
    let d = gpuquota_model::validate::diagnostics(&model, &Default::default());
    let w: Vec<String> = d
        .iter()
        .filter(|d| d.code == codes::IGNORED_BY_ENGINES)
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        w,
        [
            "ResourceQuota \"analytics/cap\": spec.hard[limits.nvidia.com/gpu]: accepted by the API \
          server, but quota enforcement ignores limits of extended resources; use \
          requests.nvidia.com/gpu to cap them"
        ]
    );
    assert!(
        d.iter()
            .filter(|d| d.code == codes::IGNORED_BY_ENGINES)
            .all(|d| d.severity == Severity::Warning)
    );
}

#[test]
fn missing_references_are_errors_only_when_complete() {
    use gpuquota_model::Severity;
    use gpuquota_model::diag::codes;
    use gpuquota_model::validate::{Options, diagnostics};
    let text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: ml}\nspec: {clusterQueue: batch}\n";
    let model = import_str("t.yaml", text).unwrap().model;
    let partial = diagnostics(&model, &Options::complete(false));
    assert_eq!(partial.len(), 1);
    assert_eq!(partial.0[0].severity, Severity::Warning);
    assert_eq!(partial.0[0].code, codes::NOT_FOUND);
    assert_eq!(
        partial.0[0].to_string(),
        "LocalQueue \"ml/lq\": spec.clusterQueue: Not found: \"batch\": no ClusterQueue of this name"
    );
    let complete = diagnostics(&model, &Options::complete(true));
    assert_eq!(complete.0[0].severity, Severity::Error);
    // Same text as the validation error.
    let problems = gpuquota_model::validate::problems(&model);
    assert_eq!(problems[0].to_string(), complete.0[0].to_string());
}

#[test]
fn engine_limits_are_validation_errors() {
    let text = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec: {resources: {gpu: {quota: 1e30, limit: -1, overQuotaWeight: 1}}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {allocatable: {nvidia.com/gpu: \"1e30\"}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"1e-40\"}}}]}\n";
    let model = import_str("t.yaml", text).unwrap().model;
    let p: Vec<String> = gpuquota_model::validate::problems(&model)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        p,
        [
            "Pod \"ml/p\": spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: \"1e-9\": must be an integer",
            "Node \"node-a\": status.allocatable[nvidia.com/gpu]: Invalid value: \"1e30\": must be at most 1E (10^18 units), the largest amount gpuquota's engines hold exactly",
            "Queue \"q\": spec.resources.gpu.quota: Invalid value: \"1000000000000E\": must be at most 1E (10^18 units), the largest amount gpuquota's engines hold exactly",
        ]
    );
}

/// A Budget's references: `spec.queue` must name a ClusterQueue or a KAI Queue, each of
/// `spec.namespaces` a Namespace or the namespace of an object of the input (here the
/// LocalQueue's `team`, the Job's `jobs` and the Namespace `empty`). What is missing is
/// `Not found`: a warning in `diagnostics` without `complete`, an error with it.
#[test]
fn a_budget_naming_what_does_not_exist_is_not_found() {
    use gpuquota_model::diag::Severity;
    use gpuquota_model::validate::{Options, diagnostics};
    let text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: team}\nspec: {clusterQueue: batch}\n---\n\
apiVersion: v1\nkind: Namespace\nmetadata: {name: empty}\n---\n\
apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: jobs}\nspec: {template: {spec: {containers: [{name: c}]}}}\n---\n\
apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: kai-q}\nspec: {resources: {gpu: {quota: 1}}}\n---\n\
apiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {name: a}\nspec: {queue: kai-q, gpuHours: 1, period: 1h}\n---\n\
apiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {name: b}\nspec: {queue: batch, gpuHours: 1, period: 1h}\n---\n\
apiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {name: c}\nspec: {namespaces: [empty, ghost, jobs, team], gpuHours: 1, period: 1h}\n";
    let model = import_str("b.yaml", text).unwrap().model;
    let budget_problems: Vec<(String, String, ErrorType, Option<String>)> = problems(&model)
        .into_iter()
        .filter(|p| p.kind.to_string() == "Budget")
        .map(|p| (p.name, p.field, p.error_type, p.value))
        .collect();
    assert_eq!(
        budget_problems,
        [
            (
                "b".to_owned(),
                "spec.queue".to_owned(),
                ErrorType::NotFound,
                Some("\"batch\"".to_owned())
            ),
            (
                "c".to_owned(),
                "spec.namespaces[1]".to_owned(),
                ErrorType::NotFound,
                Some("\"ghost\"".to_owned())
            ),
        ]
    );
    let severities = |complete: bool| -> Vec<Severity> {
        diagnostics(&model, &Options::complete(complete))
            .iter()
            .filter(|d| d.kind == "Budget")
            .map(|d| d.severity)
            .collect()
    };
    assert_eq!(severities(false), [Severity::Warning, Severity::Warning]);
    assert_eq!(severities(true), [Severity::Error, Severity::Error]);
}
