//! The fuzz targets' checks, run for a short budget under `cargo test` (feature `fuzzing`).

use arbitrary::Unstructured;
use gpuquota_model::fuzzing::{check_import, check_quantity};

/// Milliseconds per check; `GPUQUOTA_FUZZ_MS` raises it for a longer local run.
fn budget_ms() -> u64 {
    gpuquota_testkit::budget_ms(400)
}

#[test]
fn quantity_check_on_arbitrary_strings() {
    arbtest::arbtest(|u| {
        let s: String = u.arbitrary()?;
        check_quantity(&s);
        Ok(())
    })
    .budget_ms(budget_ms());
}

#[test]
fn import_check_on_arbitrary_bytes() {
    arbtest::arbtest(|u| {
        let bytes: &[u8] = u.arbitrary()?;
        check_import(bytes);
        Ok(())
    })
    .budget_ms(budget_ms());
}

const PIECES: &[&str] = &[
    "apiVersion: kueue.x-k8s.io/v1beta2\n",
    "apiVersion: kueue.x-k8s.io/v1beta1\n",
    "apiVersion: scheduling.run.ai/v2\n",
    "apiVersion: v1\n",
    "kind: ClusterQueue\n",
    "kind: Cohort\n",
    "kind: ResourceFlavor\n",
    "kind: Workload\n",
    "kind: Queue\n",
    "kind: ResourceQuota\n",
    "kind: List\n",
    "metadata: {name: a}\n",
    "metadata: {name: b, namespace: ns}\n",
    "spec:\n",
    "  cohortName: b\n",
    "  parentName: a\n",
    "  parentQueue: a\n",
    "  resourceGroups:\n",
    "  - coveredResources: [cpu, nvidia.com/gpu]\n",
    "    flavors:\n",
    "    - name: a\n",
    "      resources:\n",
    "      - {name: cpu, nominalQuota: 1e3}\n",
    "      - {name: nvidia.com/gpu, nominalQuota: -1, lendingLimit: 99999999999999999999}\n",
    "  podSets: [{count: -3, minCount: 9}]\n",
    "  hard: {nvidia.com/gpu: 1, requests.cpu: 0.5m}\n",
    "  resources: {gpu: {quota: -1, limit: 0.5}}\n",
    "---\n",
    "items: [1, {kind: Cohort}]\n",
    "{\"kind\": \"Cohort\"}\n",
];

#[test]
fn import_check_on_assembled_manifests() {
    arbtest::arbtest(|u: &mut Unstructured<'_>| {
        let n = u.int_in_range(0..=40)?;
        let mut text = String::new();
        for _ in 0..n {
            text.push_str(u.choose(PIECES)?);
        }
        check_import(text.as_bytes());
        Ok(())
    })
    .budget_ms(budget_ms());
}
