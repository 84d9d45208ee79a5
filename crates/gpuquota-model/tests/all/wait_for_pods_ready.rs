//! The Configuration's `waitForPodsReady`: read typed, enabled as upstream's API versions
//! say, checked as upstream's `validateWaitForPodsReady` (kubernetes-sigs/kueue
//! pkg/config/validation.go).

use gpuquota_model::import_str;
use gpuquota_model::validate::{ErrorType, problems};

fn config(api: &str, stanza: &str) -> gpuquota_model::Imported {
    let text = format!(
        "apiVersion: config.kueue.x-k8s.io/{api}\nkind: Configuration\nwaitForPodsReady: {stanza}\n"
    );
    import_str("c.yaml", &text).expect("imports")
}

#[test]
fn enabled_by_enable_in_v1beta1_and_by_presence_in_v1beta2() {
    let on = |api: &str, stanza: &str| {
        config(api, stanza)
            .model
            .configuration
            .expect("configuration")
            .wait_for_pods_ready_enabled()
    };
    assert!(!on("v1beta1", "{timeout: 5m}"));
    assert!(on("v1beta1", "{enable: true}"));
    assert!(on("v1beta2", "{timeout: 5m}"));
    assert!(!on("v1beta2", "{enable: false}"));
}

#[test]
fn fields_are_read_typed() {
    let m = config(
        "v1beta1",
        "{enable: true, timeout: 90s, blockAdmission: false, recoveryTimeout: 3m, requeuingStrategy: {timestamp: Creation, backoffLimitCount: 3, backoffBaseSeconds: 10, backoffMaxSeconds: 600}}",
    )
    .model;
    let w = m
        .configuration
        .and_then(|c| c.wait_for_pods_ready)
        .expect("waitForPodsReady");
    assert_eq!(w.timeout.as_deref(), Some("90s"));
    assert_eq!(w.block_admission, Some(false));
    assert_eq!(w.recovery_timeout.as_deref(), Some("3m"));
    let r = w.requeuing_strategy.expect("requeuingStrategy");
    assert_eq!(r.timestamp.as_deref(), Some("Creation"));
    assert_eq!(r.backoff_limit_count, Some(3));
    assert_eq!(r.backoff_base_seconds, Some(10));
    assert_eq!(r.backoff_max_seconds, Some(600));
}

#[test]
fn bad_values_are_problems_naming_their_field() {
    let m = config(
        "v1beta1",
        "{enable: true, timeout: soon, recoveryTimeout: -1m, requeuingStrategy: {timestamp: Later, backoffLimitCount: -1, backoffMaxSeconds: 4294967296}}",
    )
    .model;
    let found: Vec<(String, ErrorType, Option<String>, String)> = problems(&m)
        .into_iter()
        .map(|p| (p.field, p.error_type, p.value, p.detail))
        .collect();
    let e = |f: &str, t: ErrorType, v: &str, d: &str| {
        (f.to_owned(), t, Some(v.to_owned()), d.to_owned())
    };
    let ge0 = "must be greater than or equal to 0";
    assert_eq!(
        found,
        vec![
            e(
                "waitForPodsReady.timeout",
                ErrorType::Invalid,
                "\"soon\"",
                "must be a duration (e.g. 5m, 90s)"
            ),
            e(
                "waitForPodsReady.recoveryTimeout",
                ErrorType::Invalid,
                "\"-1m\"",
                ge0
            ),
            e(
                "waitForPodsReady.requeuingStrategy.timestamp",
                ErrorType::NotSupported,
                "\"Later\"",
                "supported values: \"Creation\", \"Eviction\""
            ),
            e(
                "waitForPodsReady.requeuingStrategy.backoffLimitCount",
                ErrorType::Invalid,
                "-1",
                ge0
            ),
            e(
                "waitForPodsReady.requeuingStrategy.backoffMaxSeconds",
                ErrorType::Invalid,
                "4294967296",
                "must fit a 32-bit integer"
            ),
        ]
    );
    // a disabled stanza is not checked, as upstream skips it
    let off = config("v1beta1", "{enable: false, timeout: soon}").model;
    assert!(problems(&off).is_empty());
}
