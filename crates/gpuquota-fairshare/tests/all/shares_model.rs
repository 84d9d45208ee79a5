//! `kueue_shares` on manifests: what `status.fairSharing.weightedShare` reports.

use gpuquota_fairshare::shares::kueue_shares;
use gpuquota_model::import_str;

#[test]
fn invalid_weight_is_reported_with_the_object() {
    let yaml = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bad}
spec:
  cohortName: c
  fairSharing: {weight: "-1"}
"#;
    let model = import_str("m.yaml", yaml).unwrap().model;
    let e = kueue_shares(&model).unwrap_err().to_string();
    assert!(e.contains("ClusterQueue \"bad\""), "{e}");
    assert!(e.contains("fairSharing.weight"), "{e}");
}
