//! Alibaba PAI 2020 (alibaba/clusterdata: `cluster-trace-gpu-v2020`): two CSV files without
//! a header (a first row starting `job_name` is taken as a header and skipped):
//! - `pai_job_table.csv`: `job_name, inst_id, user, status, start_time, end_time`;
//! - `pai_task_table.csv`: `job_name, task_name, inst_num, status, start_time, end_time,
//!   plan_cpu, plan_mem, plan_gpu, gpu_type`.
//!
//! Times are seconds (decimals allowed) since the trace's origin, which is `spec.start`.
//!
//! Mapping: `user` is the queue, the job's `status` the class (`Terminated`, `Failed`,
//! `Running`, …), arrival the job's `start_time` (its submission); the run spans the
//! job's GPU tasks, from the earliest task `start_time` to the latest `end_time`. Each task
//! with `plan_gpu` > 0 is a pod set named after the task (`worker`, `ps`, …): `inst_num`
//! pods, `plan_gpu` percent of a GPU each (`50` is `500m`, `800` is 8 GPUs), node selector
//! `gpu_type`. A job without task rows is `no-task`; a task row naming no job is counted as
//! `task-without-job`; a job whose tasks ask for no GPU is `no-gpu`.

use std::collections::BTreeMap;

use super::{Job, Loaded, PodSet, count, csv_reader, runtime, sanitize, seconds_ms};

struct Task {
    name: String,
    inst: u32,
    start: Option<i64>,
    end: Option<i64>,
    gpu_milli: u64,
    gpu_type: String,
}

fn plan_gpu_milli(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.is_empty() {
        return Some(0);
    }
    let f: f64 = s.parse().ok()?;
    if !f.is_finite() || !(0.0..1.0e12).contains(&f) {
        return None;
    }
    Some((f * 10.0).round() as u64)
}

/// Reads PAI's job table and task table.
///
/// # Errors
/// Never for rows (each bad row is counted); kept fallible like the other loaders.
///
/// # Complexity
/// O((jobs + tasks) log jobs).
pub fn load(jobs: &str, tasks: &str) -> Result<Loaded, String> {
    let mut out = Loaded::default();
    let mut by_job: BTreeMap<String, Vec<Task>> = BTreeMap::new();
    for rec in csv_reader(tasks, false).records() {
        let Ok(r) = rec else {
            out.skip("malformed-row");
            continue;
        };
        let f = |i: usize| r.get(i).unwrap_or("").trim();
        if f(0) == "job_name" {
            continue;
        }
        if r.len() != 10 {
            out.skip("malformed-row");
            continue;
        }
        let (Some(inst), Some(gpu_milli)) = (count(f(2)), plan_gpu_milli(f(8))) else {
            out.skip("malformed-row");
            continue;
        };
        by_job.entry(f(0).to_owned()).or_default().push(Task {
            name: f(1).to_owned(),
            inst,
            start: seconds_ms(f(4)),
            end: seconds_ms(f(5)),
            gpu_milli,
            gpu_type: f(9).to_owned(),
        });
    }
    for rec in csv_reader(jobs, false).records() {
        let Ok(r) = rec else {
            out.skip("malformed-row");
            continue;
        };
        let f = |i: usize| r.get(i).unwrap_or("").trim();
        if f(0) == "job_name" {
            continue;
        }
        if r.len() != 6 {
            out.skip("malformed-row");
            continue;
        }
        let Some(sub) = seconds_ms(f(4)) else {
            out.skip("never-ran");
            continue;
        };
        let Some(ts) = by_job.remove(f(0)) else {
            out.skip("no-task");
            continue;
        };
        let gpu: Vec<&Task> = ts
            .iter()
            .filter(|t| t.gpu_milli > 0 && t.inst > 0)
            .collect();
        if gpu.is_empty() {
            out.skip("no-gpu");
            continue;
        }
        let start = gpu
            .iter()
            .map(|t| t.start)
            .try_fold(i64::MAX, |m, s| s.map(|s| m.min(s)));
        let end = gpu
            .iter()
            .map(|t| t.end)
            .try_fold(i64::MIN, |m, e| e.map(|e| m.max(e)));
        let rt = match runtime(start, end) {
            Ok(rt) => rt,
            Err(reason) => {
                out.skip(reason);
                continue;
            }
        };
        let mut sets: Vec<PodSet> = Vec::new();
        for (i, t) in gpu.iter().enumerate() {
            let mut name = sanitize(&t.name);
            if name.is_empty() || sets.iter().any(|s| s.name == name) {
                name = format!("task-{i}");
            }
            sets.push(PodSet {
                name,
                count: t.inst,
                gpu_milli: t.gpu_milli,
                gpu_type: Some(t.gpu_type.clone()).filter(|g| !g.is_empty()),
            });
        }
        out.jobs.push(Job {
            id: f(0).to_owned(),
            fields: [("user", f(2).to_owned())].into_iter().collect(),
            status: f(3).to_owned(),
            submit_ms: sub,
            runtime_ms: rt,
            wait_ms: None,
            priority_class: None,
            pod_sets: sets,
        });
    }
    let orphans: usize = by_job.values().map(Vec::len).sum();
    if orphans > 0 {
        *out.skipped.entry("task-without-job").or_insert(0) += orphans as u64;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const JOBS: &str = "\
a1,i1,u1,Terminated,100,400
a2,i2,u2,Failed,200,300
a3,i3,u1,Terminated,300,400
a4,i4,u1,Running,,
a5,i5,u1
";
    const TASKS: &str = "\
a1,worker,4,Terminated,110,390,600,29.0,50,V100
a1,ps,1,Terminated,105,395,600,29.0,,
a1,chief,1,Terminated,101,400.5,600,29.0,100,V100
a2,tensorflow,1,Failed,200,290,600,29.0,0,
zz,worker,1,Terminated,1,2,600,29.0,100,T4
";

    #[test]
    fn pai_joins_tasks_and_reads_percent_gpus() {
        let l = load(JOBS, TASKS).unwrap();
        assert_eq!(l.jobs.len(), 1);
        let j = &l.jobs[0];
        assert_eq!((j.id.as_str(), j.status.as_str()), ("a1", "Terminated"));
        assert_eq!(j.submit_ms, 100_000);
        // GPU tasks only: worker 110..390, chief 101..400.5
        assert_eq!(j.runtime_ms, 299_500);
        assert_eq!(
            j.pod_sets
                .iter()
                .map(|p| (p.name.as_str(), p.count, p.gpu_milli, p.gpu_type.as_deref()))
                .collect::<Vec<_>>(),
            [
                ("worker", 4, 500, Some("V100")),
                ("chief", 1, 1000, Some("V100"))
            ]
        );
        let skipped: Vec<_> = l.skipped.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(
            skipped,
            [
                ("malformed-row", 1),
                ("never-ran", 1),
                ("no-gpu", 1),
                ("no-task", 1),
                ("task-without-job", 1)
            ]
        );
    }
}
