//! The pages opened in a real browser (headless Chromium over the DevTools protocol, on
//! the `--remote-debugging-pipe` pipes): each loads with no console error and no network
//! request, its key figures in the rendered DOM are the JSON's, every chart has a text
//! alternative, nothing is wider than a phone's screen, a department switch hides that
//! department's rows; screenshots at desktop and phone widths are kept under
//! `target/report-screenshots/` for a person to look at.
//!
//! Without a browser (`GPUQUOTA_CHROMIUM`, else `chromium`, `chromium-browser` or
//! `google-chrome` on the PATH) the test says on stderr that it is skipped, and passes.

// the wall clock bounds the waits for the browser's answers, nothing else
#![allow(clippy::disallowed_methods)]

use crate::common;

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The browser to drive, if there is one.
fn browser() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GPUQUOTA_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// A browser on the DevTools pipes: commands go to its fd 3 (our stdin pipe), answers and
/// events come from its fd 4 (our stdout pipe), each message ended by a NUL byte.
struct Cdp {
    child: Child,
    to: ChildStdin,
    from: Receiver<Value>,
    next: u64,
    /// Events received while waiting for an answer, in order.
    events: Vec<Value>,
    profile: PathBuf,
}

impl Cdp {
    fn start(exe: &Path, profile: PathBuf) -> Cdp {
        let _ = std::fs::remove_dir_all(&profile);
        std::fs::create_dir_all(&profile).unwrap();
        // the shell hands our pipes to the browser as fds 3 and 4 (no unsafe pre_exec)
        let script = "exec \"$0\" \"$@\" 3<&0 4>&1 </dev/null >/dev/null 2>/dev/null";
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg(exe)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--disable-default-apps",
                "--hide-scrollbars",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the browser");
        let to = child.stdin.take().unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(out);
            loop {
                let mut buf = Vec::new();
                match r.read_until(0, &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        buf.pop();
                        if let Ok(v) = serde_json::from_slice::<Value>(&buf)
                            && tx.send(v).is_err()
                        {
                            break;
                        }
                    }
                }
            }
        });
        Cdp {
            child,
            to,
            from: rx,
            next: 0,
            events: Vec::new(),
            profile,
        }
    }

    /// Sends `method` (to `session`, else the browser) and waits for its answer.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).unwrap();
        self.to.flush().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from.recv_timeout(left) {
                Ok(v) if v["id"] == json!(id) => {
                    assert!(v.get("error").is_none(), "{method}: {}", v["error"]);
                    return v["result"].clone();
                }
                Ok(v) => self.events.push(v),
                Err(RecvTimeoutError::Timeout) => panic!("{method}: no answer in 60 s"),
                Err(RecvTimeoutError::Disconnected) => panic!("{method}: the browser exited"),
            }
        }
    }

    /// Waits for the event `method` of `session`.
    fn wait(&mut self, session: &str, method: &str) {
        let seen = |e: &Value| e["method"] == json!(method) && e["sessionId"] == json!(session);
        if self.events.iter().any(seen) {
            return;
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from.recv_timeout(left) {
                Ok(v) => {
                    let hit = seen(&v);
                    self.events.push(v);
                    if hit {
                        return;
                    }
                }
                Err(_) => panic!("no {method} in 60 s"),
            }
        }
    }

    /// Lets late events (console messages after load) arrive.
    fn drain(&mut self, for_ms: u64) {
        let deadline = Instant::now() + Duration::from_millis(for_ms);
        while let Ok(v) = self
            .from
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            self.events.push(v);
        }
    }
}

impl Drop for Cdp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// Standard base64 (the screenshots' encoding).
fn base64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for v in s.bytes().filter_map(val) {
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// What the page shows, read from the DOM after load.
const READ: &str = r#"JSON.stringify({
  figures: Array.from(document.querySelectorAll('[data-figure]')).map(e => [e.dataset.figure, e.textContent]),
  rows: Array.from(document.querySelectorAll('tr[data-row]')).map(e => e.dataset.row),
  overflow: document.documentElement.scrollWidth - window.innerWidth,
  svgs: document.querySelectorAll('svg').length,
  titled: Array.from(document.querySelectorAll('svg')).filter(s => s.querySelector(':scope > title') && s.querySelector(':scope > desc')).length,
  scripts: document.scripts.length,
})"#;

/// Opens `file` at `width` (a phone when `mobile`), checks that it loads with no console
/// error and no request but its own, and returns what [`READ`] reads.
fn open(cdp: &mut Cdp, file: &Path, width: u32, mobile: bool, shot: &Path) -> Value {
    let target = cdp.call(None, "Target.createTarget", json!({"url": "about:blank"}));
    let target_id = target["targetId"].as_str().unwrap().to_owned();
    let attached = cdp.call(
        None,
        "Target.attachToTarget",
        json!({"targetId": target_id, "flatten": true}),
    );
    let session = attached["sessionId"].as_str().unwrap().to_owned();
    let s = Some(session.as_str());
    for m in [
        "Page.enable",
        "Runtime.enable",
        "Log.enable",
        "Network.enable",
    ] {
        cdp.call(s, m, json!({}));
    }
    cdp.call(
        s,
        "Emulation.setDeviceMetricsOverride",
        json!({"width": width, "height": if mobile { 844 } else { 900 }, "deviceScaleFactor": 1, "mobile": mobile}),
    );
    let url = format!("file://{}", file.display());
    let start = cdp.events.len();
    cdp.call(s, "Page.navigate", json!({"url": url}));
    cdp.wait(&session, "Page.loadEventFired");
    cdp.drain(300);
    let mine = |e: &&Value| e["sessionId"].as_str() == s;
    let events: Vec<&Value> = cdp.events[start..].iter().filter(mine).collect();
    let requests: Vec<String> = events
        .iter()
        .filter(|e| e["method"] == "Network.requestWillBeSent")
        .map(|e| {
            e["params"]["request"]["url"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .filter(|u| *u != url)
        .collect();
    let errors: Vec<String> = events
        .iter()
        .filter(|e| {
            e["method"] == "Runtime.exceptionThrown"
                || (e["method"] == "Runtime.consoleAPICalled"
                    && matches!(
                        e["params"]["type"].as_str(),
                        Some("error" | "warning" | "assert")
                    ))
                || (e["method"] == "Log.entryAdded"
                    && matches!(
                        e["params"]["entry"]["level"].as_str(),
                        Some("error" | "warning")
                    ))
        })
        .map(|e| e.to_string())
        .collect();
    let read = cdp.call(
        s,
        "Runtime.evaluate",
        json!({"expression": READ, "returnByValue": true}),
    );
    let mut dom: Value = serde_json::from_str(read["result"]["value"].as_str().unwrap()).unwrap();
    dom["requests"] = json!(requests);
    dom["errors"] = json!(errors);
    // the screenshot of the whole page (at most 16,000 px high)
    let metrics = cdp.call(s, "Page.getLayoutMetrics", json!({}));
    let height = metrics["cssContentSize"]["height"]
        .as_f64()
        .unwrap_or(900.0)
        .min(16_000.0);
    let png = cdp.call(
        s,
        "Page.captureScreenshot",
        json!({"format": "png", "captureBeyondViewport": true,
               "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}}),
    );
    std::fs::write(shot, base64(png["data"].as_str().unwrap())).unwrap();
    // a department switch hides that department's rows and only them
    if !mobile {
        let toggled = cdp.call(
            s,
            "Runtime.evaluate",
            json!({"expression": r#"(() => { const b = document.getElementById('dep-0'); if (!b) return 'none';
                const rows = Array.from(document.querySelectorAll('tr.dep-0'));
                const shown = rows.filter(r => r.offsetParent !== null).length;
                b.click();
                const hidden = rows.filter(r => r.offsetParent === null).length;
                const others = Array.from(document.querySelectorAll('tr[data-row]:not(.dep-0)')).filter(r => r.offsetParent === null && !r.closest('details')).length;
                b.click();
                return JSON.stringify([rows.length, shown, hidden, others]); })()"#, "returnByValue": true}),
        );
        let v = toggled["result"]["value"]
            .as_str()
            .unwrap_or("none")
            .to_owned();
        if v != "none" {
            let [n, shown, hidden, others]: [u64; 4] = serde_json::from_str(&v).unwrap();
            assert!(n > 0, "{}: no row of the first department", file.display());
            assert_eq!(
                hidden,
                n,
                "{}: the switch hides every row of its department",
                file.display()
            );
            assert!(shown <= n && others == 0, "{}: {v}", file.display());
        }
    }
    // zoom on a day: no day shows until its link is followed, then that day only
    if !mobile {
        let zoomed = cdp.call(
            s,
            "Runtime.evaluate",
            json!({"expression": r##"(() => { const parts = Array.from(document.querySelectorAll('.choice .part'));
                if (!parts.length) return 'none';
                const before = parts.filter(p => p.offsetParent !== null).length;
                const pick = parts[Math.min(9, parts.length - 1)];
                const link = document.querySelector('.choice a[href="#' + pick.id + '"]');
                link.click();
                const shown = parts.filter(p => p.offsetParent !== null).map(p => p.id);
                const r = pick.getBoundingClientRect();
                return JSON.stringify([parts.length, before, shown, pick.id, [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]]); })()"##, "returnByValue": true}),
        );
        let v = zoomed["result"]["value"]
            .as_str()
            .unwrap_or("none")
            .to_owned();
        if v != "none" {
            let (n, before, shown, id, rect): (u64, u64, Vec<String>, String, [f64; 4]) =
                serde_json::from_str(&v).unwrap();
            assert!(n > 1, "{}: {v}", file.display());
            assert_eq!(
                before,
                0,
                "{}: a day shows before its link is followed",
                file.display()
            );
            assert_eq!(
                shown,
                vec![id],
                "{}: only the chosen day shows",
                file.display()
            );
            assert!(rect[2] > 0.0 && rect[3] > 0.0, "{}: {v}", file.display());
            let png = cdp.call(
                s,
                "Page.captureScreenshot",
                json!({"format": "png", "captureBeyondViewport": true,
                       "clip": {"x": rect[0], "y": rect[1], "width": rect[2], "height": rect[3], "scale": 1}}),
            );
            let day = shot.with_file_name(format!(
                "{}-day.png",
                shot.file_stem().and_then(|x| x.to_str()).unwrap_or("page")
            ));
            std::fs::write(day, base64(png["data"].as_str().unwrap())).unwrap();
        }
    }
    cdp.call(None, "Target.closeTarget", json!({"targetId": target_id}));
    dom
}

/// The values of figure `name` in the DOM, in page order.
fn figure(dom: &Value, name: &str) -> Vec<String> {
    dom["figures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f[0] == json!(name))
        .map(|f| f[1].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn every_page_loads_offline_and_shows_the_json_figures() {
    let Some(exe) = browser() else {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED every_page_loads_offline_and_shows_the_json_figures: no Chromium browser (install Debian's `chromium`, or set GPUQUOTA_CHROMIUM)"
        );
        return;
    };
    let pages = common::pages();
    let dir = common::out_dir();
    let shots = dir.parent().unwrap().join("report-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let profile = std::env::temp_dir().join(format!("gpuquota-chromium-{}", std::process::id()));
    let mut cdp = Cdp::start(&exe, profile);
    // the checks see what they check: a page that logs an error and fetches from the
    // network fails both
    let bad = dir.join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><title>bad</title><img src=\"http://127.0.0.1:9/x.png\" alt=\"\"><script>console.error('broken')</script>",
    )
    .unwrap();
    let dom = open(&mut cdp, &bad, 1280, false, &shots.join("bad.png"));
    assert_eq!(dom["requests"], json!(["http://127.0.0.1:9/x.png"]));
    assert!(
        dom["errors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e.as_str().unwrap().contains("broken")),
        "{}",
        dom["errors"]
    );
    std::fs::remove_file(&bad).unwrap();
    std::fs::remove_file(shots.join("bad.png")).unwrap();
    for p in &pages {
        let file = dir.join(p.name);
        std::fs::write(&file, &p.html).unwrap();
        let stem = p.name.trim_end_matches(".html");
        let desktop = open(
            &mut cdp,
            &file,
            1280,
            false,
            &shots.join(format!("{stem}-desktop.png")),
        );
        let phone = open(
            &mut cdp,
            &file,
            390,
            true,
            &shots.join(format!("{stem}-phone.png")),
        );
        for dom in [&desktop, &phone] {
            assert_eq!(dom["requests"], json!([]), "{stem}: network requests");
            assert_eq!(dom["errors"], json!([]), "{stem}: console errors");
            assert_eq!(dom["scripts"], 0, "{stem}: no script");
            assert_eq!(
                dom["svgs"], dom["titled"],
                "{stem}: every chart has a title and a description"
            );
        }
        assert!(
            phone["overflow"].as_i64().unwrap() <= 0,
            "{stem}: the page is {} px wider than a phone",
            phone["overflow"]
        );
        let j = &p.json;
        match stem {
            "seed" => {
                let c = &j["chargeback"];
                assert_eq!(
                    figure(&desktop, "kueue:bill-total"),
                    vec![c["totals"]["cost"].as_str().unwrap()]
                );
                let lines: Vec<&str> = c["lines"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|l| l["total"].as_str().unwrap())
                    .collect();
                assert_eq!(figure(&desktop, "kueue:line-total"), lines);
                let rows: Vec<String> = c["lines"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|l| {
                        format!(
                            "{}|{}",
                            l["department"].as_str().unwrap(),
                            l["cardType"].as_str().unwrap()
                        )
                    })
                    .collect();
                for r in &rows {
                    assert!(
                        desktop["rows"].as_array().unwrap().contains(&json!(r)),
                        "seed: no row {r}"
                    );
                }
                assert_eq!(
                    figure(&desktop, "kueue:preemption-count"),
                    vec![j["preemptions"].to_string()]
                );
                // hand-checked: the default run's bill table prints the same total
                assert_eq!(figure(&phone, "kueue:bill-total"), vec!["46656.00"]);
            }
            "diff" => {
                for (dept, x) in j["departments"].as_object().unwrap() {
                    let _ = dept;
                    for side in ["a", "b"] {
                        let v = &x["preemptions"][side];
                        let want = if v.is_null() {
                            "-".to_owned()
                        } else {
                            v.to_string()
                        };
                        assert!(
                            figure(&desktop, &format!("{side}:department-preemptions"))
                                .contains(&want),
                            "diff {dept} {side}"
                        );
                    }
                }
            }
            "sweep" => {
                for r in j["rows"].as_array().unwrap() {
                    let run = r["run"].as_u64().unwrap();
                    assert_eq!(
                        figure(&desktop, &format!("run{run}:preemptions")),
                        vec![r["preemptions"].to_string()]
                    );
                }
            }
            "meter" => {
                assert_eq!(
                    figure(&desktop, "bill-total"),
                    vec![j["totals"]["cost"].as_str().unwrap()]
                );
                let lines: Vec<&str> = j["lines"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|l| l["total"].as_str().unwrap())
                    .collect();
                assert_eq!(figure(&desktop, "line-total"), lines);
                assert_eq!(figure(&desktop, "bill-total"), vec!["432.00"]);
            }
            "history" => {
                let f = &j["fidelity"]["all"];
                assert_eq!(
                    figure(&desktop, "fidelity-compared"),
                    vec![f["compared"].to_string()]
                );
                for (k, v) in ["matched", "missed", "extra"]
                    .iter()
                    .map(|k| (*k, f["preemptions"][*k].to_string()))
                {
                    assert_eq!(
                        figure(&desktop, &format!("fidelity-preemptions-{k}")),
                        vec![v]
                    );
                }
                assert_eq!(
                    figure(&desktop, "fidelity-mean-error"),
                    vec![gpuquota_sim::report::human_ms(
                        f["meanAdmissionErrorMs"].as_i64().unwrap()
                    )]
                );
                let hours: Vec<String> = j["fidelity"]["departments"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| {
                        let s = d["simulatedGpuSeconds"].as_u64().unwrap();
                        format!("{}.{:02}", s / 3600, (s % 3600) * 100 / 3600)
                    })
                    .collect();
                assert_eq!(figure(&desktop, "fidelity-simulated-gpu-hours"), hours);
            }
            other => panic!("unexpected page {other}"),
        }
        for kind in ["desktop", "phone"] {
            let png = std::fs::read(shots.join(format!("{stem}-{kind}.png"))).unwrap();
            assert!(png.starts_with(b"\x89PNG"), "{stem}-{kind}.png");
        }
    }
}
