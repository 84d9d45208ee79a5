//! One sweep point at a time: the scenario read once, each point's parameters applied as a
//! sweep applies them, the run simulated and its report returned whole, for callers that
//! choose their own points (a search) instead of a sweep's whole product.

use std::collections::BTreeMap;
use std::sync::Mutex;

use gpuquota_model::diag::{Diagnostic, Diagnostics};
use serde_json::Value;

use super::{Loaded, ReadCache, SyncReadFn, check_sweep, load_run, sha256_hex};
use crate::scenario::{self, INVALID_SCENARIO};

/// The largest `nodes.NODE.count` ([`set_node_count`]).
pub const NODE_COUNT_LIMIT: u32 = 1000;

/// Sets `nodes.NODE.count` to `value` in `model`: the Node `NODE` of the cluster files and
/// `value − 1` copies of it named `NODE-2`, `NODE-3`, … (the same labels, taints and
/// allocatable, the `kubernetes.io/hostname` label renamed), or no such Node for 0.
///
/// ```
/// let mut model = gpuquota_model::Importer::new();
/// model.add_str("n.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: h200}\nstatus: {allocatable: {nvidia.com/gpu: \"8\"}}\n");
/// let mut model = model.finish().unwrap().model;
/// gpuquota_sim::sweep::set_node_count(&mut model, "nodes.h200.count", "3").unwrap();
/// assert_eq!(model.nodes.keys().collect::<Vec<_>>(), ["h200", "h200-2", "h200-3"]);
/// ```
///
/// # Errors
/// A message naming the path: not `nodes.NODE.count`, no Node `NODE`, a value that is not
/// a whole number from 0 to [`NODE_COUNT_LIMIT`], or a copy's name already taken.
///
/// # Complexity
/// O(value × the Node's labels).
pub fn set_node_count(
    model: &mut gpuquota_model::Model,
    path: &str,
    value: &str,
) -> Result<(), String> {
    let node = path
        .strip_prefix("nodes.")
        .and_then(|r| r.strip_suffix(".count"))
        .filter(|n| !n.is_empty() && !n.contains('.'))
        .ok_or_else(|| format!("{path}: expected nodes.NODE.count"))?;
    let n: u32 = value
        .parse()
        .ok()
        .filter(|n| *n <= NODE_COUNT_LIMIT)
        .ok_or_else(|| {
            format!("{path}: {value:?} is not a whole number from 0 to {NODE_COUNT_LIMIT}")
        })?;
    let Some(template) = model.nodes.get(node).cloned() else {
        return Err(format!("{path}: no Node {node:?} in the cluster files"));
    };
    if n == 0 {
        model.nodes.remove(node);
        return Ok(());
    }
    for k in 2..=n {
        let name = format!("{node}-{k}");
        if model.nodes.contains_key(&name) {
            return Err(format!(
                "{path}: a copy would be named {name:?}, which a Node of the cluster files already is"
            ));
        }
        let mut copy = template.clone();
        copy.metadata.name.clone_from(&name);
        if let Some(h) = copy.metadata.labels.get_mut("kubernetes.io/hostname") {
            *h = name.clone();
        }
        model.nodes.insert(name, copy);
    }
    Ok(())
}

/// A scenario read once, whose points (sweep parameters) are loaded and simulated one at a
/// time, from any thread; files the scenario names are read once and remembered.
pub struct Evaluator<'a> {
    name: String,
    stem: String,
    doc: Value,
    nested: bool,
    cache: ReadCache,
    read: &'a SyncReadFn<'a>,
    /// The scenario without parameters, read once: `clusterQueues.` and `nodes.` edits
    /// apply to the model after the import, so a point with only those is a copy of it.
    base: Mutex<Option<scenario::Scenario>>,
    /// The same for a KAI scenario.
    kai_base: Mutex<Option<crate::kai::KaiScenario>>,
}

impl<'a> Evaluator<'a> {
    /// Reads the scenario text `text` (display name `name`, file stem `stem`); `read`
    /// loads the files it names.
    ///
    /// # Errors
    /// A scenario that is not YAML.
    pub fn new(
        name: &str,
        text: &str,
        stem: &str,
        read: &'a SyncReadFn<'a>,
    ) -> Result<Self, Diagnostics> {
        let doc: Value =
            serde_saphyr::from_str(text).map_err(|e| scenario::yaml_problem(name, &e))?;
        let nested = doc.get("kind").is_some();
        Ok(Evaluator {
            name: name.to_owned(),
            stem: stem.to_owned(),
            nested,
            doc,
            cache: Mutex::new(BTreeMap::new()),
            read,
            base: Mutex::new(None),
            kai_base: Mutex::new(None),
        })
    }

    /// Whether the scenario is KAI's (`spec.engine: kai`, or KAI's simulator config): its
    /// points are read with [`Evaluator::load_kai`], not [`Evaluator::load`].
    pub fn is_kai(&self) -> bool {
        crate::scenario::Format::of(&self.doc).is_kai()
    }

    /// The KAI simulation of one point, its parameters applied as a sweep applies them
    /// (`queues.` and `nodes.` paths as model edits, the rest into the document), ready for
    /// [`crate::simulate`]. It is built with [`crate::Simulation::from_model`] from the
    /// point's objects and the scenario's settings (window, sessions, usage, `kValue`,
    /// metering), so it runs as the scenario would: the repeat copies are already among
    /// the objects, and their `gpuquota.dev/repeat` annotations are left out so that they are
    /// not copied twice. A KAI simulator config (`Cycles`, `Queues`, …) runs alike; only
    /// its CSV row order and the name of the field its messages cite are not kept.
    ///
    /// # Errors
    /// As [`Evaluator::load`]; a Kueue scenario.
    pub fn load_kai(&self, params: &[(String, String)]) -> Result<crate::Simulation, Diagnostics> {
        let sc = self.kai_scenario(params)?;
        let mut model = sc.model;
        let strip = |meta: &mut gpuquota_model::meta::ObjectMeta| {
            meta.annotations.remove(crate::scenario::REPEAT_ANNOTATION);
            meta.labels.remove(crate::scenario::REPEAT_ANNOTATION);
        };
        for pg in model.pod_groups.values_mut() {
            strip(&mut pg.metadata);
        }
        for pod in model.pods.values_mut() {
            strip(&mut pod.metadata);
        }
        let options = crate::Options::new(crate::Mode::Kai, sc.start)
            .with_name(sc.name)
            .with_end_ms(sc.end_ms)
            .with_resume(sc.resume)
            .with_metering(sc.metering)
            .with_session_interval_ms(sc.session_interval_ms)
            .with_bind_latency_ms(sc.bind_latency_ms)
            .with_k_value(sc.k_value as f64 / 1e9)
            .with_usage(sc.usage);
        crate::Simulation::from_model(&model, &options)
            .map_err(gpuquota_model::Error::into_diagnostics)
    }

    /// Loads and simulates one KAI point ([`Evaluator::load_kai`]): its simulation and
    /// the KAI report.
    ///
    /// # Errors
    /// As [`Evaluator::load_kai`]; a simulation that fails.
    pub fn run_kai(
        &self,
        params: &[(String, String)],
    ) -> Result<(crate::Simulation, crate::kai::KaiOutcome), Diagnostics> {
        let sim = self.load_kai(params)?;
        let report = crate::simulate(&sim).map_err(gpuquota_model::Error::into_diagnostics)?;
        let Some(outcome) = report.into_kai() else {
            return Err(Diagnostics(vec![Diagnostic::error(
                INVALID_SCENARIO,
                "a KAI scenario's run gave no KAI report",
            )]));
        };
        Ok((sim, outcome))
    }

    /// The KAI scenario of one point (the base read once when only model edits vary).
    fn kai_scenario(
        &self,
        params: &[(String, String)],
    ) -> Result<crate::kai::KaiScenario, Diagnostics> {
        let axes: Vec<super::Axis> = params
            .iter()
            .map(|(k, v)| super::Axis {
                path: k.clone(),
                values: vec![v.clone()],
            })
            .collect();
        check_sweep(&axes, None, None)?;
        let not_kai = || {
            Diagnostics(vec![Diagnostic::error(
                INVALID_SCENARIO,
                "a Kueue or ResourceQuota scenario: read its points with load, not load_kai",
            )])
        };
        if params.iter().all(|(k, _)| super::is_model_edit(k)) {
            let cached = self.kai_base.lock().ok().and_then(|b| b.clone());
            let mut sc = match cached {
                Some(sc) => sc,
                None => {
                    let Loaded::Kai(sc) = self.load_document(&[])? else {
                        return Err(not_kai());
                    };
                    if let Ok(mut b) = self.kai_base.lock() {
                        *b = Some((*sc).clone());
                    }
                    *sc
                }
            };
            for (k, v) in params {
                super::set_model(&mut sc.model, k, v).map_err(|m| {
                    Diagnostics(vec![
                        Diagnostic::error(INVALID_SCENARIO, m).field(k.clone()),
                    ])
                })?;
            }
            return Ok(sc);
        }
        match self.load_document(params)? {
            Loaded::Kai(sc) => Ok(*sc),
            Loaded::Kueue(_) => Err(not_kai()),
        }
    }

    /// Reads one point's document and files (each file once) and applies its model edits.
    fn load_document(&self, params: &[(String, String)]) -> Result<Loaded, Diagnostics> {
        let cached = |f: &str| -> Result<(String, String), Diagnostic> {
            if let Some(r) = self.cache.lock().ok().and_then(|c| c.get(f).cloned()) {
                return r;
            }
            let r = (self.read)(f);
            if let Ok(mut c) = self.cache.lock() {
                c.insert(f.to_owned(), r.clone());
            }
            r
        };
        load_run(
            &self.name,
            &self.stem,
            &self.doc,
            self.nested,
            params,
            &cached,
        )
    }

    /// The Kueue (or ResourceQuota) scenario of one point, its parameters applied as a
    /// sweep applies them (module docs of [`super`]).
    ///
    /// # Errors
    /// As a sweep's run: an unknown path ([`super::UNKNOWN_PATH`]), a value that does not
    /// apply, an unreadable file; a KAI scenario (not supported here).
    pub fn load(&self, params: &[(String, String)]) -> Result<scenario::Scenario, Diagnostics> {
        let axes: Vec<super::Axis> = params
            .iter()
            .map(|(k, v)| super::Axis {
                path: k.clone(),
                values: vec![v.clone()],
            })
            .collect();
        check_sweep(&axes, None, None)?;
        if !params.is_empty() && params.iter().all(|(k, _)| super::is_model_edit(k)) {
            let base = self.base.lock().ok().and_then(|b| b.clone());
            let mut sc = match base {
                Some(sc) => sc,
                None => {
                    let sc = self.load(&[])?;
                    if let Ok(mut b) = self.base.lock() {
                        *b = Some(sc.clone());
                    }
                    sc
                }
            };
            for (k, v) in params {
                super::set_model(&mut sc.model, k, v).map_err(|m| {
                    Diagnostics(vec![
                        Diagnostic::error(INVALID_SCENARIO, m).field(k.clone()),
                    ])
                })?;
            }
            return Ok(sc);
        }
        match self.load_document(params)? {
            Loaded::Kueue(sc) => Ok(*sc),
            Loaded::Kai(_) => Err(Diagnostics(vec![Diagnostic::error(
                INVALID_SCENARIO,
                "a KAI scenario: its points are read with load_kai and run with run_kai (a KAI run has no Kueue report to compare or patch)",
            )])),
        }
    }

    /// Loads and simulates one point: its scenario and report.
    ///
    /// # Errors
    /// As [`Evaluator::load`]; a simulation that fails or reports errors.
    pub fn run(
        &self,
        params: &[(String, String)],
    ) -> Result<(scenario::Scenario, crate::Report), Diagnostics> {
        let sc = self.load(params)?;
        let report = crate::simulate_kueue(&sc)?;
        if report.diagnostics.has_errors() {
            return Err(report.diagnostics.clone());
        }
        Ok((sc, report))
    }

    /// SHA-256 digests (lower-case hex) of every file read so far, by the name the scenario
    /// gives it, in name order.
    pub fn file_digests(&self) -> BTreeMap<String, String> {
        self.cache
            .lock()
            .map(|c| {
                c.iter()
                    .filter_map(|(f, r)| {
                        r.as_ref()
                            .ok()
                            .map(|(_, t)| (f.clone(), sha256_hex(t.as_bytes())))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> gpuquota_model::Model {
        let mut m = gpuquota_model::Importer::new();
        m.add_str(
            "n.yaml",
            "apiVersion: v1\nkind: Node\nmetadata: {name: h200, labels: {kubernetes.io/hostname: h200}}\nstatus: {allocatable: {nvidia.com/gpu: \"8\"}}\n",
        );
        m.finish().unwrap().model
    }

    /// A KAI point evaluated through the public simulation API gives the sweep's row: the
    /// night scenario's daily 02:00 fine-tuning repeats (one copy, 02:00 the next day), so the
    /// copies are among the objects once, not twice. Both the scenario as written and a
    /// point with `batch`'s limit lowered from 12 to 4 (its two gangs then queue).
    #[test]
    fn kai_points_run_as_the_sweep_runs_them() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kai");
        let read = gpuquota_testkit::files::in_dir(&dir);
        let text = std::fs::read_to_string(dir.join("night.yaml")).unwrap();
        let ev = Evaluator::new("night.yaml", &text, "night", &read).unwrap();
        assert!(ev.is_kai());
        assert!(ev.load(&[]).is_err());
        let axes = [crate::sweep::Axis {
            path: "queues.batch.gpu.limit".to_owned(),
            values: vec!["12".to_owned(), "4".to_owned()],
        }];
        let table = crate::sweep::run("night.yaml", &text, "night", &axes, None, &read).unwrap();
        for (i, v) in ["12", "4"].into_iter().enumerate() {
            let params = vec![("queues.batch.gpu.limit".to_owned(), v.to_owned())];
            let (sim, outcome) = ev.run_kai(&params).unwrap();
            assert_eq!(
                sim.model().queues["batch"]
                    .spec
                    .resources
                    .as_ref()
                    .unwrap()
                    .gpu
                    .as_ref()
                    .unwrap()
                    .limit
                    .as_ref()
                    .unwrap()
                    .to_string(),
                v
            );
            let mut row = crate::sweep::summarise(i, &params, &outcome.to_json());
            row.warnings = table.rows[i].warnings;
            assert_eq!(row, table.rows[i]);
            // the fine-tuning and its one repeat copy, once each
            let fine: Vec<&str> = outcome
                .jobs
                .iter()
                .map(|j| j.key.as_str())
                .filter(|k| k.starts_with("ds/finetune"))
                .collect();
            assert_eq!(fine, ["ds/finetune", "ds/finetune-1"]);
        }
        assert_ne!(table.rows[0].gpu_hours, table.rows[1].gpu_hours);
    }

    #[test]
    fn node_count_copies_and_removes() {
        let mut m = model();
        set_node_count(&mut m, "nodes.h200.count", "2").unwrap();
        assert_eq!(
            m.nodes["h200-2"].metadata.labels["kubernetes.io/hostname"],
            "h200-2"
        );
        let mut m = model();
        set_node_count(&mut m, "nodes.h200.count", "0").unwrap();
        assert!(m.nodes.is_empty());
        let mut m = model();
        assert_eq!(
            set_node_count(&mut m, "nodes.h100.count", "1").unwrap_err(),
            "nodes.h100.count: no Node \"h100\" in the cluster files"
        );
        assert!(set_node_count(&mut m, "nodes.h200.count", "1001").is_err());
        assert!(set_node_count(&mut m, "nodes.h200.count", "-1").is_err());
    }
}
