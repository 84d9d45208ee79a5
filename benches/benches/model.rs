//! The model's edge: quantity parsing, import + validation of a large manifest, and import of
//! a 55,000-Workload cluster snapshot as YAML and JSON.
use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use gpuquota_benches::SplitMix64;
use gpuquota_model::{Quantity, ResourceName, import_str, validate};

fn parse_quantities(c: &mut Criterion) {
    let inputs = ["500m", "4Gi", "1.5", "2e3", "1k", "100M", "8", "36Gi"];
    let cpu = ResourceName::new("cpu");
    c.bench_function("quantity/parse_and_convert_8", |b| {
        b.iter(|| {
            for s in inputs {
                if let Ok(q) = Quantity::parse(black_box(s)) {
                    black_box(q.to_amount(&cpu));
                }
            }
        })
    });
}

/// Kueue's large-scale performance layout: `cohorts` cohorts of `per_cohort` ClusterQueues,
/// each with two flavors covering cpu, memory and nvidia.com/gpu, seeded quotas and limits,
/// and one LocalQueue per ClusterQueue.
fn manifest(cohorts: usize, per_cohort: usize, seed: u64) -> String {
    let mut rng = SplitMix64::new(seed);
    let mut out = String::new();
    for f in ["on-demand", "spot"] {
        let _ = write!(
            out,
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: {f}\nspec:\n  nodeLabels:\n    instance-type: {f}\n"
        );
    }
    for c in 0..cohorts {
        let _ = write!(
            out,
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata:\n  name: cohort-{c}\n"
        );
        for q in 0..per_cohort {
            let name = format!("cq-{c}-{q}");
            let _ = write!(
                out,
                "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: {name}\nspec:\n  cohortName: cohort-{c}\n  namespaceSelector: {{}}\n  preemption:\n    reclaimWithinCohort: Any\n    withinClusterQueue: LowerPriority\n  resourceGroups:\n  - coveredResources: [cpu, memory, nvidia.com/gpu]\n    flavors:\n"
            );
            for f in ["on-demand", "spot"] {
                let cpu = 1 + rng.below(64);
                let mem = 1 + rng.below(512);
                let gpu = rng.below(9);
                let _ = write!(
                    out,
                    "    - name: {f}\n      resources:\n      - name: cpu\n        nominalQuota: \"{cpu}\"\n        borrowingLimit: \"{}\"\n      - name: memory\n        nominalQuota: {mem}Gi\n      - name: nvidia.com/gpu\n        nominalQuota: {gpu}\n        lendingLimit: {}\n",
                    rng.below(100),
                    rng.below(gpu + 1),
                );
            }
            let _ = write!(
                out,
                "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: {name}\n  namespace: ns-{c}\nspec:\n  clusterQueue: {name}\n"
            );
        }
    }
    out
}

fn import_and_validate(c: &mut Criterion) {
    let text = manifest(10, 100, 42);
    // Sanity: the generated platform is valid.
    let model = match import_str("large.yaml", &text) {
        Ok(imported) => imported.model,
        Err(e) => panic!("the generated manifest does not import: {e}"),
    };
    assert_eq!(model.cluster_queues.len(), 1000);
    let problems = validate::problems(&model);
    assert!(problems.is_empty(), "{}", problems[0]);
    let mut group = c.benchmark_group("model");
    group.sample_size(10);
    group.bench_function("import_validate_1000_cq", |b| {
        b.iter(|| {
            if let Ok(imported) = import_str("large.yaml", black_box(&text)) {
                black_box(validate::problems(&imported.model));
            }
        })
    });
    group.bench_function("validate_1000_cq", |b| {
        b.iter(|| black_box(validate::problems(black_box(&model))))
    });
    group.finish();
}

/// The import target: a 1,000-ClusterQueue, 55,000-Workload snapshot (about 20 MB of
/// YAML), imported as JSON and as YAML in three styles: block, flow (each document one flow
/// mapping) and mixed (block top-level fields with flow values).
fn import_snapshot(c: &mut Criterion) {
    // `cargo bench` passes `--bench`; in criterion's test mode (`cargo test --benches`, CI's
    // debug build) a 1/50 snapshot keeps the run short.
    let (cqs, wls) = if std::env::args().any(|a| a == "--bench") {
        (1000, 55_000)
    } else {
        (20, 1_100)
    };
    let mut group = c.benchmark_group("model");
    group.sample_size(10);
    for (name, format) in [
        ("import_snapshot_55k_yaml", gpuquota_benches::Format::Yaml),
        ("import_snapshot_55k_json", gpuquota_benches::Format::Json),
        (
            "import_snapshot_55k_yaml_flow",
            gpuquota_benches::Format::YamlFlow,
        ),
        (
            "import_snapshot_55k_yaml_mixed",
            gpuquota_benches::Format::YamlMixed,
        ),
    ] {
        let text = gpuquota_benches::kueue_snapshot(cqs, wls, 1, format);
        match import_str("snapshot", &text) {
            Ok(imported) => {
                assert_eq!(imported.model.workloads.len(), wls);
                assert!(imported.warnings.is_empty(), "{}", imported.warnings[0]);
            }
            Err(e) => panic!("the generated snapshot does not import: {e}"),
        }
        group.bench_function(name, |b| {
            b.iter(|| black_box(import_str("snapshot", black_box(&text)).is_ok()))
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    parse_quantities,
    import_and_validate,
    import_snapshot
);
criterion_main!(benches);
