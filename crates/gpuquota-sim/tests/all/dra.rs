//! Dynamic Resource Allocation in the simulator: a namespace ResourceQuota's claim key caps
//! the ResourceClaims the pods make from templates (kubernetes/kubernetes:
//! pkg/quota/v1/evaluator/core/resource_claims.go), so a workload waits until claims are
//! released.

use serde_json::Value;

const H: i64 = 3_600_000;

fn wl<'a>(j: &'a Value, key: &str) -> &'a Value {
    j["workloads"]
        .as_array()
        .and_then(|a| a.iter().find(|w| w["workload"] == key))
        .unwrap_or_else(|| panic!("{key} in the report"))
}

#[test]
fn claim_key_holds_a_workload_until_claims_are_released() {
    let template = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: two-gpus, namespace: team}\nspec: {spec: {devices: {requests: [{name: gpus, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}]}}}\n---\n";
    let quota = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: dra, namespace: team}\nspec: {hard: {gpu.nvidia.com.deviceclass.resource.k8s.io/devices: \"4\"}}\n---\n";
    let workload = |name: &str, minute: i64, pods: i32| {
        format!(
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: {name}\n  namespace: team\n  creationTimestamp: \"2026-04-01T00:{minute:02}:00Z\"\n  annotations: {{gpuquota.dev/runtime: 2h}}\nspec:\n  podSets: [{{name: main, count: {pods}, template: {{spec: {{resourceClaims: [{{name: gpus, resourceClaimTemplateName: two-gpus}}], containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]}}}}}}]\n"
        )
    };
    // first: 2 pods × 2 devices = the whole cap of 4; second: 2 more devices, refused until
    // the first's claims go at 2 h (retries every 10 min from its creation at minute 0)
    let c = format!(
        "{template}{quota}{}{}",
        workload("first", 0, 2),
        workload("second", 0, 1)
    );
    let sim = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {name: d}\nspec:\n  engine: resourcequota\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-01T06:00:00Z\"\n  resourceQuota: {retryInterval: 10m}\n";
    let sim =
        gpuquota_sim::fuzzing::scenario("d.yaml", sim, "d", &|_| Ok(("c.yaml".into(), c.clone())))
            .expect("valid scenario");
    let j = gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_json();
    assert_eq!(wl(&j, "team/first")["runs"][0]["startMs"], 0);
    assert_eq!(wl(&j, "team/second")["runs"][0]["startMs"], 2 * H);
}
