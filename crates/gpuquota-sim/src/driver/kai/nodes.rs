//! The timeline's node events under KAI: the same semantics as under Kueue
//! ([`crate::driver::nodes`]), applied to the live cluster at the event's instant; the next
//! session's snapshot sees the new node set, as KAI builds its snapshot per session
//! (NVIDIA/KAI-Scheduler: pkg/scheduler/cache/cache.go `Snapshot`).
//!
//! - **down**: every job with a running pod on the node loses its pods now: its run ends
//!   (`action: node`, reason `NodeFailures`, `by` `Node/<name>`; the run so far is lost
//!   work on the bill, as an eviction's is) and its pods are pending again, as their
//!   controller recreates them. The node takes no new pods and its allocatable leaves the
//!   divided total ([`gpuquota_rank::live::LiveCluster::set_schedulable`]) until `up`.
//! - **drain**: the node takes no new pods and leaves the divided total (KAI's snapshot
//!   leaves a cordoned node's allocatable out); its running pods go on. With
//!   `drainDeadline`, the jobs still running on it then lose their pods as above, reason
//!   `EvictionByEvictionAPI`; an `up` or a later drain makes the deadline stale.
//! - **up**: the node takes pods again and its allocatable is back in the total.
//!
//! Each event's entry of the report lists the runs it ended and the devices that take new
//! pods (whole GPUs as `nvidia.com/gpu`, MIG instances per profile) before and after.

use std::collections::BTreeMap;

use gpuquota_model::Error;

use super::{KaiDriver, SessionHook, Sim, State, session_error};
use crate::driver::capacity::{EVICTION_BY_EVICTION_API, NODE_FAILURES};
use crate::driver::nodes::by_node;
use crate::engine::TimelineEffect;
use crate::kai::report::KaiRunEnd;
use crate::kernel::{Event, Kind, Queue};

/// The driver's node state: pending drain deadlines and each timeline event's effect.
#[derive(Debug, Default)]
pub(super) struct KaiNodes {
    /// Per node index, the generation of its latest drain with a deadline and the position
    /// of its event's effect (older deadlines are stale).
    drains: BTreeMap<u32, (u32, usize)>,
    generation: u32,
    /// Every timeline event's effect, in the order they applied.
    pub(super) effects: Vec<TimelineEffect>,
}

impl Sim<'_> {
    /// The devices that take new pods: whole GPUs (`nvidia.com/gpu`) and the MIG instances
    /// of every profile some node offers, over the schedulable nodes, sorted by resource.
    ///
    /// # Complexity
    /// O(nodes × MIG profiles).
    fn devices(&self) -> Vec<(String, i64)> {
        let c = self.live.cluster();
        let mut gpu = 0i64;
        let mut mig = vec![(false, 0i64); c.mig_profiles.len()];
        for n in &c.nodes {
            for (k, &m) in n.mig.iter().enumerate() {
                if let Some(e) = mig.get_mut(k) {
                    e.0 |= m > 0;
                    if !n.unschedulable {
                        e.1 = e.1.saturating_add(m);
                    }
                }
            }
            if !n.unschedulable {
                gpu = gpu.saturating_add(i64::try_from(n.gpus).unwrap_or(i64::MAX));
            }
        }
        let mut out = vec![("nvidia.com/gpu".to_owned(), gpu)];
        out.extend(
            c.mig_profiles
                .iter()
                .zip(mig)
                .filter(|(_, (offered, _))| *offered)
                .map(|(p, (_, m))| (p.clone(), m)),
        );
        out.sort();
        out
    }

    /// Node `name` takes new pods (or not) from now; the divided total follows.
    fn set_schedulable(&mut self, name: &str, schedulable: bool, t: i64) -> Result<(), Error> {
        self.live
            .set_schedulable(name, schedulable)
            .map_err(|e| session_error(t, e))?;
        self.totals = self.live.cluster().totals;
        self.dirty = true;
        self.quiet = false;
        Ok(())
    }

    /// The jobs with a running pod on node `name` lose their pods at `t` (`reason`): their
    /// runs end, they are pending again. Returns them, in key order.
    ///
    /// # Complexity
    /// O(T) to find them, plus O(J) per job lost (the live cluster's key order).
    fn lose_on(
        &mut self,
        name: &str,
        t: i64,
        reason: &'static str,
        hook: &mut Option<&mut dyn SessionHook>,
    ) -> Vec<String> {
        let keys = self.live.jobs_on(name);
        if keys.is_empty() {
            return keys;
        }
        if let Some(db) = self.db.as_mut() {
            db.advance(t, self.alloc.as_slice());
        }
        for key in &keys {
            let Some(&j) = self.index.get(key.as_str()) else {
                continue;
            };
            if self.st[j].state != State::Running {
                continue;
            }
            self.live.finish(key);
            self.live.submit(key);
            if let Some(h) = hook.as_mut() {
                h.stopped(key, t);
            }
            self.end_run(
                j,
                t,
                KaiRunEnd::Lost {
                    reason,
                    by: by_node(name),
                },
            );
        }
        self.alloc = self.live.queue_allocated();
        self.dirty = true;
        self.quiet = false;
        keys
    }
}

impl KaiDriver<'_, '_, '_, '_> {
    /// Timeline event `effect.index` at `t`: its node changes, in the timeline's order
    /// (down, drain, up), recorded in `effect`; a drain with a deadline queues it.
    ///
    /// # Errors
    /// A total that overflows with a node back.
    pub(super) fn node_changes(
        &mut self,
        t: i64,
        changes: &crate::timeline::Changes,
        effect: &mut TimelineEffect,
        q: &mut Queue,
    ) -> Result<(), Error> {
        if changes.nodes_down.is_empty()
            && changes.nodes_drained.is_empty()
            && changes.nodes_up.is_empty()
        {
            return Ok(());
        }
        let sim = &mut self.sim;
        effect.devices_before = sim.devices();
        for n in &changes.nodes_down {
            for key in sim.lose_on(n, t, NODE_FAILURES, &mut self.hook) {
                effect.evicted.push((key, NODE_FAILURES.to_owned()));
            }
            sim.set_schedulable(n, false, t)?;
            if let Some(&i) = sim.node_ix.get(n) {
                self.nodes.drains.remove(&(i as u32));
            }
        }
        for n in &changes.nodes_drained {
            sim.set_schedulable(n, false, t)?;
            if let (Some(&i), Some(d)) = (sim.node_ix.get(n), changes.drain_deadline_ms) {
                self.nodes.generation += 1;
                let generation = self.nodes.generation;
                let at = self.nodes.effects.len();
                self.nodes.drains.insert(i as u32, (generation, at));
                q.push(Event::new(
                    t.saturating_add(d),
                    Kind::Deadline {
                        index: i as u32,
                        generation,
                    },
                ));
            }
        }
        for n in &changes.nodes_up {
            sim.set_schedulable(n, true, t)?;
            if let Some(&i) = sim.node_ix.get(n) {
                self.nodes.drains.remove(&(i as u32));
            }
        }
        effect.nodes_down.clone_from(&changes.nodes_down);
        effect.nodes_drained.clone_from(&changes.nodes_drained);
        effect.drain_deadline_ms = changes.drain_deadline_ms;
        effect.nodes_up.clone_from(&changes.nodes_up);
        effect.devices_after = sim.devices();
        Ok(())
    }

    /// The drain deadline `(index, generation)` at `t`: the jobs still running on the node
    /// lose their pods (reason `EvictionByEvictionAPI`), unless the drain is stale.
    pub(super) fn drain_deadline(&mut self, t: i64, index: u32, generation: u32) {
        let Some(&(g, at)) = self.nodes.drains.get(&index) else {
            return;
        };
        if g != generation {
            return;
        }
        self.nodes.drains.remove(&index);
        let Some(name) = self
            .sim
            .live
            .cluster()
            .nodes
            .get(index as usize)
            .map(|n| n.name.clone())
        else {
            return;
        };
        let lost = self
            .sim
            .lose_on(&name, t, EVICTION_BY_EVICTION_API, &mut self.hook);
        if let Some(e) = self.nodes.effects.get_mut(at) {
            e.evicted.extend(
                lost.into_iter()
                    .map(|k| (k, EVICTION_BY_EVICTION_API.to_owned())),
            );
        }
    }
}
