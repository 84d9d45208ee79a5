//! Explanations as data: why a workload waits, rendered to upstream's condition messages
//! (kubernetes-sigs/kueue: `apis/kueue/v1beta2/workload_types.go`) and to a plain sentence.

use gpuquota_model::Amount;

use crate::world::{FlavorId, ResourceId, World};

/// Upstream's `QuotaReserved=False` reasons for a failed flavor assignment, in severity order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NoFitReason {
    /// Quota exists but is in use.
    WaitingForQuota,
    /// The request exceeds the most the queue could ever get.
    ExceedsMaxQuota,
    /// No flavor matches (taints, affinity, missing flavor, uncovered resource).
    NoMatchingFlavor,
}

impl NoFitReason {
    /// Upstream spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            NoFitReason::WaitingForQuota => "WaitingForQuota",
            NoFitReason::ExceedsMaxQuota => "ExceedsMaxQuota",
            NoFitReason::NoMatchingFlavor => "NoMatchingFlavor",
        }
    }
}

/// Why one flavor (or resource) could not simply be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlavorReason {
    /// The ClusterQueue names a flavor with no ResourceFlavor object.
    FlavorNotFound {
        /// Flavor.
        flavor: FlavorId,
    },
    /// The flavor has a `NoSchedule`/`NoExecute` taint the pods do not tolerate.
    UntoleratedTaint {
        /// Flavor.
        flavor: FlavorId,
        /// The taint as upstream prints it (`{key value effect <nil>}`).
        taint: String,
    },
    /// The pods' node selector / required affinity excludes the flavor's labels.
    NodeAffinityMismatch {
        /// Flavor.
        flavor: FlavorId,
    },
    /// Skipped while the assignment is computed again: not the flavor nominated earlier in
    /// the cycle.
    NotNominated {
        /// Flavor.
        flavor: FlavorId,
        /// The resource being assigned.
        resource: ResourceId,
    },
    /// The workload requests a resource the ClusterQueue does not cover.
    ResourceUnavailable {
        /// Resource.
        resource: ResourceId,
    },
    /// Earlier PodSets plus this one exceed the maximum capacity (`potentialAvailable`).
    ExceedsMaximum {
        /// Resource.
        resource: ResourceId,
        /// Flavor.
        flavor: FlavorId,
        /// Requests of earlier PodSets on this flavor.
        previous: Amount,
        /// This PodSet's request.
        request: Amount,
        /// Maximum capacity.
        maximum: Amount,
    },
    /// Not enough unused quota now.
    InsufficientUnused {
        /// Resource.
        resource: ResourceId,
        /// Flavor.
        flavor: FlavorId,
        /// How much more is needed.
        needed: Amount,
    },
}

impl FlavorReason {
    /// Upstream's message fragment.
    pub fn render(&self, w: &World) -> String {
        let fl = |f: &FlavorId| w.flavors[*f].name.as_str();
        let rs = |r: &ResourceId| &w.resources[*r];
        match self {
            FlavorReason::FlavorNotFound { flavor } => format!("flavor {} not found", fl(flavor)),
            FlavorReason::UntoleratedTaint { flavor, taint } => {
                format!("untolerated taint {taint} in flavor {}", fl(flavor))
            }
            FlavorReason::NodeAffinityMismatch { flavor } => {
                format!("flavor {} doesn't match node affinity", fl(flavor))
            }
            FlavorReason::ResourceUnavailable { resource } => {
                format!("resource {} unavailable in ClusterQueue", rs(resource))
            }
            FlavorReason::NotNominated { flavor, resource } => format!(
                "skipping flavor {} as it is not found in the nomination mapping for resource {}",
                fl(flavor),
                rs(resource)
            ),
            FlavorReason::ExceedsMaximum {
                resource,
                flavor,
                previous,
                request,
                maximum,
            } => {
                let r = rs(resource);
                format!(
                    "insufficient quota for {r} in flavor {}, previously considered podsets requests ({}) + current podset request ({}) > maximum capacity ({})",
                    fl(flavor),
                    r.format_amount(*previous),
                    r.format_amount(*request),
                    r.format_amount(*maximum)
                )
            }
            FlavorReason::InsufficientUnused {
                resource,
                flavor,
                needed,
            } => {
                let r = rs(resource);
                format!(
                    "insufficient unused quota for {r} in flavor {}, {} more needed",
                    fl(flavor),
                    r.format_amount(*needed)
                )
            }
        }
    }

    /// A plain-language sentence fragment.
    pub fn plain(&self, w: &World) -> String {
        let fl = |f: &FlavorId| w.flavors[*f].name.as_str();
        let rs = |r: &ResourceId| &w.resources[*r];
        match self {
            FlavorReason::FlavorNotFound { flavor } => {
                format!("flavor {} does not exist", fl(flavor))
            }
            FlavorReason::UntoleratedTaint { flavor, .. } => {
                format!("its pods do not tolerate a taint of flavor {}", fl(flavor))
            }
            FlavorReason::NodeAffinityMismatch { flavor } => {
                format!("its node selector rules out flavor {}", fl(flavor))
            }
            FlavorReason::ResourceUnavailable { resource } => {
                format!("its queue has no quota for {}", rs(resource))
            }
            FlavorReason::NotNominated { flavor, .. } => {
                format!(
                    "flavor {} was not the one first chosen this cycle",
                    fl(flavor)
                )
            }
            FlavorReason::ExceedsMaximum {
                resource,
                flavor,
                previous,
                request,
                maximum,
            } => {
                let r = rs(resource);
                format!(
                    "it needs {} of {r} on {} but the queue can never get more than {}",
                    r.format_amount(previous.saturating_add(*request)),
                    fl(flavor),
                    r.format_amount(*maximum)
                )
            }
            FlavorReason::InsufficientUnused {
                resource,
                flavor,
                needed,
            } => {
                let r = rs(resource);
                format!(
                    "it needs {} more {r} on {} than is free now",
                    r.format_amount(*needed),
                    fl(flavor)
                )
            }
        }
    }
}

/// Why one PodSet's flavors could not be assigned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodSetReasons {
    /// PodSet name.
    pub pod_set: String,
    /// Reasons (rendered sorted, as upstream does).
    pub reasons: Vec<FlavorReason>,
}

/// Why a workload is pending (structured).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pending {
    /// `spec.queueName` names no LocalQueue.
    LocalQueueMissing(String),
    /// The LocalQueue is stopped.
    LocalQueueInactive(String),
    /// The LocalQueue's ClusterQueue does not exist.
    ClusterQueueMissing(String),
    /// The ClusterQueue is inactive (missing flavor, stopped, cohort cycle).
    ClusterQueueInactive(String),
    /// The workload is deactivated (`spec.active: false`).
    Deactivated,
    /// Kueue refuses its resource claims (Dynamic Resource Allocation): upstream's condition
    /// message (reason `Misconfigured`).
    DraRefused(String),
    /// The workload's `kueue.x-k8s.io/admission-gated-by` annotation keeps it from
    /// admission (the gate's value, e.g. a controller's name).
    AdmissionGated(String),
    /// The namespace does not match the ClusterQueue's `namespaceSelector`.
    NamespaceMismatch,
    /// A namespace ResourceQuota would be exceeded.
    ResourceQuotaExceeded {
        /// Quota name.
        quota: String,
        /// The `hard` key.
        key: String,
        /// Requested by the workload.
        requested: String,
        /// Already used in the namespace.
        used: String,
        /// The hard cap.
        hard: String,
    },
    /// Flavor assignment failed.
    NoFit {
        /// Reason.
        reason: NoFitReason,
        /// Per PodSet.
        pod_sets: Vec<PodSetReasons>,
    },
    /// Preemption is needed but no workload may be preempted.
    NoCandidates {
        /// Per PodSet.
        pod_sets: Vec<PodSetReasons>,
    },
    /// Preemptions were issued; waiting for the victims to go away.
    WaitingForPreemptions {
        /// Per PodSet (why it did not fit directly).
        pod_sets: Vec<PodSetReasons>,
        /// Number of victims.
        count: usize,
    },
    /// Another workload admitted earlier in the cycle took the quota.
    NoLongerFits,
    /// Its preemption targets were already chosen by another workload this cycle.
    OverlappingTargets,
    /// Recomputed after overlapping targets, it fits once the preemptions issued this cycle
    /// complete (upstream `DeferredFit`).
    DeferredFit,
    /// The workload was preempted and has not been reconsidered yet.
    Preempted {
        /// Upstream's preemption message.
        message: String,
    },
    /// Moved to the inadmissible set with an equivalent workload that failed
    /// (`SchedulingEquivalenceHashing`); `reason` is that workload's reason.
    Bypassed {
        /// The failed equivalent workload's `QuotaReserved` reason.
        reason: &'static str,
    },
    /// StrictFIFO: the workload waits behind the queue's head.
    BehindHead {
        /// The head.
        head: String,
    },
    /// The run ended before the scheduler considered the workload.
    NotConsidered,
}

fn podsets_message(w: &World, ps: &[PodSetReasons]) -> String {
    let mut out = String::new();
    for p in ps {
        if !out.is_empty() {
            out.push_str("; ");
        }
        let mut rs: Vec<String> = p.reasons.iter().map(|r| r.render(w)).collect();
        rs.sort();
        out.push_str("couldn't assign flavors to pod set ");
        out.push_str(&p.pod_set);
        out.push_str(": ");
        for (i, r) in rs.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(r);
        }
    }
    out
}

impl Pending {
    /// Upstream's `QuotaReserved=False` reason.
    pub fn reason(&self) -> &'static str {
        match self {
            Pending::LocalQueueMissing(_)
            | Pending::ClusterQueueMissing(_)
            | Pending::NamespaceMismatch
            | Pending::DraRefused(_) => "Misconfigured",
            Pending::LocalQueueInactive(_) | Pending::ClusterQueueInactive(_) => "Suspended",
            Pending::Deactivated => "Deactivated",
            Pending::AdmissionGated(_) => "AdmissionGated",
            Pending::ResourceQuotaExceeded { .. } => "Forbidden",
            Pending::NoFit { reason, .. } => reason.as_str(),
            Pending::NoCandidates { .. } | Pending::NoLongerFits | Pending::OverlappingTargets => {
                "WaitingForQuota"
            }
            Pending::WaitingForPreemptions { .. } | Pending::DeferredFit => {
                "WaitingForPreemptedWorkloads"
            }
            // upstream: once the evicted workload's quota is released, `QuotaReserved=False`
            // gets `PendingEvaluation` with the eviction (preemption) message
            Pending::Preempted { .. } => "PendingEvaluation",
            Pending::Bypassed { reason } => reason,
            Pending::BehindHead { .. } | Pending::NotConsidered => "Pending",
        }
    }

    /// Upstream's condition message.
    pub fn message(&self, w: &World) -> String {
        match self {
            Pending::LocalQueueMissing(q) => format!("LocalQueue {q} doesn't exist"),
            Pending::LocalQueueInactive(q) => format!("LocalQueue {q} is inactive"),
            Pending::ClusterQueueMissing(q) => format!("ClusterQueue {q} doesn't exist"),
            Pending::ClusterQueueInactive(q) => format!("ClusterQueue {q} is inactive"),
            Pending::Deactivated => "The workload is deactivated".to_owned(),
            Pending::DraRefused(m) => m.clone(),
            Pending::AdmissionGated(g) => format!("Admission is gated by: {g}"),
            Pending::NamespaceMismatch => {
                "workload namespace doesn't match ClusterQueue selector".to_owned()
            }
            Pending::ResourceQuotaExceeded {
                quota,
                key,
                requested,
                used,
                hard,
            } => format!(
                "exceeded quota: {quota}, requested: {key}={requested}, used: {key}={used}, limited: {key}={hard}"
            ),
            Pending::NoFit { pod_sets, .. } | Pending::NoCandidates { pod_sets } => {
                podsets_message(w, pod_sets)
            }
            Pending::WaitingForPreemptions { pod_sets, count } => {
                format!(
                    "{}. Pending the preemption of {count} workload(s)",
                    podsets_message(w, pod_sets)
                )
            }
            Pending::NoLongerFits => {
                "Workload no longer fits after processing another workload".to_owned()
            }
            Pending::OverlappingTargets => {
                "Workload has overlapping preemption targets with another workload".to_owned()
            }
            Pending::DeferredFit => "Workload has overlapping preemption targets with another workload, but will fit after these preemptions complete".to_owned(),
            Pending::Preempted { message } => message.clone(),
            Pending::Bypassed { .. } => {
                "Bypassed scheduling evaluation because an equivalent workload recently failed"
                    .to_owned()
            }
            Pending::BehindHead { head } => {
                format!("StrictFIFO: waiting behind the head of the queue ({head})")
            }
            Pending::NotConsidered => {
                "the scheduler has not considered the workload yet".to_owned()
            }
        }
    }

    /// A plain-language sentence.
    pub fn plain(&self, w: &World) -> String {
        let first = |ps: &[PodSetReasons]| {
            ps.first()
                .and_then(|p| p.reasons.first())
                .map(|r| r.plain(w))
                .unwrap_or_else(|| "no flavor fits".to_owned())
        };
        match self {
            Pending::LocalQueueMissing(q) => {
                format!("It waits because its LocalQueue {q:?} does not exist.")
            }
            Pending::LocalQueueInactive(q) => {
                format!("It waits because its LocalQueue {q:?} is stopped.")
            }
            Pending::ClusterQueueMissing(q) => {
                format!("It waits because ClusterQueue {q:?} does not exist.")
            }
            Pending::ClusterQueueInactive(q) => {
                format!("It waits because ClusterQueue {q:?} is inactive.")
            }
            Pending::Deactivated => "It waits because it is deactivated.".to_owned(),
            Pending::DraRefused(m) => {
                format!("It waits because Kueue refuses its resource claims: {m}.")
            }
            Pending::AdmissionGated(g) => {
                format!("It waits because its admission is gated by {g:?}.")
            }
            Pending::NamespaceMismatch => {
                "It waits because its namespace may not use the ClusterQueue.".to_owned()
            }
            Pending::ResourceQuotaExceeded { quota, key, .. } => {
                format!("It waits because the namespace ResourceQuota {quota:?} caps {key}.")
            }
            Pending::NoFit { pod_sets, .. } => format!("It waits because {}.", first(pod_sets)),
            Pending::NoCandidates { pod_sets } => {
                format!(
                    "It waits because {} and nothing may be preempted for it.",
                    first(pod_sets)
                )
            }
            Pending::WaitingForPreemptions { count, .. } => {
                format!("It waits for {count} preempted workload(s) to leave.")
            }
            Pending::NoLongerFits => {
                "It waits because a workload admitted just before took the quota.".to_owned()
            }
            Pending::OverlappingTargets => {
                "It waits because another workload is already preempting the same victims."
                    .to_owned()
            }
            Pending::DeferredFit => {
                "It waits for workloads another preemptor is evicting; then it fits.".to_owned()
            }
            Pending::Preempted { .. } => {
                "It was preempted and waits to be admitted again.".to_owned()
            }
            Pending::Bypassed { .. } => {
                "It waits: an identical workload of its queue just failed to fit.".to_owned()
            }
            Pending::BehindHead { head } => {
                format!("It waits behind {head}, the head of its StrictFIFO queue.")
            }
            Pending::NotConsidered => "It has not been considered yet.".to_owned(),
        }
    }
}
