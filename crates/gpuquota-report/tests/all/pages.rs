//! The pages' figures are the JSON's, found by their `data-figure` names in the HTML.

use crate::common;

/// The text of the element carrying `data-figure="{name}"`, every one in page order.
fn figures(html: &str, name: &str) -> Vec<String> {
    let pat = format!("data-figure=\"{name}\">");
    html.match_indices(&pat)
        .map(|(i, _)| {
            let rest = &html[i + pat.len()..];
            rest[..rest.find('<').unwrap()].to_owned()
        })
        .collect()
}

#[test]
fn the_seed_month_page_shows_the_json_bill_and_preemptions() {
    let pages = common::pages();
    let seed = &pages[0];
    let j = &seed.json;
    // the default run prints the same total in its bill table
    assert_eq!(j["chargeback"]["totals"]["cost"], "46656.00");
    assert_eq!(figures(&seed.html, "kueue:bill-total"), vec!["46656.00"]);
    assert_eq!(
        figures(&seed.html, "kueue:preemption-count"),
        vec![j["preemptions"].to_string()]
    );
    assert_eq!(
        figures(&seed.html, "kueue:preemptions"),
        vec![j["preemptions"].to_string()]
    );
    let lines: Vec<String> = j["chargeback"]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["total"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(figures(&seed.html, "kueue:line-total"), lines);
    assert!(!seed.html.contains("<script"));
    assert!(!seed.html.contains("href=\"http"));
}

#[test]
fn the_meter_page_shows_every_line_and_the_total() {
    let pages = common::pages();
    let m = &pages[3];
    // 24 h × 4 cards × 4.50 = 432.00 EUR: research 2 cards all day, vision 1 card half a day,
    // the rest idle and shared out
    assert_eq!(m.json["totals"]["cost"], "432.00");
    assert_eq!(figures(&m.html, "bill-total"), vec!["432.00"]);
    assert_eq!(figures(&m.html, "bill"), vec!["432.00"]);
    assert!(m.html.contains("data-row=\"research|H200\""));
    assert!(m.html.contains("data-row=\"vision|H200\""));
}

#[test]
fn the_diff_and_sweep_pages_show_the_json_figures() {
    let pages = common::pages();
    let d = &pages[1];
    for (dept, x) in d.json["departments"].as_object().unwrap() {
        let a = x["preemptions"]["a"].to_string();
        let row = format!("data-row=\"{dept}|preemptions\"");
        let i = d.html.find(&row).unwrap_or_else(|| panic!("{row}"));
        let tail = &d.html[i..];
        let cell = format!(
            "data-figure=\"a:department-preemptions\">{}<",
            if a == "null" { "-".into() } else { a }
        );
        assert!(
            tail[..tail.find("</tr>").unwrap()].contains(&cell),
            "{dept}"
        );
    }
    let s = &pages[2];
    for r in s.json["rows"].as_array().unwrap() {
        let run = r["run"].as_u64().unwrap();
        assert_eq!(
            figures(&s.html, &format!("run{run}:preemptions")),
            vec![r["preemptions"].to_string()]
        );
    }
}

#[test]
fn the_history_page_shows_the_json_fidelity() {
    let h = common::history();
    let f = &h.json["fidelity"];
    // hand-checked in the simulator's tests: 3 of 6 compared, mean 2,205 s = 36m45s,
    // p95 6,595 s = 1h49m55s, τ = 1/3, preemptions 1 matched, 1 missed, 1 extra
    assert_eq!(f["all"]["compared"], 3);
    assert_eq!(figures(&h.html, "fidelity-compared"), vec!["3"]);
    assert_eq!(figures(&h.html, "fidelity-mean-error"), vec!["36m45s"]);
    assert_eq!(figures(&h.html, "fidelity-p95-error"), vec!["1h49m55s"]);
    assert_eq!(figures(&h.html, "fidelity-tau"), vec!["0.333"]);
    assert_eq!(figures(&h.html, "fidelity-preemptions-matched"), vec!["1"]);
    assert_eq!(figures(&h.html, "fidelity-preemptions-missed"), vec!["1"]);
    assert_eq!(figures(&h.html, "fidelity-preemptions-extra"), vec!["1"]);
    // team-a 172,800 and 234,000 GPU-seconds = 48 and 65 GPU-hours; team-b 17 in both
    assert_eq!(
        figures(&h.html, "fidelity-recorded-gpu-hours"),
        vec!["48.00", "17.00"]
    );
    assert_eq!(
        figures(&h.html, "fidelity-simulated-gpu-hours"),
        vec!["65.00", "17.00"]
    );
    assert!(h.html.contains("data-row=\"fidelity|all\""));
    assert!(
        h.html
            .contains("data-row=\"fidelity-workload|team-a/train-a\"")
    );
    // a run without a record has no such section
    assert!(!common::pages()[0].html.contains("fidelity-compared"));
}

#[test]
fn a_kai_history_page_shows_the_json_fidelity() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../gpuquota-sim/tests/data/history/kai-reclaim.yaml");
    let sim = gpuquota_sim::Simulation::from_files(&path).expect("KAI history scenario");
    let out = gpuquota_sim::simulate(&sim).expect("replay");
    let (sc, o) = (sim.kai().expect("kai"), out.kai().expect("kai"));
    let html = gpuquota_report::kai(sc, o).expect("KAI page");
    let f = &o.to_json()["fidelity"];
    // hand-checked in the simulator's tests: 3 of 4 compared, errors 20 s, 90 s, 10 s
    // (mean 40 s, p95 1m30s), the recorded order, the reclaim matched
    assert_eq!(f["all"]["compared"], 3);
    assert_eq!(figures(&html, "fidelity-compared"), vec!["3"]);
    assert_eq!(figures(&html, "fidelity-mean-error"), vec!["40s"]);
    assert_eq!(figures(&html, "fidelity-p95-error"), vec!["1m30s"]);
    assert_eq!(figures(&html, "fidelity-tau"), vec!["1.000"]);
    assert_eq!(figures(&html, "fidelity-preemptions-matched"), vec!["1"]);
    assert_eq!(figures(&html, "fidelity-preemptions-missed"), vec!["0"]);
    assert_eq!(figures(&html, "fidelity-preemptions-extra"), vec!["0"]);
    // team-a 101,120 and 100,800 GPU-seconds = 28.08 and 28.00 GPU-hours; team-b 28,760
    // and 28,800 = 7.98 and 8.00
    assert_eq!(
        figures(&html, "fidelity-recorded-gpu-hours"),
        vec!["28.08", "7.98"]
    );
    assert_eq!(
        figures(&html, "fidelity-simulated-gpu-hours"),
        vec!["28.00", "8.00"]
    );
    assert!(html.contains("data-row=\"fidelity-workload|team-b/pg-b\""));
}

#[test]
fn pages_are_written_for_a_person_to_open() {
    let dir = common::out_dir();
    for p in common::pages() {
        std::fs::write(dir.join(p.name), &p.html).unwrap();
    }
}

#[test]
fn the_seed_month_page_zooms_on_each_day_with_the_days_figures() {
    let pages = common::pages();
    let html = &pages[0].html;
    // the Kueue month only (the other controls' months sit in collapsed parts without it)
    let links: Vec<&str> = html
        .match_indices("<li><a href=\"#kueue-usage-chart-day-")
        .map(|(i, _)| &html[i..i + 60])
        .collect();
    assert_eq!(links.len(), 30, "one link per day of April");
    assert_eq!(html.matches("class=\"part\" id=\"").count(), 30);
    assert!(html.contains("<a href=\"#kueue-usage-chart-day-10\">04-10</a>"));
    // each day's chart is titled and described, as every chart
    let day = &html[html.find("id=\"kueue-usage-chart-day-10\"").unwrap()..];
    let day = &day[..day.find("</table>").unwrap()];
    assert!(day.contains("<title id=\"kueue-usage-chart-day-10-t\">"));
    assert!(day.contains("<desc id=\"kueue-usage-chart-day-10-d\">"));
    // hand-checked: translation serves its two RTX PRO 6000 cards around the clock
    // (2 cards x 24 h = 48 card-hours, peak 2), the assistant's 8-card peak
    let rows: Vec<String> = day
        .split("<tr")
        .skip(2)
        .map(|r| {
            r.split("<td")
                .skip(1)
                .map(|c| {
                    let c = &c[c.find('>').unwrap() + 1..];
                    c[..c.find('<').unwrap()].to_owned()
                })
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect();
    assert!(
        rows.contains(&"RTX PRO 6000|translation|48.0|2".to_owned()),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .any(|r| r.starts_with("RTX PRO 6000|assistant|") && r.ends_with("|8")),
        "{rows:?}"
    );
}

/// A run with a timeline: the page's chart description names the timeline's marks, and a
/// table lists each event with its effect, one row keyed `timeline|K`.
#[test]
fn a_run_with_a_timeline_lists_its_events() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../gpuquota-sim/tests/data/timeline/hold-and-drain.yaml");
    let sim = gpuquota_sim::Simulation::from_files(&path).expect("valid scenario");
    let r = gpuquota_sim::simulate(&sim)
        .expect("simulates")
        .into_kueue()
        .expect("a Kueue run");
    let html = gpuquota_report::sim(sim.kueue().expect("kueue"), &r).expect("page");
    assert!(html.contains("Teal rules labelled #N mark the events of the scenario"));
    assert!(html.contains("Timeline: what each event of the scenario changed"));
    assert!(html.contains("data-row=\"timeline|0\""));
    assert!(html.contains("data-row=\"timeline|1\""));
    assert!(html.contains("ns/one (ClusterQueueStopped)"));
    assert!(html.contains("2026-04-01T03:00:00Z"));
}

/// A KAI run with a timeline: the page has a timeline section with the events' sentences
/// and the Kueue page's table (rows keyed `timeline|K`) plus the node changes and the
/// schedulable devices, and its chart description names the marks. Two 4-GPU nodes; j1
/// (4 GPUs, 3 h) on gpu-a, which fails at 1 h: j1 is lost (`NodeFailures`).
#[test]
fn a_kai_run_with_a_timeline_lists_its_events() {
    let dir = std::env::temp_dir().join(format!("gpuquota-report-kai-tl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let node = |n: &str| {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: {n}}}\nstatus: {{allocatable: {{nvidia.com/gpu: \"4\", cpu: \"64\", memory: 512Gi}}}}\n---\n"
        )
    };
    let cluster = node("gpu-a")
        + &node("gpu-b")
        + "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec: {resources: {gpu: {quota: 8, overQuotaWeight: 1, limit: -1}}}\n";
    let jobs = "apiVersion: v1\nkind: Pod\nmetadata: {name: j1, namespace: ns, creationTimestamp: \"2026-04-01T00:00:00Z\", labels: {kai.scheduler/queue: q}, annotations: {gpuquota.dev/runtime: 3h}}\nspec: {schedulerName: kai-scheduler, containers: [{name: c, resources: {limits: {nvidia.com/gpu: \"4\"}}}]}\n";
    let sim = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {name: t}\nspec:\n  engine: kai\n  cluster: [cluster.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-01T06:00:00Z\"\n  kai: {sessionInterval: 10m}\n  workloads: [{file: jobs.yaml}]\n  timeline:\n  - at: 1h\n    nodes: {down: [gpu-a]}\n";
    for (name, text) in [
        ("cluster.yaml", cluster.as_str()),
        ("jobs.yaml", jobs),
        ("t.yaml", sim),
    ] {
        std::fs::write(dir.join(name), text).expect("write");
    }
    let s = gpuquota_sim::Simulation::from_files(&dir.join("t.yaml")).expect("valid scenario");
    let o = gpuquota_sim::simulate(&s)
        .expect("simulates")
        .into_kai()
        .expect("a KAI run");
    let html = gpuquota_report::kai(s.kai().expect("kai"), &o).expect("page");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(html.contains("t: the timeline"));
    assert!(html.contains("Teal rules labelled #N mark the events of the scenario"));
    assert!(html.contains("Timeline: what each event of the scenario changed"));
    assert!(html.contains("data-row=\"timeline|0\""));
    assert!(html.contains("ns/j1 (NodeFailures)"));
    assert!(html.contains("gpu-a down"));
    assert!(html.contains("nvidia.com/gpu 8 -&gt; nvidia.com/gpu 4"));
    assert!(html.contains("Timeline event 0 at 01:00: node gpu-a down."));
}
