//! Against a real Prometheus server (Debian's `prometheus` and `promtool`): the recorded month
//! is written as OpenMetrics, loaded with `promtool tsdb create-blocks-from openmetrics`,
//! served by a `prometheus` started here on 127.0.0.1 (a free port; killed at the end, also
//! when an assertion fails), and read back through the live paths: the history replay
//! (`history: {prometheus: {url}}`) and `meter --prometheus` give the same figures as the
//! query_range answers saved from such a server
//! (`crates/gpuquota-sim/tests/data/history/{ksm,dcgm}.json`). Without the binaries the
//! test says on stderr that it is skipped.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use gpuquota::command::prometheus::{PrometheusArgs, meter};

/// 2026-11-01T00:00:00Z.
const T0: i64 = 1_793_491_200;
/// Six hours of scrapes every 300 s.
const END: i64 = 21_600;
const STEP: i64 = 300;

fn history_data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../gpuquota-sim/tests/data/history")
        .join(name)
}

/// (pod, namespace, Job, queue, class, uid, created, start, completion, gone, GPUs, node,
/// devices), times in seconds from T0: the pods of the recorded month.
type PodRow = (
    &'static str,
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
    &'static str,
    i64,
    i64,
    Option<i64>,
    i64,
    u32,
    &'static str,
    &'static [u32],
);

const PODS: [PodRow; 9] = [
    (
        "train-a-0",
        "team-a",
        Some("train-a"),
        Some("main"),
        Some("low"),
        "ua0",
        10,
        40,
        Some(3_610),
        END,
        2,
        "node-1",
        &[10, 11],
    ),
    (
        "train-a-1",
        "team-a",
        Some("train-a"),
        Some("main"),
        Some("low"),
        "ua1",
        10,
        40,
        Some(3_610),
        END,
        2,
        "node-1",
        &[12, 13],
    ),
    (
        "sweep-b-r1",
        "team-b",
        Some("sweep-b"),
        Some("main"),
        Some("low"),
        "ub1",
        305,
        310,
        None,
        1_200,
        4,
        "node-2",
        &[20, 21, 22, 23],
    ),
    (
        "sweep-b-r2",
        "team-b",
        Some("sweep-b"),
        Some("main"),
        Some("low"),
        "ub2",
        2_400,
        2_405,
        Some(9_600),
        END,
        4,
        "node-2",
        &[20, 21, 22, 23],
    ),
    (
        "eval-c-r1",
        "team-a",
        Some("eval-c"),
        Some("main"),
        Some("low"),
        "uc1",
        605,
        610,
        None,
        1_800,
        2,
        "node-3",
        &[30, 31],
    ),
    (
        "urgent-x7k2p",
        "team-a",
        Some("urgent"),
        Some("main"),
        Some("high"),
        "ud1",
        1_801,
        1_805,
        None,
        END,
        4,
        "node-3",
        &[32, 33, 34, 35],
    ),
    (
        "prep-e-x1",
        "team-a",
        Some("prep-e"),
        Some("main"),
        None,
        "ue1",
        901,
        905,
        Some(2_705),
        END,
        1,
        "node-4",
        &[40],
    ),
    (
        "notebook",
        "team-b",
        None,
        Some("main"),
        None,
        "uf1",
        3_000,
        3_005,
        Some(4_805),
        END,
        1,
        "node-4",
        &[41],
    ),
    (
        "cron-backup-x",
        "ops",
        Some("cron-backup"),
        None,
        None,
        "ug1",
        10_800,
        10_801,
        Some(10_920),
        END,
        0,
        "node-4",
        &[],
    ),
];

const JOBS: [(&str, &str, i64); 6] = [
    ("team-a", "train-a", 0),
    ("team-b", "sweep-b", 300),
    ("team-a", "eval-c", 600),
    ("team-a", "urgent", 1_790),
    ("team-a", "prep-e", 900),
    ("ops", "cron-backup", 10_800),
];

fn labels(pairs: &[(&str, &str)]) -> String {
    let inner: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    format!("{{{}}}", inner.join(","))
}

/// The month's samples as OpenMetrics: kube-state-metrics' pod and Job series while each
/// object exists, the DCGM exporter's per-GPU series while a pod holds its GPUs.
fn openmetrics() -> String {
    use std::collections::BTreeMap;
    type Points = Vec<(i64, String)>;
    let mut fam: BTreeMap<&str, BTreeMap<String, Points>> = BTreeMap::new();
    let mut add = |name: &'static str, l: String, t: i64, v: String| {
        fam.entry(name)
            .or_default()
            .entry(l)
            .or_default()
            .push((t, v));
    };
    let grid: Vec<i64> = (0..=END / STEP).map(|k| k * STEP).collect();
    for (pod, ns, job, queue, class, uid, created, start, done, gone, gpus, node, devs) in PODS {
        let base = [("namespace", ns), ("pod", pod), ("uid", uid)];
        let gpus_text = gpus.to_string();
        for &t in grid.iter().filter(|t| (created..=gone).contains(*t)) {
            add(
                "kube_pod_created",
                labels(&base),
                t,
                (T0 + created).to_string(),
            );
            if t >= start {
                add(
                    "kube_pod_start_time",
                    labels(&base),
                    t,
                    (T0 + start).to_string(),
                );
            }
            if let Some(c) = done.filter(|c| t >= *c) {
                add(
                    "kube_pod_completion_time",
                    labels(&base),
                    t,
                    (T0 + c).to_string(),
                );
            }
            if gpus > 0 {
                let mut l = base.to_vec();
                l.extend([
                    ("container", "c"),
                    ("node", node),
                    ("resource", "nvidia_com_gpu"),
                    ("unit", "integer"),
                ]);
                add(
                    "kube_pod_container_resource_requests",
                    labels(&l),
                    t,
                    gpus_text.clone(),
                );
            }
            let mut l = base.to_vec();
            if let Some(q) = queue {
                l.push(("label_kueue_x_k8s_io_queue_name", q));
            }
            if let Some(c) = class {
                l.push(("label_kueue_x_k8s_io_priority_class", c));
            }
            add("kube_pod_labels", labels(&l), t, "1".into());
            let mut l = base.to_vec();
            match job {
                Some(j) => l.extend([
                    ("owner_kind", "Job"),
                    ("owner_name", j),
                    ("owner_is_controller", "true"),
                ]),
                None => l.extend([
                    ("owner_kind", "<none>"),
                    ("owner_name", "<none>"),
                    ("owner_is_controller", "<none>"),
                ]),
            }
            add("kube_pod_owner", labels(&l), t, "1".into());
        }
        let until = done.unwrap_or(gone);
        for d in devs {
            let (gpu, uuid, device) = (
                (d % 10).to_string(),
                format!("GPU-{d}"),
                format!("nvidia{}", d % 10),
            );
            let l = labels(&[
                ("gpu", &gpu),
                ("UUID", &uuid),
                ("device", &device),
                ("modelName", "NVIDIA A100-SXM4-80GB"),
                ("Hostname", node),
                ("container", "c"),
                ("namespace", ns),
                ("pod", pod),
            ]);
            for &t in &grid {
                if t >= start && (t < until || (done.is_none() && gone == END)) {
                    add("DCGM_FI_DEV_GPU_UTIL", l.clone(), t, "50".into());
                }
            }
        }
    }
    for (ns, job, created) in JOBS {
        for &t in grid.iter().filter(|t| **t >= created) {
            let l = labels(&[("namespace", ns), ("job_name", job)]);
            add("kube_job_created", l, t, (T0 + created).to_string());
        }
    }
    let mut out = String::new();
    for (name, series) in &fam {
        out.push_str(&format!("# TYPE {name} gauge\n"));
        for (l, points) in series {
            for (t, v) in points {
                out.push_str(&format!("{name}{l} {v} {}\n", T0 + t));
            }
        }
    }
    out.push_str("# EOF\n");
    out
}

/// The server this test started: killed and its directory removed when dropped.
struct Server {
    child: Child,
    dir: PathBuf,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The status line of `GET path`, or `None` when nothing answers.
fn get_status(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    text.lines().next().map(str::to_owned)
}

fn installed(binary: &str) -> bool {
    Command::new(binary)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Loads the month into a new TSDB and serves it; `None` (after saying so) without the
/// binaries.
fn start() -> Option<Server> {
    if !installed("prometheus") || !installed("promtool") {
        eprintln!(
            "SKIPPED: the real-Prometheus test needs Debian's prometheus and promtool \
             (apt-get install prometheus); not found on PATH"
        );
        return None;
    }
    let dir = std::env::temp_dir().join(format!("gpuquota-prometheus-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let om = dir.join("month.om");
    std::fs::write(&om, openmetrics()).unwrap();
    let tsdb = dir.join("data");
    let out = Command::new("promtool")
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(&om)
        .arg(&tsdb)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "promtool: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let config = dir.join("prometheus.yml");
    std::fs::write(&config, "global: {}\n").unwrap();
    let port = free_port();
    let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
    let child = Command::new("prometheus")
        .arg(format!("--storage.tsdb.path={}", tsdb.display()))
        // the month lies in the past: no retention may drop it
        .arg("--storage.tsdb.retention.time=100y")
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg(format!("--config.file={}", config.display()))
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let server = Server {
        child,
        dir,
        url: format!("http://127.0.0.1:{port}"),
    };
    // up to 300 tries 200 ms apart (a minute)
    let mut tries = 0;
    while get_status(port, "/-/ready").is_none_or(|s| !s.contains(" 200 ")) {
        tries += 1;
        assert!(
            tries < 300,
            "prometheus not ready within 60 s: {}",
            std::fs::read_to_string(server.dir.join("prometheus.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    Some(server)
}

#[test]
fn a_real_prometheus_serves_the_same_history_and_bill_as_its_saved_answers() {
    let Some(server) = start() else { return };
    // the history: fetched live (one window of 73 points per query) …
    let mut fold = gpuquota::sim::history::prometheus::Fold::default();
    gpuquota::sim::history::prometheus::fetch_into(
        &mut fold,
        &server.url,
        (T0, T0 + END, STEP),
        30,
    )
    .unwrap();
    let live = fold.finish(&server.url).unwrap();
    // … equals the one read from the saved answers
    let saved: Vec<(String, String)> = ["ksm.json", "dcgm.json"]
        .iter()
        .map(|f| {
            (
                (*f).to_owned(),
                std::fs::read_to_string(history_data(f)).unwrap(),
            )
        })
        .collect();
    let saved = gpuquota::sim::history::prometheus::load(&saved).unwrap();
    assert_eq!(live.records, saved.records);
    assert_eq!(live.records.len(), 6);
    let sweep = live
        .records
        .iter()
        .find(|r| r.object == "team-b/sweep-b")
        .unwrap();
    // created 300 s, first pod started 310 s, last pod completed 9,600 s
    assert_eq!(
        (sweep.created_ms, sweep.admitted_ms, sweep.runtime_ms),
        ((T0 + 300) * 1000, Some((T0 + 310) * 1000), Some(9_290_000))
    );

    // the replay of a scenario that names the server equals the saved answers' replay
    let dir = server.dir.join("scenario");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(history_data("platform.yaml"), dir.join("platform.yaml")).unwrap();
    let scenario = std::fs::read_to_string(history_data("replay-prometheus.yaml"))
        .unwrap()
        .replace(
            "{prometheus: {files: [ksm.json, dcgm.json]}}",
            &format!(
                "{{prometheus: {{url: \"{}\", start: \"2026-11-01T00:00:00Z\", end: \
                 \"2026-11-01T06:00:00Z\", step: 300}}}}",
                server.url
            ),
        );
    assert!(scenario.contains("url:"));
    std::fs::write(dir.join("live.yaml"), scenario).unwrap();
    let run = |p: &Path| {
        let sim = gpuquota::sim::Simulation::from_files(p).unwrap();
        gpuquota::sim::simulate(&sim).unwrap().to_json()["workloads"].clone()
    };
    let live_run = run(&dir.join("live.yaml"));
    assert_eq!(live_run, run(&history_data("replay-prometheus.yaml")));
    assert_eq!(live_run.as_array().unwrap().len(), 6);

    // the bill: asked at a step of 1 s (21,601 points per series: three windows of at most
    // 10,000) it equals the saved answer's (step 300 s), because each GPU's series holds
    // from its first point to one scrape after its last answer point either way
    let saved_bill = gpuquota::metering::file::meter_file(&history_data("meter.yaml"), false)
        .unwrap()
        .report
        .to_json();
    let live_doc = server.dir.join("meter.yaml");
    let doc = std::fs::read_to_string(history_data("meter.yaml"))
        .unwrap()
        .replace("dcgm: [dcgm.json]\n", "");
    std::fs::write(&live_doc, doc).unwrap();
    let mut args = PrometheusArgs::new(server.url.clone());
    args.step = Some(1);
    let live_bill = meter(&live_doc, false, &args).unwrap().report;
    assert_eq!(live_bill.to_json(), saved_bill);
    // team-a: train-a 4 GPUs × (300 → 3,900 + 300) = 15,600 s; eval-c 2 × (900 → 2,100)
    // = 2,400; prep-e 1 × (1,200 → 3,300) = 2,100; urgent 4 × (2,100 → 21,600) = 78,000:
    // 98,100 s = 27.25 h. team-b: sweep-b 4 × (600 → 1,500) + 4 × (2,700 → 9,900) =
    // 32,400; notebook 1 × (3,300 → 5,400) = 2,100: 34,500 s = 9.583333 h
    let out = live_bill.to_output();
    let hours: Vec<(&str, String)> = out
        .lines
        .iter()
        .map(|l| (l.department.as_str(), l.allocated_hours.to_string()))
        .collect();
    assert_eq!(
        hours,
        [
            ("team-a", "27.250000".to_owned()),
            ("team-b", "9.583333".to_owned())
        ]
    );

    // errors: Prometheus' own message for a bad query, exit status 2, no report
    let mut bad = PrometheusArgs::new(server.url.clone());
    bad.query = Some("sum(".into());
    let refused = meter(&live_doc, false, &bad).unwrap_err();
    assert_eq!(refused.code, 2);
    assert!(
        refused.lines[0].ends_with(
            "Prometheus answered HTTP 400: 1:5: parse error: unclosed left parenthesis (bad_data)"
        ),
        "{:?}",
        refused.lines
    );
}

#[test]
fn a_server_that_is_not_there_or_does_not_answer_is_exit_status_2() {
    let doc = history_data("meter.yaml");
    // nothing listens on a port just freed
    let port = free_port();
    let refused = meter(
        &doc,
        false,
        &PrometheusArgs::new(format!("http://127.0.0.1:{port}")),
    )
    .unwrap_err();
    assert_eq!(refused.code, 2);
    assert!(
        refused.lines[0].contains(&format!(
            "cannot reach Prometheus at http://127.0.0.1:{port}"
        )),
        "{:?}",
        refused.lines
    );
    // a server that accepts and never answers: the timeout (1 s) ends the query
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let mut args = PrometheusArgs::new(format!("http://127.0.0.1:{port}"));
    args.timeout = Some(1);
    let refused = meter(&doc, false, &args).unwrap_err();
    assert_eq!(refused.code, 2);
    assert!(
        refused.lines[0].ends_with("no answer from Prometheus within 1 s"),
        "{:?}",
        refused.lines
    );
    drop(silent);
    // not http://
    let refused = meter(&doc, false, &PrometheusArgs::new("https://prometheus:9090")).unwrap_err();
    assert_eq!(refused.code, 2);
    assert_eq!(
        refused.lines,
        [
            "error: the Prometheus URL \"https://prometheus:9090\" is not http://HOST:PORT (https \
          is not supported: use a local port-forward)"
        ]
    );
}
