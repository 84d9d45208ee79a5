//! What the command-line tests share: running the built binary and writing fixtures.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `gpuquota` binary with `args`.
pub(crate) fn gpuquota(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(args)
        .output()
        .expect("the gpuquota binary runs")
}

/// Output bytes as text.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Writes `files` into a fresh directory named after the suite and the test; returns their
/// paths.
pub(crate) fn write_in(suite: &str, test: &str, files: &[(&str, &str)]) -> Vec<String> {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("gpuquota-{suite}-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    files
        .iter()
        .map(|(name, body)| {
            let p = dir.join(name);
            std::fs::write(&p, body).expect("write fixture");
            p.display().to_string()
        })
        .collect()
}

/// One flavor `h200`, one ClusterQueue `research` with 64 cpu, 512Gi and 8 GPUs, LocalQueue
/// `q` in `ns`.
#[allow(dead_code)]
pub(crate) const ONE_QUEUE: &str = r#"apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h200}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: research}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: h200
      resources:
      - {name: cpu, nominalQuota: 64}
      - {name: memory, nominalQuota: 512Gi}
      - {name: nvidia.com/gpu, nominalQuota: 8}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: research}
"#;
