//! Checks shared by the fuzz target and the arbtest smoke test (feature `fuzzing`).
//!
//! Each function takes arbitrary input, runs a public entry point and asserts what must hold
//! for every input: no panic, and either a typed error or a report that reconciles exactly.

use crate::engine::{CardType, Config, Input, Window, meter};
use crate::money::{Currency, L};
use crate::report::Report;
use crate::{Document, dcgm};

/// Asserts that a report adds up: `Σ line totals + unrecovered idle = total`, every line's
/// total is its cost plus its idle share, and `allocated + idle = capacity · T` where no
/// overbooking was reported.
pub fn check_report(report: &Report) {
    let mut sum = 0i128;
    for l in &report.lines {
        assert_eq!(l.total_minor, l.cost_minor + l.idle_share_minor, "{l:?}");
        assert!(
            l.borrowed_units <= l.allocated_units || l.service.is_some(),
            "{l:?}"
        );
        assert!(l.own_units <= l.quota_units, "{l:?}");
        sum += l.total_minor;
    }
    for i in report.idle.iter().filter(|i| !i.recovered) {
        sum += i.cost_minor;
    }
    assert_eq!(sum, report.totals.cost_minor);
    let _ = L;
}

/// Parses arbitrary YAML as a `gpuquota meter` input and meters it.
pub fn check_document(text: &str) {
    let Ok(doc) = Document::from_yaml(text) else {
        return;
    };
    let Ok(input) = doc.into_input(&[]) else {
        return;
    };
    // keep the fuzzer from spending its time on astronomically long windows
    if input.config.window.len() > 400 * 86_400 {
        return;
    }
    if let Ok(report) = meter(&input) {
        check_report(&report);
        let _ = report.to_json();
        let _ = report.to_csv();
        let _ = report.to_table();
    }
}

/// Parses arbitrary text as a DCGM exposition and meters what it finds over a fixed window.
pub fn check_exposition(text: &str) {
    let _ = dcgm::parse_exposition("fuzz.prom", text);
    let mut h200 = CardType::new("H200", 4_500_000);
    h200.model = Some("NVIDIA H200".to_owned());
    h200.capacity = Some(8);
    let cards = vec![h200];
    let window = Window {
        start: 0,
        end: 86_400,
    };
    let sharing = gpuquota_model::workloads::sharing::ReplicasPerGpu::default();
    let settings = dcgm::Settings {
        card_types: &cards,
        window,
        lookback: 300,
        sharing: &sharing,
    };
    // every format and option, and the streaming reader against the keep-every-point one
    for (format, scrape_time, honor) in [
        (dcgm::Format::Auto, None, None),
        (dcgm::Format::OpenMetrics, Some(60), Some(true)),
        (dcgm::Format::QueryRange, None, None),
        (dcgm::Format::Prometheus, Some(0), Some(false)),
    ] {
        let sources = [
            dcgm::Source {
                name: "a".to_owned(),
                format,
                scrape_time,
                honor_labels: honor,
            },
            dcgm::Source {
                name: "b".to_owned(),
                format,
                scrape_time: scrape_time.map(|t| t + 30),
                honor_labels: honor,
            },
        ];
        let mut open = |_: usize| {
            Ok(gpuquota_model::source::Stream::from_reader(
                "fuzz",
                std::io::Cursor::new(text.as_bytes().to_vec()),
                1 << 20,
            ))
        };
        let streamed = dcgm::read(&sources, &mut open, settings);
        let kept = dcgm::read_keeping_every_point(&sources, &mut open, settings);
        match (&streamed, &kept) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(_), Err(_)) => {}
            _ => panic!("streaming {streamed:?} but keeping every point {kept:?}"),
        }
    }
    let Ok(found) = dcgm::read_text("fuzz.prom", text, settings) else {
        return;
    };
    let Ok(currency) = Currency::from_code("USD") else {
        return;
    };
    let mut input = Input::new(Config::new(window, currency));
    input.card_types = cards;
    input.holdings = found.holdings;
    if let Ok(report) = meter(&input) {
        check_report(&report);
    }
}

/// Builds a `gpuquota meter` document and a DCGM exposition from arbitrary bytes (valid-shaped
/// but adversarial: overlapping holders, unknown profiles, odd steps, duplicate times), then
/// runs [`check_document`] and [`check_exposition`] on them and on the raw bytes as text.
pub fn check_bytes(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        check_document(text);
        check_exposition(text);
    }
    let mut u = arbitrary::Unstructured::new(data);
    if let Ok((doc, prom)) = structured(&mut u) {
        check_document(&doc);
        check_exposition(&prom);
    }
}

fn structured(u: &mut arbitrary::Unstructured<'_>) -> arbitrary::Result<(String, String)> {
    const PROFILES: [&str; 5] = ["1g.18gb", "3g.71gb", "7g.141gb", "1g.18gb+me", "9g.1gb"];
    const OPTS: [&str; 6] = [
        "",
        "basis: quota\n",
        "basis: quota\nborrowed: charged\n",
        "idle: weighted\n",
        "idle: even\nrounding: down\n",
        "migWeights: max-instances\nrounding: half-up\n",
    ];
    let end = 60 * i64::from(u.int_in_range(1u16..=240)?);
    let mut doc = format!(
        "window: {{start: 0, end: {end}}}\ncurrency: {}\n{}cardTypes:\n  - {{name: H200, model: NVIDIA H200, pricePerHour: \"{}.{:02}\", capacity: {}}}\n  - {{name: L4, pricePerHour: \"0.7\", capacity: {}}}\ndepartments:\n  - {{name: A, namespaces: [a], quota: {{H200: {}}}}}\n  - {{name: B, namespaces: [b], quota: {{H200: {}, L4: {}}}}}\n",
        *u.choose(&["USD", "JPY", "KWD", "EUR"])?,
        u.choose(&OPTS)?,
        u.int_in_range(0u8..=9)?,
        u.int_in_range(0u8..=99)?,
        u.int_in_range(0u8..=8)?,
        u.int_in_range(0u8..=4)?,
        u.int_in_range(0u8..=4)?,
        u.int_in_range(0u8..=4)?,
        u.int_in_range(0u8..=4)?,
    );
    doc.push_str("records:\n");
    for i in 0..u.int_in_range(0u8..=6)? {
        let s = i64::from(u.int_in_range(0u16..=300)?) * 30 - 600;
        let len = i64::from(u.int_in_range(0u16..=300)?) * 30;
        let who = *u.choose(&[
            "department: A",
            "department: B",
            "namespace: a",
            "namespace: zz",
        ])?;
        let card = *u.choose(&["H200", "L4"])?;
        let shape = if u.arbitrary()? {
            format!(
                "mig: {}, count: {}",
                u.choose(&PROFILES)?,
                u.int_in_range(0u8..=3)?
            )
        } else {
            format!("gpus: {}", u.int_in_range(0u8..=3)?)
        };
        let end = if u.arbitrary()? {
            format!(", end: {}", s + len)
        } else {
            String::new()
        };
        let holder = if u.arbitrary()? {
            format!(", holder: n/G{}", i % 3)
        } else {
            String::new()
        };
        doc.push_str(&format!(
            "  - {{{who}, cardType: {card}, {shape}, start: {s}{end}{holder}}}\n"
        ));
    }
    doc.push_str("series:\n");
    for _ in 0..u.int_in_range(0u8..=2)? {
        let step = *u.choose(&[60i64, 300, 600, 700, 0])?;
        let values: Vec<String> = (0..u.int_in_range(0u8..=12)?)
            .map(|_| {
                Ok(if u.arbitrary()? {
                    "null".to_owned()
                } else {
                    u.int_in_range(0u8..=3)?.to_string()
                })
            })
            .collect::<arbitrary::Result<_>>()?;
        doc.push_str(&format!(
            "  - {{namespace: b, cardType: H200, step: {step}, values: [{}]}}\n",
            values.join(", ")
        ));
    }
    doc.push_str("samples:\n");
    for _ in 0..u.int_in_range(0u8..=2)? {
        let mut t = -300i64;
        let pts: Vec<String> = (0..u.int_in_range(0u8..=6)?)
            .map(|_| {
                t += i64::from(u.int_in_range(0u16..=400)?);
                Ok(format!("[{t}, {}]", u.int_in_range(0u8..=2)?))
            })
            .collect::<arbitrary::Result<_>>()?;
        doc.push_str(&format!(
            "  - {{department: A, cardType: H200, lookback: {}, points: [{}], staleAt: [{}]}}\n",
            u.int_in_range(0u16..=600)?,
            pts.join(", "),
            u.int_in_range(0u16..=900)?
        ));
    }
    if u.arbitrary()? {
        doc.push_str(&format!(
            "services:\n  - {{name: rag, department: B, tokens: {{A: {{input: {}}}, unattributed: {{output: {}}}}}}}\n",
            u.int_in_range(0u32..=1000)?,
            u.int_in_range(0u32..=1000)?
        ));
    }
    let mut prom = String::from("# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge\n");
    for _ in 0..u.int_in_range(0u8..=8)? {
        let gi = if u.arbitrary()? {
            format!(
                ",GPU_I_PROFILE=\"{}\",GPU_I_ID=\"{}\"",
                u.choose(&PROFILES)?,
                u.int_in_range(0u8..=3)?
            )
        } else {
            String::new()
        };
        let ns = *u.choose(&[
            "",
            ",namespace=\"a\",pod=\"p\"",
            ",exported_namespace=\"b\",job=\"x\"",
        ])?;
        prom.push_str(&format!(
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE{{UUID=\"GPU-{}\",modelName=\"NVIDIA H200\",Hostname=\"h\"{gi}{ns}}} 0.{} {}\n",
            u.int_in_range(0u8..=2)?,
            u.int_in_range(0u8..=99)?,
            i64::from(u.int_in_range(0u16..=100)?) * 15_000
        ));
    }
    Ok((doc, prom))
}
