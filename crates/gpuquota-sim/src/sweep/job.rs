//! The Kubernetes Indexed Job that runs a sweep's shards, one pod each, admitted by Kueue.

use std::collections::BTreeMap;

use serde::Serialize;

use super::Axis;

/// A Kubernetes Indexed Job running the sweep's N shards as N pods, admitted by Kueue
/// through the LocalQueue `queue` (label `kueue.x-k8s.io/queue-name`). Each pod runs
/// `gpuquota sim sweep /scenario/FILE --set … --shard $(JOB_COMPLETION_INDEX)/N` (the kubelet
/// expands `$(JOB_COMPLETION_INDEX)`, which Indexed Jobs set per pod) and prints its shard's
/// JSON table; the scenario directory is the ConfigMap `<name>-scenario` mounted at
/// `/scenario` (`kubectl create configmap <name>-scenario --from-file=DIR`). Collect the
/// pods' logs and join them with `gpuquota sim merge`.
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
    let mut args: Vec<String> = vec!["sim".into(), "sweep".into(), format!("/scenario/{file}")];
    for a in axes {
        args.push("--set".into());
        args.push(format!("{}={}", a.path, a.values.join(",")));
    }
    args.push("--shard".into());
    args.push(format!("$(JOB_COMPLETION_INDEX)/{shards}"));
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
                        },
                    }],
                },
            },
        },
    }
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
