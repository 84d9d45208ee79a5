//! The Kubernetes Indexed Job that runs a sweep's shards, one pod each, admitted by Kueue, and
//! the ConfigMap holding the scenario's files.

use std::collections::BTreeMap;

use serde::Serialize;

use super::Axis;

/// Escapes `s` for a container's `command` or `args`: the kubelet expands `$(VAR)` there and
/// reads `$$` as one `$`, so every `$` is doubled and the argument reaches the program as
/// written.
///
/// ```
/// assert_eq!(gpuquota_sim::sweep::escape_kubelet("a=$(HOME),$$"), "a=$$(HOME),$$$$");
/// ```
pub fn escape_kubelet(s: &str) -> String {
    s.replace('$', "$$")
}

/// A Kubernetes Indexed Job running the sweep's N shards as N pods, admitted by Kueue
/// through the LocalQueue `queue` (label `kueue.x-k8s.io/queue-name`). Each pod runs
/// `gpuquota sim sweep /scenario/FILE --set … --shard $(JOB_COMPLETION_INDEX)/N --quiet`
/// (the kubelet expands `$(JOB_COMPLETION_INDEX)`, which Indexed Jobs set per pod; every
/// other argument is escaped with [`escape_kubelet`]) and prints its shard's JSON table;
/// the scenario directory is the ConfigMap `<name>-scenario` mounted at `/scenario`, each
/// file (`items`) at the path the scenario names it by. The names are not checked here
/// ([`manifests`] checks them).
#[allow(clippy::too_many_arguments)]
pub fn indexed_job(
    name: &str,
    namespace: &str,
    queue: &str,
    image: &str,
    file: &str,
    axes: &[Axis],
    shards: usize,
) -> IndexedJob {
    indexed_job_with_items(
        name,
        namespace,
        queue,
        image,
        file,
        axes,
        shards,
        Vec::new(),
    )
}

#[allow(clippy::too_many_arguments)]
fn indexed_job_with_items(
    name: &str,
    namespace: &str,
    queue: &str,
    image: &str,
    file: &str,
    axes: &[Axis],
    shards: usize,
    items: Vec<KeyToPath>,
) -> IndexedJob {
    pod_job(
        name,
        namespace,
        queue,
        image,
        sweep_args(file, axes),
        shards,
        items,
    )
}

/// The arguments of a sweep's pod before `--shard` (unescaped).
fn sweep_args(file: &str, axes: &[Axis]) -> Vec<String> {
    let mut args: Vec<String> = vec!["sim".into(), "sweep".into(), format!("/scenario/{file}")];
    for a in axes {
        args.push("--set".into());
        args.push(format!("{}={}", a.path, a.values.join(",")));
    }
    args
}

/// The Indexed Job whose pods run `gpuquota ARGS --shard $(JOB_COMPLETION_INDEX)/N --quiet`,
/// every argument of `args` escaped with [`escape_kubelet`].
fn pod_job(
    name: &str,
    namespace: &str,
    queue: &str,
    image: &str,
    args: Vec<String>,
    shards: usize,
    items: Vec<KeyToPath>,
) -> IndexedJob {
    let mut args: Vec<String> = args.iter().map(|a| escape_kubelet(a)).collect();
    args.push("--shard".into());
    args.push(format!("$(JOB_COMPLETION_INDEX)/{shards}"));
    args.push("--quiet".into());
    let mut labels = BTreeMap::new();
    labels.insert("kueue.x-k8s.io/queue-name".to_owned(), queue.to_owned());
    IndexedJob {
        api_version: "batch/v1",
        kind: "Job",
        metadata: JobMeta {
            name: name.to_owned(),
            namespace: namespace.to_owned(),
            labels,
        },
        spec: JobSpec {
            completion_mode: "Indexed",
            completions: shards,
            parallelism: shards,
            suspend: true,
            template: PodTemplate {
                spec: PodSpec {
                    restart_policy: "Never",
                    containers: vec![Container {
                        name: "sweep",
                        image: image.to_owned(),
                        command: vec!["gpuquota"],
                        args,
                        resources: Resources {
                            requests: Requests {
                                cpu: "1",
                                memory: "1Gi",
                            },
                        },
                        volume_mounts: vec![VolumeMount {
                            name: "scenario",
                            mount_path: "/scenario",
                            read_only: true,
                        }],
                    }],
                    volumes: vec![Volume {
                        name: "scenario",
                        config_map: ConfigMapRef {
                            name: format!("{name}-scenario"),
                            items,
                        },
                    }],
                },
            },
        },
    }
}

/// The most bytes a ConfigMap holds (Kubernetes' `MaxSecretSize`, 1 MiB, which ConfigMaps
/// share: kubernetes/kubernetes pkg/apis/core/validation/validation.go).
pub const MAX_CONFIGMAP_BYTES: usize = 1024 * 1024;

/// What [`manifests`] emits: the Job's names, its image, the sweep and the files it needs.
#[derive(Debug, Clone, Copy)]
pub struct JobRequest<'a> {
    /// The Job's name (a DNS-1123 label); the ConfigMap is `<name>-scenario`.
    pub name: &'a str,
    /// The namespace of both (a DNS-1123 label).
    pub namespace: &'a str,
    /// The LocalQueue (`kueue.x-k8s.io/queue-name`, a label value and a DNS-1123 subdomain).
    pub queue: &'a str,
    /// The container image, holding the `gpuquota` binary.
    pub image: &'a str,
    /// The scenario's file name (no directory) and text.
    pub scenario: (&'a str, &'a str),
    /// Every other file the scenario reads, by the relative name it gives, with its text.
    pub files: &'a [(String, String)],
    /// The sweep's axes.
    pub axes: &'a [Axis],
    /// Shards (pods).
    pub shards: usize,
}

/// The ConfigMap key of a relative path: every character a key may not hold
/// (`[-._a-zA-Z0-9]`) becomes `_`.
fn key_of(path: &str) -> String {
    path.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The manifests that run a sweep on a cluster, as one YAML stream: comments saying how to
/// start the Job, collect each pod's shard and merge them; the ConfigMap `<name>-scenario`
/// holding the scenario and every file it reads; the Indexed Job of [`indexed_job`]
/// mounting it, each file at the relative path the scenario names it by.
///
/// # Errors
/// A message naming the value: a name, namespace or queue that Kubernetes would refuse
/// (checked with the validator of `gpuquota validate`), a file outside the scenario's
/// directory (`..` or absolute, which a ConfigMap volume cannot hold), files above
/// [`MAX_CONFIGMAP_BYTES`] in all, or the serializer's message.
pub fn manifests(r: &JobRequest<'_>) -> Result<String, String> {
    manifests_running(
        r,
        "sweep",
        sweep_args(r.scenario.0, r.axes),
        &format!("gpuquota sim merge {}-*.json", r.name),
    )
}

/// The manifests of [`manifests`] for pods that run `gpuquota ARGS --shard
/// $(JOB_COMPLETION_INDEX)/N --quiet` instead of a sweep (`what` names the work in the
/// comments, `args` as the program receives
/// them: each is escaped with [`escape_kubelet`] here; `r.axes` is not read), and whose
/// shards `merge` (a shell command, shown in the comments) joins. The ConfigMap holds
/// `r.scenario` and `r.files`, each at the relative path it is named by, checked as
/// [`manifests`] checks them.
///
/// # Errors
/// As [`manifests`].
pub fn manifests_running(
    r: &JobRequest<'_>,
    what: &str,
    args: Vec<String>,
    merge: &str,
) -> Result<String, String> {
    use gpuquota_model::validate::{
        dns1123_label_problems, dns1123_subdomain_problems, label_value_problems,
    };
    let check = |what: &str, value: &str, problems: Vec<String>| -> Result<(), String> {
        match problems.first() {
            Some(p) => Err(format!("{what} {value:?}: {p}")),
            None => Ok(()),
        }
    };
    check(
        "--namespace",
        r.namespace,
        dns1123_label_problems(r.namespace),
    )?;
    check("the Job's name", r.name, dns1123_label_problems(r.name))?;
    let cm_name = format!("{}-scenario", r.name);
    check(
        "the ConfigMap's name",
        &cm_name,
        dns1123_subdomain_problems(&cm_name),
    )?;
    let mut q = label_value_problems(r.queue);
    q.extend(dns1123_subdomain_problems(r.queue));
    check("--queue", r.queue, q)?;
    let mut data: BTreeMap<String, String> = BTreeMap::new();
    let mut items = Vec::new();
    let mut bytes = 0usize;
    let all = std::iter::once((r.scenario.0, r.scenario.1))
        .chain(r.files.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    for (path, text) in all {
        let clean = path.trim_start_matches("./");
        if clean.is_empty()
            || clean.starts_with('/')
            || clean.split('/').any(|s| s == ".." || s.is_empty())
        {
            return Err(format!(
                "{path}: the scenario reads a file outside its directory, which the ConfigMap mounted at /scenario cannot hold; copy it beside the scenario and name it relative to it"
            ));
        }
        if items.iter().any(|i: &KeyToPath| i.path == clean) {
            continue;
        }
        let base = key_of(clean);
        let mut key = base.clone();
        let mut n = 1;
        while data.contains_key(&key) {
            n += 1;
            key = format!("{base}-{n}");
        }
        bytes = bytes.saturating_add(key.len()).saturating_add(text.len());
        data.insert(key.clone(), text.to_owned());
        items.push(KeyToPath {
            key,
            path: clean.to_owned(),
        });
    }
    if bytes > MAX_CONFIGMAP_BYTES {
        return Err(format!(
            "the scenario and its files make {bytes} bytes, more than the {MAX_CONFIGMAP_BYTES} a ConfigMap holds; mount them from a volume of your own instead"
        ));
    }
    let cm = ConfigMap {
        api_version: "v1",
        kind: "ConfigMap",
        metadata: CmMeta {
            name: cm_name,
            namespace: r.namespace.to_owned(),
        },
        data,
    };
    let job = pod_job(r.name, r.namespace, r.queue, r.image, args, r.shards, items);
    let last = r.shards.saturating_sub(1);
    let (ns, name) = (r.namespace, r.name);
    let head = format!(
        "# The {what} as {shards} pods of an Indexed Job, admitted by Kueue through the LocalQueue {queue}.
# Run it, wait for it, collect each pod's shard and merge them:
#   kubectl apply -f THIS_FILE
#   kubectl wait -n {ns} --for=condition=complete job/{name} --timeout=24h
#   for i in $(seq 0 {last}); do kubectl logs -n {ns} $(kubectl get pods -n {ns} -o name --field-selector=status.phase=Succeeded -l batch.kubernetes.io/job-name={name},batch.kubernetes.io/job-completion-index=$i) > {name}-$i.json; done
#   {merge}
",
        shards = r.shards,
        queue = r.queue,
    );
    Ok(format!("{head}{}{}", to_yaml(&cm)?, to_yaml(&job)?))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct ConfigMap {
    api_version: &'static str,
    kind: &'static str,
    metadata: CmMeta,
    data: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct CmMeta {
    name: String,
    namespace: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct KeyToPath {
    key: String,
    path: String,
}

/// The Indexed Job of [`indexed_job`], serialised with Kubernetes' field names in the order
/// `kubectl` prints them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexedJob {
    api_version: &'static str,
    kind: &'static str,
    metadata: JobMeta,
    spec: JobSpec,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct JobMeta {
    name: String,
    namespace: String,
    labels: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct JobSpec {
    completion_mode: &'static str,
    completions: usize,
    parallelism: usize,
    suspend: bool,
    template: PodTemplate,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct PodTemplate {
    spec: PodSpec,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct PodSpec {
    restart_policy: &'static str,
    containers: Vec<Container>,
    volumes: Vec<Volume>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Container {
    name: &'static str,
    image: String,
    command: Vec<&'static str>,
    args: Vec<String>,
    resources: Resources,
    volume_mounts: Vec<VolumeMount>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Resources {
    requests: Requests,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Requests {
    cpu: &'static str,
    memory: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct VolumeMount {
    name: &'static str,
    mount_path: &'static str,
    read_only: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Volume {
    name: &'static str,
    config_map: ConfigMapRef,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct ConfigMapRef {
    name: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    items: Vec<KeyToPath>,
}

/// A manifest as YAML (`---` first), for [`indexed_job`].
///
/// # Errors
/// The serializer's message.
pub fn to_yaml<T: Serialize>(v: &T) -> Result<String, String> {
    serde_saphyr::to_string(v)
        .map(|s| format!("---\n{s}"))
        .map_err(|e| e.to_string())
}
