//! Every field path the importer and the validator report is well formed
//! ([`gpuquota_model::diag::is_field_path`]), over a sample of broken manifests that reach
//! nested lists, maps with dotted keys, unknown fields and wrong types.

use gpuquota_model::diag::is_field_path;
use gpuquota_model::validate::{Options, diagnostics};
use gpuquota_model::{Diagnostic, Importer};

const BROKEN: &[&str] = &[
    // a quantity with a space, a lendingLimit without a cohort
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: research}\nspec:\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{name: h200, resources: [{name: nvidia.com/gpu, nominalQuota: \" 8\", lendingLimit: 2}]}]\n",
    // unknown fields at several depths, a wrong type in a list
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: b, labels: {a.b/c: d}}\nspec:\n  colour: blue\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{name: h200, resources: [{name: nvidia.com/gpu, nominalQuta: 8}]}]\n",
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: c}\nspec: {resourceGroups: 5}\n",
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: d}\nspec:\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu, nvidia.com/gpu]\n    flavors: [{name: x, resources: [{name: nvidia.com/gpu, nominalQuota: -1}]}, {name: x, resources: []}]\n",
    // a LocalQueue naming a missing ClusterQueue, a bad name
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: Bad_Name, namespace: team}\nspec: {clusterQueue: missing}\n",
    // a Workload with bad pod sets
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: team, annotations: {gpuquota.dev/runtime: soon}}\nspec:\n  queueName: lq\n  podSets: [{name: main, count: -2, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"x\"}}}]}}}]\n",
    // KAI queues and pods
    "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec: {parentQueue: nowhere, resources: {gpu: {quota: -5, overQuotaWeight: -1, limit: 2}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: n, labels: {kai.scheduler/queue: missing}}\nspec: {schedulerName: kai-scheduler, containers: [{name: c, resources: {limits: {nvidia.com/gpu: \"1.5\"}}}]}\n",
    // a Budget with bad fields
    "apiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {name: b}\nspec: {gpuHours: \"-1\", period: 0s, whenSpent: Never, anchor: yesterday}\n",
    // nodes and a ConfigMap
    "apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {nvidia.com/gpu.count: many}}\nstatus: {capacity: {nvidia.com/gpu: \"-1\"}}\n",
];

fn all(text: &str) -> Vec<Diagnostic> {
    let mut importer = Importer::new();
    importer.add_str("sample.yaml", text);
    match importer.finish() {
        Err(e) => e.0,
        Ok(imported) => {
            let mut out = imported.warnings.clone();
            out.extend(diagnostics(&imported.model, &Options::complete(true)).0);
            out
        }
    }
}

#[test]
fn every_reported_field_path_is_well_formed() {
    let mut seen = 0;
    for text in BROKEN {
        let found = all(text);
        assert!(!found.is_empty(), "no diagnostic for {text}");
        for d in found {
            assert!(is_field_path(&d.field), "{:?} in {d}", d.field);
            seen += usize::from(!d.field.is_empty());
        }
    }
    // a sample, not a handful: most diagnostics name a field
    assert!(seen >= 15, "{seen} field paths");
}
