//! Alibaba 2023 (alibaba/clusterdata: `cluster-trace-gpu-v2023`, `openb_pod_list_*.csv`):
//! a CSV with a header naming at least `name`, `num_gpu`, `gpu_milli`, `gpu_spec`, `qos`,
//! `pod_phase`, `creation_time`, `deletion_time`, `scheduled_time` (`cpu_milli` and
//! `memory_mib` are ignored); times are whole seconds since the trace's origin
//! (`spec.start`). The node list (`openb_node_list_*.csv`, the entry's `nodeFile`) is read
//! by [`nodes`]: see there for the Nodes and ResourceFlavors it makes.
//!
//! Mapping: `qos` (`LS`, `BE`, `Burstable`, `Guaranteed`) is the queue, `pod_phase` the
//! class, arrival `creation_time`, runtime `deletion_time − scheduled_time`. One pod of
//! `num_gpu × gpu_milli` thousandths of a GPU (`gpu_milli` is per GPU: `1, 500` is half a
//! GPU, `2, 1000` two whole ones); `gpu_spec` with one type is the node selector. An empty
//! or `0` `scheduled_time` is `never-ran`, an empty `deletion_time` `no-end`.

use super::{Job, Loaded, PodSet, columns, csv_reader, runtime, seconds_ms};

/// Reads an Alibaba 2023 pod list.
///
/// # Errors
/// No header, or a required column missing.
///
/// # Complexity
/// O(rows).
pub fn load(text: &str) -> Result<Loaded, String> {
    let mut rdr = csv_reader(text, true);
    let header = rdr.headers().map_err(|e| e.to_string())?.clone();
    let [
        name,
        num_gpu,
        gpu_milli,
        spec,
        qos,
        phase,
        created,
        deleted,
        scheduled,
    ] = columns(
        &header,
        [
            "name",
            "num_gpu",
            "gpu_milli",
            "gpu_spec",
            "qos",
            "pod_phase",
            "creation_time",
            "deletion_time",
            "scheduled_time",
        ],
    )?;
    let mut out = Loaded::default();
    for rec in rdr.records() {
        let Ok(r) = rec else {
            out.skip("malformed-row");
            continue;
        };
        let f = |i: usize| r.get(i).unwrap_or("").trim();
        if r.len() != header.len() {
            out.skip("malformed-row");
            continue;
        }
        let (Ok(n), Ok(m), Some(sub)) = (
            f(num_gpu).parse::<u64>(),
            f(gpu_milli).parse::<u64>(),
            seconds_ms(f(created)),
        ) else {
            out.skip("malformed-row");
            continue;
        };
        let Some(total) = n.checked_mul(m).filter(|t| *t <= 1 << 40) else {
            out.skip("malformed-row");
            continue;
        };
        if total == 0 {
            out.skip("no-gpu");
            continue;
        }
        let start = seconds_ms(f(scheduled)).filter(|s| *s != 0);
        let rt = match runtime(start, seconds_ms(f(deleted))) {
            Ok(rt) => rt,
            Err(reason) => {
                out.skip(reason);
                continue;
            }
        };
        let s = f(spec);
        let gpu_type = if s.contains('|') {
            out.skip("gpu-spec-alternatives");
            None
        } else {
            Some(s.to_owned()).filter(|s| !s.is_empty())
        };
        out.jobs.push(Job {
            id: f(name).to_owned(),
            fields: [("qos", f(qos).to_owned())].into_iter().collect(),
            status: f(phase).to_owned(),
            submit_ms: sub,
            runtime_ms: rt,
            wait_ms: None,
            priority_class: None,
            pod_sets: vec![PodSet {
                name: "main".into(),
                count: 1,
                gpu_milli: total,
                gpu_type,
            }],
        });
    }
    Ok(out)
}

/// One node of the node list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRow {
    /// `sn`, the node's name.
    pub name: String,
    /// `cpu_milli`.
    pub cpu_milli: u64,
    /// `memory_mib`.
    pub memory_mib: u64,
    /// `gpu`: GPUs on the node.
    pub gpus: u32,
    /// `model`: the GPU model (empty on a CPU node).
    pub model: String,
}

/// Reads an Alibaba 2023 node list (`openb_node_list_*.csv`: `sn, cpu_milli, memory_mib,
/// gpu, model`). The scenario makes of each row a Node (name `sn` sanitised; allocatable
/// `cpu` `<cpu_milli>m`, `memory` `<memory_mib>Mi`, `nvidia.com/gpu` `<gpu>`; label
/// `gpuquota.dev/gpu-type: <model>`, the label the pods' `gpu_spec` selects), and of each
/// GPU model a ResourceFlavor named after it (sanitised: `V100M16` → `v100m16`) with that
/// node label, unless the cluster files have a flavor of that name. Quotas stay the
/// cluster files'. A row that does not parse is counted (`malformed-row`), as is a second
/// node of one name (`duplicate-node`).
///
/// # Errors
/// No header, or a required column missing.
///
/// # Complexity
/// O(rows).
pub fn nodes(
    text: &str,
) -> Result<(Vec<NodeRow>, std::collections::BTreeMap<&'static str, u64>), String> {
    let mut rdr = csv_reader(text, true);
    let header = rdr.headers().map_err(|e| e.to_string())?.clone();
    let [sn, cpu, mem, gpu, model] =
        columns(&header, ["sn", "cpu_milli", "memory_mib", "gpu", "model"])?;
    let mut out = Vec::new();
    let mut skipped = std::collections::BTreeMap::new();
    for rec in rdr.records() {
        let row = rec.ok().filter(|r| r.len() == header.len()).and_then(|r| {
            let f = |i: usize| r.get(i).unwrap_or("").trim().to_owned();
            Some(NodeRow {
                name: Some(super::sanitize(&f(sn))).filter(|n| !n.is_empty())?,
                cpu_milli: f(cpu).parse().ok()?,
                memory_mib: f(mem).parse().ok()?,
                gpus: super::count(&f(gpu))?,
                model: f(model),
            })
        });
        match row {
            Some(r) => out.push(r),
            None => *skipped.entry("malformed-row").or_insert(0) += 1,
        }
    }
    Ok((out, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = "\
name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
openb-pod-0000,12000,16384,1,1000,V100M16,LS,Running,0,12000,10
openb-pod-0001,6000,12288,1,460,,BE,Succeeded,100,900,150
openb-pod-0002,4000,8192,2,1000,V100M16|V100M32,Burstable,Failed,100,900,150
openb-pod-0003,4000,8192,0,0,,LS,Running,100,900,150
openb-pod-0004,4000,8192,1,1000,,LS,Pending,100,,
openb-pod-0005,4000,8192,x,1000,,LS,Pending,100,,
";

    #[test]
    fn alibaba2023_node_list_rows_or_counts() {
        let (n, skipped) = nodes(
            "sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0227,32000,262144,0,\nopenb-node-0001,96000,786432,8,V100M16\nbad,x,1,1,T4\n",
        )
        .unwrap();
        assert_eq!(n.len(), 2);
        assert_eq!(
            n[1],
            NodeRow {
                name: "openb-node-0001".into(),
                cpu_milli: 96_000,
                memory_mib: 786_432,
                gpus: 8,
                model: "V100M16".into()
            }
        );
        assert_eq!(skipped.get("malformed-row"), Some(&1));
        assert!(nodes("sn,gpu\n").unwrap_err().contains("cpu_milli"));
    }

    #[test]
    fn alibaba2023_reads_fractions_and_specs() {
        let l = load(FIXTURE).unwrap();
        assert_eq!(l.jobs.len(), 3);
        assert_eq!(l.jobs[0].pod_sets[0].gpu_type.as_deref(), Some("V100M16"));
        assert_eq!(l.jobs[0].runtime_ms, 11_990_000);
        assert_eq!(l.jobs[1].pod_sets[0].gpu_milli, 460);
        assert_eq!(l.jobs[1].fields["qos"], "BE");
        assert_eq!(l.jobs[1].submit_ms, 100_000);
        assert_eq!(l.jobs[2].pod_sets[0].gpu_milli, 2000);
        assert_eq!(l.jobs[2].pod_sets[0].gpu_type, None);
        let skipped: Vec<_> = l.skipped.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(
            skipped,
            [
                ("gpu-spec-alternatives", 1),
                ("malformed-row", 1),
                ("never-ran", 1),
                ("no-gpu", 1)
            ]
        );
    }
}
