//! The search against the exhaustive grid: the decomposed search returns exactly the front,
//! recommendation and figures that simulating every configuration gives.

use std::path::{Path, PathBuf};

use gpuquota_advise::{Advice, Options, advise, parse, prepare, split_queues};

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// The advice of `advice_text` over the scenario in `base`, searched and exhaustive.
fn both(base: &Path, advice_text: &str) -> (Advice, Advice) {
    let read = gpuquota_testkit::files::in_dir(base);
    let v: serde_json::Value = serde_saphyr::from_str(advice_text).unwrap();
    let scenario = v["spec"]["scenario"].as_str().unwrap().to_owned();
    let (_, text) = read(&scenario).unwrap();
    let stem = scenario.trim_end_matches(".yaml").to_owned();
    let prepared = prepare(&scenario, &text, &stem, &read).unwrap();
    let plan = parse("advice.yaml", advice_text, &|p| {
        split_queues(&prepared.model, p)
    })
    .unwrap();
    let searched = advise(&plan, &prepared, &Options::default()).unwrap();
    let exhaustive = advise(
        &plan,
        &prepared,
        &Options {
            exhaustive: true,
            ..Options::default()
        },
    )
    .unwrap();
    (searched, exhaustive)
}

fn same_answer(a: &Advice, b: &Advice) {
    assert_eq!(a.front, b.front);
    assert_eq!(a.recommended, b.recommended);
    assert_eq!(a.closest, b.closest);
    assert_eq!(a.binding, b.binding);
    assert_eq!(a.explanation, b.explanation);
    assert_eq!(a.current, b.current);
}

/// Ten ClusterQueues in five cohorts (each its own flavor and Node), four knobs over three
/// cohorts: 6 × 5 × 6 × 3 = 540 configurations. The two knobs of cohort c0 are one
/// component (6 × 5 = 30 runs), a1's quota and n2's count one each (6 and 3), plus the
/// scenario as written: 40 simulations, 7.4 % of the grid, and the same answer as
/// simulating all 540.
#[test]
fn ten_queues_front_is_the_exhaustive_front_from_under_ten_percent_of_the_grid() {
    let base = dir("tests/data/ten-queues");
    let text = std::fs::read_to_string(base.join("advice.yaml")).unwrap();
    let (s, e) = both(&base, &text);
    same_answer(&s, &e);
    assert_eq!(s.search.points, 540);
    assert_eq!(s.search.method, "decomposed");
    assert_eq!(s.search.simulated, 1 + 30 + 6 + 3);
    assert!(s.search.simulated * 10 <= s.search.points);
    assert_eq!(e.search.simulated, 541);
    let r = s.recommended.as_ref().unwrap();
    let knobs: Vec<&str> = r.knobs.values().map(String::as_str).collect();
    // a0 needs 4 cards for its 2 + 2 inference at 02:00 (the cohort's only quota), a1 5 for
    // its 2 + 3; n2 stays 1 (0 leaves cohort c2's inference without a Node, 2 costs 1,000
    // EUR more); b0's limit 3 and 4 give the same figures, and a tie goes to the value
    // the scenario has (4)
    assert_eq!(knobs, ["4", "4", "5", "1"]);
    assert_eq!(r.alike, 0);
    assert_eq!(r.figures["cost"].as_i64(), Some(1_152_000));
    assert_eq!(
        r.figures["p95TimeToAdmission{class=inference}"].as_i64(),
        Some(0)
    );
    // the scenario as written: c1's peak of 3 waits 4 h for the serving workload's end
    assert_eq!(
        s.current.figures["p95TimeToAdmission{class=inference}"].as_i64(),
        Some(4 * 3_600_000)
    );
    assert_eq!(s.front.len(), 2);
    // node count 0 saves 1,000 EUR but leaves c2's inference unadmitted (the 72 h window)
    assert!(
        s.explanation.iter().any(|l| l
            .starts_with("nodes.n2.count at 1; moving it to 0: cost 11520.00 EUR → 10520.00 EUR")),
        "{:?}",
        s.explanation
    );
}

/// The seed month (its five ClusterQueues share the cohort `platform`, so the grid is one
/// component and simulated whole): the section's 39-point grid.
#[test]
fn seed_month_advice_matches_the_exhaustive_grid_and_recommends_its_quotas() {
    let base = dir("../gpuquota-sim/data/seed");
    let (s, e) = both(&base, gpuquota_advise::seed::SECTION_ADVICE);
    same_answer(&s, &e);
    assert_eq!(s.search.method, "exhaustive");
    assert_eq!((s.search.points, s.search.simulated), (39, 40));
    // the month as written: batch loses 816 GPU-hours of preempted H200 work (the bill's
    // `preempted` line) and overspends its 1,800 GPU-hour budget by 104
    let cur = &s.current.figures;
    assert_eq!(cur["lostGpuHours"].as_f64(), Some(816.0));
    assert_eq!(cur["budget{name=batch-monthly}"].as_f64(), Some(-104.0));
    assert_eq!(cur["cost"].as_i64(), Some(4_665_600));
    let r = s.recommended.as_ref().unwrap();
    let knobs: Vec<&str> = r.knobs.values().map(String::as_str).collect();
    // batch borrows at most 4 H200 instead of 8: the most H200 use (45.1 %) that keeps
    // its budget (160 GPU-hours left) and its p95 wait within a day (10 h); borrowing 8
    // overspends the budget, borrowing 0 leaves the H200s 16.7 % busy
    assert_eq!(knobs, ["assistant:10 data-science:2", "4"]);
    assert_eq!(r.figures["lostGpuHours"].as_f64(), Some(696.0));
    assert_eq!(
        r.figures["budget{name=batch-monthly}"].as_f64(),
        Some(160.0)
    );
    assert!(r.feasible);
}

/// Two queues of one cohort sharing an 8-GPU Node without borrowing; the pool of 8 split in
/// steps of 4 ([8,0], [4,4], [0,8]) and the cohort's fair-sharing weight (1 or 2; fair
/// sharing is off, so it changes nothing): 6 configurations, none meeting both waits.
/// By hand: with a:8 the batch job never runs (it waits the whole 4 h window, 7 × the
/// 30 min bound over it); with a:4 b:4 the second inference job waits the first's hour
/// (p95 of two = the larger, 1 h, once over the bound); with a:0 inference never runs
/// (4 h). So the closest are a:4 b:4 at both weights, then a:8 b:0 at weight 1 (grid
/// order among the two 7s, both two knob-units × 4 away), and the inference wait binds.
/// Utilisation of the 8 cards over 4 h: 12 GPU-hours of 32 = 37.5 % with a:4 b:4, 8 of 32 =
/// 25 % with a:8, 4 of 32 = 12.5 % with a:0.
#[test]
fn no_feasible_configuration_shows_the_closest_and_the_binding_wait() {
    let base = dir("tests/data/two-queues");
    let text = std::fs::read_to_string(base.join("advice.yaml")).unwrap();
    let (a, ex) = both(&base, &text);
    same_answer(&a, &ex);
    assert_eq!(a.search.points, 6);
    assert_eq!(a.search.simulated, 7);
    assert_eq!(a.recommended, None);
    let closest: Vec<Option<usize>> = a.closest.iter().map(|r| r.point).collect();
    assert_eq!(closest, [Some(2), Some(3), Some(0)]);
    assert_eq!(a.binding, ["p95TimeToAdmission{class=inference} <= 30m"]);
    let r = &a.closest[0];
    assert_eq!(
        r.knobs["clusterQueues.*.f.nvidia.com/gpu.nominalQuota"],
        "a:4 b:4"
    );
    assert_eq!(r.knobs["cohorts.pool.fairSharing.weight"], "1");
    assert_eq!(r.figures["utilisation{cardType=f}"].as_f64(), Some(37.5));
    assert_eq!(
        r.figures["p95TimeToAdmission{class=inference}"].as_i64(),
        Some(3_600_000)
    );
    assert_eq!(
        r.figures["p95TimeToAdmission{class=batch}"].as_i64(),
        Some(0)
    );
    assert!(!r.feasible);
    let third = &a.closest[2];
    assert_eq!(
        third.figures["utilisation{cardType=f}"].as_f64(),
        Some(25.0)
    );
    assert_eq!(
        third.figures["p95TimeToAdmission{class=batch}"].as_i64(),
        Some(4 * 3_600_000)
    );
    assert_eq!(third.violated, ["p95TimeToAdmission{class=batch} <= 30m"]);
    // the front of all six (none is feasible): a:4 b:4, once, with its twin at weight 2
    let front: Vec<(Option<usize>, usize)> = a.front.iter().map(|r| (r.point, r.alike)).collect();
    assert_eq!(front, [(Some(2), 1)]);
    // the weight applies (the model edit is accepted) but moves nothing
    assert!(
        a.explanation
            .iter()
            .any(|l| l == "cohorts.pool.fairSharing.weight at 1; moving it to 2: nothing changes."),
        "{:#?}",
        a.explanation
    );
    // JSON: no recommendation, the closest and the binding constraint
    let j: serde_json::Value = serde_json::from_str(&a.to_json_string()).unwrap();
    assert_eq!(j["recommended"], serde_json::Value::Null);
    assert_eq!(
        j["binding"],
        serde_json::json!(["p95TimeToAdmission{class=inference} <= 30m"])
    );
    assert_eq!(j["closest"][0]["point"], 2);
    assert_eq!(
        j["closest"][0]["violated"],
        serde_json::json!(["p95TimeToAdmission{class=inference} <= 30m"])
    );
    // the table says so
    let t = a.to_table(true, gpuquota_model::text::Width::Full);
    assert!(
        t.contains(
            "no configuration meets every constraint; binding: p95TimeToAdmission{class=inference} <= 30m\n"
        ),
        "{t}"
    );
    assert!(t.contains("closest"), "{t}");
}

/// A ResourceQuota cap as a knob, under the `resourcequota` engine: ns-a's two 4-GPU
/// inference jobs with a cap of 4 run one after the other (the second is refused and
/// retried every 5 minutes until the first ends after an hour), with 8 or 12 together at
/// 00:00 (the batch job of ns-b waits for the Node instead). Every configuration runs
/// the same 12 GPU-hours, so 8 and 12 tie and the advice takes 8, the smaller change from
/// the scenario's 4.
#[test]
fn a_resource_quota_cap_is_a_knob() {
    let base = dir("tests/data/two-queues");
    let text = std::fs::read_to_string(base.join("advice-rq.yaml")).unwrap();
    let (a, ex) = both(&base, &text);
    same_answer(&a, &ex);
    let path = "resourceQuotas.ns-a.gpu-cap.hard.requests.nvidia.com/gpu";
    assert_eq!(a.knobs[0].current.as_deref(), Some("4"));
    assert_eq!(
        a.current.violated,
        ["p95TimeToAdmission{class=inference} <= 30m"]
    );
    let rec = a.recommended.as_ref().expect("a cap of 8 meets the wait");
    assert_eq!(rec.knobs[path], "8");
    assert_eq!(rec.point, Some(1));
    assert_eq!(
        rec.figures["p95TimeToAdmission{class=inference}"].as_i64(),
        Some(0)
    );
    assert_eq!(rec.figures["gpuHours"].as_f64(), Some(12.0));
    let front: Vec<(Option<usize>, usize)> = a.front.iter().map(|r| (r.point, r.alike)).collect();
    assert_eq!(front, [(Some(1), 1)]);
    // the second inference job's refused attempts at 0, 5, …, 55 minutes; the one at 60
    // minutes finds the first job gone
    assert_eq!(
        a.current.figures["p95TimeToAdmission{class=inference}"].as_i64(),
        Some(3_600_000)
    );
    assert_eq!(a.current.figures["gpuHours"].as_f64(), Some(12.0));
}
