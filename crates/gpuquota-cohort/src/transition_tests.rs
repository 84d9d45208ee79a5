use super::*;
use crate::cycle::Classical;
use gpuquota_model::kueue::StopPolicy;

fn wl(name: &str, cpu: u32) -> String {
    format!(
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: ns, creationTimestamp: \"2026-01-01T00:00:0{}Z\"}}\nspec:\n  queueName: lq\n  podSets: [{{name: main, count: {cpu}, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]}}}}}}]\n",
        name.len() % 10
    )
}

/// ClusterQueue `a` (4 cpu, cohort `pool`), LocalQueue `ns/lq` → `a`, and the workloads.
fn model(workloads: &[(&str, u32)]) -> Model {
    let mut yaml = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  cohortName: pool
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default, resources: [{name: cpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: ns}
spec: {clusterQueue: a}
"#
    .to_owned();
    for (n, cpu) in workloads {
        yaml.push_str(&wl(n, *cpu));
    }
    gpuquota_model::import_str("t.yaml", &yaml)
        .expect("valid yaml")
        .model
}

fn set_quota(m: &mut Model, cq: &str, cpu: &str) {
    m.cluster_queues
        .get_mut(cq)
        .expect("cq")
        .spec
        .resource_groups[0]
        .flavors[0]
        .resources[0]
        .nominal_quota = Some(cpu.parse().expect("quantity"));
}

/// A scheduler over `world` where every workload arrived and the cycles settled.
fn settled(world: &World) -> Scheduler<'_, Classical> {
    let mut s = Scheduler::new(std::sync::Arc::new(world.clone()));
    for id in world.workloads.ids() {
        s.withhold(id);
    }
    for id in world.workloads.ids() {
        s.arrive(id);
    }
    s.settle(100);
    s
}

fn admitted(s: &Scheduler<'_, Classical>) -> Vec<String> {
    s.world
        .workloads
        .iter_enumerated()
        .filter(|(id, _)| s.reservations[*id].is_some())
        .map(|(_, w)| w.key.clone())
        .collect()
}

/// cpu usage of a ClusterQueue, milli-cpu.
fn usage(s: &Scheduler<'_, Classical>, cq: &str) -> i64 {
    let w = &s.world;
    let c = w.cq_id(cq).expect("cq");
    let fr = w
        .fr(
            w.flavor_id("default").expect("flavor"),
            w.resource_id("cpu").expect("cpu"),
        )
        .expect("fr");
    w.tree.usage(&s.usage, w.cluster_queues[c].node, fr).0
}

const THREE: &[(&str, u32)] = &[("w1", 2), ("w22", 2), ("w333", 2)];

fn all_live(_: &str) -> bool {
    true
}

#[test]
fn a_quota_decrease_keeps_the_admitted_workloads() {
    let m0 = model(THREE);
    let w0 = World::build(&m0).expect("world");
    let s0 = settled(&w0);
    // 4 cpu: w1 and w22 (2 each) fit, w333 waits.
    assert_eq!(admitted(&s0), ["ns/w1", "ns/w22"]);
    let carried = s0.carry();
    let mut m1 = m0.clone();
    set_quota(&mut m1, "a", "2");
    let w1 = World::build(&m1).expect("world");
    let mut s1 = Scheduler::new(std::sync::Arc::new(w1.clone()));
    let a = s1.adopt(&carried, &Stops::of(&m1), &all_live);
    assert!(a.evicted.is_empty() && a.orphaned.is_empty() && a.missing.is_empty());
    assert_eq!(a.kept.len(), 2);
    s1.settle(100);
    // Both stay: 4,000 m used under a quota of 2,000 m; w333 still waits.
    assert_eq!(admitted(&s1), ["ns/w1", "ns/w22"]);
    assert_eq!(usage(&s1, "a"), 4000);
    assert!(s1.is_queued(w1.workload_id("ns/w333").expect("id")));
}

#[test]
fn hold_stops_admission_and_hold_and_drain_evicts_with_upstreams_reason() {
    let m0 = model(THREE);
    let w0 = World::build(&m0).expect("world");
    let carried = settled(&w0).carry();
    // Hold with the quota raised to 6: w333 would fit, but the queue admits nothing.
    let mut hold = m0.clone();
    set_quota(&mut hold, "a", "6");
    hold.cluster_queues
        .get_mut("a")
        .expect("a")
        .spec
        .stop_policy = Some(StopPolicy::Hold);
    let wh = World::build(&hold).expect("world");
    let mut sh = Scheduler::new(std::sync::Arc::new(wh.clone()));
    let a = sh.adopt(&carried, &Stops::of(&hold), &all_live);
    assert!(a.evicted.is_empty());
    sh.settle(100);
    assert_eq!(admitted(&sh), ["ns/w1", "ns/w22"]);
    assert_eq!(usage(&sh, "a"), 4000);
    // The same raise without a stop admits w333: 6,000 m.
    let mut open = m0.clone();
    set_quota(&mut open, "a", "6");
    let wo = World::build(&open).expect("world");
    let mut so = Scheduler::new(std::sync::Arc::new(wo.clone()));
    so.adopt(&carried, &Stops::of(&open), &all_live);
    so.settle(100);
    assert_eq!(admitted(&so), ["ns/w1", "ns/w22", "ns/w333"]);
    assert_eq!(usage(&so, "a"), 6000);
    // HoldAndDrain: both admitted workloads are evicted, nothing runs.
    let mut drain = m0.clone();
    drain
        .cluster_queues
        .get_mut("a")
        .expect("a")
        .spec
        .stop_policy = Some(StopPolicy::HoldAndDrain);
    let wd = World::build(&drain).expect("world");
    let mut sd = Scheduler::new(std::sync::Arc::new(wd.clone()));
    let a = sd.adopt(&carried, &Stops::of(&drain), &all_live);
    let id = |k: &str| wd.workload_id(k).expect("id");
    assert_eq!(
        a.evicted,
        [
            Eviction {
                wl: id("ns/w1"),
                reason: "ClusterQueueStopped",
                message: "The ClusterQueue is stopped"
            },
            Eviction {
                wl: id("ns/w22"),
                reason: "ClusterQueueStopped",
                message: "The ClusterQueue is stopped"
            },
        ]
    );
    sd.settle(100);
    assert!(admitted(&sd).is_empty());
    assert_eq!(usage(&sd, "a"), 0);
}

#[test]
fn a_local_queue_hold_and_drain_evicts_as_local_queue_stopped() {
    let m0 = model(&[("w1", 2)]);
    let w0 = World::build(&m0).expect("world");
    let carried = settled(&w0).carry();
    let mut m1 = m0.clone();
    m1.local_queues
        .get_mut("ns/lq")
        .expect("lq")
        .spec
        .stop_policy = Some(StopPolicy::HoldAndDrain);
    let w1 = World::build(&m1).expect("world");
    let mut s1 = Scheduler::new(std::sync::Arc::new(w1.clone()));
    let a = s1.adopt(&carried, &Stops::of(&m1), &all_live);
    assert_eq!(
        a.evicted,
        [Eviction {
            wl: w1.workload_id("ns/w1").expect("id"),
            reason: "LocalQueueStopped",
            message: "The LocalQueue is stopped"
        }]
    );
    assert_eq!(usage(&s1, "a"), 0);
}

#[test]
fn a_deleted_cluster_queue_stays_terminating_until_its_last_workload_finishes() {
    let m0 = model(THREE);
    let w0 = World::build(&m0).expect("world");
    let carried = settled(&w0).carry();
    let mut m1 = m0.clone();
    m1.cluster_queues.remove("a");
    let names = terminating(&m0, &m1, &carried);
    assert_eq!(names, ["a"]);
    keep_terminating(&mut m1, &m0, &names);
    let mut w1 = World::build(&m1).expect("world");
    mark_terminating(&mut w1, &names);
    let mut s1 = Scheduler::new(std::sync::Arc::new(w1.clone()));
    let a = s1.adopt(&carried, &Stops::of(&m1), &all_live);
    assert_eq!(a.kept.len(), 2);
    // A finished workload frees 2 cpu, but a terminating queue admits nothing.
    assert!(s1.finish(w1.workload_id("ns/w1").expect("id")));
    s1.settle(100);
    assert_eq!(admitted(&s1), ["ns/w22"]);
    let mut fin = Finalizers::default();
    fin.add(&names, &carried);
    assert_eq!(fin.release("ns/w1"), None);
    assert_eq!(fin.names(), ["a"]);
    assert_eq!(fin.release("ns/w22"), Some("a".to_owned()));
    assert!(fin.names().is_empty());
    // Without admitted workloads a deleted ClusterQueue leaves at once.
    assert!(terminating(&m0, &m1, &Carried::default()).is_empty());
}

#[test]
fn a_new_cluster_queue_joins_the_cohort_and_lends_at_once() {
    // One 6-cpu workload on a 4-cpu queue alone in its cohort: nothing to borrow.
    let m0 = model(&[("big", 6)]);
    let w0 = World::build(&m0).expect("world");
    let s0 = settled(&w0);
    assert!(admitted(&s0).is_empty());
    let carried = s0.carry();
    // ClusterQueue b (4 cpu) joins cohort pool: a borrows 2 of its 4.
    let mut m1 = m0.clone();
    let mut b = m1.cluster_queues["a"].clone();
    b.metadata.name = "b".into();
    m1.cluster_queues.insert("b".into(), b);
    let w1 = World::build(&m1).expect("world");
    let mut s1 = Scheduler::new(std::sync::Arc::new(w1.clone()));
    s1.adopt(&carried, &Stops::of(&m1), &all_live);
    s1.settle(100);
    assert_eq!(admitted(&s1), ["ns/big"]);
    assert_eq!(usage(&s1, "a"), 6000);
}

#[test]
fn workloads_not_live_are_withheld_after_the_change() {
    let m0 = model(THREE);
    let w0 = World::build(&m0).expect("world");
    let carried = settled(&w0).carry();
    let mut m1 = m0.clone();
    set_quota(&mut m1, "a", "6");
    let w1 = World::build(&m1).expect("world");
    let mut s1 = Scheduler::new(std::sync::Arc::new(w1.clone()));
    // w333 has not arrived in the driver's run: it must not be admitted.
    s1.adopt(&carried, &Stops::of(&m1), &|k| k != "ns/w333");
    s1.settle(100);
    assert_eq!(admitted(&s1), ["ns/w1", "ns/w22"]);
    assert!(!s1.is_queued(w1.workload_id("ns/w333").expect("id")));
}

#[test]
fn a_lower_lending_limit_keeps_the_borrower_admitted_and_blocks_new_borrowing() {
    // a lends up to 4 of its 4 cpu; b (0 cpu, same cohort) runs a 3-cpu workload on them.
    let mut m0 = model(&[]);
    {
        let a = m0.cluster_queues.get_mut("a").expect("a");
        a.spec.resource_groups[0].flavors[0].resources[0].lending_limit =
            Some("4".parse().expect("quantity"));
    }
    let mut b = m0.cluster_queues["a"].clone();
    b.metadata.name = "b".into();
    b.spec.resource_groups[0].flavors[0].resources[0].nominal_quota =
        Some("0".parse().expect("quantity"));
    b.spec.resource_groups[0].flavors[0].resources[0].lending_limit = None;
    m0.cluster_queues.insert("b".into(), b);
    let mut lq = m0.local_queues["ns/lq"].clone();
    lq.metadata.name = "lqb".into();
    lq.spec.cluster_queue = "b".into();
    m0.local_queues.insert("ns/lqb".into(), lq);
    let mut extra = gpuquota_model::import_str("w.yaml", &(wl("x3", 3) + &wl("y1", 1)))
        .expect("valid yaml")
        .model;
    for w in extra.workloads.values_mut() {
        w.spec.queue_name = Some("lqb".into());
    }
    let mut first = m0.clone();
    first.workloads.extend(extra.workloads.clone());
    // Only x3 has arrived before the change.
    let w0 = World::build(&first).expect("world");
    let mut s0 = Scheduler::new(std::sync::Arc::new(w0.clone()));
    for id in w0.workloads.ids() {
        s0.withhold(id);
    }
    s0.arrive(w0.workload_id("ns/x3").expect("id"));
    s0.settle(100);
    assert_eq!(admitted(&s0), ["ns/x3"]);
    let carried = s0.carry();
    // lendingLimit 4 → 1: x3 keeps its 3 borrowed cpu; y1 (1 cpu) arrives and cannot borrow
    // (b's borrowing, 3,000 m, is already above what a lends, 1,000 m).
    let mut m1 = first.clone();
    m1.cluster_queues
        .get_mut("a")
        .expect("a")
        .spec
        .resource_groups[0]
        .flavors[0]
        .resources[0]
        .lending_limit = Some("1".parse().expect("quantity"));
    let w1 = World::build(&m1).expect("world");
    let mut s1 = Scheduler::new(std::sync::Arc::new(w1.clone()));
    let a = s1.adopt(&carried, &Stops::of(&m1), &|_| true);
    assert!(a.evicted.is_empty());
    s1.settle(100);
    assert_eq!(admitted(&s1), ["ns/x3"]);
    assert_eq!(usage(&s1, "b"), 3000);
    assert!(s1.is_queued(w1.workload_id("ns/y1").expect("id")));
    // With the old limit of 4 the same instant admits y1 (3 + 1 = 4 borrowed).
    let w2 = World::build(&first).expect("world");
    let mut s2 = Scheduler::new(std::sync::Arc::new(w2.clone()));
    s2.adopt(&carried, &Stops::of(&first), &|_| true);
    s2.settle(100);
    assert_eq!(admitted(&s2), ["ns/x3", "ns/y1"]);
    assert_eq!(usage(&s2, "b"), 4000);
}
