//! Microsoft Philly (msr-fiddle/philly-traces: `trace-data/cluster_job_log`): a JSON array
//! of jobs `{"status", "vc", "jobid", "attempts": [{"start_time", "end_time", "detail":
//! [{"ip", "gpus": ["gpu0", …]}]}], "submitted_time", "user"}`; times are wall-clock
//! `YYYY-MM-DD HH:MM:SS` (read as UTC) or `None`.
//!
//! Mapping: `vc` or `user` is the queue, `status` the class (`Pass`, `Killed`, `Failed`),
//! arrival `submitted_time`; the run is the **last attempt**: runtime its `end_time −
//! start_time`, one pod per `detail` entry (machine) with as many GPUs as its `gpus` list.
//! A job without attempts is `never-ran`; a last attempt without GPUs is `no-gpu`; an entry
//! that is not such an object is `malformed-row`.

use std::borrow::Cow;

use serde::Deserialize;

use super::{Job, Loaded, PodSet, runtime, wall_clock_ms};

// the times are borrowed from the text (owned only when a string has escapes): they are
// read, never kept
#[derive(Deserialize)]
struct PJob<'a> {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    vc: Option<String>,
    jobid: String,
    #[serde(default, borrow)]
    attempts: Vec<Attempt<'a>>,
    #[serde(default, borrow)]
    submitted_time: Option<Text<'a>>,
    #[serde(default)]
    user: Option<String>,
}

#[derive(Deserialize)]
struct Attempt<'a> {
    #[serde(default, borrow)]
    start_time: Option<Text<'a>>,
    #[serde(default, borrow)]
    end_time: Option<Text<'a>>,
    #[serde(default)]
    detail: Vec<Detail>,
}

/// A JSON string borrowed from the text when it has no escapes (`Option<Cow<str>>` would
/// always copy: serde borrows only a bare `Cow` field).
struct Text<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Cow<'de, str>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v))
            }
        }
        d.deserialize_str(V).map(Text)
    }
}

impl std::ops::Deref for Text<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

#[derive(Deserialize)]
struct Detail {
    // only counted: no allocation per GPU
    #[serde(default)]
    gpus: Vec<serde::de::IgnoredAny>,
}

/// Reads a Philly `cluster_job_log`.
///
/// # Errors
/// Not a JSON array.
///
/// # Complexity
/// O(input size).
pub fn load(text: &str) -> Result<Loaded, String> {
    // one validating pass that builds nothing, then each element's text straight into a job
    // (no JSON tree)
    serde_json::from_str::<Vec<serde::de::IgnoredAny>>(text)
        .map_err(|e| format!("not a JSON array of jobs: {e}"))?;
    let rows = elements(text);
    let mut out = Loaded::default();
    out.jobs.reserve(rows.len());
    for v in rows {
        let Ok(j) = serde_json::from_str::<PJob>(v) else {
            out.skip("malformed-row");
            continue;
        };
        let Some(sub) = j.submitted_time.as_deref().and_then(wall_clock_ms) else {
            out.skip("malformed-row");
            continue;
        };
        let Some(last) = j.attempts.last() else {
            out.skip("never-ran");
            continue;
        };
        let rt = match runtime(
            last.start_time.as_deref().and_then(wall_clock_ms),
            last.end_time.as_deref().and_then(wall_clock_ms),
        ) {
            Ok(rt) => rt,
            Err(r) => {
                out.skip(r);
                continue;
            }
        };
        // pods with the same GPU count form one pod set, in order of first appearance
        let mut sets: Vec<PodSet> = Vec::new();
        for d in &last.detail {
            let g = d.gpus.len() as u64;
            if g == 0 {
                continue;
            }
            match sets.iter_mut().find(|s| s.gpu_milli == g * 1000) {
                Some(s) => s.count += 1,
                None => sets.push(PodSet {
                    name: format!("gpus-{g}"),
                    count: 1,
                    gpu_milli: g * 1000,
                    gpu_type: None,
                }),
            }
        }
        if sets.is_empty() {
            out.skip("no-gpu");
            continue;
        }
        out.jobs.push(Job {
            id: j.jobid,
            fields: [
                ("vc", j.vc.unwrap_or_default()),
                ("user", j.user.unwrap_or_default()),
            ]
            .into_iter()
            .collect(),
            status: j.status.unwrap_or_default(),
            submit_ms: sub,
            runtime_ms: rt,
            wait_ms: None,
            priority_class: None,
            pod_sets: sets,
        });
    }
    Ok(out)
}

/// The texts of the elements of a JSON array that is known to be valid JSON.
///
/// # Complexity
/// O(text): one scan, tracking strings (with escapes) and nesting depth.
fn elements(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let Some(open) = b.iter().position(|c| *c == b'[') else {
        return out;
    };
    let (mut depth, mut in_str, mut esc) = (0usize, false, false);
    let mut start: Option<usize> = None;
    for (i, &c) in b.iter().enumerate().skip(open + 1) {
        if in_str {
            if esc {
                esc = false;
            } else if c == b'\\' {
                esc = true;
            } else if c == b'"' {
                in_str = false;
            }
            continue;
        }
        match c {
            b' ' | b'\n' | b'\r' | b'\t' => continue,
            b',' if depth == 0 => {
                if let Some(s) = start.take() {
                    out.push(text[s..i].trim_end());
                }
                continue;
            }
            b']' | b'}' if depth == 0 => {
                if let Some(s) = start.take() {
                    out.push(text[s..i].trim_end());
                }
                break;
            }
            _ => {}
        }
        if start.is_none() {
            start = Some(i);
        }
        match c {
            b'"' => in_str = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = r#"[
 {"status": "Pass", "vc": "vc1", "jobid": "application_1_0001", "submitted_time": "2017-10-03 02:00:00", "user": "u1",
  "attempts": [{"start_time": "2017-10-03 02:00:05", "end_time": "2017-10-03 02:10:05", "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}]},
               {"start_time": "2017-10-03 03:00:00", "end_time": "2017-10-03 04:00:00",
                "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1", "gpu2", "gpu3"]}, {"ip": "m2", "gpus": ["gpu0", "gpu1", "gpu2", "gpu3"]}, {"ip": "m3", "gpus": ["gpu0"]}]}]},
 {"status": "Killed", "vc": "vc2", "jobid": "application_1_0002", "submitted_time": "2017-10-03 02:00:00", "user": "u2", "attempts": []},
 {"status": "Failed", "vc": "vc2", "jobid": "application_1_0003", "submitted_time": "2017-10-03 02:00:00", "user": "u2",
  "attempts": [{"start_time": "2017-10-03 02:00:05", "end_time": "None", "detail": [{"ip": "m1", "gpus": ["gpu0"]}]}]},
 {"status": "Failed", "vc": "vc2", "jobid": "application_1_0004", "submitted_time": "2017-10-03 02:00:00", "user": "u2",
  "attempts": [{"start_time": "2017-10-03 02:00:05", "end_time": "2017-10-03 02:00:06", "detail": []}]},
 {"oops": 1}
]"#;

    #[test]
    fn philly_takes_the_last_attempt() {
        let l = load(FIXTURE).unwrap();
        assert_eq!(l.jobs.len(), 1);
        let j = &l.jobs[0];
        assert_eq!(j.runtime_ms, 3_600_000);
        assert_eq!(j.status, "Pass");
        assert_eq!(j.fields["vc"], "vc1");
        assert_eq!(
            j.pod_sets
                .iter()
                .map(|p| (p.count, p.gpu_milli))
                .collect::<Vec<_>>(),
            [(2, 4000), (1, 1000)]
        );
        let skipped: Vec<_> = l.skipped.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(
            skipped,
            [
                ("malformed-row", 1),
                ("never-ran", 1),
                ("no-end", 1),
                ("no-gpu", 1)
            ]
        );
    }

    #[test]
    fn elements_split_at_top_level_commas_only() {
        let t = r#" [ {"a": "x,]}\"[", "b": [1, {"c": 2}]} , 3,"s" ,[ ] ] "#;
        assert_eq!(
            elements(t),
            [
                r#"{"a": "x,]}\"[", "b": [1, {"c": 2}]}"#,
                "3",
                r#""s""#,
                "[ ]"
            ]
        );
        assert!(elements("[]").is_empty());
        assert!(elements(" [ \n ] ").is_empty());
    }

    /// Times are borrowed from the text, and a time written with escapes is still read.
    #[test]
    fn philly_times_with_escapes_are_read() {
        let t = r#"[{"status": "Pass", "vc": "vc1", "jobid": "j1", "user": "u1",
          "submitted_time": "2017-10-03\u002002:00:00",
          "attempts": [{"start_time": "2017-10-03 02:00:05", "end_time": "2017-10-03\u002003:00:05",
                        "detail": [{"ip": "m1", "gpus": ["gpu0"]}]}]},
          {"status": "Pass", "vc": "vc1", "jobid": "j2", "user": "u1", "submitted_time": 7, "attempts": []}]"#;
        let l = load(t).unwrap();
        assert_eq!(l.jobs.len(), 1);
        assert_eq!(l.jobs[0].runtime_ms, 3_600_000);
        assert_eq!(
            l.jobs[0].submit_ms,
            wall_clock_ms("2017-10-03 02:00:00").unwrap()
        );
        assert_eq!(l.skipped.get("malformed-row"), Some(&1));
    }

    #[test]
    fn philly_not_json_is_an_error() {
        assert!(load("{").is_err());
    }
}
