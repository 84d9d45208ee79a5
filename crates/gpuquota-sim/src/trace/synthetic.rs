//! Synthetic traces of the public traces' shapes and sizes, for benchmarks (the public
//! traces themselves may not be redistributed). Seeded and deterministic: the same
//! arguments give the same bytes.

use std::fmt::Write as _;

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn wall(secs: i64) -> String {
    crate::scenario::at_ms(gpuquota_model::Timestamp::EPOCH, secs * 1000)
        .to_string()
        .replace('T', " ")
        .trim_end_matches('Z')
        .to_owned()
}

/// The start of the synthetic Philly trace (Philly's first submission day).
pub const PHILLY_START: &str = "2017-10-03T00:00:00Z";

/// A Philly `cluster_job_log` of `jobs` jobs over `vcs` virtual clusters `vc0…`, submitted
/// over 75 days from [`PHILLY_START`] (Philly's span); GPUs 1 (70 %), 2, 4, 8 or 16 per
/// job on machines of 8 GPUs, runtimes from a minute to two days (log-uniform), status
/// `Pass` / `Killed` / `Failed` 70 / 20 / 10 %, every tenth job with a failed first attempt.
///
/// # Complexity
/// O(jobs).
pub fn philly(jobs: u32, vcs: u32, seed: u64) -> String {
    let mut r = Rng(seed);
    let t0 = 1_506_988_800i64; // 2017-10-03T00:00:00Z
    let span = 75 * 86_400i64;
    let mut out = String::with_capacity(jobs as usize * 330);
    out.push('[');
    for i in 0..jobs {
        let submit = t0 + (i64::from(i) * span) / i64::from(jobs.max(1)) + r.below(30) as i64;
        let gpus: u64 = match r.below(100) {
            0..70 => 1,
            70..80 => 2,
            80..90 => 4,
            90..98 => 8,
            _ => 16,
        };
        // log-uniform 60 s .. 172,800 s
        let runtime = (60.0 * (2880.0f64).powf(r.below(10_000) as f64 / 10_000.0)) as i64;
        let status = match r.below(10) {
            0..7 => "Pass",
            7..9 => "Killed",
            _ => "Failed",
        };
        let mut detail = String::new();
        let mut left = gpus;
        let mut m = 0;
        while left > 0 {
            let here = left.min(8);
            if m > 0 {
                detail.push(',');
            }
            let list: Vec<String> = (0..here).map(|g| format!("\"gpu{g}\"")).collect();
            let _ = write!(
                detail,
                "{{\"ip\":\"m{}\",\"gpus\":[{}]}}",
                r.below(500),
                list.join(",")
            );
            left -= here;
            m += 1;
        }
        let start = submit + r.below(600) as i64;
        let mut attempts = String::new();
        if i % 10 == 9 {
            let _ = write!(
                attempts,
                "{{\"start_time\":\"{}\",\"end_time\":\"{}\",\"detail\":[{detail}]}},",
                wall(start),
                wall(start + 30)
            );
        }
        let _ = write!(
            attempts,
            "{{\"start_time\":\"{}\",\"end_time\":\"{}\",\"detail\":[{detail}]}}",
            wall(start + 60),
            wall(start + 60 + runtime)
        );
        if i > 0 {
            out.push(',');
        }
        let _ = write!(
            out,
            "\n{{\"status\":\"{status}\",\"vc\":\"vc{}\",\"jobid\":\"application_1506638472019_{i}\",\"attempts\":[{attempts}],\"submitted_time\":\"{}\",\"user\":\"u{}\"}}",
            r.below(u64::from(vcs.max(1))),
            wall(submit),
            r.below(300)
        );
    }
    out.push_str("\n]\n");
    out
}

/// The start of the synthetic Helios trace (Venus' first month, April 2020).
pub const HELIOS_START: &str = "2020-04-01T00:00:00Z";

/// A Helios `cluster_log.csv` of `jobs` jobs over `vcs` virtual clusters `vc0…`, submitted
/// over 183 days from [`HELIOS_START`] (Venus' six months); GPUs 0 (a CPU job, 5 %), 1
/// (60 %), 2, 4, 8 or 16 per job on nodes of 8 GPUs, runtimes from ten seconds to three days
/// (log-uniform), states `COMPLETED` / `CANCELLED` / `FAILED` / `TIMEOUT` 65 / 20 / 13 / 2 %.
///
/// # Complexity
/// O(jobs).
pub fn helios(jobs: u32, vcs: u32, seed: u64) -> String {
    let mut r = Rng(seed);
    let t0 = 1_585_699_200i64; // 2020-04-01T00:00:00Z
    let span = 183 * 86_400i64;
    let mut out = String::with_capacity(jobs as usize * 130 + 120);
    out.push_str("job_id,user,vc,jobname,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n");
    for i in 0..jobs {
        let submit = t0 + (i64::from(i) * span) / i64::from(jobs.max(1)) + r.below(30) as i64;
        let gpus: u64 = match r.below(100) {
            0..5 => 0,
            5..65 => 1,
            65..77 => 2,
            77..87 => 4,
            87..97 => 8,
            _ => 16,
        };
        let nodes = gpus.div_ceil(8).max(1);
        let runtime = (10.0 * (25_920.0f64).powf(r.below(10_000) as f64 / 10_000.0)) as i64;
        let state = match r.below(100) {
            0..65 => "COMPLETED",
            65..85 => "CANCELLED",
            85..98 => "FAILED",
            _ => "TIMEOUT",
        };
        let queued = r.below(300) as i64;
        let start = submit + queued;
        let _ = writeln!(
            out,
            "{i},u{},vc{},job{i},{gpus},{},{nodes},{state},{},{},{},{runtime},{queued}",
            r.below(200),
            r.below(u64::from(vcs.max(1))),
            gpus.max(1) * 4,
            wall(submit),
            wall(start),
            wall(start + runtime),
        );
    }
    out
}

/// A Helios `cluster_gpu_number.csv` for [`helios`]: one row per day of the trace's 183
/// (`date,vc0,…,total`), VC `v` holding `base + 8·v` GPUs, plus 8 more from the second
/// month on (capacity grows as in the real trace).
///
/// # Complexity
/// O(days × vcs).
pub fn helios_gpu_number(vcs: u32, base: u64) -> String {
    let mut out = String::from("date");
    for v in 0..vcs {
        let _ = write!(out, ",vc{v}");
    }
    out.push_str(",total\n");
    for day in 0..183i64 {
        let date = wall(1_585_699_200 + day * 86_400);
        let _ = write!(out, "{}", &date[..10]);
        let mut total = 0;
        for v in 0..u64::from(vcs) {
            let g = base + 8 * v + if day >= 30 { 8 } else { 0 };
            total += g;
            let _ = write!(out, ",{g}");
        }
        let _ = writeln!(out, ",{total}");
    }
    out
}

/// Alibaba PAI 2020's two tables, `(pai_job_table.csv, pai_task_table.csv)`, of `jobs` jobs
/// of `users` users `u0…` over 60 days (seconds since the origin, as PAI writes them):
/// each job a `worker` task (1 to 8 instances, `plan_gpu` 25, 50, 100 or 800 percent, GPU
/// type `V100`, `P100`, `T4` or none) and every fourth job a `ps` task without GPUs; status
/// `Terminated` / `Failed` 85 / 15 %.
///
/// # Complexity
/// O(jobs).
pub fn pai(jobs: u32, users: u32, seed: u64) -> (String, String) {
    let mut r = Rng(seed);
    let span = 60 * 86_400i64;
    let mut job_t = String::with_capacity(jobs as usize * 40);
    let mut task_t = String::with_capacity(jobs as usize * 80);
    for i in 0..jobs {
        let submit = (i64::from(i) * span) / i64::from(jobs.max(1)) + r.below(30) as i64;
        let runtime = (30.0 * (5760.0f64).powf(r.below(10_000) as f64 / 10_000.0)) as i64;
        let status = if r.below(100) < 85 {
            "Terminated"
        } else {
            "Failed"
        };
        let start = submit + r.below(120) as i64;
        let _ = writeln!(
            job_t,
            "j{i},i{i},u{},{status},{submit},{}",
            r.below(u64::from(users.max(1))),
            start + runtime
        );
        let plan = [25, 50, 100, 800][r.below(4) as usize];
        let gtype = ["V100", "P100", "T4", ""][r.below(4) as usize];
        let _ = writeln!(
            task_t,
            "j{i},worker,{},{status},{start},{},600,29.0,{plan},{gtype}",
            1 + r.below(8),
            start + runtime
        );
        if i % 4 == 0 {
            let _ = writeln!(
                task_t,
                "j{i},ps,1,{status},{start},{},600,29.0,,",
                start + runtime
            );
        }
    }
    (job_t, task_t)
}

/// An Alibaba 2023 `openb_pod_list_*.csv` of `pods` pods over 90 days (seconds since the
/// origin): GPUs 0 (a CPU pod, 10 %), a fraction (`num_gpu` 1, `gpu_milli` 100–900, 40 %)
/// or 1, 2, 4, 8 whole ones; `gpu_spec` one type, two alternatives or none; `qos` `LS`,
/// `BE`, `Burstable`, `Guaranteed`; phase `Running`, `Succeeded`, `Failed`.
///
/// # Complexity
/// O(pods).
pub fn alibaba2023(pods: u32, seed: u64) -> String {
    let mut r = Rng(seed);
    let span = 90 * 86_400i64;
    let mut out = String::with_capacity(pods as usize * 90 + 120);
    out.push_str("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n");
    for i in 0..pods {
        let created = (i64::from(i) * span) / i64::from(pods.max(1)) + r.below(30) as i64;
        let (n, m) = match r.below(100) {
            0..10 => (0, 0),
            10..50 => (1, 100 + 100 * r.below(9)),
            50..80 => (1, 1000),
            80..90 => (2, 1000),
            90..97 => (4, 1000),
            _ => (8, 1000),
        };
        let spec = ["V100M16", "V100M32", "T4", "V100M16|V100M32", ""][r.below(5) as usize];
        let qos = ["LS", "BE", "Burstable", "Guaranteed"][r.below(4) as usize];
        let phase = ["Running", "Succeeded", "Failed"][r.below(3) as usize];
        let sched = created + 1 + r.below(60) as i64;
        let runtime = (60.0 * (1440.0f64).powf(r.below(10_000) as f64 / 10_000.0)) as i64;
        let _ = writeln!(
            out,
            "openb-pod-{i:06},{},{},{n},{m},{spec},{qos},{phase},{created},{},{sched}",
            1000 * (1 + r.below(32)),
            1024 * (1 + r.below(64)),
            sched + runtime
        );
    }
    out
}

/// Kueue objects for a synthetic trace: one ResourceFlavor `gpu`, one Cohort `all`, and
/// ClusterQueues `vc0…` sharing `total_gpus` `nvidia.com/gpu` (the remainder to `vc0`).
pub fn cluster_queues(vcs: u32, total_gpus: u64) -> String {
    let mut out = String::from(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: gpu}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: all}\n",
    );
    let vcs = vcs.max(1);
    let each = total_gpus / u64::from(vcs);
    for v in 0..vcs {
        let q = if v == 0 {
            each + total_gpus % u64::from(vcs)
        } else {
            each
        };
        let _ = write!(
            out,
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: vc{v}}}\nspec:\n  cohort: all\n  namespaceSelector: {{}}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{{name: gpu, resources: [{{name: nvidia.com/gpu, nominalQuota: {q}}}]}}]\n"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_philly_reads_back_whole() {
        let text = philly(200, 14, 7);
        assert_eq!(text, philly(200, 14, 7));
        let l = super::super::philly::load(&text).unwrap();
        assert_eq!(l.jobs.len(), 200);
        assert!(l.skipped.is_empty());
        let vcs: std::collections::BTreeSet<&str> =
            l.jobs.iter().map(|j| j.fields["vc"].as_str()).collect();
        assert_eq!(vcs.len(), 14);
    }

    #[test]
    fn synthetic_helios_reads_back_with_cpu_jobs_counted() {
        let text = helios(400, 27, 3);
        assert_eq!(text, helios(400, 27, 3));
        let l = super::super::helios::load(&text).unwrap();
        let cpu = l.skipped.get("no-gpu").copied().unwrap_or(0);
        assert!(cpu > 0);
        assert_eq!(l.jobs.len() as u64 + cpu, 400);
        assert_eq!(l.skipped.len(), 1, "{:?}", l.skipped);
        let g = helios_gpu_number(3, 8);
        assert!(g.starts_with("date,vc0,vc1,vc2,total\n2020-04-01,8,16,24,48\n"));
        assert_eq!(g.lines().count(), 184);
    }

    /// Writes a Helios-Venus-sized scenario (250,000 jobs, 27 VCs) into
    /// `$GPUQUOTA_TRACE_DIR`: `cluster.yaml`, `cluster_log.csv`, `cluster_gpu_number.csv`,
    /// `helios.yaml`.
    #[test]
    #[ignore = "writes a full-size trace; run with GPUQUOTA_TRACE_DIR set"]
    fn write_helios_sized_trace() {
        let dir = std::path::PathBuf::from(
            std::env::var("GPUQUOTA_TRACE_DIR").expect("GPUQUOTA_TRACE_DIR"),
        );
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cluster_log.csv"), helios(250_000, 27, 1)).unwrap();
        std::fs::write(
            dir.join("cluster_gpu_number.csv"),
            helios_gpu_number(27, 16),
        )
        .unwrap();
        std::fs::write(dir.join("cluster.yaml"), cluster_queues(27, 27 * 120)).unwrap();
        std::fs::write(
            dir.join("helios.yaml"),
            format!("apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: helios-sized}}\nspec:\n  engine: kueue\n  cluster: [cluster.yaml]\n  start: \"{HELIOS_START}\"\n  workloads:\n  - trace: {{format: helios, file: cluster_log.csv, gpuNumberFile: cluster_gpu_number.csv}}\n"),
        )
        .unwrap();
    }

    /// Every loader reads a generated trace of its public trace's full size: Philly's
    /// 117,000 jobs, Helios Venus' ~250,000, PAI 2020's 1,055,501 jobs and Alibaba 2023's
    /// 8,152 pods (`openb_pod_list_default.csv`), every row used or counted by reason.
    #[test]
    #[ignore = "generates and reads full-size traces (a few seconds in release, about a minute in debug)"]
    fn every_loader_reads_a_full_size_generated_trace() {
        let l = super::super::philly::load(&philly(117_000, 14, 1)).unwrap();
        assert_eq!(l.jobs.len(), 117_000);
        assert!(l.skipped.is_empty());
        let l = super::super::helios::load(&helios(250_000, 27, 1)).unwrap();
        assert_eq!(l.jobs.len() as u64 + l.skipped["no-gpu"], 250_000);
        let (jobs, tasks) = pai(1_055_501, 1_000, 1);
        let l = super::super::pai::load(&jobs, &tasks).unwrap();
        assert_eq!(l.jobs.len(), 1_055_501);
        assert!(l.skipped.is_empty(), "{:?}", l.skipped);
        let l = super::super::alibaba2023::load(&alibaba2023(8_152, 1)).unwrap();
        let kept_or_skipped = l.jobs.len() as u64 + l.skipped.get("no-gpu").copied().unwrap_or(0);
        assert_eq!(kept_or_skipped, 8_152);
        assert!(l.skipped.contains_key("gpu-spec-alternatives"));
    }

    #[test]
    fn synthetic_pai_and_alibaba2023_read_back() {
        let (jobs, tasks) = pai(300, 20, 5);
        let l = super::super::pai::load(&jobs, &tasks).unwrap();
        assert_eq!(l.jobs.len(), 300);
        assert!(l.skipped.is_empty(), "{:?}", l.skipped);
        let l = super::super::alibaba2023::load(&alibaba2023(500, 5)).unwrap();
        assert_eq!(l.jobs.len() as u64 + l.skipped["no-gpu"], 500);
    }

    /// Writes a Philly-sized scenario (117,000 jobs, 14 VCs) into `$GPUQUOTA_TRACE_DIR`:
    /// `cluster.yaml`, `cluster_job_log`, `philly.yaml`.
    #[test]
    #[ignore = "writes a full-size trace; run with GPUQUOTA_TRACE_DIR set"]
    fn write_philly_sized_trace() {
        let dir = std::path::PathBuf::from(
            std::env::var("GPUQUOTA_TRACE_DIR").expect("GPUQUOTA_TRACE_DIR"),
        );
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cluster_job_log"), philly(117_000, 14, 1)).unwrap();
        std::fs::write(dir.join("cluster.yaml"), cluster_queues(14, 2490)).unwrap();
        std::fs::write(
            dir.join("philly.yaml"),
            format!("apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: philly-sized}}\nspec:\n  engine: kueue\n  cluster: [cluster.yaml]\n  start: \"{PHILLY_START}\"\n  workloads:\n  - trace: {{format: philly, file: cluster_job_log, queueBy: vc}}\n"),
        )
        .unwrap();
    }
}
