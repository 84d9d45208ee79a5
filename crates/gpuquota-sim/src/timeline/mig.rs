//! What a node advertises once a MIG maintenance window re-lays it: the named mig-parted
//! config applied to each of its GPUs, as the MIG manager applies it, and the resources the
//! device plugin then advertises.

use std::collections::BTreeMap;

use gpuquota_mig::catalogue::{Catalogue, GpuModel};
use gpuquota_mig::layout::{MigStrategy, NodeGpu, advertised_resources};
use gpuquota_mig::parted::{GpuSetting, MigPartedConfig, setting};
use gpuquota_model::Model;

use super::MigLayoutRequest;

/// The label GPU Feature Discovery sets to a node's GPU count.
pub const GPU_COUNT_LABEL: &str = "nvidia.com/gpu.count";
/// The label naming the device plugin's MIG strategy (`none`, `single`, `mixed`).
pub const MIG_STRATEGY_LABEL: &str = "nvidia.com/mig.strategy";
/// The label naming a node's GPU product.
pub const GPU_PRODUCT_LABEL: &str = "nvidia.com/gpu.product";

/// The node's allocatable (resource name → amount) after the window of `request` closes:
/// its allocatable now, with `nvidia.com/gpu` and every `nvidia.com/mig-*` resource replaced
/// by what config `request.config` gives its GPUs under its MIG strategy.
///
/// - The GPU model is the catalogue's model of the `nvidia.com/gpu.product` label.
/// - The GPU count is the `nvidia.com/gpu.count` label, or else counted from the
///   allocatable: the whole GPUs (`nvidia.com/gpu`) plus the MIG instances' compute slices
///   over the card's, rounded up (the seed's `rtx-b`: 6 + ⌈8 × 1 / 4⌉ = 8).
/// - Each GPU `i` (0-based) gets what the config's entries that select it give it, the last
///   one winning (`gpuquota_mig::parted::setting`); a GPU no entry selects is counted as a
///   whole GPU (MIG disabled), a deliberate simplification: mig-parted leaves it as it is, and
///   which GPUs carried which instances before is not in the cluster files.
/// - The strategy is the `nvidia.com/mig.strategy` label (`single`, `none`), else `mixed`.
///
/// # Errors
/// A message when the node or its product label is missing, the product is not in the
/// catalogue, no ConfigMap holds a mig-parted config defining `request.config`, or the
/// config does not fit the GPUs.
///
/// # Complexity
/// O(GPUs × config entries × layouts of the model) plus reading the ConfigMaps.
pub fn mig_allocatable(
    model: &Model,
    request: &MigLayoutRequest,
) -> Result<BTreeMap<String, i64>, String> {
    let node = model
        .nodes
        .get(&request.node)
        .ok_or_else(|| format!("no Node {:?}", request.node))?;
    let product = node
        .metadata
        .labels
        .get(GPU_PRODUCT_LABEL)
        .ok_or_else(|| format!("Node {:?} has no {GPU_PRODUCT_LABEL} label", request.node))?;
    let gpu = Catalogue::builtin()
        .resolve(product)
        .map_err(|e| format!("Node {:?}: {e}", request.node))?;
    let config = config_defining(model, &request.config).ok_or_else(|| {
        format!(
            "no mig-parted config of the cluster files' ConfigMaps defines {:?}",
            request.config
        )
    })?;
    let mut allocatable: BTreeMap<String, i64> = node
        .status
        .allocatable
        .iter()
        .map(|(r, q)| (r.as_str().to_owned(), q.to_amount(r).0.max(0)))
        .collect();
    let count = gpu_count(node.metadata.labels.get(GPU_COUNT_LABEL), &allocatable, gpu);
    let mut settings = Vec::with_capacity(count as usize);
    for i in 0..count {
        let s = setting(&config, &request.config, gpu, i)
            .map_err(|e| format!("mig-parted config {:?}: {e}", request.config))?;
        settings.push(s);
    }
    let gpus: Vec<NodeGpu<'_>> = settings
        .iter()
        .map(|s| NodeGpu {
            model: gpu,
            layout: match s {
                GpuSetting::Layout(l) => Some(l),
                GpuSetting::Disabled | GpuSetting::Untouched => None,
            },
        })
        .collect();
    let strategy = match node
        .metadata
        .labels
        .get(MIG_STRATEGY_LABEL)
        .map(String::as_str)
    {
        Some("single") => MigStrategy::Single,
        Some("none") => MigStrategy::None,
        _ => MigStrategy::Mixed,
    };
    let advertised = advertised_resources(strategy, &gpus)
        .map_err(|e| format!("Node {:?}: {e}", request.node))?;
    allocatable.retain(|r, _| r != "nvidia.com/gpu" && !r.starts_with("nvidia.com/mig-"));
    for (r, n) in advertised {
        allocatable.insert(r, i64::from(n));
    }
    Ok(allocatable)
}

/// The node's GPUs: the count label, else whole GPUs plus the MIG instances' compute slices
/// over the card's, rounded up.
fn gpu_count(label: Option<&String>, allocatable: &BTreeMap<String, i64>, gpu: &GpuModel) -> u32 {
    if let Some(n) = label.and_then(|l| l.trim().parse::<u32>().ok()) {
        return n;
    }
    let whole = allocatable.get("nvidia.com/gpu").copied().unwrap_or(0);
    let mut slices = 0i64;
    for (r, &n) in allocatable {
        if let Some(p) = gpu.profiles().iter().find(|p| p.resource_name() == r) {
            slices = slices.saturating_add(n.saturating_mul(i64::from(p.compute_slices())));
        }
    }
    let per_card = i64::from(gpu.compute_slices()).max(1);
    let mig_cards = (slices + per_card - 1) / per_card;
    u32::try_from(whole.saturating_add(mig_cards).max(0)).unwrap_or(u32::MAX)
}

/// The first mig-parted config (ConfigMaps by key, data by key) that defines `name`.
fn config_defining(model: &Model, name: &str) -> Option<MigPartedConfig> {
    for cm in model.config_maps.values() {
        for text in cm.data.values().filter(|t| t.contains("mig-configs")) {
            if let Ok(c) = serde_saphyr::from_str::<MigPartedConfig>(text)
                && c.mig_configs.contains_key(name)
            {
                return Some(c);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLUSTER: &str = r#"
apiVersion: v1
kind: Node
metadata:
  name: rtx-b
  labels:
    nvidia.com/gpu.product: NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition
    nvidia.com/mig.strategy: mixed
status:
  allocatable: {nvidia.com/gpu: "6", cpu: "128", nvidia.com/mig-1g.24gb: "8"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: mig-parted-config, namespace: gpu-operator}
data:
  config.yaml: |
    version: v1
    mig-configs:
      all-disabled:
      - devices: all
        mig-enabled: false
      notebooks-16:
      - devices: all
        mig-enabled: false
      - devices: [0, 1, 2, 3]
        mig-enabled: true
        mig-devices: {"1g.24gb": 4}
      halves:
      - devices: [0]
        mig-enabled: true
        mig-devices: {"2g.48gb": 2}
      too-many:
      - devices: all
        mig-enabled: true
        mig-devices: {"1g.24gb": 5}
"#;

    fn model() -> Model {
        gpuquota_model::import::import_str("c.yaml", CLUSTER)
            .expect("valid")
            .model
    }

    fn request(config: &str) -> MigLayoutRequest {
        MigLayoutRequest {
            node: "rtx-b".into(),
            config: config.into(),
        }
    }

    /// rtx-b has 6 whole cards and 8 1g.24gb instances (two cards of 4 slices): 8 GPUs.
    /// Four cards of four 1g.24gb each give 16 instances and leave 4 whole cards; every card
    /// whole gives 8; one card as two 2g.48gb (the 7 others untouched, counted whole) gives 2
    /// + 7. CPU stays.
    #[test]
    fn a_config_re_lays_the_nodes_gpus() {
        let m = model();
        let got = mig_allocatable(&m, &request("notebooks-16")).expect("fits");
        assert_eq!(got.get("nvidia.com/gpu"), Some(&4));
        assert_eq!(got.get("nvidia.com/mig-1g.24gb"), Some(&16));
        assert_eq!(got.get("cpu"), Some(&128_000));
        let got = mig_allocatable(&m, &request("all-disabled")).expect("fits");
        assert_eq!(got.get("nvidia.com/gpu"), Some(&8));
        assert_eq!(got.get("nvidia.com/mig-1g.24gb"), None);
        let got = mig_allocatable(&m, &request("halves")).expect("fits");
        assert_eq!(got.get("nvidia.com/gpu"), Some(&7));
        assert_eq!(got.get("nvidia.com/mig-2g.48gb"), Some(&2));
    }

    /// A config that does not fit the card, an unknown config or node: a message.
    #[test]
    fn what_does_not_fit_is_refused() {
        let m = model();
        let e = mig_allocatable(&m, &request("too-many")).expect_err("5 x 1g.24gb");
        assert!(e.contains("does not fit"), "{e}");
        let e = mig_allocatable(&m, &request("nope")).expect_err("undefined");
        assert!(e.contains("defines \"nope\""), "{e}");
        let mut r = request("halves");
        r.node = "rtx-z".into();
        assert_eq!(mig_allocatable(&m, &r), Err("no Node \"rtx-z\"".to_owned()));
    }
}
