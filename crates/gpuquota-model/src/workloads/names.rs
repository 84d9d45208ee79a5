//! The names Kueue derives for the Workloads it creates, and its pod role hash.

use sha1::{Digest, Sha1};
use sha2::Sha256;

use crate::core::{Container, PodSpec, ResourceList};
use crate::meta::Toleration;

/// Hex digits of the hash suffix.
const HASH_LENGTH: usize = 5;
/// The longest Workload name (a CRD object name).
const MAX_NAME_LENGTH: usize = 253;
/// The longest prefix before `-<hash>`.
const MAX_PREFIX_LENGTH: usize = MAX_NAME_LENGTH - 1 - HASH_LENGTH;

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// The first `n` bytes of `s` (Go's byte slicing; names are ASCII).
fn truncate(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The Workload name Kueue gives the Workload of an owner object: the lower-cased kind, `-`,
/// the owner's name (cut to 247 bytes together), `-`, and the first 5 hex digits of SHA-1
/// over `kind \n group \n name \n uid` (kubernetes-sigs/kueue:
/// pkg/controller/jobframework/workload_names.go, `GetWorkloadNameForOwnerWithGVK`).
///
/// ```
/// use gpuquota_model::workloads::names::workload_name;
/// assert_eq!(workload_name("Job", "batch", "sample-job", ""), "job-sample-job-4b8c4");
/// ```
///
/// # Complexity
/// Linear in the name's length.
pub fn workload_name(kind: &str, group: &str, owner_name: &str, owner_uid: &str) -> String {
    let prefix = format!("{}-{}", kind.to_lowercase(), owner_name);
    let mut h = Sha1::new();
    h.update(kind.as_bytes());
    h.update(b"\n");
    h.update(group.as_bytes());
    h.update(b"\n");
    h.update(owner_name.as_bytes());
    h.update(b"\n");
    h.update(owner_uid.as_bytes());
    let digest = hex(&h.finalize());
    format!(
        "{}-{}",
        truncate(&prefix, MAX_PREFIX_LENGTH),
        &digest[..HASH_LENGTH]
    )
}

/// A stable 5-character suffix for an object named by `generateName`: the first 5 hex digits
/// of the SHA-1 of the document's JSON.
pub fn document_suffix(doc: &serde_json::Value) -> String {
    crate::model::workload_object::document_suffix(doc)
}

/// Go's `encoding/json` string quoting (with its HTML escaping of `<`, `>`, `&`).
fn go_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn resource_list(list: &ResourceList) -> String {
    if list.is_empty() {
        return "null".into();
    }
    let items: Vec<String> = list
        .iter()
        .map(|(k, v)| format!("{}:{}", go_string(k.as_str()), go_string(&v.to_string())))
        .collect();
    format!("{{{}}}", items.join(","))
}

fn string_map(map: &std::collections::BTreeMap<String, String>) -> String {
    if map.is_empty() {
        return "null".into();
    }
    let items: Vec<String> = map
        .iter()
        .map(|(k, v)| format!("{}:{}", go_string(k), go_string(v)))
        .collect();
    format!("{{{}}}", items.join(","))
}

fn ports(c: &Container) -> String {
    let Some(serde_json::Value::Array(ports)) = c.other.get("ports").map(|v| v.as_value()) else {
        return "null".into();
    };
    let items: Vec<String> = ports
        .iter()
        .map(|p| {
            // corev1.ContainerPort field order; the API server defaults protocol to TCP.
            let mut fields = Vec::new();
            if let Some(n) = p
                .get("name")
                .and_then(|v| v.as_str())
                .filter(|s| !s.is_empty())
            {
                fields.push(format!("\"name\":{}", go_string(n)));
            }
            if let Some(h) = p.get("hostPort").and_then(serde_json::Value::as_i64)
                && h != 0
            {
                fields.push(format!("\"hostPort\":{h}"));
            }
            let cp = p
                .get("containerPort")
                .and_then(serde_json::Value::as_i64)
                .unwrap_or(0);
            fields.push(format!("\"containerPort\":{cp}"));
            let proto = p
                .get("protocol")
                .and_then(|v| v.as_str())
                .filter(|s| !s.is_empty())
                .unwrap_or("TCP");
            fields.push(format!("\"protocol\":{}", go_string(proto)));
            if let Some(ip) = p
                .get("hostIP")
                .and_then(|v| v.as_str())
                .filter(|s| !s.is_empty())
            {
                fields.push(format!("\"hostIP\":{}", go_string(ip)));
            }
            format!("{{{}}}", fields.join(","))
        })
        .collect();
    format!("[{}]", items.join(","))
}

fn containers(list: &[Container]) -> String {
    if list.is_empty() {
        return "null".into();
    }
    let items: Vec<String> = list
        .iter()
        .map(|c| {
            // The API server defaults a container's missing requests to its limits.
            let requests = c.resources.effective_requests();
            format!(
                "{{\"ports\":{},\"resources\":{{\"requests\":{}}}}}",
                ports(c),
                resource_list(&requests)
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}

fn tolerations(list: &[Toleration]) -> String {
    if list.is_empty() {
        return "null".into();
    }
    let items: Vec<String> = list
        .iter()
        .map(|t| {
            let mut f = Vec::new();
            let s = |v: &Option<String>| v.as_deref().filter(|x| !x.is_empty()).map(go_string);
            if let Some(k) = s(&t.key) {
                f.push(format!("\"key\":{k}"));
            }
            if let Some(o) = s(&t.operator) {
                f.push(format!("\"operator\":{o}"));
            }
            if let Some(v) = s(&t.value) {
                f.push(format!("\"value\":{v}"));
            }
            if let Some(e) = s(&t.effect) {
                f.push(format!("\"effect\":{e}"));
            }
            if let Some(ts) = t.toleration_seconds {
                f.push(format!("\"tolerationSeconds\":{ts}"));
            }
            format!("{{{}}}", f.join(","))
        })
        .collect();
    format!("[{}]", items.join(","))
}

/// Kueue's pod role hash: the first 8 hex digits of SHA-256 over the JSON of the pod's
/// scheduling shape (containers' requests and ports, init containers, node selector,
/// affinity, tolerations, runtime class, priority, topology spread, overhead, resource
/// claims) (kubernetes-sigs/kueue: pkg/util/pod/pod.go, `GenerateRoleHash`).
///
/// `priority` is the pod's resolved priority, as the API server's admission sets it. The
/// JSON is written as Go's `encoding/json` writes it for the fields pods usually set;
/// returns `None` when the pod sets a field whose Go encoding is not reproduced here
/// (affinity, topology spread constraints, resource claims, pod-level resources), so the
/// caller can fall back to the `kueue.x-k8s.io/role-hash` annotation or warn.
pub fn role_hash(spec: &PodSpec, priority: Option<i32>) -> Option<String> {
    let unsupported = ["topologySpreadConstraints", "resourceClaims"];
    if spec.affinity.as_ref().is_some_and(|a| !a.is_null())
        || spec.resources.is_some()
        || unsupported
            .iter()
            .any(|k| spec.other.get(*k).is_some_and(|v| !v.is_null()))
    {
        return None;
    }
    let runtime_class = match spec.other.get("runtimeClassName").and_then(|v| v.as_str()) {
        Some(r) => go_string(r),
        None => "null".into(),
    };
    let priority = priority.map_or_else(|| "null".to_owned(), |p| p.to_string());
    let json = format!(
        "{{\"spec\":{{\"affinity\":null,\"containers\":{},\"initContainers\":{},\"nodeSelector\":{},\"overhead\":{},\"priority\":{},\"resourceClaims\":null,\"runtimeClassName\":{},\"tolerations\":{},\"topologySpreadConstraints\":null}}}}",
        containers(&spec.containers),
        containers(&spec.init_containers),
        string_map(&spec.node_selector),
        resource_list(&spec.overhead),
        priority,
        runtime_class,
        tolerations(&spec.tolerations),
    );
    let digest = hex(&Sha256::digest(json.as_bytes()));
    Some(digest[..8].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_cut_before_the_hash() {
        let long = "x".repeat(300);
        let name = workload_name("Job", "batch", &long, "");
        assert_eq!(name.len(), 253);
        assert!(name.starts_with("job-xxx"));
    }

    /// kubernetes-sigs/kueue: pkg/controller/jobframework/workload_names_test.go, "short
    /// name, without extra".
    #[test]
    fn workload_name_matches_upstreams_test_vector() {
        assert_eq!(
            workload_name("Job", "batch", "name", "uid"),
            "job-name-ef3a1"
        );
    }

    /// kubernetes-sigs/kueue: pkg/controller/jobs/pod/pod_controller_test.go: a pod group of
    /// pods requesting 1 cpu (priority unset) has the PodSet `dc85db45`.
    #[test]
    fn role_hash_matches_upstreams_pod_group_test() {
        let spec: PodSpec = serde_json::from_value(serde_json::json!({
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]
        }))
        .unwrap();
        assert_eq!(role_hash(&spec, None).as_deref(), Some("dc85db45"));
    }

    #[test]
    fn go_strings_escape_html() {
        assert_eq!(go_string("a<b>&\"c"), "\"a\\u003cb\\u003e\\u0026\\\"c\"");
    }
}
