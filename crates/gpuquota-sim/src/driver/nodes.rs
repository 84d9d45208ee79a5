//! What the Kueue and ResourceQuota drivers do with the timeline's node events and MIG
//! maintenance windows, over the devices' [`Capacity`]; each driver ends the runs this
//! module names and starts the waiting workloads that fit afterwards.
//!
//! At a timeline event's instant, in this order (the timeline's own order):
//!
//! - **down**: every workload holding a device on the node loses its pods now. Its run ends
//!   `Preempted` with reason [`NODE_FAILURES`] and `by` `Node/<name>` (the run so far is
//!   lost work, as a preemption's is); its quota is released and it is queued again at once
//!   (Kueue requeues a workload evicted for node failures without backoff; under
//!   `resourcequota` its controller recreates the pods, which the quota checks again). The
//!   node's devices leave the capacity until `up`.
//! - **drain**: the node takes no new pods; its running pods go on. With `drainDeadline`, a
//!   kernel event at `at + drainDeadline` evicts the workloads still holding a device on it
//!   then, reason [`EVICTION_BY_EVICTION_API`], `by` `Node/<name>`, and they are queued again
//!   as above; an `up` before the deadline cancels it.
//! - **up**: the node is neither failed nor cordoned; its devices are back.
//! - **migLayout**: the window opens: the node takes no new pods. When no device of the node
//!   is held (at once when none is), the window closes: the node's allocatable becomes what
//!   the mig-parted config gives its GPUs ([`crate::timeline::mig_allocatable`]), and it
//!   takes pods again. The window
//!   records when it opened and closed and the workloads it waited for (those holding a
//!   device on the node when it opened).
//!
//! Each event's effect records the devices that take new pods per resource before and
//! after it ([`Capacity::schedulable_totals`]), the nodes it changed, and the workloads it
//! evicted.

use std::collections::BTreeMap;

use super::capacity::{Capacity, EVICTION_BY_EVICTION_API, NODE_FAILURES};
use crate::engine::{MigWindowEffect, TimelineEffect};
use crate::kernel::{Event, Kind, Queue};
use crate::timeline;
use gpuquota_model::Model;

/// The `by` of a run a node event ended.
pub(crate) fn by_node(node: &str) -> String {
    format!("Node/{node}")
}

/// A MIG maintenance window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Window {
    /// The timeline event that opened it.
    pub(crate) event: usize,
    /// The node.
    pub(crate) node: String,
    /// The mig-parted config.
    pub(crate) config: String,
    /// When it opened, ms since start.
    pub(crate) opened_ms: i64,
    /// When it closed (`None`: still open at the end).
    pub(crate) closed_ms: Option<i64>,
    /// The workloads (indexes) it waited for, in index order.
    pub(crate) waited: Vec<u32>,
    /// The node's allocatable once it closes.
    after: BTreeMap<String, i64>,
}

/// What one timeline event's node changes did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NodeEffect {
    /// The timeline event.
    pub(crate) event: usize,
    /// Its instant, ms.
    pub(crate) at_ms: i64,
    /// Its node changes as applied.
    pub(crate) down: Vec<String>,
    pub(crate) drained: Vec<String>,
    pub(crate) deadline_ms: Option<i64>,
    pub(crate) up: Vec<String>,
    /// The devices that take new pods per resource before the event (sorted by resource).
    pub(crate) before: Vec<(String, i64)>,
    /// As `before`, after it.
    pub(crate) after: Vec<(String, i64)>,
    /// The workloads evicted because of it (index, reason), at the event or at its drain
    /// deadline, in the order they were evicted.
    pub(crate) evicted: Vec<(u32, &'static str)>,
}

/// The drivers' node state: pending drain deadlines, MIG windows, each event's effect.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeEvents {
    /// Per node index, the generation of its latest drain (deadlines of older ones are
    /// stale) and the timeline event it belongs to.
    drains: BTreeMap<u32, (u32, usize)>,
    /// The windows, in the order they opened.
    pub(crate) windows: Vec<Window>,
    /// The effects of the events with node changes, in the order they applied.
    pub(crate) effects: Vec<NodeEffect>,
    generation: u32,
}

/// A run the driver must end now: the workload, the reason, the node (`by`).
pub(crate) type Evict = (u32, &'static str, String);

impl NodeEvents {
    /// Whether the event has node changes or a MIG layout.
    fn touches(changes: &timeline::Changes) -> bool {
        !changes.nodes_down.is_empty()
            || !changes.nodes_drained.is_empty()
            || !changes.nodes_up.is_empty()
            || changes.mig_layout.is_some()
    }

    /// Timeline event `event` at `t`: the capacity follows its node changes; returns the
    /// runs to end now (pods lost on a failed node). The caller releases them, then calls
    /// [`NodeEvents::after_release`].
    ///
    /// # Errors
    /// The message of a MIG layout the node's GPUs cannot take (the timeline's reader
    /// checked it; a config that resolves there resolves here).
    ///
    /// # Complexity
    /// O(node changes × (holdings + sets × nodes)).
    pub(crate) fn apply(
        &mut self,
        cap: &mut Capacity,
        t: i64,
        event: usize,
        changes: &timeline::Changes,
        model: &Model,
        q: &mut Queue,
    ) -> Result<Vec<Evict>, String> {
        if !Self::touches(changes) {
            return Ok(Vec::new());
        }
        let before = totals(cap);
        let mut lost = Vec::new();
        for n in &changes.nodes_down {
            for wl in cap.down(n) {
                lost.push((wl, NODE_FAILURES, by_node(n)));
            }
            if let Some(i) = cap.node_index(n) {
                self.drains.remove(&i);
            }
        }
        for n in &changes.nodes_drained {
            cap.drain(n);
            if let (Some(i), Some(d)) = (cap.node_index(n), changes.drain_deadline_ms) {
                self.generation += 1;
                self.drains.insert(i, (self.generation, event));
                q.push(Event::new(
                    t.saturating_add(d),
                    Kind::Deadline {
                        index: i,
                        generation: self.generation,
                    },
                ));
            }
        }
        for n in &changes.nodes_up {
            cap.up(n);
            if let Some(i) = cap.node_index(n) {
                self.drains.remove(&i);
            }
        }
        if let Some(m) = &changes.mig_layout {
            let after = timeline::mig_allocatable(model, m)?;
            let waited = cap.holders(&m.node);
            cap.open_window(&m.node);
            self.windows.push(Window {
                event,
                node: m.node.clone(),
                config: m.config.clone(),
                opened_ms: t,
                closed_ms: None,
                waited,
                after,
            });
        }
        self.effects.push(NodeEffect {
            event,
            at_ms: t,
            down: changes.nodes_down.clone(),
            drained: changes.nodes_drained.clone(),
            deadline_ms: changes.drain_deadline_ms,
            up: changes.nodes_up.clone(),
            before,
            after: totals(cap),
            evicted: lost.iter().map(|(w, r, _)| (*w, *r)).collect(),
        });
        Ok(lost)
    }

    /// The drain deadline `(index, generation)` at `t`: the runs still on the node, to end
    /// now (none when the drain is stale: the node came back or was drained again).
    ///
    /// # Complexity
    /// O(holdings).
    pub(crate) fn deadline(&mut self, cap: &Capacity, index: u32, generation: u32) -> Vec<Evict> {
        let Some(&(g, event)) = self.drains.get(&index) else {
            return Vec::new();
        };
        let Some(name) = cap.node_name(index) else {
            return Vec::new();
        };
        if g != generation || !cap.is_cordoned(name) {
            return Vec::new();
        }
        self.drains.remove(&index);
        let out: Vec<Evict> = cap
            .holders(name)
            .into_iter()
            .map(|w| (w, EVICTION_BY_EVICTION_API, by_node(name)))
            .collect();
        if let Some(e) = self.effects.iter_mut().rev().find(|e| e.event == event) {
            e.evicted.extend(out.iter().map(|(w, r, _)| (*w, *r)));
        }
        out
    }

    /// After devices were released at `t`: the open windows whose node is idle close now
    /// (the node takes its new layout). Returns whether one closed (devices may be free).
    ///
    /// # Complexity
    /// O(1) without an open window; else O(windows × resources) plus a refresh per close.
    pub(crate) fn after_release(&mut self, cap: &mut Capacity, t: i64) -> bool {
        let mut closed = false;
        for w in self.windows.iter_mut().filter(|w| w.closed_ms.is_none()) {
            if cap.in_window(&w.node) && cap.idle(&w.node) {
                cap.close_window(&w.node, &w.after);
                w.closed_ms = Some(t);
                closed = true;
            }
        }
        closed
    }
}

impl NodeEvents {
    /// Writes the node effects into the run's timeline effects (`effects`, one per applied
    /// event; an event missing there is added, and the list is then sorted by instant and
    /// index), naming workloads with `key`.
    ///
    /// # Complexity
    /// O(effects × (events + evictions)) plus the sort.
    pub(crate) fn fill(&self, effects: &mut Vec<TimelineEffect>, key: impl Fn(u32) -> String) {
        if self.effects.is_empty() {
            return;
        }
        for n in &self.effects {
            let at = match effects.iter().position(|e| e.index == n.event) {
                Some(i) => i,
                None => {
                    effects.push(TimelineEffect {
                        index: n.event,
                        at_ms: n.at_ms,
                        ..TimelineEffect::default()
                    });
                    effects.len() - 1
                }
            };
            let e = &mut effects[at];
            e.nodes_down.clone_from(&n.down);
            e.nodes_drained.clone_from(&n.drained);
            e.drain_deadline_ms = n.deadline_ms;
            e.nodes_up.clone_from(&n.up);
            e.devices_before.clone_from(&n.before);
            e.devices_after.clone_from(&n.after);
            e.evicted
                .extend(n.evicted.iter().map(|&(w, r)| (key(w), r.to_owned())));
            if let Some(w) = self.windows.iter().find(|w| w.event == n.event) {
                e.mig_window = Some(MigWindowEffect {
                    node: w.node.clone(),
                    config: w.config.clone(),
                    opened_ms: w.opened_ms,
                    closed_ms: w.closed_ms,
                    waited: w.waited.iter().map(|&x| key(x)).collect(),
                });
            }
        }
        effects.sort_by_key(|e| (e.at_ms, e.index));
    }
}

/// The capacity's schedulable totals with resource names as strings.
fn totals(cap: &Capacity) -> Vec<(String, i64)> {
    cap.schedulable_totals()
        .into_iter()
        .map(|(r, a)| (r.as_str().to_owned(), a))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLUSTER: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: a}
status: {allocatable: {nvidia.com/gpu: "2"}}
---
apiVersion: v1
kind: Node
metadata: {name: b}
status: {allocatable: {nvidia.com/gpu: "2"}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: x}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: x, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w, namespace: ns}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "2"}}}]}}
"#;

    fn changes(drained: &[&str], deadline: Option<i64>, up: &[&str]) -> timeline::Changes {
        timeline::Changes {
            nodes_drained: drained.iter().map(|s| (*s).to_owned()).collect(),
            drain_deadline_ms: deadline,
            nodes_up: up.iter().map(|s| (*s).to_owned()).collect(),
            ..timeline::Changes::default()
        }
    }

    /// Workload 0 (one pod of two devices) holds node a's two (a and b tie; a by name). Node a drained at 10 with a 5 ms deadline,
    /// then again at 12 with 10 ms: the first deadline (15) is stale, the second (22)
    /// evicts workload 0; b drained at 10 (deadline 15) and up at 12 evicts nothing. The
    /// effects keep each event's schedulable devices before and after (4 → 2 → 0, then b
    /// back: 2), and the drain's event lists the eviction.
    #[test]
    fn a_later_drain_or_an_up_makes_a_deadline_stale() {
        let model = gpuquota_model::import::import_str("c.yaml", CLUSTER)
            .expect("valid")
            .model;
        let input =
            gpuquota_cohort::Input::from_model(&model, &gpuquota_cohort::Options::default())
                .expect("builds");
        let world = input.world();
        let mut cap = Capacity::new(&model, world).expect("nodes");
        let fr = u32::from(world.frs.ids().next().expect("one flavor-resource"));
        let two = cap.kueue_needs(world, 0, &[(fr, 2)]);
        assert_eq!(cap.place(0, &two), Ok(()));
        assert_eq!(cap.holders("a"), vec![0]);
        let mut nodes = NodeEvents::default();
        let mut q = Queue::default();
        let lost = nodes
            .apply(
                &mut cap,
                10,
                0,
                &changes(&["a"], Some(5), &[]),
                &model,
                &mut q,
            )
            .expect("applies");
        assert!(lost.is_empty());
        nodes
            .apply(
                &mut cap,
                10,
                1,
                &changes(&["b"], Some(5), &[]),
                &model,
                &mut q,
            )
            .expect("applies");
        nodes
            .apply(
                &mut cap,
                12,
                2,
                &changes(&["a"], Some(10), &["b"]),
                &model,
                &mut q,
            )
            .expect("applies");
        let mut deadlines = Vec::new();
        while let Some(t) = q.next_time() {
            while let Some(e) = q.pop_at(t) {
                deadlines.push((e.t, e.kind));
            }
        }
        let dl = |index, generation| Kind::Deadline { index, generation };
        assert_eq!(
            deadlines,
            vec![(15, dl(0, 1)), (15, dl(1, 2)), (22, dl(0, 3))]
        );
        assert!(nodes.deadline(&cap, 0, 1).is_empty());
        assert!(nodes.deadline(&cap, 1, 2).is_empty());
        assert_eq!(
            nodes.deadline(&cap, 0, 3),
            vec![(0, EVICTION_BY_EVICTION_API, "Node/a".to_owned())]
        );
        assert!(
            nodes.deadline(&cap, 0, 3).is_empty(),
            "a deadline evicts once"
        );
        assert_eq!(
            nodes.effects[2].evicted,
            vec![(0, EVICTION_BY_EVICTION_API)]
        );
        let g = |n: i64| vec![("nvidia.com/gpu".to_owned(), n)];
        let events: Vec<usize> = nodes.effects.iter().map(|e| e.event).collect();
        assert_eq!(events, vec![0, 1, 2]);
        let before: Vec<_> = nodes.effects.iter().map(|e| e.before.clone()).collect();
        let after: Vec<_> = nodes.effects.iter().map(|e| e.after.clone()).collect();
        assert_eq!(before, vec![g(4), g(2), g(0)]);
        assert_eq!(after, vec![g(2), g(0), g(2)]);
    }
}
