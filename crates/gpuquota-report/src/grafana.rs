//! A Grafana dashboard over the metrics `gpuquota meter --output openmetrics` writes
//! ([`gpuquota_metering::openmetrics`]): per department and card type the GPU-hours used,
//! the borrowed hours and the cost, and per budget the GPU-hours used, remaining and the
//! share of the period's grant used.
//!
//! Every query names a family of [`gpuquota_metering::openmetrics::FAMILIES`] and groups by
//! its labels only, so the dashboard and the metrics stay in step (a test renders the
//! metrics and checks each name the dashboard queries is there).
//!
//! Getting the metrics to Prometheus, either way:
//!
//! - node_exporter's textfile collector: write the text into its directory from a cron job
//!   or a CronJob, atomically (`gpuquota meter usage.yaml --output openmetrics --budgets
//!   budgets.yaml > /var/lib/node_exporter/textfile/gpuquota.prom.tmp && mv
//!   /var/lib/node_exporter/textfile/gpuquota.prom.tmp
//!   /var/lib/node_exporter/textfile/gpuquota.prom`), with node_exporter started with
//!   `--collector.textfile.directory=/var/lib/node_exporter/textfile`. The collector reads
//!   the Prometheus text format: drop the closing `# EOF` line and the `# UNIT` lines
//!   (`grep -v -e '^# EOF' -e '^# UNIT'`) if your node_exporter refuses them.
//! - Pushgateway: `gpuquota meter usage.yaml --output openmetrics | curl --data-binary @-
//!   http://pushgateway:9091/metrics/job/gpuquota` (the Pushgateway reads the same text;
//!   push after each metering run, the values replace the job's last push).
//!
//! Then import the dashboard (`gpuquota example grafana-dashboard > gpuquota.json`,
//! Dashboards → New → Import) and pick the Prometheus data source.

use gpuquota_metering::openmetrics::FAMILIES;
use serde_json::{Value, json};

/// The family named `name` of [`FAMILIES`] with its labels (the dashboard is built from
/// these, so a name that is not written cannot be queried).
fn family(name: &str) -> (&'static str, &'static [&'static str]) {
    FAMILIES
        .iter()
        .copied()
        .find(|f| f.0 == name)
        .unwrap_or((FAMILIES[0].0, FAMILIES[0].1))
}

/// The label selector every query carries: the dashboard's department and card type
/// variables.
const SELECT: &str = "department=~\"$department\",card_type=~\"$card_type\"";

/// `sum by (labels) (family{selector})`.
fn sum_by(name: &str, by: &[&str]) -> String {
    let (f, labels) = family(name);
    let by: Vec<&str> = by.iter().copied().filter(|l| labels.contains(l)).collect();
    format!("sum by ({}) ({f}{{{SELECT}}})", by.join(", "))
}

/// One panel.
fn panel(
    id: u32,
    kind: &str,
    title: &str,
    unit: &str,
    expr: &str,
    legend: &str,
    pos: (u32, u32, u32, u32),
) -> Value {
    json!({
        "id": id,
        "type": kind,
        "title": title,
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "gridPos": {"x": pos.0, "y": pos.1, "w": pos.2, "h": pos.3},
        "fieldConfig": {"defaults": {"unit": unit, "decimals": 1}, "overrides": []},
        "options": {"legend": {"displayMode": "table", "placement": "bottom", "calcs": ["lastNotNull"]}},
        "targets": [{"refId": "A", "expr": expr, "legendFormat": legend}],
    })
}

/// The dashboard as JSON (Grafana's dashboard model, schema version 39).
///
/// # Complexity
/// O(1).
pub fn dashboard() -> Value {
    let used = "gpuquota_gpu_used_hours";
    let borrowed = "gpuquota_gpu_borrowed_hours";
    let cost = "gpuquota_cost_currency";
    let budget = "gpuquota_budget_gpu_hours";
    let budget_used = "gpuquota_budget_used_gpu_hours";
    let budget_left = "gpuquota_budget_remaining_gpu_hours";
    let dc = ["department", "card_type"];
    let panels = vec![
        panel(
            1,
            "timeseries",
            "GPU-hours used per department and card type",
            "h",
            &sum_by(used, &dc),
            "{{department}} {{card_type}}",
            (0, 0, 12, 9),
        ),
        panel(
            2,
            "timeseries",
            "Borrowed GPU-hours per department and card type",
            "h",
            &sum_by(borrowed, &dc),
            "{{department}} {{card_type}}",
            (12, 0, 12, 9),
        ),
        panel(
            3,
            "timeseries",
            "Cost per department and card type",
            "none",
            &sum_by(cost, &["department", "card_type", "currency"]),
            "{{department}} {{card_type}} ({{currency}})",
            (0, 9, 12, 9),
        ),
        panel(
            4,
            "bargauge",
            "GPU-hours used per department (latest)",
            "h",
            &sum_by(used, &["department"]),
            "{{department}}",
            (12, 9, 12, 9),
        ),
        panel(
            5,
            "bargauge",
            "Budget used, % of the period's grant",
            "percent",
            &format!(
                "100 * {} / {}",
                sum_by(budget_used, &["budget", "department", "card_type"]),
                sum_by(budget, &["budget", "department", "card_type"])
            ),
            "{{budget}} ({{department}}, {{card_type}})",
            (0, 18, 8, 9),
        ),
        panel(
            6,
            "bargauge",
            "Budget GPU-hours used",
            "h",
            &sum_by(budget_used, &["budget", "department", "card_type"]),
            "{{budget}} ({{department}}, {{card_type}})",
            (8, 18, 8, 9),
        ),
        panel(
            7,
            "bargauge",
            "Budget GPU-hours remaining",
            "h",
            &sum_by(budget_left, &["budget", "department", "card_type"]),
            "{{budget}} ({{department}}, {{card_type}})",
            (16, 18, 8, 9),
        ),
    ];
    let variable = |name: &str, label: &str| {
        json!({
            "name": name,
            "label": label,
            "type": "query",
            "datasource": {"type": "prometheus", "uid": "${datasource}"},
            "query": {"query": format!("label_values({used}, {name})"), "refId": "V"},
            "definition": format!("label_values({used}, {name})"),
            "includeAll": true,
            "multi": true,
            "allValue": ".*",
            "current": {"text": "All", "value": "$__all"},
            "refresh": 2,
            "sort": 1,
        })
    };
    json!({
        "title": "gpuquota: GPU-hours, cost and budgets",
        "uid": "gpuquota-metering",
        "description": "The metrics of `gpuquota meter --output openmetrics --budgets FILE`, per department and card type.",
        "tags": ["gpuquota", "gpu", "chargeback"],
        "schemaVersion": 39,
        "version": 1,
        "editable": true,
        "time": {"from": "now-30d", "to": "now"},
        "refresh": "",
        "templating": {"list": [
            {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus", "current": {}},
            variable("department", "Department"),
            variable("card_type", "Card type"),
        ]},
        "panels": panels,
    })
}

/// [`dashboard`] as pretty JSON text with a final newline.
pub fn dashboard_json() -> String {
    let mut s = serde_json::to_string_pretty(&dashboard()).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each family a query names, and each label it groups by, is what the metrics carry.
    #[test]
    fn every_query_names_a_written_family_and_its_labels() {
        let doc = gpuquota_metering::Document::from_yaml(
            "window: {start: 0, end: 36000}\ncardTypes: [{name: H200, pricePerHour: \"4.50\"}]\ndepartments: [{name: A, namespaces: [a]}]\nrecords: [{department: A, cardType: H200, gpus: 2, start: 0, end: 36000}]\n",
        )
        .unwrap();
        let report =
            gpuquota_metering::run(&gpuquota_metering::Input::from_document(&doc, &[]).unwrap())
                .unwrap();
        let text = gpuquota_metering::openmetrics::render(&report, &[]);
        let d = dashboard();
        let panels = d["panels"].as_array().unwrap();
        assert_eq!(panels.len(), 7);
        let mut named = Vec::new();
        for p in panels {
            let expr = p["targets"][0]["expr"].as_str().unwrap();
            for (f, labels) in FAMILIES {
                if expr.contains(&format!("{f}{{")) {
                    named.push(f);
                    for by in expr.split("sum by (").skip(1) {
                        let by = &by[..by.find(')').unwrap()];
                        for l in by.split(", ") {
                            assert!(labels.contains(&l), "{f} has no label {l}");
                        }
                    }
                }
            }
        }
        named.sort_unstable();
        named.dedup();
        assert_eq!(named.len(), FAMILIES.len(), "every family on a panel");
        // the families without budgets are in the metrics as rendered
        for f in [
            "gpuquota_gpu_used_hours",
            "gpuquota_gpu_borrowed_hours",
            "gpuquota_cost_currency",
        ] {
            assert!(
                text.contains(&format!("\n{f}{{department=\"A\",card_type=\"H200\"")),
                "{f}:\n{text}"
            );
        }
        assert!(text.contains(
            "gpuquota_cost_currency{department=\"A\",card_type=\"H200\",currency=\"USD\"} 90.00\n"
        ));
        assert_eq!(
            panels[0]["targets"][0]["expr"],
            "sum by (department, card_type) (gpuquota_gpu_used_hours{department=~\"$department\",card_type=~\"$card_type\"})"
        );
    }
}
