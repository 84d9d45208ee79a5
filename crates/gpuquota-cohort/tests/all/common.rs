//! Manifest builders for the scenario tests.
#![allow(dead_code, clippy::type_complexity, clippy::too_many_arguments)]

use gpuquota_cohort::{QuotasReport, ScheduleReport, World};

pub(crate) fn rf(name: &str) -> String {
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: {name}}}\n---\n"
    )
}

pub(crate) fn rf_spec(name: &str, spec: &str) -> String {
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: {name}}}\nspec: {spec}\n---\n"
    )
}

/// `quotas`: (flavor, [(resource, nominal, borrowingLimit, lendingLimit)]) for one group
/// covering the listed resources.
pub(crate) type Q<'a> = (
    &'a str,
    Vec<(&'a str, &'a str, Option<&'a str>, Option<&'a str>)>,
);

fn groups_yaml(groups: &[Vec<Q<'_>>]) -> String {
    let mut s = String::from("  resourceGroups:\n");
    for g in groups {
        let covered: Vec<&str> = g[0].1.iter().map(|r| r.0).collect();
        s.push_str(&format!(
            "  - coveredResources: [{}]\n    flavors:\n",
            covered.join(", ")
        ));
        for (f, res) in g {
            s.push_str(&format!("    - name: {f}\n      resources:\n"));
            for (r, n, bl, ll) in res {
                s.push_str(&format!(
                    "      - name: {r}\n        nominalQuota: \"{n}\"\n"
                ));
                if let Some(b) = bl {
                    s.push_str(&format!("        borrowingLimit: \"{b}\"\n"));
                }
                if let Some(l) = ll {
                    s.push_str(&format!("        lendingLimit: \"{l}\"\n"));
                }
            }
        }
    }
    s
}

pub(crate) fn cq(name: &str, cohort: Option<&str>, extra: &str, groups: &[Vec<Q<'_>>]) -> String {
    let mut s = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n  namespaceSelector: {{}}\n"
    );
    if let Some(c) = cohort {
        s.push_str(&format!("  cohortName: {c}\n"));
    }
    for line in extra.lines().filter(|l| !l.trim().is_empty()) {
        s.push_str(&format!("  {line}\n"));
    }
    s.push_str(&groups_yaml(groups));
    s.push_str("---\n");
    // one LocalQueue per ClusterQueue, same name, namespace ns
    s.push_str(&format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: {name}, namespace: ns}}\nspec: {{clusterQueue: {name}}}\n---\n"
    ));
    s
}

pub(crate) fn cohort(name: &str, parent: Option<&str>, groups: &[Vec<Q<'_>>]) -> String {
    let mut s = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: {name}}}\nspec:\n"
    );
    if let Some(p) = parent {
        s.push_str(&format!("  parentName: {p}\n"));
    }
    if groups.is_empty() && parent.is_none() {
        s.push_str("  {}\n");
    } else if !groups.is_empty() {
        s.push_str(&groups_yaml(groups));
    }
    s.push_str("---\n");
    s
}

/// A pending workload in namespace `ns` queued to LocalQueue `lq` with one PodSet `main`.
pub(crate) fn wl(
    name: &str,
    lq: &str,
    priority: i32,
    created: u32,
    count: i32,
    requests: &[(&str, &str)],
) -> String {
    wl_full(
        name,
        lq,
        priority,
        created,
        &[("main", count, None, requests)],
        "",
    )
}

/// A workload with several PodSets `(name, count, minCount, requests)` and extra pod spec YAML
/// (indented under `spec:` of the template).
pub(crate) fn wl_full(
    name: &str,
    lq: &str,
    priority: i32,
    created: u32,
    pod_sets: &[(&str, i32, Option<i32>, &[(&str, &str)])],
    pod_extra: &str,
) -> String {
    let mut s = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: {name}\n  namespace: ns\n  uid: uid-{name}\n  creationTimestamp: \"2026-01-01T00:{:02}:{:02}Z\"\nspec:\n  queueName: {lq}\n  priority: {priority}\n  podSets:\n",
        created / 60,
        created % 60
    );
    for (ps, count, min, reqs) in pod_sets {
        s.push_str(&format!("  - name: {ps}\n    count: {count}\n"));
        if let Some(m) = min {
            s.push_str(&format!("    minCount: {m}\n"));
        }
        s.push_str("    template:\n      spec:\n");
        for line in pod_extra.lines().filter(|l| !l.trim().is_empty()) {
            s.push_str(&format!("        {line}\n"));
        }
        s.push_str(
            "        containers:\n        - name: c\n          resources:\n            requests:\n",
        );
        for (r, q) in reqs.iter() {
            s.push_str(&format!("              {r}: \"{q}\"\n"));
        }
    }
    s.push_str("---\n");
    s
}

/// An admitted workload: one PodSet `main` of `count` pods, each requesting `requests`,
/// admitted to `cq` on `flavor` at minute `admitted_at`.
pub(crate) fn admitted(
    name: &str,
    lq: &str,
    cq: &str,
    priority: i32,
    created: u32,
    count: i32,
    flavor: &str,
    requests: &[(&str, &str, &str)],
) -> String {
    let mut s = wl(
        name,
        lq,
        priority,
        created,
        count,
        &requests
            .iter()
            .map(|(r, q, _)| (*r, *q))
            .collect::<Vec<_>>(),
    );
    s.truncate(s.len() - 4);
    s.push_str(&format!(
        "status:\n  conditions:\n  - type: QuotaReserved\n    status: \"True\"\n    lastTransitionTime: \"2026-01-01T01:{:02}:{:02}Z\"\n  admission:\n    clusterQueue: {cq}\n    podSetAssignments:\n    - name: main\n      count: {count}\n      flavors:\n",
        created / 60,
        created % 60
    ));
    for (r, _, _) in requests {
        s.push_str(&format!("        {r}: {flavor}\n"));
    }
    s.push_str("      resourceUsage:\n");
    for (r, _, total) in requests {
        s.push_str(&format!("        {r}: \"{total}\"\n"));
    }
    s.push_str("---\n");
    s
}

/// The world of `yaml`, built as upstream's scheduler tests create their objects (no API
/// server in between: the fixtures keep upstream's test names such as `q_borrowing` and
/// the configurations its webhooks would refuse), so the engine's own checks only (`testkit::build_unvalidated`).
pub(crate) fn world(yaml: &str) -> World {
    let imported = gpuquota_model::import_str("test.yaml", yaml).expect("valid YAML");
    gpuquota_cohort::testkit::build_unvalidated(&imported.model).unwrap_or_else(|e| panic!("{e}"))
}

pub(crate) fn run(yaml: &str) -> ScheduleReport {
    schedule(&world(yaml), None)
}

pub(crate) fn run_cycles(yaml: &str, n: u32) -> ScheduleReport {
    schedule(&world(yaml), Some(n))
}

/// Runs the classical engine on a world the test built (at most `cycles` cycles).
pub(crate) fn schedule(world: &World, cycles: Option<u32>) -> ScheduleReport {
    let options = gpuquota_cohort::Options::default().with_cycles(cycles);
    gpuquota_cohort::run(&gpuquota_cohort::testkit::input(
        world.clone(),
        None,
        &options,
    ))
}

/// Runs fair sharing with `settings` on a world the test built from `model`.
pub(crate) fn fair_schedule(
    world: &World,
    model: &gpuquota_model::Model,
    settings: gpuquota_fairshare::config::FairSharingSettings,
    cycles: Option<u32>,
) -> Result<ScheduleReport, gpuquota_fairshare::FairShareError> {
    let policy = gpuquota_cohort::fair::FairSharing::new(world, model, settings)?;
    let options = gpuquota_cohort::Options::default().with_cycles(cycles);
    Ok(gpuquota_cohort::run(&gpuquota_cohort::testkit::input(
        world.clone(),
        Some(policy),
        &options,
    )))
}

/// The quotas of a world the test built.
pub(crate) fn quotas_of(world: &World) -> QuotasReport {
    gpuquota_cohort::quotas(&gpuquota_cohort::testkit::input(
        world.clone(),
        None,
        &gpuquota_cohort::Options::default(),
    ))
}

pub(crate) fn quotas(yaml: &str) -> QuotasReport {
    quotas_of(&world(yaml))
}

pub(crate) fn admitted_names(r: &ScheduleReport) -> Vec<String> {
    let mut v: Vec<String> = r.admitted.iter().map(|a| a.workload.clone()).collect();
    v.sort();
    v
}

pub(crate) fn preempted_names(r: &ScheduleReport) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = r
        .preempted
        .iter()
        .map(|p| (p.workload.clone(), p.reason.clone()))
        .collect();
    v.sort();
    v
}

pub(crate) fn pending_of<'a>(
    r: &'a ScheduleReport,
    key: &str,
) -> &'a gpuquota_cohort::report::PendingOut {
    r.pending
        .iter()
        .find(|p| p.workload == key)
        .expect("pending workload")
}

pub(crate) fn gpu<'a>(f: &'a str, n: &'a str) -> Q<'a> {
    (f, vec![("nvidia.com/gpu", n, None, None)])
}

pub(crate) fn cpu<'a>(f: &'a str, n: &'a str, bl: Option<&'a str>, ll: Option<&'a str>) -> Q<'a> {
    (f, vec![("cpu", n, bl, ll)])
}

/// The object names of one [`hierarchical_loop`].
pub(crate) struct LoopNames<'a> {
    /// The root cohort.
    pub(crate) root: &'a str,
    /// The cohort under the root.
    pub(crate) sub: &'a str,
    /// The ClusterQueue in the root (lends 1 GPU).
    pub(crate) lender: &'a str,
    /// The preemptor's ClusterQueue in `sub` (2 GPUs).
    pub(crate) preemptor_queue: &'a str,
    /// The victim's ClusterQueue in `sub` (no quota).
    pub(crate) victim_queue: &'a str,
    /// The victim workload (priority 0, 2 GPUs).
    pub(crate) victim: &'a str,
    /// The preemptor workload (priority 2, 3 GPUs).
    pub(crate) preemptor: &'a str,
}

/// Classical preemption in a hierarchy that loops (without the ResourceFlavor `f`): the
/// victim borrows inside `sub` (borrowing level 1), its preemptor needs the root's quota
/// too (level 2). Upstream's classical iterator orders by borrowing level before priority
/// (kubernetes-sigs/kueue: pkg/scheduler/scheduler.go, `makeClassicalIterator`), so the
/// victim is readmitted ahead of its preemptor after every eviction and preempted again
/// (`borrowWithinCohort`): from cycle 2 the run repeats with period 2.
pub(crate) fn hierarchical_loop(n: &LoopNames<'_>) -> String {
    let bwc = "preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority, borrowWithinCohort: {policy: LowerPriority}}";
    let mut y = cohort(n.root, None, &[]);
    y += &cohort(n.sub, Some(n.root), &[]);
    y += &cq(n.lender, Some(n.root), bwc, &[vec![gpu("f", "1")]]);
    y += &cq(
        n.preemptor_queue,
        Some(n.sub),
        "preemption: {reclaimWithinCohort: LowerPriority, borrowWithinCohort: {policy: LowerPriority}}",
        &[vec![gpu("f", "2")]],
    );
    y += &cq(n.victim_queue, Some(n.sub), bwc, &[vec![gpu("f", "0")]]);
    y += &wl(
        n.victim,
        n.victim_queue,
        0,
        0,
        1,
        &[("nvidia.com/gpu", "2")],
    );
    y += &wl(
        n.preemptor,
        n.preemptor_queue,
        2,
        1,
        1,
        &[("nvidia.com/gpu", "3")],
    );
    y
}

/// [`hierarchical_loop`] with its ResourceFlavor: cohorts `root` > `sub`, ClusterQueues
/// `q0` (root), `q1` and `q2` (sub), victim `w0` in `q2`, preemptor `w1` in `q1`.
pub(crate) fn classical_loop_yaml() -> String {
    rf("f")
        + &hierarchical_loop(&LoopNames {
            root: "root",
            sub: "sub",
            lender: "q0",
            preemptor_queue: "q1",
            victim_queue: "q2",
            victim: "w0",
            preemptor: "w1",
        })
}
