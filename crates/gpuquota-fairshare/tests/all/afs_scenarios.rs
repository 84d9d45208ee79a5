//! Admission fair sharing: configuration and ordering inside a ClusterQueue (kubernetes-sigs/kueue:
//! `pkg/util/admissionfairsharing`).

use gpuquota_fairshare::afs::{
    AfsEntry, LocalQueueUsage, entry_penalty, order_within_cluster_queue,
};
use gpuquota_fairshare::config::settings_from_configuration;
use gpuquota_model::import_str;
use gpuquota_model::{ResourceName, Timestamp};

#[test]
fn config_and_ordering() {
    let yaml = r#"
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
fairSharing:
  preemptionStrategies: [LessThanInitialShare]
admissionFairSharing:
  usageHalfLifeTime: 10m
  usageSamplingInterval: 10m
  resourceWeights: {cpu: "2", memory: "0"}
"#;
    let model = import_str("c.yaml", yaml).unwrap().model;
    let s = settings_from_configuration(model.configuration.as_ref(), false).unwrap();
    assert!(s.enabled);
    assert_eq!(s.strategies.len(), 1);
    let afs = s.admission.unwrap();
    // α(10m, 10m) = 0.5: admitting 4 cpu adds a 2-cpu penalty.
    let req = [(ResourceName::new("cpu"), 4.0)].into_iter().collect();
    let pen = entry_penalty(&req, &afs);
    assert_eq!(pen[&ResourceName::new("cpu")], 2.0);
    // LQ "busy" consumed 3 cpu (weighted ×2 = 6) + the 2-cpu penalty (×2 = 4) → 10;
    // LQ "idle" consumed only memory, weighted 0 → 0: idle's workloads go first.
    let mut busy = LocalQueueUsage::default();
    busy.consumed.insert(ResourceName::new("cpu"), 3.0);
    busy.add_penalty(&pen);
    let mut idle = LocalQueueUsage::default();
    idle.consumed.insert(ResourceName::new("memory"), 1e9);
    let ub = busy.weighted_usage(&afs.resource_weights, 1.0);
    let ui = idle.weighted_usage(&afs.resource_weights, 1.0);
    assert_eq!((ub, ui), (10.0, 0.0));
    let t = Timestamp::from_unix_seconds;
    let order = order_within_cluster_queue(&[
        AfsEntry {
            local_queue_usage: ub,
            priority: 100,
            queue_order: t(0),
            uid: "a".into(),
        },
        AfsEntry {
            local_queue_usage: ui,
            priority: 0,
            queue_order: t(9),
            uid: "b".into(),
        },
    ]);
    assert_eq!(order, vec![1, 0]);
}

#[test]
fn invalid_afs_config_reports_every_field() {
    let yaml = r#"
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
fairSharing:
  preemptionStrategies: [Nope]
admissionFairSharing:
  usageHalfLifeTime: soon
  usageSamplingInterval: "0s"
  resourceWeights: {cpu: "-1"}
"#;
    let model = import_str("c.yaml", yaml).unwrap().model;
    let e = settings_from_configuration(model.configuration.as_ref(), false).unwrap_err();
    assert_eq!(e.0.len(), 4, "{e}");
    let text = e.to_string();
    assert!(text.contains("fairSharing.preemptionStrategies[0]"));
    assert!(text.contains("usageHalfLifeTime"));
    assert!(text.contains("usageSamplingInterval"));
    assert!(text.contains("resourceWeights[cpu]"));
}
