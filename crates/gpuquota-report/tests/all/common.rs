//! The pages the tests open: the seed month, a diff, a sweep, a meter bill and a replayed
//! recorded month, each with
//! the JSON it was rendered beside.

#![allow(dead_code, unreachable_pub)]

use serde_json::Value;

/// A rendered page and the JSON of the same typed report.
pub struct Rendered {
    /// The file name it is saved as.
    pub name: &'static str,
    /// The page.
    pub html: String,
    /// The JSON.
    pub json: Value,
}

/// The meter input of the bill page: two departments on one card type, one idle card.
pub const METER: &str = "window: {start: \"2026-04-01T00:00:00Z\", end: \"2026-04-02T00:00:00Z\"}
currency: EUR
cardTypes: [{name: H200, pricePerHour: \"4.50\", capacity: 4}]
departments:
- {name: research, namespaces: [research]}
- {name: vision, namespaces: [vision]}
records:
- {department: research, cardType: H200, gpus: 2, start: \"2026-04-01T00:00:00Z\", end: \"2026-04-02T00:00:00Z\"}
- {department: vision, cardType: H200, gpus: 1, start: \"2026-04-01T00:00:00Z\", end: \"2026-04-01T12:00:00Z\"}
";

/// Every page: (seed month, the Kueue month's JSON), (diff, its JSON), (sweep, its JSON),
/// (meter bill, its JSON).
pub fn pages() -> Vec<Rendered> {
    let month = gpuquota_sim::seed::run().expect("seed month");
    let (_, kueue_sc, kueue) = month
        .runs
        .iter()
        .find(|r| r.1.engine == gpuquota_sim::Engine::Kueue)
        .expect("kueue run");
    let _ = kueue_sc;
    let seed = Rendered {
        name: "seed.html",
        html: gpuquota_report::seed(&month).expect("seed page"),
        json: kueue.to_json(),
    };
    let (_, sa, ra) = &month.runs[0];
    let (_, sb, rb) = &month.runs[1];
    let diff = Rendered {
        name: "diff.html",
        html: gpuquota_report::diff(sa, ra, sb, rb).expect("diff page"),
        json: gpuquota_sim::diff::diff(sa, ra, sb, rb).to_json(),
    };
    let axes = vec![gpuquota_sim::sweep::Axis {
        path: "engine".into(),
        values: vec!["kueue".into(), "resourcequota".into()],
    }];
    let read = gpuquota_testkit::files::in_memory(vec![
        ("platform.yaml", gpuquota_sim::seed::PLATFORM.into()),
        ("month.yaml", gpuquota_sim::seed::MONTH.into()),
    ]);
    let table = gpuquota_sim::sweep::run(
        "kueue.yaml",
        gpuquota_sim::seed::KUEUE,
        "kueue",
        &axes,
        None,
        &read,
    )
    .expect("sweep");
    let sweep = Rendered {
        name: "sweep.html",
        html: gpuquota_report::sweep(&table).expect("sweep page"),
        json: table.to_json(),
    };
    let doc = gpuquota_metering::Document::from_yaml(METER).expect("meter input");
    let report =
        gpuquota_metering::run(&gpuquota_metering::Input::from_document(&doc, &[]).expect("input"))
            .expect("bill");
    let out = report.to_output();
    let meter = Rendered {
        name: "meter.html",
        html: gpuquota_report::meter(&out),
        json: serde_json::to_value(&out).expect("json"),
    };
    vec![seed, diff, sweep, meter, history()]
}

/// The page of a recorded month replayed (the simulator's history fixture), with its JSON.
pub fn history() -> Rendered {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../gpuquota-sim/tests/data/history/replay.yaml");
    let sim = gpuquota_sim::Simulation::from_files(&path).expect("history scenario");
    let out = gpuquota_sim::simulate(&sim).expect("replay");
    let (sc, r) = (sim.kueue().expect("kueue"), out.kueue().expect("kueue"));
    Rendered {
        name: "history.html",
        html: gpuquota_report::sim(sc, r).expect("history page"),
        json: r.to_json(),
    }
}

/// `target/report-pages/`, created.
pub fn out_dir() -> std::path::PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let dir = target.join("report-pages");
    std::fs::create_dir_all(&dir).expect("target/report-pages");
    dir.canonicalize().expect("target/report-pages")
}
