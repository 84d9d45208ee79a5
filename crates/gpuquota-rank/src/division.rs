//! KAI's fair-share ("resource division") algorithm, in exact fixed-point arithmetic.
//!
//! Per resource, per sibling set, top-down (kai-scheduler/KAI-Scheduler:
//! `pkg/scheduler/plugins/proportion/resource_division/resource_division.go`):
//!
//! 1. **Deserved.** Each sibling gets `min(D, min(L, Req))` (`D = -1` means the whole amount).
//!    When the sum reaches the total, nothing is left: oversubscription keeps every deserved
//!    amount and fair shares may exceed capacity.
//! 2. **Over quota, by priority tier** (highest first). Rounds over the unsatisfied queues of the
//!    tier, each with share `amount · sw / Σsw` of the amount frozen at the round's start: a queue
//!    whose remaining request fits takes it exactly, any other takes the whole units of its share
//!    and records the fractional rest. Another round runs while a queue needed less than its
//!    share.
//! 3. **Leftover units**, right after the tier's rounds: one unit (or the sub-unit rest) to each
//!    recorded queue by largest remainder, then older creation time, then smaller UID.
//!
//! [`Mode::Kai`] reproduces upstream including its quirks (see [`Mode`]); [`Mode::Corrected`]
//! fixes the leftover overshoot and the stale remainder record.

// Per-resource arrays `[_; 3]` (GPU, CPU, memory) are indexed in parallel by resource.
#![allow(clippy::needless_range_loop)]

use gpuquota_model::Timestamp;

use crate::fixed::{FRAC_SCALE, SCALE, gcd, mod_small, mul_div_rem};
use crate::ids::{PerQueue, PerResource, QueueId};

/// The three resources KAI divides, each independently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Resource {
    /// GPUs in devices (fractions allowed).
    Gpu,
    /// CPU in millicores.
    Cpu,
    /// Memory in bytes.
    Memory,
}

impl Resource {
    /// All three, in KAI's order of output.
    pub const ALL: [Resource; 3] = [Resource::Gpu, Resource::Cpu, Resource::Memory];

    /// Position in per-resource arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The contract's name: `gpu`, `cpu`, `memory`.
    pub fn as_str(self) -> &'static str {
        match self {
            Resource::Gpu => "gpu",
            Resource::Cpu => "cpu",
            Resource::Memory => "memory",
        }
    }
}

impl std::fmt::Display for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How faithfully to follow upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Upstream's results, quirks included:
    /// * **Leftover overshoot** (upstream phase 3): phase 3 gives a whole unit without re-checking
    ///   request or limit, so a queue that asked for 1.7 can end at 2.0, above a limit of 1.7.
    /// * **Stale remainder record** (upstream phase 3): a remainder recorded in an earlier round
    ///   survives a later round that gives the queue whole units with no fraction.
    #[default]
    Kai,
    /// The leftover unit is capped at the queue's remaining request (and so its limit), and a
    /// round that leaves no fraction clears the queue's record.
    Corrected,
}

/// Division options.
///
/// Build them with [`DivisionOptions::default`] (upstream's defaults) and the `with_*`
/// methods: fields may be added in later versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DivisionOptions {
    /// Upstream or corrected.
    pub mode: Mode,
    /// Time-based fairshare `kValue` in nano-units (10⁹ = 1.0, upstream's default); values
    /// below zero count as 0.
    pub k_value: i128,
}

impl Default for DivisionOptions {
    fn default() -> Self {
        DivisionOptions {
            mode: Mode::Kai,
            k_value: SCALE,
        }
    }
}

impl DivisionOptions {
    /// Sets [`DivisionOptions::mode`].
    pub fn with_mode(mut self, mode: Mode) -> DivisionOptions {
        self.mode = mode;
        self
    }

    /// Sets [`DivisionOptions::k_value`] (nano-units).
    pub fn with_k_value(mut self, k_value: i128) -> DivisionOptions {
        self.k_value = k_value;
        self
    }
}

/// One queue's inputs for one resource, in nano-units ([`SCALE`] per unit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResourceParams {
    /// Deserved quota; `None` = unlimited (`-1`).
    pub deserved: Option<i128>,
    /// Over-quota weight (nano; 10⁹ = weight 1).
    pub weight: i128,
    /// Limit; `None` = unlimited (`-1`).
    pub limit: Option<i128>,
    /// Demand (allocated + pending) of a leaf; ignored for a queue with children, whose demand
    /// is the sum of its children's.
    pub request: i128,
    /// Normalized historical usage in `[0, 10⁹]` (time-based fairshare; 0 when off).
    pub usage: i128,
}

/// One queue of the division input.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueueInput {
    /// Name (unique).
    pub name: String,
    /// The parent queue (its position in the input), `None` for a top-level queue.
    pub parent: Option<QueueId>,
    /// Queue priority (Run:ai rank); higher is served first over quota.
    pub priority: i32,
    /// `metadata.creationTimestamp` (phase-3 tie-break; missing sorts first, as Go's zero time).
    pub creation: Option<Timestamp>,
    /// `metadata.uid` (phase-3 final tie-break; empty falls back to the name).
    pub uid: String,
    /// GPU, CPU, memory.
    pub resources: [ResourceParams; 3],
}

/// Why a division input was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DivisionError {
    /// A parent index outside the input.
    #[error("queue {queue:?}: spec.parentQueue: index {parent} is not a queue")]
    UnknownParent {
        /// The queue.
        queue: String,
        /// The bad index.
        parent: QueueId,
    },
    /// The parent links form a cycle.
    #[error("queue {queue:?}: spec.parentQueue: the parent chain loops back to this queue")]
    Cycle {
        /// A queue on the cycle.
        queue: String,
    },
    /// The tree is deeper than [`gpuquota_model::limits::MAX_TREE_DEPTH`] levels (KAI sets
    /// no limit; gpuquota bounds every walk up the tree).
    #[error(
        "queue {queue:?}: spec.parentQueue: the queue tree is {depth} levels deep at this queue; \
         at most {} levels are accepted",
        gpuquota_model::limits::MAX_TREE_DEPTH
    )]
    TooDeep {
        /// The first queue (in top-down order) one level beyond the limit.
        queue: String,
        /// Its depth (the root is level 1).
        depth: usize,
    },
    /// A negative value where only `-1` (unlimited) or a non-negative value is allowed.
    #[error("queue {queue:?}: spec.resources.{resource}.{field}: negative value")]
    Negative {
        /// The queue.
        queue: String,
        /// The resource.
        resource: Resource,
        /// The field (`quota`, `overQuotaWeight`, `limit`, `request`, `usage`, `total`).
        field: &'static str,
    },
    /// A value outside what exact arithmetic can hold.
    #[error("queue {queue:?}: {resource}: arithmetic overflow")]
    Overflow {
        /// The queue (or `<total>`).
        queue: String,
        /// The resource.
        resource: Resource,
    },
}

/// The validated queue tree.
#[derive(Debug, Clone)]
pub struct Hierarchy {
    queues: Vec<QueueInput>,
    children: Vec<Vec<QueueId>>,
    roots: Vec<QueueId>,
    /// Breadth-first order from the roots.
    order: Vec<usize>,
    /// Roots, then each queue's children, sorted by priority (highest first) then input
    /// order: the tier order of phases 2 and 3.
    sorted_roots: Vec<usize>,
    sorted_children: Vec<Vec<usize>>,
    /// Dense parent links ([`NO_PARENT`] for a top-level queue).
    parents: Vec<usize>,
    /// Dense per-resource inputs (structure of arrays), kept in sync by the setters.
    statics: [Vec<StaticCol>; 3],
}

/// One queue's static inputs for one resource, dense.
#[derive(Debug, Clone, Copy)]
struct StaticCol {
    priority: i32,
    leaf: bool,
    /// `-1` = unlimited.
    deserved: i128,
    /// `-1` = unlimited.
    limit: i128,
    weight: u128,
    request: i128,
    usage: i128,
}

fn static_cols(queues: &[QueueInput], children: &[Vec<QueueId>]) -> [Vec<StaticCol>; 3] {
    let col = |r: usize| {
        queues
            .iter()
            .enumerate()
            .map(|(q, input)| {
                let p = &input.resources[r];
                StaticCol {
                    priority: input.priority,
                    leaf: children[q].is_empty(),
                    deserved: p.deserved.unwrap_or(-1),
                    limit: p.limit.unwrap_or(-1),
                    weight: p.weight as u128,
                    request: p.request,
                    usage: p.usage,
                }
            })
            .collect()
    };
    [col(0), col(1), col(2)]
}

/// Marks a top-level queue in the dense parent links.
const NO_PARENT: usize = usize::MAX;

/// The result: fair share and aggregated demand of every queue (input order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Division {
    /// Fair share per queue and resource, nano-units.
    pub fair_share: PerQueue<PerResource<i128>>,
    /// Demand per queue and resource (parents: the sum of their subtree), nano-units.
    pub request: PerQueue<PerResource<i128>>,
    /// What each queue got in phase 1 (deserved capped by demand), nano-units.
    pub phase1: PerQueue<PerResource<i128>>,
}

impl Hierarchy {
    /// Validates parents, acyclicity, the depth limit
    /// ([`gpuquota_model::limits::MAX_TREE_DEPTH`] levels, the root being level 1) and value
    /// signs.
    ///
    /// # Errors
    /// [`DivisionError`] naming the first bad queue.
    ///
    /// # Complexity
    /// O(n).
    pub fn new(queues: Vec<QueueInput>) -> Result<Hierarchy, DivisionError> {
        let n = queues.len();
        let mut children = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, q) in queues.iter().enumerate() {
            for r in Resource::ALL {
                let p = &q.resources[r.index()];
                let bad = |field| DivisionError::Negative {
                    queue: q.name.clone(),
                    resource: r,
                    field,
                };
                if p.deserved.is_some_and(|d| d < 0) {
                    return Err(bad("quota"));
                }
                if p.limit.is_some_and(|d| d < 0) {
                    return Err(bad("limit"));
                }
                if p.weight < 0 {
                    return Err(bad("overQuotaWeight"));
                }
                if p.request < 0 {
                    return Err(bad("request"));
                }
                if p.usage < 0 {
                    return Err(bad("usage"));
                }
            }
            match q.parent {
                None => roots.push(QueueId::new(i)),
                Some(p) if p.index() < n => children[p.index()].push(QueueId::new(i)),
                Some(p) => {
                    return Err(DivisionError::UnknownParent {
                        queue: q.name.clone(),
                        parent: p,
                    });
                }
            }
        }
        let mut order: Vec<usize> = roots.iter().map(|q| q.index()).collect();
        let mut depth = vec![1usize; n];
        let mut head = 0;
        while head < order.len() {
            let q = order[head];
            head += 1;
            if depth[q] > gpuquota_model::limits::MAX_TREE_DEPTH {
                return Err(DivisionError::TooDeep {
                    queue: queues[q].name.clone(),
                    depth: depth[q],
                });
            }
            for &c in &children[q] {
                depth[c.index()] = depth[q] + 1;
            }
            order.extend(children[q].iter().map(|c| c.index()));
        }
        if order.len() != n {
            let mut seen = vec![false; n];
            for &q in &order {
                seen[q] = true;
            }
            let first = seen.iter().position(|s| !s).unwrap_or(0);
            return Err(DivisionError::Cycle {
                queue: queues[first].name.clone(),
            });
        }
        let by_prio = |v: &[QueueId]| {
            let mut v: Vec<usize> = v.iter().map(|q| q.index()).collect();
            v.sort_by(|&a, &b| queues[b].priority.cmp(&queues[a].priority).then(a.cmp(&b)));
            v
        };
        let sorted_roots = by_prio(&roots);
        let sorted_children = children.iter().map(|c| by_prio(c)).collect();
        let parents = queues
            .iter()
            .map(|q| q.parent.map_or(NO_PARENT, QueueId::index))
            .collect();
        let statics = static_cols(&queues, &children);
        Ok(Hierarchy {
            queues,
            children,
            roots,
            order,
            sorted_roots,
            sorted_children,
            parents,
            statics,
        })
    }

    /// Sets a queue's normalized historical usage per resource (nano-units, `[0, 10⁹]`).
    ///
    /// # Errors
    /// [`DivisionError::Negative`] for a negative value.
    pub fn set_usage(&mut self, q: QueueId, usage: PerResource<i128>) -> Result<(), DivisionError> {
        let q = q.index();
        for r in Resource::ALL {
            let u = usage[r];
            if u < 0 {
                return Err(DivisionError::Negative {
                    queue: self.queues[q].name.clone(),
                    resource: r,
                    field: "usage",
                });
            }
            self.queues[q].resources[r.index()].usage = u.min(SCALE);
            self.statics[r.index()][q].usage = u.min(SCALE);
        }
        Ok(())
    }

    /// Sets a leaf queue's demand per resource (nano-units: allocated + pending), as
    /// [`crate::Input::from_model`] sums it; the live cluster ([`crate::live`]) refreshes it
    /// before every session. A parent's demand is always the sum of its subtree.
    ///
    /// # Errors
    /// [`DivisionError::Negative`] for a negative value.
    pub fn set_request(
        &mut self,
        q: QueueId,
        request: PerResource<i128>,
    ) -> Result<(), DivisionError> {
        let q = q.index();
        for r in Resource::ALL {
            let v = request[r];
            if v < 0 {
                return Err(DivisionError::Negative {
                    queue: self.queues[q].name.clone(),
                    resource: r,
                    field: "request",
                });
            }
            self.queues[q].resources[r.index()].request = v;
            self.statics[r.index()][q].request = v;
        }
        Ok(())
    }

    /// Sets a queue's over-quota weight for one resource (nano-units), e.g. for Run:ai's
    /// weight-follows-quota mapping.
    ///
    /// # Errors
    /// [`DivisionError::Negative`] for a negative weight.
    pub fn set_weight(
        &mut self,
        q: QueueId,
        r: Resource,
        weight: i128,
    ) -> Result<(), DivisionError> {
        let q = q.index();
        if weight < 0 {
            return Err(DivisionError::Negative {
                queue: self.queues[q].name.clone(),
                resource: r,
                field: "overQuotaWeight",
            });
        }
        self.queues[q].resources[r.index()].weight = weight;
        self.statics[r.index()][q].weight = weight as u128;
        Ok(())
    }

    /// Sets a queue's deserved quota and limit for one resource (nano-units; `None` =
    /// unlimited, `-1`), as a changed Queue object gives them at the next session.
    ///
    /// # Errors
    /// [`DivisionError::Negative`] for a negative quota or limit.
    pub fn set_quota_limit(
        &mut self,
        q: QueueId,
        r: Resource,
        deserved: Option<i128>,
        limit: Option<i128>,
    ) -> Result<(), DivisionError> {
        let q = q.index();
        for (v, field) in [(deserved, "quota"), (limit, "limit")] {
            if v.is_some_and(|v| v < 0) {
                return Err(DivisionError::Negative {
                    queue: self.queues[q].name.clone(),
                    resource: r,
                    field,
                });
            }
        }
        let p = &mut self.queues[q].resources[r.index()];
        p.deserved = deserved;
        p.limit = limit;
        let col = &mut self.statics[r.index()][q];
        col.deserved = deserved.unwrap_or(-1);
        col.limit = limit.unwrap_or(-1);
        Ok(())
    }

    /// Sets a queue's priority (Run:ai rank).
    pub fn set_priority(&mut self, q: QueueId, priority: i32) {
        let q = q.index();
        self.queues[q].priority = priority;
        for col in &mut self.statics {
            col[q].priority = priority;
        }
        let queues = &self.queues;
        let by_prio = |v: &mut Vec<usize>| {
            v.sort_by(|&a, &b| queues[b].priority.cmp(&queues[a].priority).then(a.cmp(&b)));
        };
        by_prio(&mut self.sorted_roots);
        for c in &mut self.sorted_children {
            by_prio(c);
        }
    }

    /// The queue named `name`.
    pub fn find(&self, name: &str) -> Option<QueueId> {
        self.queues
            .iter()
            .position(|q| q.name == name)
            .map(QueueId::new)
    }

    /// The queues, in input order (position `i` is `QueueId::new(i)`).
    pub fn queues(&self) -> &[QueueInput] {
        &self.queues
    }

    /// The queue `q`.
    ///
    /// # Panics
    /// For an id outside the tree (ids come from this tree: [`Hierarchy::find`],
    /// [`Hierarchy::ids`], [`QueueInput::parent`]).
    pub fn queue(&self, q: QueueId) -> &QueueInput {
        &self.queues[q.index()]
    }

    /// Every queue's id, in input order.
    pub fn ids(&self) -> impl Iterator<Item = QueueId> + use<> {
        (0..self.queues.len()).map(QueueId::new)
    }

    /// Children of a queue, in input order.
    pub fn children(&self, q: QueueId) -> &[QueueId] {
        &self.children[q.index()]
    }

    /// Top-level queues, in input order.
    pub fn roots(&self) -> &[QueueId] {
        &self.roots
    }

    /// True for a queue without children (only leaves hold jobs).
    pub fn is_leaf(&self, q: QueueId) -> bool {
        self.children[q.index()].is_empty()
    }

    /// The path from the root to `q`, inclusive.
    pub fn path(&self, q: QueueId) -> Vec<QueueId> {
        let mut p = vec![q];
        let mut cur = q;
        while let Some(parent) = self.queues[cur.index()].parent {
            p.push(parent);
            cur = parent;
        }
        p.reverse();
        p
    }

    /// Demand per queue: the leaves' requests summed up the tree (dense parent links,
    /// reverse breadth-first order).
    ///
    /// # Errors
    /// [`DivisionError::Overflow`] naming the parent whose sum leaves `i128`.
    ///
    /// # Complexity
    /// O(n).
    fn demand(&self) -> Result<Vec<PerResource<i128>>, DivisionError> {
        let mut request = vec![PerResource::ZERO; self.queues.len()];
        for r in Resource::ALL {
            for (q, st) in self.statics[r.index()].iter().enumerate() {
                if st.leaf {
                    request[q][r] = st.request;
                }
            }
        }
        for &q in self.order.iter().rev() {
            let p = self.parents[q];
            if p != NO_PARENT {
                let child = request[q];
                for r in Resource::ALL {
                    request[p][r] = request[p][r].checked_add(child[r]).ok_or_else(|| {
                        DivisionError::Overflow {
                            queue: self.queues[p].name.clone(),
                            resource: r,
                        }
                    })?;
                }
            }
        }
        Ok(request)
    }

    /// Divides `totals` (nano-units per resource) down the tree.
    ///
    /// # Errors
    /// [`DivisionError::Negative`] for a negative total, [`DivisionError::Overflow`] when a sum
    /// leaves exact 128-bit arithmetic.
    ///
    /// # Complexity
    /// O(R · Σ_groups (g log g + rounds · g)) for sibling groups of size g; rounds are bounded by
    /// the group size (each extra round needs a queue that became satisfied).
    pub fn divide(
        &self,
        totals: PerResource<i128>,
        options: &DivisionOptions,
    ) -> Result<Division, DivisionError> {
        let n = self.queues.len();
        for r in Resource::ALL {
            if totals[r] < 0 {
                return Err(DivisionError::Negative {
                    queue: "<total>".into(),
                    resource: r,
                    field: "total",
                });
            }
        }
        let request = self.demand()?;
        // Dense per-resource columns, built in one pass: the hot loops never touch the queue
        // structs. Amounts are divided by their common factor with the unit (whole bytes and
        // whole GPUs become plain integers), so the arithmetic mostly stays in 64 bits.
        let mut cols: [Vec<Col>; 3] = [
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        ];
        let mut weight_gcd = [0u64; 3];
        let mut amount_gcd = [0u64; 3];
        // The largest requestable amount per resource: it bounds every fair share (below).
        let mut max_requestable = [0i128; 3];
        for r in 0..3 {
            amount_gcd[r] = gcd(
                SCALE as u128,
                u128::from(mod_small(totals.0[r] as u128, SCALE as u64)),
            ) as u64;
        }
        let reduce = |g: &mut u64, v: u128| {
            if *g > 1 {
                let m = mod_small(v, *g);
                if m != 0 {
                    *g = gcd(u128::from(*g), u128::from(m)) as u64;
                }
            }
        };
        for r in 0..3 {
            for (q, st) in self.statics[r].iter().enumerate() {
                let w = st.weight;
                let wg = &mut weight_gcd[r];
                if *wg == 0 {
                    // Weights are validated non-negative; those beyond 64 bits skip the gcd.
                    *wg = u64::try_from(w).unwrap_or(1);
                } else if w != 0 && mod_small(w, *wg) != 0 {
                    *wg = gcd(u128::from(*wg), u128::from(mod_small(w, *wg))) as u64;
                }
                let req = request[q].0[r];
                let requestable = if st.limit < 0 { req } else { st.limit.min(req) };
                max_requestable[r] = max_requestable[r].max(requestable);
                let deserved = st.deserved;
                reduce(&mut amount_gcd[r], requestable as u128);
                if deserved > 0 {
                    reduce(&mut amount_gcd[r], deserved as u128);
                }
                cols[r].push(Col {
                    priority: st.priority,
                    deserved,
                    requestable,
                    weight: w,
                    usage: st.usage,
                    fs: 0,
                });
            }
        }
        let mut fair_share = vec![PerResource::ZERO; n];
        let mut phase1 = vec![PerResource::ZERO; n];
        let max_group = self
            .sorted_children
            .iter()
            .map(Vec::len)
            .max()
            .unwrap_or(0)
            .max(self.roots.len());
        for (ri, col) in cols.into_iter().enumerate() {
            let r = Resource::ALL[ri];
            let g = i128::from(amount_gcd[ri].max(1));
            let wg = u128::from(weight_gcd[ri].max(1));
            let mut col = col;
            for c in &mut col {
                c.weight /= wg;
                c.requestable /= g;
                if c.deserved > 0 {
                    c.deserved /= g;
                }
            }
            let mut ctx = GroupCtx {
                h: self,
                r,
                unit: SCALE / g,
                col,
                options,
                records: vec![None; max_group],
                sw: vec![0; max_group],
            };
            ctx.divide_group(&self.sorted_roots, totals[r] / g)?;
            for &q in &self.order {
                if !self.children[q].is_empty() {
                    let t = ctx.col[q].fs;
                    ctx.divide_group(&self.sorted_children[q], t)?;
                }
            }
            // Back to nano-units, and the phase-1 amounts: deserved (or the parent's share)
            // capped by requestable. `deserved` and `requestable` were divided exactly by `g`,
            // so their products are the input amounts again and cannot overflow. A fair share
            // is at most `requestable + unit` (phases 1 and 2 stop at requestable, phase 3 adds
            // at most one unit, once), so `fs · g ≤ requestable · g + SCALE`: with every
            // requestable amount at most `i128::MAX − SCALE`, checked once here, no product
            // overflows; beyond that bound each one is checked.
            let bounded = max_requestable[ri] <= i128::MAX - SCALE;
            for &q in &self.order {
                let c = &ctx.col[q];
                fair_share[q][r] = if bounded {
                    c.fs * g
                } else {
                    c.fs.checked_mul(g).ok_or_else(|| ctx.overflow(q))?
                };
                let p = self.parents[q];
                let total = if p == NO_PARENT {
                    totals[r]
                } else {
                    fair_share[p][r]
                };
                let d = if c.deserved < 0 {
                    total
                } else {
                    c.deserved * g
                };
                phase1[q][r] = d.min(c.requestable * g);
            }
        }
        Ok(Division {
            fair_share: PerQueue::from_vec(fair_share),
            request: PerQueue::from_vec(request),
            phase1: PerQueue::from_vec(phase1),
        })
    }
}

/// One queue's column for the resource being divided.
#[derive(Debug, Clone, Copy)]
struct Col {
    priority: i32,
    /// `-1` = unlimited.
    deserved: i128,
    /// `min(L, Req)`.
    requestable: i128,
    /// Weight divided by the gcd of all weights.
    weight: u128,
    usage: i128,
    fs: i128,
}

impl Col {
    /// What the queue may still get. Both amounts are non-negative (`fs` only grows by
    /// non-negative amounts from 0), so the difference lies in `[−i128::MAX, i128::MAX]`
    /// and cannot overflow.
    fn remaining(&self) -> i128 {
        (self.requestable - self.fs).max(0)
    }
}

struct GroupCtx<'a> {
    h: &'a Hierarchy,
    r: Resource,
    /// One unit (device, millicore, byte) in the scaled amounts.
    unit: i128,
    col: Vec<Col>,
    options: &'a DivisionOptions,
    /// Fractional-remainder records (fixed point, FRAC_SCALE per unit), by tier position.
    records: Vec<Option<u128>>,
    sw: Vec<u128>,
}

impl GroupCtx<'_> {
    fn overflow(&self, q: usize) -> DivisionError {
        DivisionError::Overflow {
            queue: self.h.queues[q].name.clone(),
            resource: self.r,
        }
    }

    /// `sibs` sorted by priority (highest first), then input order.
    fn divide_group(&mut self, sibs: &[usize], total: i128) -> Result<(), DivisionError> {
        // Phase 1: deserved capped by demand and limit.
        let mut rem = total;
        for &q in sibs {
            let c = self.col[q];
            let d = if c.deserved < 0 { total } else { c.deserved };
            let g = d.min(c.requestable);
            self.col[q].fs = c.fs.checked_add(g).ok_or_else(|| self.overflow(q))?;
            rem = rem.checked_sub(g).ok_or_else(|| self.overflow(q))?;
        }
        if rem <= 0 {
            return Ok(());
        }
        // Phase 2 + 3 per priority tier, highest first.
        let mut start = 0;
        while start < sibs.len() {
            let prio = self.col[sibs[start]].priority;
            let mut end = start + 1;
            while end < sibs.len() && self.col[sibs[end]].priority == prio {
                end += 1;
            }
            if rem <= 0 {
                break;
            }
            rem = self.divide_tier(&sibs[start..end], rem)?;
            start = end;
        }
        Ok(())
    }

    /// Phase 2 rounds then phase 3 leftovers for one tier; returns what is left.
    fn divide_tier(&mut self, tier: &[usize], mut rem: i128) -> Result<i128, DivisionError> {
        let corrected = self.options.mode == Mode::Corrected;
        let k = self.options.k_value.max(0);
        for r in &mut self.records[..tier.len()] {
            *r = None;
        }
        loop {
            let amount = rem;
            let mut wtot: u128 = 0;
            let mut with_usage = false;
            for &q in tier {
                let c = &self.col[q];
                if c.remaining() > 0 {
                    wtot = wtot.checked_add(c.weight).ok_or_else(|| self.overflow(q))?;
                    with_usage |= c.usage != 0;
                }
            }
            if wtot == 0 {
                break;
            }
            with_usage &= k != 0;
            let mut total_sw: u128 = 0;
            let mut common: u128 = 0;
            for (i, &q) in tier.iter().enumerate() {
                let c = &self.col[q];
                self.sw[i] = 0;
                if c.remaining() == 0 {
                    continue;
                }
                let w = if with_usage {
                    // sw ∝ W·(1+k) − k·U·Wtot, scaled by SCALE²·Wtot (weights in gcd units).
                    let a = i128::try_from(c.weight)
                        .ok()
                        .zip(SCALE.checked_add(k))
                        .and_then(|(w, sk)| w.checked_mul(sk))
                        .and_then(|x| x.checked_mul(SCALE));
                    let b = i128::try_from(wtot)
                        .ok()
                        .and_then(|wt| k.checked_mul(c.usage)?.checked_mul(wt));
                    match a.zip(b).and_then(|(a, b)| a.checked_sub(b)) {
                        // Non-negative after `max(0)`, so the conversion is lossless.
                        Some(d) => d.max(0) as u128,
                        None => return Err(self.overflow(q)),
                    }
                } else {
                    c.weight
                };
                self.sw[i] = w;
                if with_usage {
                    common = gcd(common, w);
                }
                total_sw = total_sw.checked_add(w).ok_or_else(|| self.overflow(q))?;
            }
            if total_sw == 0 {
                break;
            }
            if with_usage && common > 1 {
                for w in &mut self.sw[..tier.len()] {
                    *w /= common;
                }
                total_sw /= common;
            }
            let mut again = false;
            for (i, &q) in tier.iter().enumerate() {
                if rem == 0 {
                    break;
                }
                let c = self.col[q];
                let need = c.remaining();
                if need == 0 || c.weight == 0 {
                    continue;
                }
                let (share, share_rem) = mul_div_rem(amount as u128, self.sw[i], total_sw)
                    .ok_or_else(|| self.overflow(q))?;
                let share = share as i128;
                let give;
                if need <= share {
                    give = need;
                    self.records[i] = None;
                } else {
                    // `share` is non-negative (a quotient of non-negative amounts), so `whole`
                    // and `frac_nano` are too, and below `share`.
                    let frac = i128::from(mod_small(share as u128, self.unit as u64));
                    let whole = share - frac;
                    give = whole;
                    let frac_nano = frac as u128;
                    if frac_nano > 0 || share_rem > 0 {
                        let sub = if share_rem == 0 {
                            0
                        } else {
                            mul_div_rem(share_rem, SCALE as u128, total_sw)
                                .ok_or_else(|| self.overflow(q))?
                                .0
                        };
                        // `frac_nano < unit ≤ SCALE` and `sub < SCALE` (`share_rem <
                        // total_sw`), so the record is below SCALE² + SCALE: no overflow.
                        self.records[i] = Some(frac_nano * SCALE as u128 + sub);
                    } else if corrected {
                        self.records[i] = None;
                    }
                }
                if give == 0 {
                    continue;
                }
                // No overflow: `give ≤ need = requestable − fs`, so `fs + give ≤ requestable`;
                // and the round's gives sum to at most Σ share ≤ amount (each share is a floor
                // of amount · sw / Σsw), so `rem` stays in `[0, amount]`.
                self.col[q].fs = c.fs + give;
                rem -= give;
                again |= need < share || (need == share && share_rem > 0);
            }
            if !again || rem == 0 {
                break;
            }
        }
        // Phase 3: leftover units to the recorded queues.
        if rem > 0 {
            rem = self.leftovers(tier, rem)?;
        }
        Ok(rem)
    }

    /// Phase 3 of one tier: the `rem` units phase 2 could not give, one unit at a time to the
    /// queues with a record, largest fraction first; returns what is left.
    ///
    /// # Complexity
    /// O(t log t) for the t recorded queues of the tier.
    fn leftovers(&mut self, tier: &[usize], mut rem: i128) -> Result<i128, DivisionError> {
        let corrected = self.options.mode == Mode::Corrected;
        let mut rec: Vec<(usize, u128)> = self.records[..tier.len()]
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.map(|f| (tier[i], f)))
            .collect();
        debug_assert!(rec.iter().all(|&(_, f)| f < FRAC_SCALE));
        rec.sort_by(|&(a, fa), &(b, fb)| {
            let qa = &self.h.queues[a];
            let qb = &self.h.queues[b];
            let ua = if qa.uid.is_empty() { &qa.name } else { &qa.uid };
            let ub = if qb.uid.is_empty() { &qb.name } else { &qb.uid };
            fb.cmp(&fa)
                .then(qa.creation.cmp(&qb.creation))
                .then(ua.cmp(ub))
                .then(qa.name.cmp(&qb.name))
                .then(a.cmp(&b))
        });
        for (q, _) in rec {
            if rem == 0 {
                break;
            }
            let mut g = rem.min(self.unit);
            if corrected {
                g = g.min(self.col[q].remaining());
            }
            if g > 0 {
                // `g ≤ rem`, so `rem` stays non-negative; in Kai mode the unit may take
                // `fs` past requestable, so that sum is checked.
                let fs = self.col[q].fs;
                self.col[q].fs = fs.checked_add(g).ok_or_else(|| self.overflow(q))?;
                rem -= g;
            }
        }
        Ok(rem)
    }
}
