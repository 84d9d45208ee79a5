//! The simulator's kernel: one event queue and one loop over virtual time, knowing no
//! engine. A [`Driver`] (one per engine, see [`crate::driver`]) is built from the model
//! once; the kernel then pops the queue instant by instant and hands each instant to it:
//! [`Driver::instant`] as the instant begins, [`Driver::apply`] for each of its events in
//! the queue's order (an event the driver pushes at the same instant is applied in the same
//! instant), and [`Driver::decide`] once they are all applied. The run stops before the
//! first instant at or after the end, or when the queue is empty; the driver reports.
//!
//! A run with a timeline ([`run`] given a platform) also holds the platform's [`Model`]: at
//! each timeline event's instant, after every other event of that instant, the kernel
//! applies the event to the model ([`crate::timeline::apply_in_place`]) and hands the
//! changes to [`Driver::timeline`], before the instant's decision.
//!
//! The queue's order is total: (time, kind rank, tie-break index, generation), the ranks
//! in the order of [`Kind`]'s variants. Two runs of the same scenario pop the same sequence.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use gpuquota_model::Model;

use crate::timeline;

/// What an event is; at one instant, events apply in the order of these variants (their
/// rank), then by index, then by generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A run of workload `index` ends (stale when `generation` is no longer the run's).
    Completion {
        /// The workload.
        index: u32,
        /// The run it ends.
        generation: u32,
    },
    /// Workload `index` arrives (or its controller retries it).
    Arrival(u32),
    /// The driver's own wake-up: the next scheduling cycle after a cycle latency, a
    /// session, a sample.
    Tick,
    /// A budget period boundary: a budget is spent or renews ([`crate::budget`]).
    Budget,
    /// Workload `index`, held back from its queue, goes back to it.
    Requeue(u32),
    /// Event `index` of the run's timeline ([`Platform::events`], sorted), applied after
    /// every other kind at its instant: the kernel changes the platform's model and hands
    /// the change to [`Driver::timeline`].
    Timeline(usize),
    /// A drained node's `drainDeadline` (node `index` of the driver's capacity; stale when
    /// `generation` is no longer the drain's): its pods still running are evicted. After
    /// the timeline events of its instant, so a node back (`up`) at that instant is spared.
    Deadline {
        /// The node.
        index: u32,
        /// The drain it ends.
        generation: u32,
    },
    /// The pods of evicted workload `index` are gone (its termination grace period ended):
    /// its quota is released (stale when `generation` is no longer the run's). After the
    /// kinds above at its instant, before `PodsDone` and `PodsReady`.
    Released {
        /// The workload.
        index: u32,
        /// The run whose pods terminated.
        generation: u32,
    },
    /// Some pods of workload `index` finish while the others run (`gpuquota.dev/pod-runtimes`):
    /// their share of its quota is released (stale when `generation` is no longer the run's).
    /// After the kinds above at its instant, before `PodsReady`.
    PodsDone {
        /// The workload.
        index: u32,
        /// The run.
        generation: u32,
    },
    /// Workload `index`'s pods may be ready, or its PodsReady timeout expires (stale when
    /// `generation` is no longer its admission; Kueue's `waitForPodsReady`). After every
    /// other kind at its instant, so a completion at that instant ends the run first.
    PodsReady {
        /// The workload.
        index: u32,
        /// The admission it belongs to.
        generation: u32,
    },
}

/// An event: when, and what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Event {
    /// ms since the start.
    pub(crate) t: i64,
    /// What.
    pub(crate) kind: Kind,
}

/// The packed order key of an event: (time, rank, index, generation).
type Key = (i64, u8, u32, u32);

const COMPLETION: u8 = 0;
const ARRIVAL: u8 = 1;
const TICK: u8 = 2;
const BUDGET: u8 = 3;
const REQUEUE: u8 = 4;
const TIMELINE: u8 = 5;
const DEADLINE: u8 = 6;
const RELEASED: u8 = 7;
const PODS_DONE: u8 = 8;
const PODS_READY: u8 = 9;

impl Event {
    /// An event of `kind` at `t`.
    pub(crate) fn new(t: i64, kind: Kind) -> Event {
        Event { t, kind }
    }

    fn key(self) -> Key {
        let t = self.t;
        match self.kind {
            Kind::Completion { index, generation } => (t, COMPLETION, index, generation),
            Kind::Arrival(i) => (t, ARRIVAL, i, 0),
            Kind::Tick => (t, TICK, 0, 0),
            Kind::Budget => (t, BUDGET, 0, 0),
            Kind::Requeue(i) => (t, REQUEUE, i, 0),
            Kind::Deadline { index, generation } => (t, DEADLINE, index, generation),
            Kind::Released { index, generation } => (t, RELEASED, index, generation),
            Kind::PodsDone { index, generation } => (t, PODS_DONE, index, generation),
            Kind::PodsReady { index, generation } => (t, PODS_READY, index, generation),
            Kind::Timeline(i) => {
                let i = i as u64;
                (t, TIMELINE, (i >> 32) as u32, i as u32)
            }
        }
    }

    fn of_key((t, rank, index, generation): Key) -> Event {
        let kind = match rank {
            COMPLETION => Kind::Completion { index, generation },
            ARRIVAL => Kind::Arrival(index),
            TICK => Kind::Tick,
            BUDGET => Kind::Budget,
            REQUEUE => Kind::Requeue(index),
            DEADLINE => Kind::Deadline { index, generation },
            RELEASED => Kind::Released { index, generation },
            PODS_DONE => Kind::PodsDone { index, generation },
            PODS_READY => Kind::PodsReady { index, generation },
            _ => Kind::Timeline(((u64::from(index) << 32) | u64::from(generation)) as usize),
        };
        Event { t, kind }
    }
}

/// The pending events: the arrivals known before the run, sorted once, beside a binary
/// heap of the events the run makes. A trace's 10⁵ arrivals then never sit in the heap,
/// whose pushes and pops stay O(log events made). Both hold the same total order and an
/// event is never in both, so taking the smaller head of the two yields one heap's own
/// sequence.
#[derive(Default)]
pub(crate) struct Queue {
    heap: BinaryHeap<Reverse<Key>>,
    sorted: Vec<Key>,
    next: usize,
}

impl Queue {
    /// A queue of `known` (in any order; sorted here once) and nothing else.
    ///
    /// # Complexity
    /// O(n log n).
    pub(crate) fn with_known(known: impl IntoIterator<Item = Event>) -> Queue {
        let mut sorted: Vec<Key> = known.into_iter().map(Event::key).collect();
        sorted.sort_unstable();
        Queue {
            heap: BinaryHeap::new(),
            sorted,
            next: 0,
        }
    }

    /// Adds an event. O(log events).
    pub(crate) fn push(&mut self, e: Event) {
        self.heap.push(Reverse(e.key()));
    }

    fn head(&self) -> Option<(Key, bool)> {
        match (self.heap.peek(), self.sorted.get(self.next)) {
            (Some(Reverse(h)), Some(a)) if a < h => Some((*a, true)),
            (Some(Reverse(h)), _) => Some((*h, false)),
            (None, Some(a)) => Some((*a, true)),
            (None, None) => None,
        }
    }

    /// The time of the next event.
    pub(crate) fn next_time(&self) -> Option<i64> {
        self.head().map(|(k, _)| k.0)
    }

    /// Removes and returns the next event when it is at `t`. O(log events).
    pub(crate) fn pop_at(&mut self, t: i64) -> Option<Event> {
        let (k, known) = self.head()?;
        if k.0 != t {
            return None;
        }
        if known {
            self.next += 1;
        } else {
            self.heap.pop();
        }
        Some(Event::of_key(k))
    }

    /// Whether an event other than a budget boundary is pending. O(events) at worst.
    pub(crate) fn has_other_than_budget(&self) -> bool {
        self.next < self.sorted.len() || self.heap.iter().any(|e| e.0.1 != BUDGET)
    }
}

/// An engine as the kernel drives it. Building it (from the model, through the engine's
/// own entry point, once) is the driver's constructor; the kernel then calls these.
pub(crate) trait Driver {
    /// What the run produces.
    type Report;

    /// An instant `t` begins (the first event at `t` is pending).
    fn instant(&mut self, t: i64);

    /// Applies one event of the current instant; may push events (at this instant or
    /// later).
    fn apply(&mut self, e: Event, queue: &mut Queue);

    /// Every event at `t` is applied: the engine decides (admits, preempts, schedules its
    /// next wake-ups). False ends the run here (a driver's own end: its last session, a
    /// limit, an error), before any later event is applied.
    fn decide(&mut self, t: i64, queue: &mut Queue) -> bool;

    /// Timeline event `event` at `t` (after every other event of `t`, before the
    /// decision): the kernel has changed `model` (the platform, every workload included)
    /// as `changes` say. The driver makes its engine follow (see [`crate::timeline`]'s
    /// module docs for what each change means) and may push events. False ends the run
    /// here (the driver keeps the error it reports). The default does nothing: a driver
    /// whose engine takes no timeline is never run with one.
    fn timeline(
        &mut self,
        t: i64,
        event: &timeline::Event,
        changes: &timeline::Changes,
        model: &Model,
        queue: &mut Queue,
    ) -> bool {
        let _ = (t, event, changes, model, queue);
        true
    }

    /// The run ended (the queue is empty, or its next instant is at or after the end).
    fn report(self) -> Self::Report;
}

/// The platform a run with a timeline changes: its events (sorted by time, then document
/// order) and the model they change, owned by the kernel for the run.
pub(crate) struct Platform<'t> {
    /// The events.
    pub(crate) events: &'t [timeline::Event],
    /// The model as the events applied so far leave it.
    pub(crate) model: Model,
}

/// Runs `driver` over `queue` until the queue is empty, its next instant is at or after
/// `end`, or the driver's decision ends the run; with the platform's timeline (`platform`,
/// absent for a run without one) each event `i` of `platform.events` is queued as
/// [`Kind::Timeline`]`(i)` at its instant; when it pops, the kernel applies it to
/// `platform.model` and calls [`Driver::timeline`] (a `Timeline` event without a platform
/// goes to [`Driver::apply`]).
///
/// # Complexity
/// O(events × log events) for the queue, plus the driver's own cost of each event and of
/// each instant's decision (at most one decision per distinct instant), plus
/// O(objects changed × (log objects + object size)) per timeline event
/// ([`timeline::apply_in_place`]) and the driver's own cost of it.
pub(crate) fn run<D: Driver>(
    mut driver: D,
    mut queue: Queue,
    end: Option<i64>,
    mut platform: Option<Platform<'_>>,
) -> D::Report {
    if let Some(p) = &platform {
        for (i, e) in p.events.iter().enumerate() {
            queue.push(Event::new(e.at_ms, Kind::Timeline(i)));
        }
    }
    'run: while let Some(t) = queue.next_time() {
        if end.is_some_and(|e| t >= e) {
            break;
        }
        driver.instant(t);
        while let Some(e) = queue.pop_at(t) {
            match (e.kind, platform.as_mut()) {
                (Kind::Timeline(i), Some(p)) if i < p.events.len() => {
                    let event = &p.events[i];
                    let changes = timeline::apply_in_place(&mut p.model, event);
                    if !driver.timeline(t, event, &changes, &p.model, &mut queue) {
                        break 'run;
                    }
                }
                _ => driver.apply(e, &mut queue),
            }
        }
        if !driver.decide(t, &mut queue) {
            break;
        }
    }
    driver.report()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The queue pops by time, then kind rank, then index, then generation, whichever
    /// side holds the event.
    #[test]
    fn total_order_across_both_sides() {
        let mut q = Queue::with_known([
            Event::new(5, Kind::Arrival(2)),
            Event::new(5, Kind::Arrival(1)),
            Event::new(9, Kind::Arrival(0)),
        ]);
        q.push(Event::new(5, Kind::Budget));
        q.push(Event::new(
            5,
            Kind::Completion {
                index: 7,
                generation: 3,
            },
        ));
        q.push(Event::new(
            5,
            Kind::Completion {
                index: 7,
                generation: 1,
            },
        ));
        q.push(Event::new(5, Kind::Timeline(1 << 40)));
        q.push(Event::new(5, Kind::Timeline(3)));
        q.push(Event::new(5, Kind::Requeue(0)));
        q.push(Event::new(5, Kind::Tick));
        assert_eq!(q.next_time(), Some(5));
        assert!(q.pop_at(4).is_none());
        let mut at5 = Vec::new();
        while let Some(e) = q.pop_at(5) {
            at5.push(e.kind);
        }
        assert_eq!(
            at5,
            vec![
                Kind::Completion {
                    index: 7,
                    generation: 1
                },
                Kind::Completion {
                    index: 7,
                    generation: 3
                },
                Kind::Arrival(1),
                Kind::Arrival(2),
                Kind::Tick,
                Kind::Budget,
                Kind::Requeue(0),
                Kind::Timeline(3),
                Kind::Timeline(1 << 40),
            ]
        );
        assert!(q.has_other_than_budget());
        assert_eq!(q.pop_at(9), Some(Event::new(9, Kind::Arrival(0))));
        assert_eq!(q.next_time(), None);
        q.push(Event::new(12, Kind::Budget));
        assert!(!q.has_other_than_budget());
    }

    /// A driver that records what the kernel hands it.
    struct Log {
        seen: Vec<String>,
    }

    impl Driver for Log {
        type Report = Vec<String>;
        fn instant(&mut self, t: i64) {
            self.seen.push(format!("@{t}"));
        }
        fn apply(&mut self, e: Event, queue: &mut Queue) {
            self.seen.push(format!("{:?}", e.kind));
            if let Kind::Arrival(i) = e.kind {
                // a zero-length run ends in the same instant, a 10 ms one later
                queue.push(Event::new(
                    e.t + 10 * i64::from(i),
                    Kind::Completion {
                        index: i,
                        generation: 0,
                    },
                ));
            }
        }
        fn decide(&mut self, t: i64, _: &mut Queue) -> bool {
            self.seen.push(format!("decide {t}"));
            t < 10
        }
        fn report(self) -> Vec<String> {
            self.seen
        }
    }

    /// Events pushed at the current instant apply in it, before its one decision; the run
    /// stops before the end, or when a decision says so.
    #[test]
    fn instants_then_decisions() {
        let q = Queue::with_known([
            Event::new(0, Kind::Arrival(0)),
            Event::new(0, Kind::Arrival(1)),
        ]);
        let seen = run(Log { seen: Vec::new() }, q, Some(10), None);
        assert_eq!(
            seen,
            vec![
                "@0",
                "Arrival(0)",
                "Completion { index: 0, generation: 0 }",
                "Arrival(1)",
                "decide 0",
            ]
        );
        let q = Queue::with_known([Event::new(0, Kind::Arrival(1))]);
        let seen = run(Log { seen: Vec::new() }, q, None, None);
        assert_eq!(
            seen,
            vec![
                "@0",
                "Arrival(1)",
                "decide 0",
                "@10",
                "Completion { index: 1, generation: 0 }",
                "decide 10",
            ]
        );
    }

    /// A driver that records the timeline hook's calls.
    struct Timed {
        seen: Vec<String>,
    }

    impl Driver for Timed {
        type Report = Vec<String>;
        fn instant(&mut self, t: i64) {
            self.seen.push(format!("@{t}"));
        }
        fn apply(&mut self, e: Event, _: &mut Queue) {
            self.seen.push(format!("{:?}", e.kind));
        }
        fn timeline(
            &mut self,
            t: i64,
            event: &timeline::Event,
            changes: &timeline::Changes,
            model: &Model,
            _: &mut Queue,
        ) -> bool {
            self.seen.push(format!(
                "timeline[{}] at {t}: {} change(s), {} ClusterQueue(s)",
                event.index,
                changes.objects.len(),
                model.cluster_queues.len()
            ));
            true
        }
        fn decide(&mut self, t: i64, _: &mut Queue) -> bool {
            self.seen.push(format!("decide {t}"));
            true
        }
        fn report(self) -> Vec<String> {
            self.seen
        }
    }

    /// Timeline events are queued at their instants, apply after the other events of the
    /// instant and before its decision, change the kernel's model, and an event at or
    /// after the end never applies.
    #[test]
    fn timeline_events_change_the_model_then_reach_the_driver() {
        let cq = gpuquota_model::import_str(
            "cq.yaml",
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: b}\nspec: {namespaceSelector: {}}\n",
        )
        .expect("valid")
        .model;
        let object = cq.cluster_queues["b"].clone();
        let put = |index: usize, at_ms: i64| timeline::Event {
            index,
            at_ms,
            objects: vec![timeline::ObjectOp {
                field: format!("spec.timeline[{index}].apply[0]"),
                op: timeline::Op::Put {
                    key: "b".into(),
                    object: timeline::Object::ClusterQueue(Box::new(object.clone())),
                },
            }],
            nodes: timeline::NodeEvents::default(),
            mig_layout: None,
        };
        let events = vec![put(1, 5), put(0, 7), put(2, 20)];
        let q = Queue::with_known([Event::new(5, Kind::Arrival(0))]);
        let platform = Platform {
            events: &events,
            model: Model::default(),
        };
        let seen = run(Timed { seen: Vec::new() }, q, Some(20), Some(platform));
        assert_eq!(
            seen,
            vec![
                "@5",
                "Arrival(0)",
                "timeline[1] at 5: 1 change(s), 1 ClusterQueue(s)",
                "decide 5",
                "@7",
                "timeline[0] at 7: 1 change(s), 1 ClusterQueue(s)",
                "decide 7",
            ]
        );
    }
}
