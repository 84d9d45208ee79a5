//! Prometheus' `query_range` JSON answer (`resultType: matrix`), streamed.
//!
//! The answer is read with serde_json from the byte stream, one `data.result` entry at a
//! time: no whole-file text and no size limit of its own beyond the stream's. The entries
//! of one device (host, UUID, MIG instance) that follow one another form a group; a group
//! is resolved and fed to the accumulator, device after device, in time order within the
//! device, when the next device's first entry arrives. Prometheus sorts the series of an
//! answer by their labels, so the series of one device and one metric are adjacent; an
//! answer of several metrics lists a device once per metric, and its second group goes
//! back in time, so the reader starts again keeping every point (as for any file whose
//! device goes back in time).
//!
//! Two things a backfilled Prometheus answers differently from a live one are resolved here:
//!
//! * **Overlapping series.** Backfilled blocks carry no staleness markers, so a pod's series
//!   keeps answering for the query's lookback (5 minutes by default) after the pod ended,
//!   over the first samples of the device's next series (the next pod, or the GPU's line
//!   without pod labels). A live scrape would have marked it stale at the device's next
//!   scrape, where that series begins: the pod's points from that time to the end of their
//!   stretch (points one step apart) are dropped, with a warning naming the device, both
//!   pods and the overlap when the next series is a pod's (that overlap was refused as
//!   double booking before), and one warning per file counting the pod series cut where
//!   the idle series began.
//! * **A step above the lookback.** With a step longer than the lookback each sample stands
//!   for one step (as `count_over_time(...) * step` counts it), so a point is held for up to
//!   the step instead of the lookback, with a warning naming the step. The step is the
//!   greatest common divisor of the differences between the times of the answer's points
//!   read so far (an answer's points lie on the grid `start + k · step`).
//!
//! An answer that carries `warnings` (Prometheus' sign of partial data) is refused: a bill is
//! not made from part of the data.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::*;

/// One entry of the current device: its series, its `data.result` index and its points.
type Entry = (u32, usize, Vec<(i64, f64)>);

/// The state of one answer while it streams by.
struct Sink<'f, 's, 'a> {
    file: &'f mut FileState<'s>,
    acc: &'f mut Acc<'a>,
    /// A failure of the accumulator, carried out of serde.
    failed: Option<Stop>,
    status: Option<String>,
    /// The answer's `warnings` (Prometheus' sign of partial data).
    warnings: Vec<String>,
    error: Option<String>,
    result_type: Option<String>,
    saw_data: bool,
    /// The current device and its entries: (series, result index, points).
    device: Option<u32>,
    group: Vec<Entry>,
    /// The next `data.result` index.
    index: usize,
    /// gcd of the time differences seen so far (0 before two distinct times).
    step: i64,
    first_t: Option<i64>,
    step_warned: bool,
    /// Pod series cut where the device's series without pod labels began.
    idle_cuts: usize,
}

/// Carries the stream's bytes to serde_json, remembering the stream's own error.
struct Bytes<'r> {
    stream: &'r mut Stream,
    failed: Option<gpuquota_model::Diagnostic>,
}

impl std::io::Read for Bytes<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.stream.read_bytes(buf).map_err(|d| {
            let e = std::io::Error::other(d.to_string());
            self.failed = Some(d);
            e
        })
    }
}

/// Reads one `query_range` answer into the accumulator.
///
/// # Complexity
/// O(p log p_d) for p points, p_d of them on the largest device; memory O(p_d + series +
/// intervals) when each device's entries are adjacent per metric and in one metric, else
/// O(p) (the keep-every-point pass).
pub(super) fn read_json(
    stream: &mut Stream,
    file: &mut FileState<'_>,
    acc: &mut Acc<'_>,
) -> Result<(), Stop> {
    let mut bytes = Bytes {
        stream,
        failed: None,
    };
    let name = file.src.name.clone();
    let bad = |m: String| Stop::Fail(MeteringError::Parse(format!("{name}: {m}")));
    let mut sink = Sink {
        file,
        acc,
        failed: None,
        status: None,
        warnings: Vec::new(),
        error: None,
        result_type: None,
        saw_data: false,
        device: None,
        group: Vec::new(),
        index: 0,
        step: 0,
        first_t: None,
        step_warned: false,
        idle_cuts: 0,
    };
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(
        1 << 16,
        &mut bytes,
    ));
    let parsed = Top(&mut sink).deserialize(&mut de).and_then(|()| de.end());
    if let Some(stop) = sink.failed.take() {
        return Err(stop);
    }
    if let Some(d) = bytes.failed.take() {
        return Err(read_err(d));
    }
    parsed.map_err(|e| bad(format!("not a Prometheus query_range answer: {e}")))?;
    match sink.status.as_deref() {
        Some("success") => {}
        Some(s) => {
            return Err(bad(format!(
                "the query failed (status {s:?}{})",
                sink.error
                    .as_ref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            )));
        }
        None => {
            return Err(bad(
                "not a Prometheus query_range answer: missing field `status`".to_owned(),
            ));
        }
    }
    if !sink.warnings.is_empty() {
        return Err(bad(format!(
            "Prometheus answered with warnings, so the data may be partial: {}",
            sink.warnings.join("; ")
        )));
    }
    if !sink.saw_data {
        return Err(bad("no data".to_owned()));
    }
    match sink.result_type.as_deref() {
        Some("matrix") => {}
        Some(t) => {
            return Err(bad(format!(
                "resultType {t:?}: only a range query's matrix is read"
            )));
        }
        None => {
            return Err(bad(
                "not a Prometheus query_range answer: missing field `resultType`".to_owned(),
            ));
        }
    }
    sink.flush()?;
    if sink.idle_cuts > 0 {
        sink.acc.warnings.push(format!(
            "{name}: {} pod series went on after their device's series without pod labels \
             began (no staleness markers, as in a backfilled Prometheus): each ended there, \
             where a live scrape would have marked it stale",
            sink.idle_cuts
        ));
    }
    Ok(())
}

impl Sink<'_, '_, '_> {
    fn bad(&self, m: String) -> Stop {
        Stop::Fail(MeteringError::Parse(format!("{}: {m}", self.file.src.name)))
    }

    /// One `data.result` entry: its labels and points.
    fn series(
        &mut self,
        metric: &BTreeMap<String, String>,
        values: Vec<(i64, f64)>,
    ) -> Result<(), Stop> {
        let i = self.index;
        self.index += 1;
        if self.result_type.as_deref().is_some_and(|t| t != "matrix") {
            // refused once the whole answer is read
            return Ok(());
        }
        let name = metric.get("__name__").ok_or_else(|| {
            self.bad(format!(
                "data.result[{i}] has no __name__ label: query the DCGM metric itself \
                 (e.g. DCGM_FI_DEV_GPU_UTIL), not an expression"
            ))
        })?;
        if !name.starts_with("DCGM_FI_") {
            self.file.ignored += values.len();
            return Ok(());
        }
        let mut key = name.clone();
        key.push('{');
        for (k, v) in metric.iter().filter(|(k, _)| *k != "__name__") {
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
        let id = self.acc.series_id(self.file, i + 1, &key)?;
        let device = self.acc.series[id as usize].device;
        if device != self.device {
            self.flush()?;
            self.device = device;
        }
        for (t, _) in &values {
            match self.first_t {
                None => self.first_t = Some(*t),
                Some(f) => self.step = gcd(self.step, t.abs_diff(f)),
            }
        }
        self.group.push((id, i, values));
        Ok(())
    }

    /// Resolves and feeds the current device's entries.
    fn flush(&mut self) -> Result<(), Stop> {
        let group = std::mem::take(&mut self.group);
        if group.is_empty() {
            return Ok(());
        }
        let lookback = self.acc.settings.lookback;
        self.acc.hold = lookback.max(self.step);
        if self.step > lookback && !self.step_warned {
            self.step_warned = true;
            self.acc.warnings.push(format!(
                "{}: the answer's step is {} s, longer than the lookback of {lookback} s: \
                 each sample stands for one step (as count_over_time * step counts it)",
                self.file.name(),
                self.step
            ));
        }
        let cuts = self.overlaps(&group);
        let mut points: Vec<(i64, usize, u32, f64)> =
            Vec::with_capacity(group.iter().map(|g| g.2.len()).sum());
        for (id, i, values) in group {
            let cut = self.acc.series[id as usize]
                .attr
                .and_then(|a| cuts.get(&a))
                .map_or(&[][..], Vec::as_slice);
            let dropped = |t: i64| {
                let k = cut.partition_point(|c| c.1 < t);
                cut.get(k).is_some_and(|c| c.0 <= t)
            };
            points.extend(
                values
                    .into_iter()
                    .filter(|(t, _)| !dropped(*t))
                    .map(|(t, v)| (t, i, id, v)),
            );
        }
        points.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        for (t, i, id, value) in points {
            self.acc.sample_id(self.file, i + 1, id, value, t)?;
        }
        Ok(())
    }

    /// The time ranges (inclusive) of each pod's points on this device to drop: where a
    /// stretch of a pod's points (points one step apart) goes on past the start of the next
    /// stretch of another series of the device (another pod, or the device's series without
    /// pod labels), it ends there. Time-slicing replicas are compared among themselves only.
    /// A warning names each overlap of two pods; overlaps into the device's idle series are
    /// counted for one warning per file.
    ///
    /// # Complexity
    /// O(p log p) for the device's p points.
    fn overlaps(&mut self, group: &[Entry]) -> BTreeMap<u32, Vec<(i64, i64)>> {
        let keys: BTreeMap<u32, &AttrKey> =
            self.acc.attr_ids.iter().map(|(k, a)| (*a, k)).collect();
        let replicas = group.iter().any(|(id, _, _)| {
            self.acc.series[*id as usize]
                .attr
                .and_then(|a| keys.get(&a))
                .is_some_and(|k| k.3.is_some())
        });
        // the times of each (replica, holding or idle)
        let mut times: BTreeMap<(Option<&String>, Option<u32>), Vec<i64>> = BTreeMap::new();
        for (id, _, values) in group {
            let attr = self.acc.series[*id as usize].attr;
            let replica = attr.and_then(|a| keys.get(&a)).and_then(|k| k.3.as_ref());
            if attr.is_none() && replicas {
                // idle lines of a time-sliced card do not say which replica they are
                continue;
            }
            times
                .entry((replica, attr))
                .or_default()
                .extend(values.iter().map(|p| p.0));
        }
        if times.keys().filter(|k| k.1.is_some()).count() == 0 || times.len() < 2 {
            return BTreeMap::new();
        }
        // stretches: (replica, start, end, holding)
        let step = self.step.max(1);
        let mut stretches: Vec<(Option<&String>, i64, i64, Option<u32>)> = Vec::new();
        for ((replica, attr), ts) in &mut times {
            ts.sort_unstable();
            ts.dedup();
            let mut s = ts[0];
            for w in ts.windows(2) {
                if w[1] - w[0] > step {
                    stretches.push((*replica, s, w[0], *attr));
                    s = w[1];
                }
            }
            stretches.push((*replica, s, ts[ts.len() - 1], *attr));
        }
        stretches.sort_unstable();
        let mut cuts: BTreeMap<u32, Vec<(i64, i64)>> = BTreeMap::new();
        for (n, &(replica, start, end, attr)) in stretches.iter().enumerate() {
            let Some(a) = attr else { continue };
            let Some(&(_, next, _, other)) = stretches[n + 1..]
                .iter()
                .find(|x| x.0 == replica && x.1 > start && x.3 != attr)
            else {
                continue;
            };
            if next > end {
                continue;
            }
            cuts.entry(a).or_default().push((next, end));
            let Some(b) = other else {
                self.idle_cuts += 1;
                continue;
            };
            let (ka, kb) = (keys[&a], keys[&b]);
            let (host, uuid, gi) = &self.acc.device_keys[ka.0 as usize];
            let mut holder = format!("{host}/{uuid}");
            if let Some(g) = gi {
                holder.push('/');
                holder.push_str(g);
            }
            if let Some(v) = replica {
                holder.push_str("/vgpu");
                holder.push_str(v);
            }
            self.acc.warnings.push(format!(
                "{}: on {holder} the series of pod {}/{} goes on from {next} to {end}, \
                 after the series of the next pod {}/{} began at {next} (no staleness \
                 markers, as in a backfilled Prometheus): ended at {next}, where a live \
                 scrape would have marked it stale",
                self.file.name(),
                ka.1,
                ka.2,
                kb.1,
                kb.2
            ));
        }
        for c in cuts.values_mut() {
            c.sort_unstable();
        }
        cuts
    }
}

fn gcd(mut a: i64, b: u64) -> i64 {
    let mut b = i64::try_from(b).unwrap_or(i64::MAX);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The top level: `status`, `error`, `warnings`, `data`.
struct Top<'k, 'f, 's, 'a>(&'k mut Sink<'f, 's, 'a>);

impl<'de> DeserializeSeed<'de> for Top<'_, '_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Top<'_, '_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a query_range answer (an object)")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<(), M::Error> {
        while let Some(k) = m.next_key::<String>()? {
            match k.as_str() {
                "status" => self.0.status = Some(m.next_value()?),
                "error" => self.0.error = m.next_value()?,
                "warnings" => {
                    self.0.warnings = m.next_value::<Option<Vec<String>>>()?.unwrap_or_default();
                }
                "data" => {
                    self.0.saw_data = true;
                    m.next_value_seed(Data(&mut *self.0))?;
                }
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// `data`: `resultType` and `result`.
struct Data<'k, 'f, 's, 'a>(&'k mut Sink<'f, 's, 'a>);

impl<'de> DeserializeSeed<'de> for Data<'_, '_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Data<'_, '_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the answer's data (an object)")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<(), M::Error> {
        while let Some(k) = m.next_key::<String>()? {
            match k.as_str() {
                "resultType" => self.0.result_type = Some(m.next_value()?),
                "result" => m.next_value_seed(Results(&mut *self.0))?,
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// `data.result`: the series, each handed to the sink as it is read.
struct Results<'k, 'f, 's, 'a>(&'k mut Sink<'f, 's, 'a>);

impl<'de> DeserializeSeed<'de> for Results<'_, '_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Results<'_, '_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the answer's result (a list of series)")
    }
    fn visit_seq<S: SeqAccess<'de>>(self, mut s: S) -> Result<(), S::Error> {
        loop {
            let i = self.0.index;
            let Some(entry) = s.next_element_seed(EntrySeed(i))? else {
                return Ok(());
            };
            let (metric, values) = match entry {
                Ok(e) => e,
                Err(m) => {
                    self.0.failed = Some(self.0.bad(m));
                    return Err(serde::de::Error::custom("stopped"));
                }
            };
            if let Err(stop) = self.0.series(&metric, values) {
                self.0.failed = Some(stop);
                return Err(serde::de::Error::custom("stopped"));
            }
        }
    }
}

/// A series' labels and its points (times floored to seconds), or what is wrong with a point.
type EntryOut = Result<(BTreeMap<String, String>, Vec<(i64, f64)>), String>;

/// One `data.result` entry.
struct EntrySeed(usize);

impl<'de> DeserializeSeed<'de> for EntrySeed {
    type Value = EntryOut;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<EntryOut, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EntrySeed {
    type Value = EntryOut;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a series (an object with metric and values)")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<EntryOut, M::Error> {
        let mut metric = None;
        let mut values = Vec::new();
        let mut wrong = None;
        while let Some(k) = m.next_key::<String>()? {
            match k.as_str() {
                "metric" => metric = Some(m.next_value::<BTreeMap<String, String>>()?),
                "values" => {
                    let (v, w) = m.next_value_seed(Points(self.0))?;
                    values = v;
                    wrong = wrong.or(w);
                }
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        if let Some(w) = wrong {
            return Ok(Err(w));
        }
        let metric = metric.ok_or_else(|| serde::de::Error::missing_field("metric"))?;
        Ok(Ok((metric, values)))
    }
}

/// `values`: `[time, "value"]` pairs.
struct Points(usize);

impl<'de> DeserializeSeed<'de> for Points {
    type Value = (Vec<(i64, f64)>, Option<String>);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Points {
    type Value = (Vec<(i64, f64)>, Option<String>);
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of [time, \"value\"] pairs")
    }
    fn visit_seq<S: SeqAccess<'de>>(self, mut s: S) -> Result<Self::Value, S::Error> {
        let i = self.0;
        let mut out = Vec::with_capacity(s.size_hint().unwrap_or(0));
        let mut wrong = None;
        let mut j = 0usize;
        while let Some((t, v)) = s.next_element::<(f64, Value)>()? {
            if wrong.is_none() {
                if !t.is_finite() || t.abs() >= 9.0e18 {
                    wrong = Some(format!("data.result[{i}].values[{j}]: invalid time {t}"));
                } else {
                    match v {
                        Value::Ok(value) => {
                            // seconds; a fraction is floored as for every other format
                            #[allow(clippy::cast_possible_truncation)]
                            out.push((t.floor() as i64, value));
                        }
                        Value::Bad(x) => {
                            wrong =
                                Some(format!("data.result[{i}].values[{j}]: invalid value {x:?}"));
                        }
                    }
                }
            }
            j += 1;
        }
        Ok((out, wrong))
    }
}

/// A sample value as Prometheus writes it (a string), parsed without keeping the text.
enum Value {
    Ok(f64),
    Bad(String),
}

impl<'de> serde::Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Value;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sample value (a string)")
            }
            fn visit_str<E: serde::de::Error>(self, x: &str) -> Result<Value, E> {
                Ok(match x {
                    "NaN" => Value::Ok(f64::NAN),
                    "+Inf" | "Inf" => Value::Ok(f64::INFINITY),
                    "-Inf" => Value::Ok(f64::NEG_INFINITY),
                    x => match x.parse::<f64>() {
                        Ok(v) => Value::Ok(v),
                        Err(_) => Value::Bad(x.to_owned()),
                    },
                })
            }
        }
        d.deserialize_str(V)
    }
}
