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
