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
        split_queues(&prepared.scenario.model, p)
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
