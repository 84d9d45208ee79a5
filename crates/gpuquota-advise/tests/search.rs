//! The search against the exhaustive grid: the decomposed search returns exactly the front,
//! recommendation and figures that simulating every configuration gives.

use std::path::{Path, PathBuf};

use gpuquota_advise::{Advice, Options, advise, parse, prepare, split_queues};

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// The advice of `advice_text` over the scenario in `base`, searched and exhaustive.
fn both(base: &Path, advice_text: &str) -> (Advice, Advice) {
    let base = base.to_owned();
    let read = move |rel: &str| {
        let p = base.join(rel);
        std::fs::read_to_string(&p)
            .map(|t| (rel.to_owned(), t))
            .map_err(|e| gpuquota_model::diag::Diagnostic::error(
                gpuquota_model::diag::codes::READ_FAILED,
                e.to_string(),
            ))
    };
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
