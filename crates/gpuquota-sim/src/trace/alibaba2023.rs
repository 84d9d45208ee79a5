//! Alibaba 2023 (alibaba/clusterdata: `cluster-trace-gpu-v2023`, `openb_pod_list_*.csv`):
//! a CSV with a header naming at least `name`, `num_gpu`, `gpu_milli`, `gpu_spec`, `qos`,
//! `pod_phase`, `creation_time`, `deletion_time`, `scheduled_time` (`cpu_milli` and
//! `memory_mib` are ignored); times are whole seconds since the trace's origin
//! (`spec.start`). The node list (`openb_node_list_*.csv`) is not read: nodes and quotas
//! come from the cluster files.
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
