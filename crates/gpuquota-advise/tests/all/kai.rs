//! KAI Queue fields as knobs: the advice over a KAI scenario against every point of its
//! grid, each simulated and measured here from the KAI report itself.

use std::path::{Path, PathBuf};

use gpuquota_advise::{Options, advise, parse, prepare, split_queues};
use gpuquota_sim::kai::{KaiOutcome, KaiRunEnd};

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// The objectives of `tests/data/kai/advice.yaml` measured straight from one KAI report:
/// (lostGpuHours in milli-GPU-hours, meanTimeToAdmission{class=train} in ms,
/// utilisation{cardType=NVIDIA-H200} in tenths of a percent), and whether the inference
/// server started within a minute (never started: it waits until the end).
fn measure(o: &KaiOutcome) -> ((i64, i64, i64), bool) {
    let gpus = |nano: i128| (nano / 1_000_000_000) as i64; // whole GPUs here
    let (mut lost, mut used) = (0i64, 0i64);
    let mut train = Vec::new();
    let mut infer_ok = true;
    for j in &o.jobs {
        for r in &j.runs {
            let gpu_ms = gpus(r.usage.0[0]) * (r.end_ms - r.start_ms);
            used += gpu_ms;
            if matches!(r.end, KaiRunEnd::Evicted { .. }) {
                lost += gpu_ms;
            }
        }
        let wait = j.runs.first().map_or(o.end_ms, |r| r.start_ms) - j.created_ms;
        match j.class.as_str() {
            "train" => train.push(wait),
            "inference" => infer_ok &= wait <= 60_000,
            c => panic!("class {c}"),
        }
    }
    let mean = train.iter().sum::<i64>() / train.len() as i64;
    // 8 cards over the 6 h window
    let util = (used as f64 / (8.0 * o.end_ms as f64) * 1000.0).round() as i64;
    ((lost / 3600, mean, util), infer_ok)
}

/// Three KAI knobs (`infer`'s GPU quota 0/2/4, `train`'s GPU limit 4/unlimited, its
/// over-quota weight 0/1): 12 configurations. The test simulates every one through the
/// evaluator and measures it from the KAI report; the advice's front must be exactly the
/// non-dominated feasible figures, each row standing for every configuration with them.
///
/// By hand (one 8-GPU node, 6 h): `infer`'s server (4 GPUs, priority 125, so it must fit
/// its queue's deserved quota) never starts with a quota of 0 or 2 (p95 wait 6 h − 30 min =
/// 5 h 30 m); with 4 it starts at 00:30 either by free cards (train limited to 4: train-b
/// waits until 02:00, mean train wait 1 h, 16 + 4 = 20 of 48 GPU-hours = 41.7 %) or by
/// reclaiming train-b (unlimited: 4 GPUs × 30 min = 2 GPU-hours lost, train-b runs again
/// 01:30–03:30, 22 of 48 = 45.8 %, mean train wait 0). The weight changes neither, so
/// each front row has one alike; the recommendation loses nothing and changes two knobs,
/// not three (the weight stays 1).
#[test]
fn kai_knobs_front_is_the_exact_pareto_front_of_the_grid() {
    let base = dir("tests/data/kai");
    let read = gpuquota_testkit::files::in_dir(&base);
    let advice_text = std::fs::read_to_string(base.join("advice.yaml")).unwrap();
    let (_, text) = read("sim.yaml").unwrap();
    let prepared = prepare("sim.yaml", &text, "sim", &read).unwrap();
    assert!(prepared.scenario.is_none());
    let plan = parse("advice.yaml", &advice_text, &|p| {
        split_queues(&prepared.model, p)
    })
    .unwrap();
    let a = advise(&plan, &prepared, &Options::default()).unwrap();
    assert_eq!(
        (a.search.method.as_str(), a.search.points),
        ("exhaustive", 12)
    );
    assert_eq!(a.search.simulated, 13);

    // every point, simulated and measured independently of the advisor's reading
    let figures: Vec<((i64, i64, i64), bool)> = (0..plan.points())
        .map(|i| {
            let (_, o) = prepared
                .evaluator
                .run_kai(&plan.settings(&plan.coordinates(i)))
                .unwrap();
            measure(&o)
        })
        .collect();
    let dominates = |x: &(i64, i64, i64), y: &(i64, i64, i64)| {
        // minimize, minimize, maximize
        x.0 <= y.0 && x.1 <= y.1 && x.2 >= y.2 && x != y
    };
    let feasible: Vec<usize> = (0..figures.len()).filter(|&i| figures[i].1).collect();
    let mut front: Vec<(i64, i64, i64)> = feasible
        .iter()
        .map(|&i| figures[i].0)
        .filter(|x| !feasible.iter().any(|&j| dominates(&figures[j].0, x)))
        .collect();
    front.sort_unstable();
    front.dedup();
    assert_eq!(front, [(0, 3_600_000, 417), (2000, 0, 458)]);
    assert_eq!(feasible, [8, 9, 10, 11]);

    let got: Vec<(i64, i64, i64)> = a
        .front
        .iter()
        .map(|r| {
            (
                (r.figures["lostGpuHours"].as_f64().unwrap() * 1000.0).round() as i64,
                r.figures["meanTimeToAdmission{class=train}"]
                    .as_i64()
                    .unwrap(),
                (r.figures["utilisation{cardType=NVIDIA-H200}"]
                    .as_f64()
                    .unwrap()
                    * 10.0)
                    .round() as i64,
            )
        })
        .collect();
    let mut sorted = got.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, front);
    for (r, g) in a.front.iter().zip(&got) {
        let with: Vec<usize> = feasible
            .iter()
            .copied()
            .filter(|&i| figures[i].0 == *g)
            .collect();
        assert!(with.contains(&r.point.unwrap()));
        assert_eq!(r.alike + 1, with.len());
        assert!(r.feasible);
    }
    let rec = a.recommended.as_ref().unwrap();
    let knobs: Vec<&str> = rec.knobs.values().map(String::as_str).collect();
    assert_eq!(knobs, ["4", "4", "1"]);
    assert_eq!(rec.point, Some(9));
    // the scenario as written: the server never starts
    assert_eq!(
        a.current.figures["p95TimeToAdmission{class=inference}"].as_i64(),
        Some(19_800_000)
    );
    assert_eq!(
        a.current.figures["utilisation{cardType=NVIDIA-H200}"].as_f64(),
        Some(33.3)
    );
    let current: Vec<Option<&str>> = a.knobs.iter().map(|k| k.current.as_deref()).collect();
    assert_eq!(current, [Some("0"), Some("-1"), Some("1")]);
    assert!(
        a.explanation.iter().any(|l| l
            == "queues.train.gpu.overQuotaWeight at 1; moving it to 0: nothing changes."),
        "{:#?}",
        a.explanation
    );
}

/// A pool of GPU quota shared among KAI leaf queues: `queues.*.gpu.quota` with `split: 4`
/// in steps of 4 is `infer:4 train:0` or `infer:0 train:4`; only the first lets the
/// server start.
#[test]
fn kai_quota_split_among_leaf_queues() {
    let base = dir("tests/data/kai");
    let read = gpuquota_testkit::files::in_dir(&base);
    let (_, text) = read("sim.yaml").unwrap();
    let prepared = prepare("sim.yaml", &text, "sim", &read).unwrap();
    assert_eq!(
        split_queues(&prepared.model, "queues.*.gpu.quota"),
        [
            ("infer".to_owned(), "queues.infer.gpu.quota".to_owned()),
            ("train".to_owned(), "queues.train.gpu.quota".to_owned())
        ]
    );
    let advice = "apiVersion: gpuquota.dev/v1alpha1\nkind: Advice\nmetadata: {name: split}\nspec:\n  scenario: sim.yaml\n  vary:\n  - {path: queues.*.gpu.quota, split: 4, step: 4}\n  constraints:\n  - p95TimeToAdmission{class=inference} <= 1m\n  objectives:\n  - minimize: lostGpuHours\n";
    let plan = parse("split.yaml", advice, &|p| split_queues(&prepared.model, p)).unwrap();
    assert_eq!(plan.knobs[0].labels, ["infer:4 train:0", "infer:0 train:4"]);
    let a = advise(&plan, &prepared, &Options::default()).unwrap();
    let rec = a.recommended.as_ref().unwrap();
    assert_eq!(rec.knobs["queues.*.gpu.quota"], "infer:4 train:0");
    // train keeps nothing deserved: the server reclaims train-b (4 GPUs × 30 min)
    assert_eq!(rec.figures["lostGpuHours"].as_f64(), Some(2.0));
}
