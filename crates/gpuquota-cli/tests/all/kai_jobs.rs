//! `gpuquota kai schedule` on the objects users submit: a Job, PyTorchJob and Deployment
//! whose pods KAI schedules give the same output as the PodGroups and Pods KAI's pod grouper
//! makes from them (written out by hand).

use crate::common;
use common::{gpuquota, text};

/// Writes `files` into a fresh directory named after the test.
fn write(test: &str, files: &[(&str, &str)]) -> Vec<String> {
    common::write_in("kai-jobs", test, files)
}

/// A department with two projects (4 GPUs each) and one 8-GPU node.
const CLUSTER: &str = r#"apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: dept}
spec:
  resources:
    gpu: {quota: 8, overQuotaWeight: 1, limit: -1}
    cpu: {quota: -1, overQuotaWeight: 1, limit: -1}
    memory: {quota: -1, overQuotaWeight: 1, limit: -1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-a}
spec:
  parentQueue: dept
  resources:
    gpu: {quota: 4, overQuotaWeight: 1, limit: -1}
    cpu: {quota: -1, overQuotaWeight: 1, limit: -1}
    memory: {quota: -1, overQuotaWeight: 1, limit: -1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-b}
spec:
  parentQueue: dept
  resources:
    gpu: {quota: 4, overQuotaWeight: 1, limit: -1}
    cpu: {quota: -1, overQuotaWeight: 1, limit: -1}
    memory: {quota: -1, overQuotaWeight: 1, limit: -1}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8", pods: "110"}
"#;

const SPEC: &str = "{schedulerName: kai-scheduler, containers: [{name: c, resources: {limits: {nvidia.com/gpu: 2}}}]}";

fn pod(name: &str, pg: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ns, annotations: {{pod-group-name: {pg}}}}}\nspec: {SPEC}\nstatus: {{phase: Pending}}\n---\n"
    )
}

fn pod_group(name: &str, queue: &str, min: i32, class: &str) -> String {
    format!(
        "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {{name: {name}, namespace: ns, uid: u}}\nspec: {{queue: {queue}, minMember: {min}, priorityClassName: {class}}}\n---\n"
    )
}

fn same(test: &str, objects: &str, groups: &str) -> String {
    let files = write(
        test,
        &[
            ("cluster.yaml", CLUSTER),
            ("objects.yaml", objects),
            ("groups.yaml", groups),
        ],
    );
    for output in ["table", "json"] {
        let a = gpuquota(&["kai", "schedule", "--output", output, &files[0], &files[1]]);
        let b = gpuquota(&["kai", "schedule", "--output", output, &files[0], &files[2]]);
        assert_eq!(a.status.code(), Some(0), "{}", text(&a.stderr));
        assert_eq!(b.status.code(), Some(0), "{}", text(&b.stderr));
        assert_eq!(text(&a.stderr), "", "{test}: warnings");
        assert_eq!(text(&a.stdout), text(&b.stdout), "{test} --output {output}");
    }
    text(&gpuquota(&["kai", "schedule", "-o", "table", &files[0], &files[1]]).stdout)
}

#[test]
fn a_job_with_the_runai_queue_label_schedules_as_its_podgroup() {
    let job = format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: train, namespace: ns, uid: u, labels: {{runai/queue: team-a}}}}\nspec: {{parallelism: 3, template: {{spec: {SPEC}}}}}\n"
    );
    let groups = pod_group("pg-train-u", "team-a", 1, "train")
        + &pod("train-0", "pg-train-u")
        + &pod("train-1", "pg-train-u")
        + &pod("train-2", "pg-train-u");
    let table = same("job", &job, &groups);
    assert!(
        table.contains("allocate ns/pg-train-u (queue team-a): 3 pods"),
        "{table}"
    );
}

#[test]
fn a_pytorchjob_gang_and_a_deployment_schedule_as_their_podgroups() {
    let objs = format!(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {{name: pt, namespace: ns, uid: u, labels: {{kai.scheduler/queue: team-b}}}}\n\
         spec: {{pytorchReplicaSpecs: {{Master: {{template: {{spec: {SPEC}}}}}, Worker: {{replicas: 2, template: {{spec: {SPEC}}}}}}}}}\n---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: ns, uid: u, labels: {{kai.scheduler/queue: team-a}}}}\nspec: {{replicas: 1, template: {{spec: {SPEC}}}}}\n"
    );
    let groups = pod_group("pg-pt-u", "team-b", 3, "train")
        + &pod("pt-master-0", "pg-pt-u")
        + &pod("pt-worker-0", "pg-pt-u")
        + &pod("pt-worker-1", "pg-pt-u")
        + &pod_group("pg-web-0", "team-a", 1, "inference")
        + &pod("web-0", "pg-web-0");
    let table = same("pytorch", &objs, &groups);
    assert!(
        table.contains("ns/pg-pt-u (queue team-b): 3 pods"),
        "{table}"
    );
    assert!(
        table.contains("ns/pg-web-0 (queue team-a): 1 pods"),
        "{table}"
    );
}

#[test]
fn converted_podgroups_and_pods_validate() {
    let objs = format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: train, namespace: ns, labels: {{runai/queue: team-a}}}}\nspec: {{parallelism: 2, template: {{spec: {SPEC}}}}}\n---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: ns, labels: {{kai.scheduler/queue: team-a}}}}\nspec: {{replicas: 2, template: {{spec: {SPEC}}}}}\n"
    );
    let files = write(
        "validate",
        &[("cluster.yaml", CLUSTER), ("objects.yaml", &objs)],
    );
    let out = gpuquota(&["validate", &files[0], &files[1]]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn a_cronjobs_active_job_schedules_as_its_podgroup() {
    let cj = format!(
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {{name: nightly, namespace: ns, uid: c}}\n\
         spec: {{schedule: \"0 2 * * *\", jobTemplate: {{metadata: {{labels: {{kai.scheduler/queue: team-a}}}}, spec: {{parallelism: 2, template: {{spec: {SPEC}}}}}}}}}\n\
         status: {{active: [{{kind: Job, name: nightly-29000000, namespace: ns, uid: u}}]}}\n"
    );
    let groups = pod_group("pg-nightly-29000000-u", "team-a", 1, "train")
        + &pod("nightly-29000000-0", "pg-nightly-29000000-u")
        + &pod("nightly-29000000-1", "pg-nightly-29000000-u");
    let table = same("cronjob", &cj, &groups);
    assert!(
        table.contains("ns/pg-nightly-29000000-u (queue team-a): 2 pods"),
        "{table}"
    );
}

#[test]
fn a_knative_revision_schedules_as_its_gang() {
    let rev = format!(
        "apiVersion: serving.knative.dev/v1\nkind: Revision\nmetadata: {{name: chat-00002, namespace: ns, uid: u, labels: {{kai.scheduler/queue: team-b}}, annotations: {{autoscaling.knative.dev/min-scale: \"2\"}}}}\n\
         spec: {SPEC}\n"
    );
    let groups = pod_group("pg-chat-00002-u", "team-b", 2, "inference")
        + &pod("chat-00002-deployment-0", "pg-chat-00002-u")
        + &pod("chat-00002-deployment-1", "pg-chat-00002-u");
    let table = same("knative", &rev, &groups);
    assert!(
        table.contains("ns/pg-chat-00002-u (queue team-b): 2 pods"),
        "{table}"
    );
}

#[test]
fn spark_pods_and_an_appwrapper_schedule_as_their_podgroups() {
    let spark = |name: &str, owner: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ns, uid: u, labels: {{spark-app-name: pi, spark-app-selector: spark-0a1b, kai.scheduler/queue: team-a}}{owner}}}\nspec: {SPEC}\nstatus: {{phase: Pending}}\n---\n"
        )
    };
    let exec =
        ", ownerReferences: [{apiVersion: v1, kind: Pod, name: pi-driver, controller: true}]";
    let objs = spark("pi-driver", "")
        + &spark("pi-exec-1", exec)
        + &format!(
            "apiVersion: workload.codeflare.dev/v1beta2\nkind: AppWrapper\nmetadata: {{name: aw, namespace: ns, uid: u, labels: {{kai.scheduler/queue: team-b}}}}\n\
             spec: {{components: [{{template: {{apiVersion: batch/v1, kind: Job, metadata: {{name: j}}, spec: {{parallelism: 2, template: {{spec: {SPEC}}}}}}}}}]}}\n"
        );
    let groups = pod_group("spark-0a1b", "team-a", 1, "train")
        + &pod("pi-driver", "spark-0a1b")
        + &pod("pi-exec-1", "spark-0a1b")
        + &pod_group("pg-aw-u", "team-b", 1, "train")
        + &pod("aw-0-0", "pg-aw-u")
        + &pod("aw-0-1", "pg-aw-u");
    let table = same("spark", &objs, &groups);
    assert!(
        table.contains("ns/spark-0a1b (queue team-a): 2 pods"),
        "{table}"
    );
    assert!(
        table.contains("ns/pg-aw-u (queue team-b): 2 pods"),
        "{table}"
    );
}
