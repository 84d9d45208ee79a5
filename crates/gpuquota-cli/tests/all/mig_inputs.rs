//! `gpuquota mig` on the inputs users have: mig-parted configs, warnings under `--strict`,
//! quoted counts and `--fast`.

use std::process::{Command, Output};

fn gpuquota(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(args)
        .output()
        .expect("the gpuquota binary runs")
}

fn file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("gpuquota-mig-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p.display().to_string()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn validate_checks_every_named_config() {
    let bad = file(
        "bad.yaml",
        "version: v1\nmig-configs:\n  all-1g.10gb:\n    - devices: all\n      mig-enabled: true\n      mig-devices: {\"1g.10gb\": 99}\n",
    );
    let out = gpuquota(&["mig", "validate", &bad]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {bad}: mig-configs.all-1g.10gb[0]: 99 x 1g.10gb does not fit on A100-40GB\n"
        )
    );
    let good = file(
        "good.yaml",
        "version: v1\nmig-configs:\n  all-1g.10gb:\n    - devices: all\n      mig-enabled: true\n      mig-devices: {\"1g.10gb\": 7}\n",
    );
    let out = gpuquota(&["mig", "validate", &good]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "ok: 1 mig-parted configs, 1 entries checked against the catalogue\n"
    );
}

#[test]
fn unknown_fields_warn_and_fail_under_strict() {
    let f = file(
        "typo.yaml",
        "gpus: [{node: a, index: 0, model: A100-80GB, instances: [], bussy: true}]\ndemand: [{profile: 1g.10gb, count: 1}]\n",
    );
    let out = gpuquota(&["mig", "plan", &f]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        format!("warning: {f}: unknown field `gpus.0.bussy` ignored (did you mean `busy`?)\n")
    );
    let out = gpuquota(&["--strict", "mig", "plan", &f]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
}

#[test]
fn quoted_count_is_refused() {
    let f = file(
        "quoted.yaml",
        "gpus: [{node: a, index: 0, model: A100-80GB, instances: []}]\ndemand: [{profile: 1g.10gb, count: \"0x10\"}]\n",
    );
    let out = gpuquota(&["mig", "plan", &f]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("error: {f}: demand[0].count: invalid type: string \"0x10\", expected u32\n")
    );
}

#[test]
fn fast_mode_keeps_the_json_fields() {
    let f = file(
        "fast.yaml",
        "gpus: [{node: a, index: 0, model: A100-80GB, instances: []}]\ndemand: [{profile: 3g.40gb, count: 2}]\n",
    );
    let exact = text(&gpuquota(&["mig", "plan", &f]).stdout);
    let fast = text(&gpuquota(&["mig", "plan", "--fast", &f]).stdout);
    let e: serde_json::Value = serde_json::from_str(&exact).expect("json");
    let g: serde_json::Value = serde_json::from_str(&fast).expect("json");
    assert_eq!(e["value"], 2);
    assert_eq!(e["optimal"], true);
    assert_eq!(g["value"], 2);
    let keys = |v: &serde_json::Value| -> Vec<String> {
        v.as_object().expect("object").keys().cloned().collect()
    };
    assert_eq!(
        keys(&e),
        [
            "value",
            "reconfigured",
            "fragmentation",
            "optimal",
            "satisfied",
            "gpus"
        ]
    );
    assert!(keys(&g).starts_with(&keys(&e)));
}
