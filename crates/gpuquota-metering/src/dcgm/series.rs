//! The accumulator: series interned once, device holdings and busy fractions folded as
//! the points arrive.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Busy {
    Engine,
    Util,
    Other,
}

/// What an interned label set stands for.
#[derive(Debug, Clone, Copy)]
pub(super) struct SeriesInfo {
    pub(super) canon: u32,
    /// `None` for metrics other than `DCGM_FI_*`.
    pub(super) device: Option<u32>,
    pub(super) attr: Option<u32>,
    pub(super) card: usize,
    pub(super) profile: Option<u32>,
    pub(super) busy: Busy,
}

#[derive(Debug, Default)]
pub(super) struct Canon {
    pub(super) last_t: Option<i64>,
    pub(super) last_at: (usize, usize),
}

#[derive(Debug, Default)]
pub(super) struct Device {
    pub(super) cur: Option<i64>,
    pub(super) attrs: Vec<u32>,
    /// The holdings with a point at the current scrape (time-ordered mode): folded when the
    /// device's time moves on, so that a scrape costs O(holdings at it), not O(holdings
    /// ever seen on the device).
    pub(super) pending: Vec<u32>,
    /// Every scrape time (unordered mode only).
    pub(super) times: BTreeSet<i64>,
}

#[derive(Debug, Default)]
pub(super) struct Attr {
    pub(super) card: usize,
    pub(super) profile: Option<u32>,
    pub(super) first_file: usize,
    /// The point at the device's current scrape: (t, engine busy, util busy) in millionths.
    pub(super) pending: Option<(i64, Option<i128>, Option<i128>)>,
    /// Every point (unordered mode only).
    pub(super) points: BTreeMap<i64, (Option<i128>, Option<i128>)>,
    pub(super) intervals: Vec<(i64, i64)>,
    pub(super) busy_sum: i128,
    pub(super) busy_all: bool,
    /// How long a point is held at most (seconds): the lookback, or the step of a
    /// `query_range` answer whose step is longer.
    pub(super) hold: i64,
}

pub(super) type DeviceKey = (String, String, Option<String>);
pub(super) type AttrKey = (u32, String, String, Option<String>);

pub(super) struct Acc<'a> {
    pub(super) settings: Settings<'a>,
    pub(super) ordered: bool,
    /// `metric{labels}` as written → series.
    pub(super) written: BTreeMap<Box<str>, u32>,
    /// The key of each series, and the series that followed it last time.
    pub(super) keys: Vec<Box<str>>,
    pub(super) next_hint: Vec<u32>,
    pub(super) prev: Option<u32>,
    pub(super) series: Vec<SeriesInfo>,
    /// (metric, sorted labels) → canonical series.
    pub(super) canon_ids: BTreeMap<(String, Vec<(String, String)>), u32>,
    pub(super) canon: Vec<Canon>,
    /// (canonical series, t) → where (unordered mode only).
    pub(super) seen: BTreeMap<(u32, i64), (usize, usize)>,
    pub(super) device_ids: BTreeMap<DeviceKey, u32>,
    pub(super) device_keys: Vec<DeviceKey>,
    pub(super) devices: Vec<Device>,
    pub(super) attr_ids: BTreeMap<AttrKey, u32>,
    pub(super) attrs: Vec<Attr>,
    pub(super) profiles: Vec<String>,
    pub(super) vgpus: BTreeMap<u32, BTreeSet<String>>,
    pub(super) warnings: Vec<String>,
    /// How long the current file's points are held at most (the lookback unless a
    /// `query_range` answer's step is longer).
    pub(super) hold: i64,
}

pub(super) fn norm(s: &str) -> String {
    s.trim().replace(' ', "-").to_ascii_lowercase()
}

/// The value of label `n`, if the key has it.
fn label<'l>(labels: &'l [(String, String)], n: &str) -> Option<&'l str> {
    labels.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str())
}

/// The namespace and pod a new key is attributed to. A line stored by Prometheus (it has an
/// `instance` or `job` label) names the workload in `exported_*` labels unless Prometheus
/// honoured the exporter's labels; when the file's plan does not say which, the first stored
/// line decides, and a later line that contradicts an earlier guess asks for the file again.
fn workload_of(
    file: &mut FileState<'_>,
    labels: &[(String, String)],
) -> Result<(Option<String>, Option<String>), Stop> {
    let pick = |names: &[&str]| -> Option<String> {
        names
            .iter()
            .filter_map(|n| label(labels, n))
            .find(|v| !v.is_empty())
            .map(str::to_owned)
    };
    let stored = label(labels, "instance").is_some() || label(labels, "job").is_some();
    if !stored {
        return Ok((
            pick(&["namespace", "pod_namespace", "exported_namespace"]),
            pick(&["pod", "pod_name", "exported_pod"]),
        ));
    }
    let exported = pick(&["exported_namespace", "exported_pod"]).is_some();
    let honor = match file.plan.honor {
        Some(h) => h,
        None if exported => {
            if file.used_plain {
                // an earlier stored line was read with honorLabels: true
                return Err(Stop::Redo(FilePlan {
                    honor: Some(false),
                    ..file.plan
                }));
            }
            file.plan.honor = Some(false);
            false
        }
        None => {
            file.used_plain = true;
            true
        }
    };
    Ok(if honor {
        (
            pick(&["namespace", "pod_namespace"]),
            pick(&["pod", "pod_name"]),
        )
    } else {
        (pick(&["exported_namespace"]), pick(&["exported_pod"]))
    })
}

pub(super) fn micro(v: f64) -> Option<i128> {
    // NaN or ±Inf is no measurement: the point's busy value stays unknown (not 0)
    v.is_finite().then(|| {
        // a ratio, never money: rounding to millionths is the exposition's own precision
        #[allow(clippy::cast_possible_truncation)]
        let m = (v * 1_000_000.0).round() as i128;
        m.clamp(0, 1_000_000)
    })
}

impl<'a> Acc<'a> {
    pub(super) fn new(settings: Settings<'a>, ordered: bool) -> Acc<'a> {
        Acc {
            settings,
            ordered,
            written: BTreeMap::new(),
            keys: Vec::new(),
            next_hint: Vec::new(),
            prev: None,
            series: Vec::new(),
            canon_ids: BTreeMap::new(),
            canon: Vec::new(),
            seen: BTreeMap::new(),
            device_ids: BTreeMap::new(),
            device_keys: Vec::new(),
            devices: Vec::new(),
            attr_ids: BTreeMap::new(),
            attrs: Vec::new(),
            profiles: Vec::new(),
            vgpus: BTreeMap::new(),
            warnings: Vec::new(),
            hold: settings.lookback,
        }
    }

    /// One sample: the series key as written, its value and time in seconds.
    ///
    /// # Complexity
    /// O(log s) for s distinct keys (O(labels log labels) the first time a key is seen).
    pub(super) fn sample(
        &mut self,
        file: &mut FileState<'_>,
        line: usize,
        key: &str,
        value: f64,
        t: i64,
    ) -> Result<(), Stop> {
        if !key.starts_with("DCGM_FI_") {
            file.ignored += 1;
            return Ok(());
        }
        let id = self.series_id(file, line, key)?;
        self.sample_id(file, line, id, value, t)
    }

    /// The series of a `DCGM_FI_*` key as written, interned when new.
    ///
    /// # Complexity
    /// O(key) when the key follows the same key as last time, else O(key · log s).
    pub(super) fn series_id(
        &mut self,
        file: &mut FileState<'_>,
        line: usize,
        key: &str,
    ) -> Result<u32, Stop> {
        // Scrapes repeat their lines in the same order: the series that followed the previous
        // line's series last time is tried first (one comparison), the map only on a miss.
        let hinted = self.prev.and_then(|p| {
            let h = self.next_hint[p as usize];
            (h != u32::MAX && *self.keys[h as usize] == *key).then_some(h)
        });
        let id = match hinted {
            Some(id) => id,
            None => match self.written.get(key) {
                Some(id) => *id,
                None => self.intern(file, line, key)?,
            },
        };
        if let Some(p) = self.prev {
            self.next_hint[p as usize] = id;
        }
        self.prev = Some(id);
        Ok(id)
    }

    /// The series of a key as written that was seen before (one comparison when it follows
    /// the same key as last time), or `None`.
    ///
    /// # Complexity
    /// O(key) on the hint, else O(key · log s) for s series.
    pub(super) fn lookup(&mut self, key: &[u8]) -> Option<u32> {
        let hinted = self.prev.and_then(|p| {
            let h = self.next_hint[p as usize];
            (h != u32::MAX && self.keys[h as usize].as_bytes() == key).then_some(h)
        });
        let id = match hinted {
            Some(id) => id,
            None => *self.written.get(std::str::from_utf8(key).ok()?)?,
        };
        if let Some(p) = self.prev {
            self.next_hint[p as usize] = id;
        }
        self.prev = Some(id);
        Some(id)
    }

    /// One sample of an interned `DCGM_FI_*` series.
    ///
    /// # Complexity
    /// O(1) amortised in time-ordered mode (folding a device's previous scrape touches each
    /// of its holdings once), O(log n) when every point is kept.
    pub(super) fn sample_id(
        &mut self,
        file: &mut FileState<'_>,
        line: usize,
        id: u32,
        value: f64,
        t: i64,
    ) -> Result<(), Stop> {
        let info = self.series[id as usize];
        file.dcgm_lines += 1;
        // the duplicate check, per canonical series
        let c = &mut self.canon[info.canon as usize];
        if self.ordered {
            if let Some(last) = c.last_t {
                if t == last {
                    return Err(duplicate(file, line, c.last_at, t));
                }
                if t < last {
                    return Err(Stop::Unordered);
                }
            }
            c.last_t = Some(t);
            c.last_at = (file.index, line);
        } else if let Some(prev) = self.seen.insert((info.canon, t), (file.index, line)) {
            return Err(duplicate(file, line, prev, t));
        }
        let Some(dev) = info.device else {
            return Ok(());
        };
        let window = self.settings.window;
        let d = &mut self.devices[dev as usize];
        if self.ordered {
            match d.cur {
                Some(cur) if t < cur => return Err(Stop::Unordered),
                Some(cur) if t > cur => {
                    for a in d.pending.drain(..) {
                        let attr = &mut self.attrs[a as usize];
                        if let Some(p) = attr.pending.take() {
                            fold(attr, p, Some(t), window);
                        }
                    }
                    d.cur = Some(t);
                }
                Some(_) => {}
                None => d.cur = Some(t),
            }
        } else {
            d.times.insert(t);
        }
        let Some(a) = info.attr else {
            return Ok(());
        };
        file.workload_lines += 1;
        let attr = &mut self.attrs[a as usize];
        attr.card = info.card;
        attr.profile = info.profile;
        attr.hold = self.hold;
        let slot = if self.ordered {
            if attr.pending.is_none() {
                self.devices[dev as usize].pending.push(a);
            }
            let p = attr.pending.get_or_insert((t, None, None));
            (&mut p.1, &mut p.2)
        } else {
            let p = attr.points.entry(t).or_default();
            (&mut p.0, &mut p.1)
        };
        match info.busy {
            Busy::Engine => *slot.0 = micro(value),
            Busy::Util => *slot.1 = micro(value / 100.0),
            Busy::Other => {}
        }
        Ok(())
    }

    /// Parses a key seen for the first time and records what it stands for: its device, the
    /// workload it is attributed to, its MIG profile, its busy kind and its canonical series.
    pub(super) fn intern(
        &mut self,
        file: &mut FileState<'_>,
        line: usize,
        key: &str,
    ) -> Result<u32, Stop> {
        let name = file.src.name.as_str();
        let (metric, mut labels) = match key.find('{') {
            Some(b) => (&key[..b], parse_labels(name, line, &key[b + 1..])?.0),
            None => (key, Vec::new()),
        };
        let (card, device) = self.device_of(name, line, &labels)?;
        let (ns, pod) = workload_of(file, &labels)?;
        let profile = label(&labels, "GPU_I_PROFILE").map(|p| self.profile_id(p));
        let attr = match ns {
            Some(ns) => Some(self.attr_of(
                file.index,
                device,
                ns,
                pod,
                label(&labels, "vgpu").map(str::to_owned),
            )),
            None => None,
        };
        let busy = match metric {
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE" => Busy::Engine,
            "DCGM_FI_DEV_GPU_UTIL" => Busy::Util,
            _ => Busy::Other,
        };
        labels.sort();
        let canon = self.canon_of((metric.to_owned(), labels));
        let id = u32::try_from(self.series.len()).unwrap_or(u32::MAX);
        self.series.push(SeriesInfo {
            canon,
            device: Some(device),
            attr,
            card,
            profile,
            busy,
        });
        self.written.insert(key.into(), id);
        self.keys.push(key.into());
        self.next_hint.push(u32::MAX);
        Ok(id)
    }

    /// The card type (by `modelName`) and the device (`hostname`, `UUID`, `GPU_I_ID`) of a
    /// new key's labels, the device interned.
    fn device_of(
        &mut self,
        name: &str,
        line: usize,
        labels: &[(String, String)],
    ) -> Result<(usize, u32), Stop> {
        let host = label(labels, "hostname")
            .or_else(|| label(labels, "Hostname"))
            .unwrap_or("")
            .to_owned();
        let uuid = label(labels, "UUID")
            .or_else(|| label(labels, "uuid"))
            .ok_or_else(|| err(name, line, "no UUID label"))?
            .to_owned();
        let gi = label(labels, "GPU_I_ID").map(str::to_owned);
        let model =
            label(labels, "modelName").ok_or_else(|| err(name, line, "no modelName label"))?;
        let card = self
            .settings
            .card_types
            .iter()
            .position(|c| {
                norm(c.model.as_deref().unwrap_or(&c.name)) == norm(model)
                    || norm(&c.name) == norm(model)
            })
            .ok_or_else(|| MeteringError::UnknownCardType {
                what: format!("{name}:{line} modelName"),
                card_type: model.to_owned(),
            })?;
        let device_key: DeviceKey = (host, uuid, gi);
        let device = match self.device_ids.get(&device_key) {
            Some(d) => *d,
            None => {
                let d = u32::try_from(self.devices.len()).unwrap_or(u32::MAX);
                self.device_ids.insert(device_key.clone(), d);
                self.device_keys.push(device_key);
                self.devices.push(Device::default());
                d
            }
        };
        Ok((card, device))
    }

    /// The index of a MIG profile name, interned.
    fn profile_id(&mut self, p: &str) -> u32 {
        match self.profiles.iter().position(|x| x == p) {
            Some(i) => u32::try_from(i).unwrap_or(u32::MAX),
            None => {
                self.profiles.push(p.to_owned());
                u32::try_from(self.profiles.len() - 1).unwrap_or(u32::MAX)
            }
        }
    }

    /// The attribution (device, namespace, pod, vGPU) of a new key, interned; a new one is
    /// listed under its device and remembers the file it was first seen in.
    fn attr_of(
        &mut self,
        file_index: usize,
        device: u32,
        ns: String,
        pod: Option<String>,
        vgpu: Option<String>,
    ) -> u32 {
        if let Some(v) = &vgpu {
            self.vgpus.entry(device).or_default().insert(v.clone());
        }
        let k: AttrKey = (device, ns, pod.unwrap_or_default(), vgpu);
        match self.attr_ids.get(&k) {
            Some(a) => *a,
            None => {
                let a = u32::try_from(self.attrs.len()).unwrap_or(u32::MAX);
                self.attr_ids.insert(k, a);
                self.attrs.push(Attr {
                    first_file: file_index,
                    busy_all: true,
                    ..Attr::default()
                });
                self.devices[device as usize].attrs.push(a);
                a
            }
        }
    }

    /// The canonical series of (metric, sorted labels), interned.
    fn canon_of(&mut self, ck: (String, Vec<(String, String)>)) -> u32 {
        match self.canon_ids.get(&ck) {
            Some(c) => *c,
            None => {
                let c = u32::try_from(self.canon.len()).unwrap_or(u32::MAX);
                self.canon_ids.insert(ck, c);
                self.canon.push(Canon::default());
                c
            }
        }
    }

    pub(super) fn end_file(&mut self, file: &FileState<'_>) {
        if file.ignored > 0 {
            self.warnings.push(format!(
                "{}: ignored {} lines of metrics other than DCGM_FI_*",
                file.name(),
                file.ignored
            ));
        }
        if file.dcgm_lines > 0 && file.workload_lines == 0 {
            self.warnings.push(format!(
                "{}: no line carries pod labels (namespace and pod), so every GPU in it is \
                 idle; turn on the exporter's pod mapping (dcgm-exporter -k) if pods held them",
                file.name()
            ));
        }
    }

    pub(super) fn finish(mut self, sources: &[Source]) -> Result<DcgmSeries, MeteringError> {
        let window = self.settings.window;
        for d in &self.devices {
            for a in &d.attrs {
                let attr = &mut self.attrs[*a as usize];
                if let Some(p) = attr.pending.take() {
                    fold(attr, p, None, window);
                }
                let points = std::mem::take(&mut attr.points);
                for (t, (g, u)) in points {
                    let next = d.times.range(t + 1..).next().copied();
                    fold(attr, (t, g, u), next, window);
                }
            }
        }
        let mut warnings = self.warnings;
        let mut holdings = Vec::with_capacity(self.attrs.len());
        for ((device, ns, pod, vgpu), a) in self.attr_ids {
            let (host, uuid, gi) = &self.device_keys[device as usize];
            let attr = &self.attrs[a as usize];
            let ct = &self.settings.card_types[attr.card];
            let file = sources.get(attr.first_file).map_or("", |s| s.name.as_str());
            let shape = if let Some(p) = attr.profile {
                Shape::Mig {
                    profile: self.profiles[p as usize].clone(),
                    count: 1,
                }
            } else if vgpu.is_some() {
                let per = match ct
                    .replicas_per_gpu
                    .or_else(|| self.settings.sharing.of(host))
                {
                    Some(n) => n,
                    None => {
                        let n = self.vgpus.get(&device).map_or(1, |m| m.len() as u64);
                        let msg = format!(
                            "{file}: {host}/{uuid} is time-sliced but card type {} sets no \
                             replicasPerGpu and no device plugin sharing configuration covers \
                             the node; each replica counts 1/{n} card ({n} sharers seen)",
                            ct.name
                        );
                        if !warnings.contains(&msg) {
                            warnings.push(msg);
                        }
                        n
                    }
                };
                Shape::Fraction {
                    replicas: 1,
                    per_gpu: per,
                }
            } else {
                Shape::Whole(1)
            };
            let mut holder = format!("{host}/{uuid}");
            if let Some(g) = gi {
                holder.push('/');
                holder.push_str(g);
            }
            if let Some(v) = &vgpu {
                holder.push_str("/vgpu");
                holder.push_str(v);
            }
            holdings.push(Holding {
                owner: Owner::Namespace(ns.clone()),
                card_type: ct.name.clone(),
                shape,
                holder: Some(holder.clone()),
                intervals: attr.intervals.clone(),
                busy_micro_seconds: attr.busy_all.then_some(attr.busy_sum),
                label: format!("{file}: {ns}/{pod} on {holder}"),
            });
        }
        Ok(DcgmSeries { holdings, warnings })
    }
}

pub(super) fn duplicate(file: &FileState<'_>, line: usize, prev: (usize, usize), t: i64) -> Stop {
    let what = if prev.0 == file.index {
        format!("{}:{line} (same series as line {})", file.name(), prev.1)
    } else {
        format!(
            "{}:{line} (same series as line {} of an earlier file)",
            file.name(),
            prev.1
        )
    };
    Stop::Fail(MeteringError::DuplicateTimestamp { what, at: t })
}

/// Books one point: held from `t` until the device's next scrape `next` and for at most the
/// holding's `hold` (the lookback, or a longer `query_range` step), clipped to the window;
/// adjacent holds merge into one interval.
pub(super) fn fold(
    attr: &mut Attr,
    (t, engine, util): (i64, Option<i128>, Option<i128>),
    next: Option<i64>,
    window: Window,
) {
    let mut end = t.saturating_add(attr.hold);
    if let Some(n) = next {
        end = end.min(n);
    }
    let busy = engine.or(util);
    if busy.is_none() {
        attr.busy_all = false;
    }
    let Some((s, e)) = window.clip(t, end) else {
        return;
    };
    if let Some(f) = busy {
        attr.busy_sum = attr
            .busy_sum
            .saturating_add(i128::from(e - s).saturating_mul(f));
    }
    match attr.intervals.last_mut() {
        Some(last) if last.1 == s => last.1 = e,
        _ => attr.intervals.push((s, e)),
    }
}
