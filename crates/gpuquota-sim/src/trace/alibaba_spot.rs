//! Alibaba's spot-GPU trace (alibaba/clusterdata: `cluster-trace-v2026-spot-gpu`,
//! `job_info_df.csv`): a CSV with a header naming at least `job_name`, `organization`,
//! `gpu_model`, `gpu_request`, `worker_num`, `submit_time`, `duration`, `job_type`
//! (`cpu_request` is ignored); `submit_time` is whole seconds since the trace's first
//! submission (the origin, `spec.start`), `duration` the job's run in seconds.
//!
//! Mapping: `organization` (the cost organisation: a department) is the queue, the only
//! `queueBy` field. `job_type` is the class (`HP`, the high-priority jobs with strict SLOs,
//! or `Spot`, the jobs running opportunistically on spare GPUs) and the job's **priority
//! class**: each workload names the WorkloadPriorityClass of the sanitised `job_type`
//! (`hp`, `spot`) and takes its value when the cluster files define one of that name, so a
//! platform whose `hp` class outranks `spot` lets HP jobs preempt Spot ones; without such a
//! class the workload has no priority class (priority 0) and only the class column tells
//! the two apart. `worker_num` pods of `gpu_request` GPUs each (a decimal request is read in
//! thousandths: `0.5` is `500m`); `gpu_model` is the pods' node selector. Arrival
//! `submit_time`, runtime `duration`. The trace records no start, so there is no recorded
//! wait. A row with `gpu_request` or `worker_num` 0 is `no-gpu`; a negative `duration` is
//! `end-before-start`.
//!
//! The node list `node_info_df.csv` (`node_name`, `gpu_model`, `gpu_capacity_num`,
//! `cpu_num`) is not read: quotas and flavors come from the cluster files.

use super::{Job, Loaded, PodSet, columns, count, csv_reader, next_row, seconds_ms};

/// Reads an Alibaba spot-GPU `job_info_df.csv`.
///
/// # Errors
/// No header, or a required column missing.
///
/// # Complexity
/// O(rows).
pub fn load(text: &str) -> Result<Loaded, String> {
    let mut rdr = csv_reader(text, true);
    let header = rdr.headers().map_err(|e| e.to_string())?.clone();
    let [name, org, model, gpu, workers, submit, duration, kind] = columns(
        &header,
        [
            "job_name",
            "organization",
            "gpu_model",
            "gpu_request",
            "worker_num",
            "submit_time",
            "duration",
            "job_type",
        ],
    )?;
    let mut out = Loaded::default();
    let mut r = csv::StringRecord::new();
    while next_row(&mut rdr, &mut r, header.len(), &mut out) {
        let f = |i: usize| r.get(i).unwrap_or("").trim();
        let (Some(per_milli), Some(n), Some(sub), Some(rt)) = (
            seconds_ms(f(gpu)).filter(|m| *m >= 0),
            count(f(workers)),
            seconds_ms(f(submit)),
            seconds_ms(f(duration)),
        ) else {
            out.skip("malformed-row");
            continue;
        };
        if per_milli == 0 || n == 0 {
            out.skip("no-gpu");
            continue;
        }
        if rt < 0 {
            out.skip("end-before-start");
            continue;
        }
        let job_type = f(kind).to_owned();
        let class = super::sanitize(&job_type);
        out.jobs.push(Job {
            id: f(name).to_owned(),
            fields: [("organization", f(org).to_owned())].into_iter().collect(),
            status: job_type,
            submit_ms: sub,
            runtime_ms: rt,
            wait_ms: None,
            priority_class: Some(class).filter(|c| !c.is_empty()),
            pod_sets: vec![PodSet {
                name: "main".into(),
                count: n,
                gpu_milli: per_milli.unsigned_abs(),
                gpu_type: Some(f(model).to_owned()).filter(|m| !m.is_empty()),
            }],
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // written for the test, in the trace's columns
    const FIXTURE: &str = "\
job_name,organization,gpu_model,cpu_request,gpu_request,worker_num,submit_time,duration,job_type
100,13,A10,20,1,1,0,2764799,HP
101,57,A100-SXM4-80GB,15,1,16,9589663,41060,Spot
102,57,A100-SXM4-80GB,15,0.5,2,60,120,Spot
103,7,A10,4,0,1,60,120,HP
104,7,A10,4,1,1,sixty,120,HP
105,7,,4,2,1,70,-5,HP
";

    #[test]
    fn alibaba_spot_reads_departments_and_priority_classes() {
        let l = load(FIXTURE).unwrap();
        assert_eq!(l.jobs.len(), 3);
        let j = &l.jobs[0];
        assert_eq!(j.id, "100");
        assert_eq!(j.fields["organization"], "13");
        assert_eq!(j.status, "HP");
        assert_eq!(j.priority_class.as_deref(), Some("hp"));
        assert_eq!((j.submit_ms, j.runtime_ms), (0, 2_764_799_000));
        assert_eq!(j.wait_ms, None);
        assert_eq!(j.pod_sets[0].gpu_type.as_deref(), Some("A10"));
        let s = &l.jobs[1];
        assert_eq!(s.priority_class.as_deref(), Some("spot"));
        assert_eq!((s.submit_ms, s.runtime_ms), (9_589_663_000, 41_060_000));
        assert_eq!((s.pod_sets[0].count, s.pod_sets[0].gpu_milli), (16, 1000));
        // half a GPU per worker
        assert_eq!(
            (l.jobs[2].pod_sets[0].count, l.jobs[2].pod_sets[0].gpu_milli),
            (2, 500)
        );
        let skipped: Vec<_> = l.skipped.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(
            skipped,
            [("end-before-start", 1), ("malformed-row", 1), ("no-gpu", 1)]
        );
    }

    #[test]
    fn alibaba_spot_without_job_type_is_an_error() {
        let e =
            load("job_name,organization,gpu_model,gpu_request,worker_num,submit_time,duration\n")
                .unwrap_err();
        assert!(e.contains("job_type"), "{e}");
    }
}
