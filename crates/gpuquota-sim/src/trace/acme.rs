//! AcmeTrace (InternLM/AcmeTrace: `data/job_trace/trace_seren.csv`, `trace_kalos.csv`): a
//! CSV with a header naming at least `job_id`, `user`, `node_num`, `gpu_num`, `type`,
//! `state`, `submit_time`, `start_time`, `end_time`, `queue` (`cpu_num`, `duration`,
//! `gpu_time` and Kalos' `mem_per_pod_GB`, `shared_mem_per_pod`, `fail_time`, `stop_time`
//! are ignored). There is no `vc` column. Times carry their UTC offset
//! (`2023-03-01 00:18:22+08:00` in Seren, `+00:00` in Kalos) and are read as the instants
//! they name, so `spec.start` is compared in UTC (`2023-03-01T00:00:00+08:00` is
//! `2023-02-28T16:00:00Z`); a time without an offset is read as UTC.
//!
//! Mapping: `type` (the job's stage of LLM development: `Pretrain`, `SFT`, `Evaluation`,
//! `Debug`, `MLLM`, `Other`) or `user` is the queue (`type` by default), `state` the class
//! (`COMPLETED`, `FAILED`, `CANCELLED`, `TIMEOUT`, `NODE_FAIL`), arrival `submit_time`,
//! runtime `end_time − start_time`. `gpu_num` GPUs split evenly over `node_num` pods when
//! it divides, else one pod with all of them; `gpu_num` 0 (a CPU job) is `no-gpu`.
//!
//! **Recorded wait**: `queue`, the seconds the job waited between submission and start as
//! the cluster's scheduler recorded them (an integer in Seren, a decimal such as `10.0` in
//! Kalos), is kept as the job's recorded wait; when the cell is empty or unreadable the
//! wait is `start_time − submit_time` (the same figure, as the trace defines it).

use gpuquota_model::Timestamp;

use super::{
    Job, Loaded, PodSet, columns, count, csv_reader, next_row, runtime, seconds_ms, wall_clock_ms,
};

/// A time with or without a UTC offset, as unix ms (an offset-less time is UTC).
///
/// ```
/// use gpuquota_sim::trace::acme::time_ms;
/// assert_eq!(time_ms("1970-01-01 08:00:00+08:00"), Some(0));
/// assert_eq!(time_ms("1970-01-01 00:01:00"), Some(60_000));
/// assert_eq!(time_ms(""), None);
/// ```
pub fn time_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    if s.len() == 19 {
        return wall_clock_ms(s);
    }
    let t = Timestamp::parse(s).ok()?;
    i64::try_from(t.unix_nanos().div_euclid(1_000_000)).ok()
}

/// Reads an AcmeTrace job trace.
///
/// # Errors
/// No header, or a required column missing.
///
/// # Complexity
/// O(rows).
pub fn load(text: &str) -> Result<Loaded, String> {
    let mut rdr = csv_reader(text, true);
    let header = rdr.headers().map_err(|e| e.to_string())?.clone();
    let [id, user, nodes, gpu, kind, state, submit, start, end, queue] = columns(
        &header,
        [
            "job_id",
            "user",
            "node_num",
            "gpu_num",
            "type",
            "state",
            "submit_time",
            "start_time",
            "end_time",
            "queue",
        ],
    )?;
    let mut out = Loaded::default();
    let mut r = csv::StringRecord::new();
    while next_row(&mut rdr, &mut r, header.len(), &mut out) {
        let f = |i: usize| r.get(i).unwrap_or("").trim();
        let (Some(g), Some(n), Some(sub)) = (count(f(gpu)), count(f(nodes)), time_ms(f(submit)))
        else {
            out.skip("malformed-row");
            continue;
        };
        if g == 0 {
            out.skip("no-gpu");
            continue;
        }
        let started = time_ms(f(start));
        let rt = match runtime(started, time_ms(f(end))) {
            Ok(rt) => rt,
            Err(reason) => {
                out.skip(reason);
                continue;
            }
        };
        let wait = seconds_ms(f(queue))
            .filter(|w| *w >= 0)
            .or_else(|| started.and_then(|s| s.checked_sub(sub)).filter(|w| *w >= 0));
        let (pods, per) = if n >= 1 && g % n == 0 {
            (n, g / n)
        } else {
            (1, g)
        };
        out.jobs.push(Job {
            id: f(id).to_owned(),
            fields: [("type", f(kind).to_owned()), ("user", f(user).to_owned())]
                .into_iter()
                .collect(),
            status: f(state).to_owned(),
            submit_ms: sub,
            runtime_ms: rt,
            wait_ms: wait,
            priority_class: None,
            pod_sets: vec![PodSet {
                name: "main".into(),
                count: pods,
                gpu_milli: u64::from(per) * 1000,
                gpu_type: None,
            }],
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // written for the test: Seren's columns (offset +08:00), then Kalos' (+00:00, decimal
    // queue, extra columns)
    const SEREN: &str = "\
job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue,gpu_time
a1,u1,2,16,64,Pretrain,COMPLETED,2023-03-01 08:00:00+08:00,2023-03-01 08:00:30+08:00,2023-03-01 09:00:30+08:00,3600,30,57600.0
a2,u2,2,3,8,SFT,FAILED,2023-03-01 08:10:00+08:00,2023-03-01 08:12:00+08:00,2023-03-01 08:13:00+08:00,60,,180.0
a3,u1,1,0,8,Debug,COMPLETED,2023-03-01 08:10:00+08:00,2023-03-01 08:10:00+08:00,2023-03-01 08:11:00+08:00,60,0,0.0
a4,u3,1,8,8,Evaluation,CANCELLED,2023-03-01 08:20:00+08:00,,,0,0,0.0
a5,u3,1,8,8,Evaluation,COMPLETED,yesterday,2023-03-01 08:20:00+08:00,2023-03-01 08:21:00+08:00,60,0,480.0
";

    const KALOS: &str = "\
job_id,user,node_num,gpu_num,cpu_num,mem_per_pod_GB,shared_mem_per_pod,type,state,submit_time,start_time,end_time,fail_time,stop_time,duration,queue,gpu_time
dlc1,uf1,8,64,960,1000,100.0,Other,CANCELLED,2023-05-17 11:28:42+00:00,2023-05-17 11:28:54+00:00,2023-05-17 11:30:04+00:00,,2023-05-17 11:30:04+00:00,70,12.0,4480.0
";

    #[test]
    fn acme_reads_offsets_recorded_waits_and_counts_the_rest() {
        let l = load(SEREN).unwrap();
        assert_eq!(l.jobs.len(), 2);
        let a1 = &l.jobs[0];
        // 2023-03-01 08:00:00+08:00 = 2023-03-01T00:00:00Z = 1,677,628,800 s
        assert_eq!(a1.submit_ms, 1_677_628_800_000);
        assert_eq!(a1.runtime_ms, 3_600_000);
        assert_eq!(a1.wait_ms, Some(30_000));
        assert_eq!(a1.fields["type"], "Pretrain");
        assert_eq!(a1.fields["user"], "u1");
        assert_eq!(a1.status, "COMPLETED");
        assert_eq!((a1.pod_sets[0].count, a1.pod_sets[0].gpu_milli), (2, 8000));
        // an empty `queue` cell: start − submit = 2 minutes; 3 GPUs over 2 nodes: one pod
        let a2 = &l.jobs[1];
        assert_eq!(a2.wait_ms, Some(120_000));
        assert_eq!(a2.runtime_ms, 60_000);
        assert_eq!((a2.pod_sets[0].count, a2.pod_sets[0].gpu_milli), (1, 3000));
        let skipped: Vec<_> = l.skipped.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(
            skipped,
            [("malformed-row", 1), ("never-ran", 1), ("no-gpu", 1)]
        );
        let k = load(KALOS).unwrap();
        let d = &k.jobs[0];
        // 2023-05-17T11:28:42Z = 1,684,322,922 s
        assert_eq!(d.submit_ms, 1_684_322_922_000);
        assert_eq!(d.wait_ms, Some(12_000));
        assert_eq!(d.runtime_ms, 70_000);
        assert_eq!((d.pod_sets[0].count, d.pod_sets[0].gpu_milli), (8, 8000));
        assert_eq!(d.fields["type"], "Other");
    }

    #[test]
    fn acme_without_the_queue_column_is_an_error() {
        let e = load("job_id,user,node_num,gpu_num,type,state,submit_time,start_time,end_time\n")
            .unwrap_err();
        assert!(e.contains("\"queue\""), "{e}");
    }
}
