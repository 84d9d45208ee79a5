//! The up-front limits: a scenario that would make more workloads, sessions or budget periods
//! than memory holds is refused before any is made, naming the number and the limit.

// the wall clock only bounds how long a refusal may take
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

use gpuquota_model::diag::Diagnostics;
use gpuquota_sim::scenario;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Reads `dir`'s files, with `jobs.yaml` rewritten by `edit`.
fn reader(dir: PathBuf, edit: impl Fn(String) -> String) -> impl Fn(&str) -> ReadResult {
    move |f: &str| {
        let text = gpuquota_model::source::read_text(&dir.join(f))?;
        Ok((
            f.to_owned(),
            if f == "jobs.yaml" { edit(text) } else { text },
        ))
    }
}

type ReadResult = Result<(String, String), gpuquota_model::Diagnostic>;

/// The only error of `d`: (object, field, message); every field path of `d` is well formed.
fn only(d: &Diagnostics) -> (String, String, String) {
    for x in d.iter() {
        assert!(gpuquota_model::diag::is_field_path(&x.field), "{x}");
    }
    let errors: Vec<_> = d.iter().filter(|x| x.is_error(false)).collect();
    assert_eq!(errors.len(), 1, "{d:?}");
    let e = errors[0];
    (
        format!("{}/{}", e.kind, e.name),
        e.field.clone(),
        e.message.clone(),
    )
}

const A_YEAR: &str = "  end: \"2027-04-01T00:00:00Z\"\n";

#[test]
fn a_repeat_of_1ms_over_a_year_is_refused_with_its_count() {
    let text = std::fs::read_to_string(data("kueue.yaml")).unwrap();
    let text = text.replace("  end: \"2026-04-03T00:00:00Z\"\n", A_YEAR);
    let read = reader(data(""), |t| {
        t.replace("gpuquota.dev/repeat: 24h", "gpuquota.dev/repeat: 1ms")
    });
    let started = std::time::Instant::now();
    let d = gpuquota_sim::fuzzing::scenario("kueue.yaml", &text, "kueue", &read).unwrap_err();
    // fine-tune arrives at 02:00 (7,200,000 ms); a year is 31,536,000,000 ms: a copy at every
    // ms from 7,200,001 to 31,535,999,999; with nightly, etl and fine-tune 3 more
    assert_eq!(
        only(&d),
        (
            "Workload/data-science/fine-tune".to_owned(),
            "metadata.annotations[gpuquota.dev/repeat]".to_owned(),
            "the period 1ms makes 31528799999 copies before spec.end, 31528800002 workloads in \
             all: more than the limit of 500000 (a guard against exhausting memory); use a \
             longer period or an earlier spec.end"
                .to_owned()
        )
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn the_workload_limit_counts_the_copies_exactly() {
    // the daily repeat of fine-tune over two days makes one copy: 4 workloads in all
    let path = data("kueue.yaml");
    let sim =
        scenario::with_instance_limit(4, || gpuquota_sim::fuzzing::load(&path)).expect("4 fit");
    assert_eq!(sim.kueue().expect("a Kueue scenario").instances.len(), 4);
    let d = scenario::with_instance_limit(3, || gpuquota_sim::fuzzing::load(&path)).unwrap_err();
    assert_eq!(
        only(&d).2,
        "the period 24h makes 1 copies before spec.end, 4 workloads in all: more than the \
         limit of 3 (a guard against exhausting memory); use a longer period or an earlier \
         spec.end"
    );
}

#[test]
fn trace_rows_count_toward_the_workload_limit() {
    // the openb sample has 3 pods, one of them never ran (skipped with a warning); the
    // cluster has no workload
    let path = data("traces/alibaba2023.yaml");
    let sim =
        scenario::with_instance_limit(2, || gpuquota_sim::fuzzing::load(&path)).expect("2 fit");
    assert_eq!(sim.kueue().expect("a Kueue scenario").instances.len(), 2);
    let d = scenario::with_instance_limit(1, || gpuquota_sim::fuzzing::load(&path)).unwrap_err();
    let e = d.iter().find(|x| x.is_error(false)).unwrap();
    assert_eq!(e.field, "spec.workloads[0].trace.file");
    assert_eq!(
        e.message,
        "2 trace rows make 2 workloads in all: more than the limit of 1 (a guard against \
         exhausting memory); cut the trace or simulate part of it"
    );
}

#[test]
fn a_kai_repeat_of_1ms_over_a_year_is_refused_with_its_count() {
    let text = std::fs::read_to_string(data("kai/night.yaml")).unwrap();
    let text = text.replace("  end: \"2026-04-02T12:00:00Z\"\n", A_YEAR);
    let read = reader(data("kai"), |t| {
        t.replace("gpuquota.dev/repeat: 24h", "gpuquota.dev/repeat: 1ms")
    });
    let d = gpuquota_sim::fuzzing::scenario("night.yaml", &text, "night", &read).unwrap_err();
    // finetune arrives at 02:00 as in the Kueue scenario: 31,528,799,999 copies; with the job
    // units nightly (the Job's pod group), sweep, finetune and serve, 4 more
    assert_eq!(
        only(&d),
        (
            "PodGroup/ds/finetune".to_owned(),
            "metadata.annotations[gpuquota.dev/repeat]".to_owned(),
            "the period 1ms makes 31528799999 copies before spec.end, 31528800003 workloads in \
             all: more than the limit of 500000 (a guard against exhausting memory); use a \
             longer period or an earlier spec.end"
                .to_owned()
        )
    );
}

#[test]
fn a_year_of_kai_sessions_at_1s_is_refused_before_the_run() {
    let text = std::fs::read_to_string(data("kai/night.yaml")).unwrap();
    let text = text.replace("  end: \"2026-04-02T12:00:00Z\"\n", A_YEAR);
    let read = reader(data("kai"), |t| t.replace("gpuquota.dev/repeat: 24h, ", ""));
    let sc = gpuquota_sim::fuzzing::scenario("night.yaml", &text, "night", &read).expect("valid");
    let started = std::time::Instant::now();
    let d = gpuquota_sim::fuzzing::run_kai(&sc).unwrap_err();
    // 365 days of 86,400 sessions, a series per queue (research, data-science, batch)
    assert_eq!(
        only(&d),
        (
            "Simulation/kai-night".to_owned(),
            "spec.kai.sessionInterval".to_owned(),
            "31536000 sessions of 3 queues make 94608000 series points: more than the limit \
             of 10000000 (a guard against exhausting memory); use a longer sessionInterval or \
             an earlier spec.end"
                .to_owned()
        )
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn a_budget_period_of_1ms_over_a_year_is_refused_with_its_count() {
    let cluster = std::fs::read_to_string(data("platform.yaml")).unwrap()
        + "---\napiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {name: daily}\n\
           spec: {namespaces: [batch], gpuHours: 8, period: 1ms}\n";
    let text = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: b}}\nspec:\n  \
         cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n{A_YEAR}"
    );
    let sim = gpuquota_sim::fuzzing::scenario("b.yaml", &text, "b", &|_| {
        Ok(("c.yaml".into(), cluster.clone()))
    })
    .expect("valid scenario");
    let started = std::time::Instant::now();
    let d = gpuquota_sim::fuzzing::run_kueue(&sim).unwrap_err();
    assert_eq!(
        only(&d),
        (
            "Budget/daily".to_owned(),
            "spec.period".to_owned(),
            "the period of 1 ms divides the run up to spec.end into 31536000001 periods, \
             31536000001 over all budgets: more than the limit of 1000000 (a guard against \
             exhausting memory); use a longer period or an earlier spec.end"
                .to_owned()
        )
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    // an hourly budget over the year: 8,760 periods and the one opening at the end, simulated
    let hourly = cluster.replace("period: 1ms", "period: 1h");
    let sim = gpuquota_sim::fuzzing::scenario("b.yaml", &text, "b", &|_| {
        Ok(("c.yaml".into(), hourly.clone()))
    })
    .expect("valid scenario");
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    assert_eq!(
        r.to_json()["budgets"][0]["periods"]
            .as_array()
            .unwrap()
            .len(),
        8761
    );
}
