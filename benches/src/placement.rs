//! Nodes for Kueue's baseline scenario: the pod-placement figure (every admitted pod placed
//! by the kube-scheduler model on 1,000 Nodes).

use gpuquota_sim::Simulation;

/// Gives `sim` (Kueue's baseline perf config: pods requesting 1, 5 or 20 CPUs of flavor
/// `rf`, which has no `nodeLabels`) `n` Nodes `node-00000`, … of 24 CPUs, 96 GiB and 110
/// pods each: every pod of the baseline fits one (the largest asks 20 CPUs), so the run's
/// decisions are the baseline's while every admitted pod is filtered and scored. `n = 0`
/// leaves `sim` alone.
///
/// # Panics
/// When `sim` is not a Kueue scenario or the nodes do not read (a bench input).
pub fn with_nodes(sim: &mut Simulation, n: usize) {
    if n == 0 {
        return;
    }
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-{i:05}}}\nstatus: {{allocatable: {{cpu: \"24\", memory: 96Gi, pods: \"110\"}}}}\n"
        ));
    }
    let nodes = gpuquota_model::import::import_str("nodes.yaml", &text)
        .expect("valid nodes")
        .model
        .nodes;
    let sc = sim.kueue_mut().expect("a Kueue scenario");
    sc.model.nodes.extend(nodes);
}
