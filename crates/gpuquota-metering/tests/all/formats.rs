//! Every metrics input format on a small file written for the test: untimestamped scrapes
//! with a `scrapeTime`, OpenMetrics, Prometheus `honorLabels`, `query_range` JSON; the
//! unknown-field diagnostics and the bounded reading of `dcgm:` files.

use gpuquota_metering::report::ReportOut;
use gpuquota_metering::{Document, MeteringError};
use gpuquota_model::Error;

const HEAD: &str = r#"
window: {start: 0, end: 3600}
currency: USD
cardTypes:
  - {name: H200, model: NVIDIA H200, pricePerHour: "4.50", capacity: 8}
departments:
  - {name: A, namespaces: [team-a]}
  - {name: B, namespaces: [team-b]}
"#;

fn run(dcgm_yaml: &str, files: &[(&str, String)]) -> Result<ReportOut, Error> {
    let doc = Document::from_yaml(&format!("{HEAD}dcgm: {dcgm_yaml}\n"))?;
    assert!(doc.unknown_fields.is_empty(), "{:?}", doc.unknown_fields);
    let files: Vec<(String, String)> = files
        .iter()
        .map(|(n, t)| ((*n).to_owned(), t.clone()))
        .collect();
    Ok(gpuquota_metering::run(&doc.into_input(&files)?)?.to_output())
}

/// (department, allocated hours, utilisation) of the lines with use.
fn used(r: &ReportOut) -> Vec<(String, String, Option<String>)> {
    r.lines
        .iter()
        .filter(|l| l.allocated_hours != "0.000000")
        .map(|l| {
            (
                l.department.clone(),
                l.allocated_hours.to_string(),
                l.utilization.map(|u| u.to_string()),
            )
        })
        .collect()
}

fn row(d: &str, h: &str, u: Option<&str>) -> (String, String, Option<String>) {
    (d.to_owned(), h.to_owned(), u.map(str::to_owned))
}

const GPU0: &str = r#"UUID="GPU-0",gpu="0",modelName="NVIDIA H200",Hostname="n1""#;
const GPU1: &str = r#"UUID="GPU-1",gpu="1",modelName="NVIDIA H200",Hostname="n1""#;

/// `curl :9400/metrics` output: no timestamps; the scrape time comes from the document.
fn scrape(ns0: Option<&str>, util0: u32) -> String {
    let pod = ns0
        .map(|ns| format!(r#",namespace="{ns}",pod="p0",container="c""#))
        .unwrap_or_default();
    format!(
        "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n\
         DCGM_FI_DEV_GPU_UTIL{{{GPU0}{pod}}} {util0}\n\
         DCGM_FI_DEV_GPU_UTIL{{{GPU1},namespace=\"team-b\",pod=\"p1\"}} 100\n"
    )
}

#[test]
fn untimestamped_scrapes_take_the_scrape_time_of_their_entry() {
    let r = run(
        "[{path: s1.prom, scrapeTime: 0}, {path: s2.prom, scrapeTime: 600}, {path: s3.prom, scrapeTime: \"1970-01-01T00:15:00Z\"}]",
        &[
            ("s1.prom", scrape(Some("team-a"), 50)),
            ("s2.prom", scrape(Some("team-a"), 30)),
            ("s3.prom", scrape(None, 0)),
        ],
    )
    .unwrap();
    // GPU 0: held 300 s (the lookback) from 0, then from 600 until the scrape at 900 that
    // carries no pod: 600 s. GPU 1: 300 + 300 + 300 s, all busy.
    assert_eq!(
        used(&r),
        [
            row("A", "0.166667", Some("0.4000")),
            row("B", "0.250000", Some("1.0000"))
        ]
    );
    // without a scrapeTime the file is refused, naming the line
    let e = run("[s1.prom]", &[("s1.prom", scrape(Some("team-a"), 50))]).unwrap_err();
    assert_eq!(
        e,
        Error::from(MeteringError::Exposition {
            file: "s1.prom".into(),
            line: 3,
            reason: "sample without a timestamp".into()
        })
    );
}

#[test]
fn openmetrics_timestamps_are_seconds() {
    let om = format!(
        "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n\
         DCGM_FI_DEV_GPU_UTIL{{{GPU0},namespace=\"team-a\",pod=\"p\"}} 50 0\n\
         DCGM_FI_DEV_GPU_UTIL{{{GPU0},namespace=\"team-a\",pod=\"p\"}} 50 60.5\n\
         DCGM_FI_DEV_GPU_UTIL{{{GPU0}}} 0 120\n\
         # EOF\n"
    );
    let prom = format!(
        "DCGM_FI_DEV_GPU_UTIL{{{GPU0},namespace=\"team-a\",pod=\"p\"}} 50 0\n\
         DCGM_FI_DEV_GPU_UTIL{{{GPU0},namespace=\"team-a\",pod=\"p\"}} 50 60500\n\
         DCGM_FI_DEV_GPU_UTIL{{{GPU0}}} 0 120000\n"
    );
    let want = [row("A", "0.033333", Some("0.5000"))];
    // detected from `# EOF` (and from the fraction), or declared
    assert_eq!(used(&run("[m.om]", &[("m.om", om.clone())]).unwrap()), want);
    let integral = om.replace(" 60.5\n", " 60\n");
    assert_eq!(used(&run("[m.om]", &[("m.om", integral)]).unwrap()), want);
    assert_eq!(
        used(
            &run(
                "[{path: m.om, format: openmetrics}]",
                &[("m.om", om.clone())]
            )
            .unwrap()
        ),
        want
    );
    assert_eq!(used(&run("[m.prom]", &[("m.prom", prom)]).unwrap()), want);
    // nothing may follow # EOF
    let e = run("[m.om]", &[("m.om", format!("{om}x 1 2\n"))]).unwrap_err();
    assert_eq!(e.to_string(), "m.om:6: text after # EOF");
}

/// A line as Prometheus stores it: `instance` and `job` added.
fn stored(gpu: &str, workload: &str, t: i64) -> String {
    format!(
        "DCGM_FI_DEV_GPU_UTIL{{{gpu},instance=\"10.0.0.7:9400\",job=\"dcgm-exporter\",endpoint=\"metrics\",service=\"dcgm-exporter\"{workload}}} 80 {}\n",
        t * 1000
    )
}

#[test]
fn honor_labels_is_decided_from_the_labels_present() {
    // honorLabels: true: the exporter's own namespace/pod are kept
    let honored = stored(GPU0, r#",namespace="team-a",pod="p0""#, 0)
        + &stored(GPU1, r#",namespace="team-b",pod="p1""#, 0);
    assert_eq!(
        used(&run("[h.prom]", &[("h.prom", honored.clone())]).unwrap()),
        [
            row("A", "0.083333", Some("0.8000")),
            row("B", "0.083333", Some("0.8000"))
        ]
    );
    // honorLabels: false: the workload is in exported_*, namespace/pod are the exporter's;
    // the decision holds for the whole file, also for a line read before the first
    // exported_ label
    let renamed = stored(
        GPU1,
        r#",namespace="gpu-operator",pod="dcgm-exporter-x""#,
        0,
    ) + &stored(
        GPU0,
        r#",namespace="gpu-operator",pod="dcgm-exporter-x",exported_namespace="team-a",exported_pod="p0""#,
        0,
    );
    assert_eq!(
        used(&run("[r.prom]", &[("r.prom", renamed.clone())]).unwrap()),
        [row("A", "0.083333", Some("0.8000"))]
    );
    // declared in the entry, the labels are read that way
    assert_eq!(
        used(
            &run(
                "[{path: h.prom, honorLabels: false}]",
                &[("h.prom", honored)]
            )
            .unwrap()
        ),
        []
    );
    let r = run(
        "[{path: r.prom, honorLabels: true}]",
        &[("r.prom", renamed)],
    )
    .unwrap();
    assert_eq!(used(&r), [row("unassigned", "0.166667", Some("0.8000"))]);
}

#[test]
fn a_scrape_without_pod_labels_is_warned_about() {
    let text =
        format!("DCGM_FI_DEV_GPU_UTIL{{{GPU0}}} 90 0\nDCGM_FI_DEV_GPU_UTIL{{{GPU1}}} 90 0\n");
    let r = run("[idle.prom]", &[("idle.prom", text)]).unwrap();
    assert_eq!(
        r.warnings,
        [
            "idle.prom: no line carries pod labels (namespace and pod), so every GPU in it is \
          idle; turn on the exporter's pod mapping (dcgm-exporter -k) if pods held them"
        ]
    );
    // with pod labels on some line, no such warning
    let r = run(
        "[s.prom]",
        &[(
            "s.prom",
            scrape(Some("team-a"), 1)
                .replace(" 1\n", " 1 0\n")
                .replace(" 100\n", " 100 0\n"),
        )],
    )
    .unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn query_range_json_is_a_metering_input() {
    let json = r#"{"status":"success","data":{"resultType":"matrix","result":[
      {"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","UUID":"GPU-0","gpu":"0","modelName":"NVIDIA H200","Hostname":"n1","instance":"10.0.0.7:9400","job":"dcgm-exporter","exported_namespace":"team-a","exported_pod":"p0","namespace":"gpu-operator","pod":"dcgm-exporter-x"},
       "values":[[0,"40"],[60,"60"],[120,"50"]]},
      {"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","UUID":"GPU-0","gpu":"0","modelName":"NVIDIA H200","Hostname":"n1","instance":"10.0.0.7:9400","job":"dcgm-exporter","namespace":"gpu-operator","pod":"dcgm-exporter-x"},
       "values":[[180,"0"]]},
      {"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","UUID":"GPU-1","gpu":"1","modelName":"NVIDIA H200","Hostname":"n1","instance":"10.0.0.7:9400","job":"dcgm-exporter","exported_namespace":"team-b","exported_pod":"p1","namespace":"gpu-operator","pod":"dcgm-exporter-x"},
       "values":[[0,"100"],[60.001,"100"]]}
    ]}}"#;
    let r = run("[range.json]", &[("range.json", json.to_owned())]).unwrap();
    // GPU 0: 0, 60, 120 held until the next point, stale at 180: 180 s; GPU 1: 60 s then
    // the lookback of 300 s
    assert_eq!(
        used(&r),
        [
            row("A", "0.050000", Some("0.5000")),
            row("B", "0.100000", Some("1.0000"))
        ]
    );
    // declared, and an answer that is not a matrix
    assert_eq!(
        used(
            &run(
                "[{path: range.json, format: query-range}]",
                &[("range.json", json.to_owned())]
            )
            .unwrap()
        ),
        used(&r)
    );
    let vector = json.replace("\"matrix\"", "\"vector\"");
    let e = run("[v.json]", &[("v.json", vector)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "v.json: resultType \"vector\": only a range query's matrix is read"
    );
}

/// A `query_range` answer of one GPU's series: `(labels after the device's, points)`.
fn range_answer(series: &[(&str, Vec<(i64, &str)>)]) -> String {
    let entries: Vec<String> = series
        .iter()
        .map(|(labels, points)| {
            let values: Vec<String> = points
                .iter()
                .map(|(t, v)| format!("[{t},\"{v}\"]"))
                .collect();
            format!(
                r#"{{"metric":{{"__name__":"DCGM_FI_DEV_GPU_UTIL","UUID":"GPU-0","gpu":"0","modelName":"NVIDIA H200","Hostname":"n1"{labels}}},"values":[{}]}}"#,
                values.join(",")
            )
        })
        .collect();
    format!(
        r#"{{"status":"success","data":{{"resultType":"matrix","result":[{}]}}}}"#,
        entries.join(",\n")
    )
}

/// A GPU held for two hours, queried with a one-hour step (above the 5-minute lookback):
/// two samples, each standing for one step, are 2 GPU-hours (as `count_over_time x step`
/// counts them), not two lookbacks (600 s, 0.166667 h, as the reader booked them before).
#[test]
fn query_range_step_above_the_lookback_counts_one_step_per_sample() {
    let json = range_answer(&[
        (
            r#","namespace":"team-a","pod":"p0""#,
            vec![(0, "50"), (3600, "50")],
        ),
        ("", vec![(7200, "0")]),
    ]);
    let doc = Document::from_yaml(&format!(
        "{}dcgm: [range.json]\n",
        HEAD.replace("end: 3600", "end: 86400")
    ))
    .unwrap();
    let r = gpuquota_metering::run(&doc.into_input(&[("range.json".to_owned(), json)]).unwrap())
        .unwrap()
        .to_output();
    // [0, 3600) and [3600, 7200), each held until the device's next sample: 7,200 s = 2 h,
    // busy 0.5 throughout
    assert_eq!(used(&r), [row("A", "2.000000", Some("0.5000"))]);
    assert_eq!(
        r.warnings,
        [
            "range.json: the answer's step is 3600 s, longer than the lookback of 300 s: each \
          sample stands for one step (as count_over_time * step counts it)"
        ]
    );
}

/// A backfilled Prometheus has no staleness markers: at its 5-minute lookback the ended pod
/// p0 answers until 600 s although p1 began on the same GPU at 360 s. p0's series ends where
/// p1's begins (as a live scrape's staleness marker would end it), with a warning, instead
/// of refusing the answer as double booking.
#[test]
fn query_range_overlap_of_consecutive_pods_ends_the_earlier_series() {
    let a: Vec<(i64, &str)> = (0..=10).map(|k| (k * 60, "100")).collect();
    let b: Vec<(i64, &str)> = (6..=20).map(|k| (k * 60, "100")).collect();
    let json = range_answer(&[
        (r#","namespace":"team-a","pod":"p0""#, a),
        (r#","namespace":"team-b","pod":"p1""#, b),
    ]);
    let r = run("[range.json]", &[("range.json", json)]).unwrap();
    // p0: [0, 360) = 0.1 h; p1: 360 .. 1200 step by step, then the lookback: [360, 1500)
    // = 1,140 s = 0.316667 h
    assert_eq!(
        used(&r),
        [
            row("A", "0.100000", Some("1.0000")),
            row("B", "0.316667", Some("1.0000"))
        ]
    );
    assert_eq!(
        r.warnings,
        [
            "range.json: on n1/GPU-0 the series of pod team-a/p0 goes on from 360 to 600, after \
          the series of the next pod team-b/p1 began at 360 (no staleness markers, as in a \
          backfilled Prometheus): ended at 360, where a live scrape would have marked it stale"
        ]
    );
}

/// The same without a next pod: p0's backfilled tail overlaps the device's series without pod
/// labels (the GPU idle from 360 s on), and ends where that series begins.
#[test]
fn query_range_pod_series_ends_where_the_idle_series_begins() {
    let a: Vec<(i64, &str)> = (0..=10).map(|k| (k * 60, "100")).collect();
    let idle: Vec<(i64, &str)> = (6..=20).map(|k| (k * 60, "0")).collect();
    let json = range_answer(&[(r#","namespace":"team-a","pod":"p0""#, a), ("", idle)]);
    let r = run("[range.json]", &[("range.json", json)]).unwrap();
    // [0, 360) = 0.1 h, not [0, 660) = 0.183333 h
    assert_eq!(used(&r), [row("A", "0.100000", Some("1.0000"))]);
    assert_eq!(
        r.warnings,
        [
            "range.json: 1 pod series went on after their device's series without pod labels \
          began (no staleness markers, as in a backfilled Prometheus): each ended there, where \
          a live scrape would have marked it stale"
        ]
    );
}

/// The answer is streamed: keys in any order (`values` before `metric`, `resultType` after
/// `result`), pretty-printed over many lines, with a byte-order mark and blank lines first.
#[test]
fn query_range_is_streamed_in_any_key_order() {
    let json = "\u{feff}\n\n{\"data\": {\"result\": [\n  {\"values\": [[0, \"50\"], [60, \"50\"]],\n   \
        \"metric\": {\"__name__\": \"DCGM_FI_DEV_GPU_UTIL\", \"UUID\": \"GPU-0\", \"modelName\": \"NVIDIA H200\", \
        \"namespace\": \"team-a\", \"pod\": \"p0\"}}\n],\n \"resultType\": \"matrix\"},\n \"status\": \"success\"}\n";
    let r = run("[range.json]", &[("range.json", json.to_owned())]).unwrap();
    // 0 held until 60, 60 held for the lookback: 360 s = 0.1 h
    assert_eq!(used(&r), [row("A", "0.100000", Some("0.5000"))]);
    let failed = json.replace("\"success\"", "\"error\"");
    assert_eq!(
        run("[range.json]", &[("range.json", failed)])
            .unwrap_err()
            .to_string(),
        "range.json: the query failed (status \"error\")"
    );
}

#[test]
fn unknown_fields_are_warned_with_path_and_did_you_mean() {
    let doc = Document::from_yaml(
        "window: {start: 0, end: 3600}\n\
         cardTypes: [{name: H200, pricePerHur: \"4.50\"}]\n\
         dcgm: [{path: a.prom, scrapeTme: 0}]\n\
         colour: blue\n",
    )
    .unwrap();
    let got: Vec<String> = doc
        .diagnostics("m.yaml")
        .iter()
        .map(|d| format!("{} {d}", d.code))
        .collect();
    assert_eq!(
        got,
        [
            "unknown-field m.yaml: cardTypes[0].pricePerHur: unknown field pricePerHur ignored; did you mean pricePerHour?",
            "unknown-field m.yaml: dcgm[0].scrapeTme: unknown field scrapeTme ignored; did you mean scrapeTime?",
            "unknown-field m.yaml: colour: unknown field colour ignored",
        ]
    );
    // the same from JSON
    let doc = Document::from_yaml(
        r#"{"window": {"start": 0, "end": 3600}, "cardTypes": [{"name": "H200", "pricePerHur": "4.50"}]}"#,
    )
    .unwrap();
    assert_eq!(doc.unknown_fields, ["cardTypes.0.pricePerHur"]);
}

#[test]
fn dcgm_files_are_bounded() {
    // one line of 1 MiB + 1 zero bytes: refused at the limit of one line, not read on
    let dir = std::env::temp_dir().join(format!("gpuquota-dcgm-bounded-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let long = dir.join("zeros.prom");
    std::fs::write(&long, vec![0u8; (1 << 20) + 1]).unwrap();
    let doc = Document::from_yaml(&format!("{HEAD}dcgm: [{}]\n", long.display())).unwrap();
    let e = doc
        .into_input_with(&mut |_, p| gpuquota_metering::dcgm::open_file(std::path::Path::new(p)))
        .unwrap_err();
    let MeteringError::Read(d) = &e else {
        panic!("{e}")
    };
    assert_eq!(d.code.as_str(), "input-too-large");
    assert_eq!(
        e.to_string(),
        format!(
            "{}: cannot read: a line longer than the limit of 1048576 bytes for one line of \
             metrics text; this is not a metrics file",
            long.display()
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
    // a device is not opened at all
    let doc = Document::from_yaml(&format!("{HEAD}dcgm: [/dev/zero]\n")).unwrap();
    let e = doc
        .into_input_with(&mut |_, p| gpuquota_metering::dcgm::open_file(std::path::Path::new(p)))
        .unwrap_err();
    let MeteringError::Read(d) = &e else {
        panic!("{e}")
    };
    assert_eq!(d.code.as_str(), "read-failed");
    assert_eq!(
        e.to_string(),
        "/dev/zero: cannot read: the path is a device, not a regular file; give a file, or `-` \
         to read standard input"
    );
}

#[test]
fn a_month_of_grid_values_is_within_the_yaml_budget() {
    // 300,000 values: past the YAML parser's default budget of 250,000 nodes
    let values = vec!["1"; 300_000].join(", ");
    let doc = Document::from_yaml(&format!(
        "window: {{start: 0, end: 18000000}}\ncardTypes: [{{name: H200}}]\n\
         series:\n  - {{department: A, cardType: H200, step: 60, values: [{values}]}}\n"
    ))
    .unwrap();
    assert_eq!(doc.series[0].values.as_ref().map(Vec::len), Some(300_000));
}

/// The Nodes and the NVIDIA device plugin's sharing ConfigMap: `node-a` is time-sliced into 4
/// replicas per GPU (its `nvidia.com/device-plugin.config` label names the key `ts4`);
/// `node-b` has no label and takes the key `default` (MPS, 2 replicas).
const CLUSTER: &str = r#"apiVersion: v1
kind: ConfigMap
metadata: {name: device-plugin-config, namespace: gpu-operator}
data:
  ts4: |
    version: v1
    sharing:
      timeSlicing:
        resources:
        - {name: nvidia.com/gpu, replicas: 4}
  default: |
    version: v1
    sharing:
      mps:
        resources:
        - {name: nvidia.com/gpu, replicas: 2}
---
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {nvidia.com/device-plugin.config: ts4, nvidia.com/gpu.count: "1"}}
status: {allocatable: {nvidia.com/gpu: "1"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {nvidia.com/gpu.count: "1"}}
"#;

#[test]
fn time_sliced_replicas_take_replicas_per_gpu_from_the_device_plugin_config() {
    // One replica held for an hour on node-a's 4-way time-sliced GPU: 1/4 GPU-hour; one on
    // node-b (the default MPS config, 2 replicas): 1/2 GPU-hour.
    let doc = Document::from_yaml(&format!(
        "{HEAD}cluster: [cluster.yaml]\nrecords:\n\
         \x20 - {{department: A, cardType: H200, replicas: 1, holder: node-a/GPU-1, start: 0, end: 3600}}\n\
         \x20 - {{department: B, cardType: H200, replicas: 1, holder: node-b/GPU-2, start: 0, end: 3600}}\n"
    ))
    .unwrap();
    assert!(doc.unknown_fields.is_empty(), "{:?}", doc.unknown_fields);
    assert_eq!(doc.cluster, vec!["cluster.yaml".to_owned()]);
    let sharing =
        Document::sharing_from(&[("cluster.yaml".to_owned(), CLUSTER.to_owned())]).unwrap();
    assert_eq!(sharing.of("node-a"), Some(4));
    assert_eq!(sharing.of("node-b"), Some(2));
    assert_eq!(sharing.of("elsewhere"), Some(2));
    let mut open = |_: usize, _: &str| -> Result<gpuquota_model::source::Stream, MeteringError> {
        unreachable!("no dcgm files")
    };
    let input = doc.into_input_with_sharing(&mut open, sharing).unwrap();
    let out = gpuquota_metering::run(&input).unwrap().to_output();
    let hours: Vec<(String, String)> = out
        .lines
        .iter()
        .map(|l| (l.department.clone(), l.allocated_hours.to_string()))
        .collect();
    assert_eq!(
        hours,
        vec![
            ("A".to_owned(), "0.250000".to_owned()),
            ("B".to_owned(), "0.500000".to_owned())
        ]
    );
    // An explicit replicasPerGpu on the record wins over the configuration.
    let doc = Document::from_yaml(&format!(
        "{HEAD}records:\n  - {{department: A, cardType: H200, replicas: 1, replicasPerGpu: 8, holder: node-a/GPU-1, start: 0, end: 3600}}\n"
    ))
    .unwrap();
    let sharing = Document::sharing_from(&[("c.yaml".to_owned(), CLUSTER.to_owned())]).unwrap();
    let out = gpuquota_metering::run(&doc.into_input_with_sharing(&mut open, sharing).unwrap())
        .unwrap()
        .to_output();
    assert_eq!(out.lines[0].allocated_hours, "0.125000");
}

#[test]
fn the_consuming_conversion_moves_the_grid_and_meters_the_same() {
    // Two series, a gap and a missing `values` later: the owned conversion must hand each
    // series its own values, in order, and fail as the borrowing one does.
    let text = format!(
        "{HEAD}series:\n  - {{department: A, cardType: H200, step: 600, values: [1, 2, null, 1, 1, 0]}}\n\
         \x20 - {{department: B, cardType: H200, step: 900, values: [3, 3, 3, 3]}}\n"
    );
    let doc = Document::from_yaml(&text).unwrap();
    let mut none = |_: usize, p: &str| -> Result<gpuquota_model::source::Stream, MeteringError> {
        panic!("no dcgm file expected, asked for {p}")
    };
    let borrowed = doc.into_input_with(&mut none).unwrap();
    let owned = doc.clone().into_input_owned_with(&mut none).unwrap();
    assert_eq!(borrowed.series.len(), 2);
    assert_eq!(
        owned.series[0].values,
        vec![Some(1), Some(2), None, Some(1), Some(1), Some(0)]
    );
    assert_eq!(owned.series[1].values, vec![Some(3); 4]);
    assert_eq!(
        gpuquota_metering::run(&owned).unwrap().to_output(),
        gpuquota_metering::run(&borrowed).unwrap().to_output()
    );
    let bad = Document::from_yaml(&format!(
        "{HEAD}series:\n  - {{department: A, cardType: H200, step: 600}}\n"
    ))
    .unwrap();
    assert_eq!(
        bad.clone()
            .into_input_owned_with(&mut none)
            .unwrap_err()
            .to_string(),
        bad.into_input_with(&mut none).unwrap_err().to_string()
    );
}

#[test]
fn gpus_claimed_through_dra_are_metered_like_any_other() {
    // The exporter labels a GPU allocated through a ResourceClaim with the claim, driver,
    // pool and device as well as the pod (NVIDIA/dcgm-exporter:
    // internal/pkg/transformation/const.go, dra.go); the pod decides the department alike.
    let dra = r#",dra_claim_name="train-0-gpus-x7k2p",dra_claim_namespace="team-a",dra_driver_name="gpu.nvidia.com",dra_pool_name="n1",dra_device_name="gpu-0""#;
    let plain = |util: u32| {
        format!("DCGM_FI_DEV_GPU_UTIL{{{GPU0},namespace=\"team-a\",pod=\"p\"}} {util}\n")
    };
    let claimed = |util: u32| {
        format!("DCGM_FI_DEV_GPU_UTIL{{{GPU0}{dra},namespace=\"team-a\",pod=\"p\"}} {util}\n")
    };
    let entries = "[{path: s1.prom, scrapeTime: 0}, {path: s2.prom, scrapeTime: 600}, {path: s3.prom, scrapeTime: 1200}]";
    let off = format!("DCGM_FI_DEV_GPU_UTIL{{{GPU0}}} 0\n");
    let by_plugin = run(
        entries,
        &[
            ("s1.prom", plain(50)),
            ("s2.prom", plain(30)),
            ("s3.prom", off.clone()),
        ],
    )
    .unwrap();
    let by_claim = run(
        entries,
        &[
            ("s1.prom", claimed(50)),
            ("s2.prom", claimed(30)),
            ("s3.prom", off),
        ],
    )
    .unwrap();
    // scrapes 600 s apart: each stands for the 300 s lookback, so 600 s = 0.166667 h held,
    // busy (0.5 × 300 + 0.3 × 300) / 600 = 0.4
    assert_eq!(used(&by_claim), [row("A", "0.166667", Some("0.4000"))]);
    assert_eq!(used(&by_claim), used(&by_plugin));
}
