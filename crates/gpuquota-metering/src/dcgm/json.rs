//! Prometheus' `query_range` JSON answer (`resultType: matrix`).

use super::*;

#[derive(serde::Deserialize)]
pub(super) struct QueryResponse {
    pub(super) status: String,
    #[serde(default)]
    pub(super) error: Option<String>,
    pub(super) data: Option<QueryData>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct QueryData {
    pub(super) result_type: String,
    pub(super) result: Vec<QuerySeries>,
}

#[derive(serde::Deserialize)]
pub(super) struct QuerySeries {
    pub(super) metric: BTreeMap<String, String>,
    #[serde(default)]
    pub(super) values: Vec<(f64, String)>,
}

pub(super) fn read_json(
    stream: &mut Stream,
    file: &mut FileState<'_>,
    acc: &mut Acc<'_>,
) -> Result<(), Stop> {
    let mut text = String::new();
    let mut buf = String::new();
    while stream.next_line(&mut buf).map_err(read_err)? {
        if text.len() + buf.len() > MAX_JSON_BYTES {
            return Err(MeteringError::Parse(format!(
                "{}: a query_range answer larger than the limit of {MAX_JSON_BYTES} bytes; \
                 query a shorter range per file",
                file.name()
            ))
            .into());
        }
        text.push_str(&buf);
        text.push('\n');
    }
    let bad = |m: String| Stop::Fail(MeteringError::Parse(format!("{}: {m}", file.src.name)));
    let resp: QueryResponse = serde_json::from_str(&text)
        .map_err(|e| bad(format!("not a Prometheus query_range answer: {e}")))?;
    if resp.status != "success" {
        return Err(bad(format!(
            "the query failed (status {:?}{})",
            resp.status,
            resp.error.map(|e| format!(": {e}")).unwrap_or_default()
        )));
    }
    let data = resp.data.ok_or_else(|| bad("no data".to_owned()))?;
    if data.result_type != "matrix" {
        return Err(bad(format!(
            "resultType {:?}: only a range query's matrix is read",
            data.result_type
        )));
    }
    // one exposition-like key per result, then every point in time order
    let mut keys = Vec::with_capacity(data.result.len());
    let mut points = Vec::new();
    for (i, s) in data.result.iter().enumerate() {
        let name = s.metric.get("__name__").ok_or_else(|| {
            bad(format!(
                "data.result[{i}] has no __name__ label: query the DCGM metric itself \
                 (e.g. DCGM_FI_DEV_GPU_UTIL), not an expression"
            ))
        })?;
        let mut key = name.clone();
        key.push('{');
        for (k, v) in s.metric.iter().filter(|(k, _)| *k != "__name__") {
            key.push_str(k);
            key.push_str("=\"");
            for c in v.chars() {
                match c {
                    '\\' => key.push_str("\\\\"),
                    '"' => key.push_str("\\\""),
                    '\n' => key.push_str("\\n"),
                    c => key.push(c),
                }
            }
            key.push_str("\",");
        }
        key.push('}');
        keys.push(key);
        for (j, (t, v)) in s.values.iter().enumerate() {
            if !t.is_finite() || t.abs() >= 9.0e18 {
                return Err(bad(format!(
                    "data.result[{i}].values[{j}]: invalid time {t}"
                )));
            }
            let value = match v.as_str() {
                "NaN" => f64::NAN,
                "+Inf" | "Inf" => f64::INFINITY,
                "-Inf" => f64::NEG_INFINITY,
                x => x.parse::<f64>().map_err(|_| {
                    bad(format!("data.result[{i}].values[{j}]: invalid value {x:?}"))
                })?,
            };
            // seconds; a fraction is floored as for every other format
            #[allow(clippy::cast_possible_truncation)]
            let secs = t.floor() as i64;
            points.push((secs, i, value));
        }
    }
    points.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    for (t, i, value) in points {
        acc.sample(file, i + 1, &keys[i], value, t)?;
    }
    Ok(())
}
