//! SenseTime Helios: `cluster_log.csv` (one per cluster: Venus, Earth, Saturn, Uranus,
//! Philly-converted), a CSV with a header naming at least `job_id`, `user`, `vc`, `gpu_num`,
//! `node_num`, `state`, `submit_time`, `start_time`, `end_time` (other columns such as
//! `cpu_num`, `jobname`, `duration`, `queue` are ignored); times are wall-clock
//! `YYYY-MM-DD HH:MM:SS`, read as UTC.
//!
//! Mapping: `vc` or `user` is the queue, `state` the class (`COMPLETED`, `FAILED`,
//! `CANCELLED`, `TIMEOUT`, `NODE_FAIL`), arrival `submit_time`, runtime `end_time −
//! start_time`. `gpu_num` GPUs split evenly over `node_num` pods when it divides, else one
//! pod with all of them. A job with `gpu_num` 0 (a CPU job) is `no-gpu`. The **recorded
//! wait** is `start_time − submit_time` (the figure the optional `queue` column repeats in
//! whole seconds), kept for comparison with the simulated wait.

use super::{Job, Loaded, PodSet, columns, count, csv_reader, next_row, runtime, wall_clock_ms};

/// Reads a Helios `cluster_log.csv`.
///
/// # Errors
/// No header, or a required column missing.
///
/// # Complexity
/// O(rows).
pub fn load(text: &str) -> Result<Loaded, String> {
    let mut rdr = csv_reader(text, true);
    let header = rdr.headers().map_err(|e| e.to_string())?.clone();
    let [id, user, vc, gpu, nodes, state, submit, start, end] = columns(
        &header,
        [
            "job_id",
            "user",
            "vc",
            "gpu_num",
            "node_num",
            "state",
            "submit_time",
            "start_time",
            "end_time",
        ],
    )?;
    let mut out = Loaded::default();
    // one record read into again and again (`records()` allocates one per row), and the
    // jobs pre-sized by the text (a Helios row is ≈ 110 bytes)
    out.jobs.reserve(text.len() / 128);
    let mut r = csv::StringRecord::new();
    while next_row(&mut rdr, &mut r, header.len(), &mut out) {
        let f = |i: usize| r.get(i).unwrap_or("").trim();
        let (Some(g), Some(n), Some(sub)) =
            (count(f(gpu)), count(f(nodes)), wall_clock_ms(f(submit)))
        else {
            out.skip("malformed-row");
            continue;
        };
        if g == 0 {
            out.skip("no-gpu");
            continue;
        }
        let started = wall_clock_ms(f(start));
        let rt = match runtime(started, wall_clock_ms(f(end))) {
            Ok(rt) => rt,
            Err(reason) => {
                out.skip(reason);
                continue;
            }
        };
        let (pods, per) = if n >= 1 && g % n == 0 {
            (n, g / n)
        } else {
            (1, g)
        };
        out.jobs.push(Job {
            id: f(id).to_owned(),
            fields: [("vc", f(vc).to_owned()), ("user", f(user).to_owned())]
                .into_iter()
                .collect(),
            status: f(state).to_owned(),
            submit_ms: sub,
            runtime_ms: rt,
            wait_ms: started.and_then(|s| s.checked_sub(sub)).filter(|w| *w >= 0),
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

/// What [`gpu_numbers`] read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuNumbers {
    /// The date of the row used (`YYYY-MM-DD`).
    pub date: String,
    /// GPUs per VC column, in column order (`total` left out).
    pub vcs: Vec<(String, u32)>,
    /// Rows and cells it could not read.
    pub malformed: u64,
}

/// The GPUs per VC of a Helios `cluster_gpu_number.csv` (`date,<vc>…,total`: one row per
/// day, a column per VC) on the replay's first day: the last row dated on or before the day
/// of `start_ms` (unix ms), or the first row when the file starts later.
///
/// # Errors
/// No header, no `date` column, or no readable row.
///
/// # Complexity
/// O(rows × VCs).
pub fn gpu_numbers(text: &str, start_ms: i64) -> Result<GpuNumbers, String> {
    let mut rdr = csv_reader(text, true);
    let header = rdr.headers().map_err(|e| e.to_string())?.clone();
    let [date] = columns(&header, ["date"])?;
    let start_day = start_ms.div_euclid(86_400_000) * 86_400_000;
    let mut malformed = 0u64;
    let mut first: Option<(i64, csv::StringRecord)> = None;
    let mut chosen: Option<(i64, csv::StringRecord)> = None;
    for rec in rdr.records() {
        let Ok(r) = rec else {
            malformed += 1;
            continue;
        };
        let day = r
            .get(date)
            .and_then(|d| wall_clock_ms(&format!("{} 00:00:00", d.trim())));
        let Some(day) = day.filter(|_| r.len() == header.len()) else {
            malformed += 1;
            continue;
        };
        if first.as_ref().is_none_or(|(d, _)| day < *d) {
            first = Some((day, r.clone()));
        }
        if day <= start_day && chosen.as_ref().is_none_or(|(d, _)| day >= *d) {
            chosen = Some((day, r));
        }
    }
    let (_, row) = chosen
        .or(first)
        .ok_or_else(|| "no readable row (date, then GPUs per VC)".to_owned())?;
    let mut out = Vec::new();
    for (i, h) in header.iter().enumerate() {
        let h = h.trim();
        if i == date || h == "total" {
            continue;
        }
        match row.get(i).and_then(count) {
            Some(g) => out.push((h.to_owned(), g)),
            None => malformed += 1,
        }
    }
    Ok(GpuNumbers {
        date: row.get(date).unwrap_or("").trim().to_owned(),
        vcs: out,
        malformed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = "\
job_id,user,vc,jobname,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue
j1,u1,vcA,x,8,16,2,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:00:10,2020-04-01 01:00:10,3600,10
j2,u2,vcB,x,3,4,2,FAILED,2020-04-01 00:01:00,2020-04-01 00:01:00,2020-04-01 00:02:00,60,0
j3,u1,vcA,x,0,4,1,COMPLETED,2020-04-01 00:02:00,2020-04-01 00:02:00,2020-04-01 00:03:00,60,0
j4,u1,vcA,x,1,4,1,CANCELLED,2020-04-01 00:03:00,,,0,0
j5,u1,vcA,x,1,4,1,COMPLETED,2020-04-01 00:03:00,2020-04-01 00:05:00,2020-04-01 00:04:00,0,0
j6,u1,vcA,x,one,4,1,COMPLETED,2020-04-01 00:03:00,2020-04-01 00:05:00,2020-04-01 00:06:00,0,0
";

    #[test]
    fn helios_fixture_maps_every_row_or_counts_it() {
        let l = load(FIXTURE).unwrap();
        assert_eq!(l.jobs.len(), 2);
        let j1 = &l.jobs[0];
        assert_eq!(j1.id, "j1");
        assert_eq!(j1.fields["vc"], "vcA");
        assert_eq!(j1.status, "COMPLETED");
        assert_eq!(j1.runtime_ms, 3_600_000);
        assert_eq!(j1.submit_ms, 1_585_699_200_000);
        // started 10 s after submission; j2 at once
        assert_eq!(j1.wait_ms, Some(10_000));
        assert_eq!(l.jobs[1].wait_ms, Some(0));
        assert_eq!((j1.pod_sets[0].count, j1.pod_sets[0].gpu_milli), (2, 4000));
        // 3 GPUs over 2 nodes do not divide: one pod with all three
        assert_eq!(
            (l.jobs[1].pod_sets[0].count, l.jobs[1].pod_sets[0].gpu_milli),
            (1, 3000)
        );
        let skipped: Vec<_> = l.skipped.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(
            skipped,
            [
                ("end-before-start", 1),
                ("malformed-row", 1),
                ("never-ran", 1),
                ("no-gpu", 1)
            ]
        );
    }

    #[test]
    fn gpu_numbers_are_the_replay_days_row() {
        let t =
            "date,vcA,vcB,total\n2020-04-01,8,16,24\n2020-04-02,12,x,28\n2020-04-05,64,64,128\n";
        let day = |s: &str| wall_clock_ms(s).unwrap();
        let g = gpu_numbers(t, day("2020-04-03 10:00:00")).unwrap();
        assert_eq!((g.date.as_str(), g.malformed), ("2020-04-02", 1));
        assert_eq!(g.vcs, [("vcA".to_owned(), 12)]);
        // before the file: its first row
        let g = gpu_numbers(t, day("2020-03-01 00:00:00")).unwrap();
        assert_eq!(g.date, "2020-04-01");
        assert_eq!(g.vcs, [("vcA".to_owned(), 8), ("vcB".to_owned(), 16)]);
        let g = gpu_numbers(t, day("2020-04-05 00:00:00")).unwrap();
        assert_eq!(g.date, "2020-04-05");
        assert!(gpu_numbers("vc,x\n", 0).unwrap_err().contains("date"));
    }

    #[test]
    fn helios_without_a_required_column_is_an_error() {
        assert!(load("job_id,user\nj1,u1\n").unwrap_err().contains("vc"));
    }
}
