//! Reading the queues: the division inputs, the min-runtimes (inherited down the tree) and
//! the orphans KAI drops.

use super::*;

/// The queues read from the model, in name order, orphans left out.
pub(super) struct Queues<'m> {
    /// Queue name → index.
    pub(super) index: BTreeMap<&'m str, usize>,
    /// Division inputs (requests still 0).
    pub(super) inputs: Vec<QueueInput>,
    /// Per-queue settings, min-runtimes inherited down the tree.
    pub(super) infos: Vec<QueueInfo>,
}

/// Reads every queue but the `orphans`: parent, resources, priority and min-runtimes; every
/// bad field is recorded in `problems` and read as its default.
///
/// # Complexity
/// O(Q log Q) for Q queues.
pub(super) fn read_queues<'m>(
    model: &'m Model,
    orphans: &[String],
    problems: &mut Diagnostics,
) -> Queues<'m> {
    // Queues (BTreeMap order = name order; parents resolved by name).
    let names: Vec<&String> = model
        .queues
        .keys()
        .filter(|n| orphans.binary_search(n).is_err())
        .collect();
    let index: BTreeMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut inputs = Vec::with_capacity(names.len());
    let mut infos = Vec::with_capacity(names.len());
    for (name, q) in &model.queues {
        if orphans.binary_search(name).is_ok() {
            continue;
        }
        let parent = match q.spec.parent_queue.as_deref().filter(|p| !p.is_empty()) {
            None => None,
            Some(p) => {
                let found = index.get(p).copied().ok_or_else(|| {
                    not_found(
                        "Queue",
                        name,
                        "spec.parentQueue",
                        format!("queue {p:?} does not exist"),
                    )
                });
                keep(problems, found)
            }
        };
        let res = q.spec.resources.as_ref();
        let resources = [
            queue_resource(
                name,
                Resource::Gpu,
                res.and_then(|r| r.gpu.as_ref()),
                problems,
            ),
            queue_resource(
                name,
                Resource::Cpu,
                res.and_then(|r| r.cpu.as_ref()),
                problems,
            ),
            queue_resource(
                name,
                Resource::Memory,
                res.and_then(|r| r.memory.as_ref()),
                problems,
            ),
        ];
        inputs.push(QueueInput {
            name: name.clone(),
            parent: parent.map(crate::ids::QueueId::new),
            priority: q.priority(),
            creation: q.metadata.creation_timestamp,
            uid: q.metadata.uid.clone().unwrap_or_default(),
            resources,
        });
        infos.push(QueueInfo {
            name: name.clone(),
            preempt_min_runtime: keep(
                problems,
                duration(
                    "Queue",
                    name,
                    "spec.preemptMinRuntime",
                    &q.spec.preempt_min_runtime,
                ),
            )
            .flatten(),
            reclaim_min_runtime: keep(
                problems,
                duration(
                    "Queue",
                    name,
                    "spec.reclaimMinRuntime",
                    &q.spec.reclaim_min_runtime,
                ),
            )
            .flatten(),
        });
    }
    // Inherit min-runtimes down the tree, parents first (queues on a parent cycle are not
    // reached; the hierarchy reports the cycle).
    let parents: Vec<Option<usize>> = inputs
        .iter()
        .map(|q| q.parent.map(crate::ids::QueueId::index))
        .collect();
    for i in top_down(&parents) {
        if let Some(p) = parents[i] {
            if infos[i].preempt_min_runtime.is_none() {
                infos[i].preempt_min_runtime = infos[p].preempt_min_runtime;
            }
            if infos[i].reclaim_min_runtime.is_none() {
                infos[i].reclaim_min_runtime = infos[p].reclaim_min_runtime;
            }
        }
    }

    Queues {
        index,
        inputs,
        infos,
    }
}

pub(super) fn queue_resource(
    name: &str,
    r: Resource,
    res: Option<&QueueResource>,
    problems: &mut Diagnostics,
) -> ResourceParams {
    // KAI units: GPU devices, CPU millicores, memory MB (10⁶ bytes).
    let extra = if r == Resource::Memory { 6 } else { 0 };
    let field = |f: &str| format!("spec.resources.{r}.{f}");
    let conv = |q: &Quantity, f: &str| -> Result<Option<i128>, Diagnostic> {
        if q.is_negative() {
            let (m, e) = q.as_decimal();
            if m == -1 && e == 0 {
                return Ok(None);
            }
            return Err(invalid(
                "Queue",
                name,
                &field(f),
                "negative value other than -1",
            ));
        }
        from_quantity(q, extra)
            .map(Some)
            .ok_or_else(|| too_large("Queue", name, &field(f), "value too large"))
    };
    let Some(res) = res else {
        return match r {
            // A missing gpu block reads like its missing fields: quota 0, weight 0, no limit.
            Resource::Gpu => ResourceParams {
                deserved: Some(0),
                ..ResourceParams::default()
            },
            _ => ResourceParams {
                deserved: None,
                weight: SCALE,
                limit: None,
                request: 0,
                usage: 0,
            },
        };
    };
    // A bad value is recorded and read as its default (quota 0, no limit, weight 0), so the
    // other fields and objects are still checked.
    let deserved = match &res.quota {
        Some(q) => keep(problems, conv(q, "quota")).unwrap_or(Some(0)),
        None => Some(0),
    };
    let limit = match &res.limit {
        Some(q) => keep(problems, conv(q, "limit")).flatten(),
        None => None,
    };
    let weight = match &res.over_quota_weight {
        // A queue with unlimited deserved takes min(total, request) in phase 1 and so never
        // takes part in over-quota division: its weight is never read. KAI's own test harness
        // gives such departments weight = quota = -1, so upstream tolerates it; so do we.
        Some(w) if w.is_negative() && deserved.is_none() => 0,
        Some(w) if w.is_negative() => {
            problems.push(invalid(
                "Queue",
                name,
                &field("overQuotaWeight"),
                "negative weight",
            ));
            0
        }
        Some(w) => from_quantity(w, 0).unwrap_or_else(|| {
            problems.push(invalid(
                "Queue",
                name,
                &field("overQuotaWeight"),
                "value too large",
            ));
            0
        }),
        None => 0,
    };
    ResourceParams {
        deserved,
        weight,
        limit,
        request: 0,
        usage: 0,
    }
}

pub(super) fn duration(
    kind: &'static str,
    name: &str,
    field: &str,
    s: &Option<String>,
) -> Result<Option<i128>, Diagnostic> {
    match s {
        None => Ok(None),
        Some(s) => parse_go_duration(s)
            .map(Some)
            .ok_or_else(|| invalid(kind, name, field, format!("{s:?} is not a Go duration"))),
    }
}

/// Queues whose parent chain reaches a missing queue (KAI's `cleanQueueOrphans`), in name
/// order.
///
/// # Complexity
/// O(Q log Q): each queue is walked once; a parent cycle ends the walk (the hierarchy reports
/// it).
pub(super) fn orphan_queues(model: &Model) -> Vec<String> {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum St {
        Unknown,
        Visiting,
        Ok,
        Orphan,
    }
    let names: Vec<&String> = model.queues.keys().collect();
    let idx: BTreeMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    // Parent: None = root, Some(None) = missing, Some(Some(i)) = queue i.
    let parent: Vec<Option<Option<usize>>> = model
        .queues
        .values()
        .map(|q| {
            q.spec
                .parent_queue
                .as_deref()
                .filter(|p| !p.is_empty())
                .map(|p| idx.get(p).copied())
        })
        .collect();
    let mut st = vec![St::Unknown; names.len()];
    let mut stack = Vec::new();
    for start in 0..names.len() {
        let mut cur = start;
        let end = loop {
            match st[cur] {
                St::Ok | St::Visiting => break St::Ok,
                St::Orphan => break St::Orphan,
                St::Unknown => {}
            }
            st[cur] = St::Visiting;
            stack.push(cur);
            match parent[cur] {
                None => break St::Ok,
                Some(None) => break St::Orphan,
                Some(Some(p)) => cur = p,
            }
        };
        for q in stack.drain(..) {
            st[q] = end;
        }
    }
    names
        .iter()
        .zip(&st)
        .filter(|(_, s)| **s == St::Orphan)
        .map(|(n, _)| (*n).clone())
        .collect()
}

/// Queue indices in top-down order (every queue after its parent), from the roots; queues
/// on a parent cycle are left out.
///
/// # Complexity
/// O(Q).
pub(super) fn top_down(parents: &[Option<usize>]) -> Vec<usize> {
    let n = parents.len();
    let mut children = vec![Vec::new(); n];
    let mut order = Vec::with_capacity(n);
    for (i, p) in parents.iter().enumerate() {
        match p {
            Some(p) if *p < n => children[*p].push(i),
            Some(_) => {}
            None => order.push(i),
        }
    }
    let mut head = 0;
    while head < order.len() {
        let q = order[head];
        head += 1;
        order.extend_from_slice(&children[q]);
    }
    order
}
