//! Dominant Resource Fairness (Ghodsi et al., NSDI 2011) and weighted DRF, exact.
//!
//! Users run identical tasks with demand vector `Dᵢ` (Leontief preferences); a user's utility
//! is its number of tasks. [`drf`] is *progressive filling* with divisible tasks in exact
//! rationals: every unblocked user's weighted dominant share `xᵢ·maxⱼ(Dᵢⱼ/Rⱼ)/wᵢ` rises at the
//! same rate; a user freezes when a resource it needs saturates or it reaches its task limit.
//! [`drf_tasks`] is the online integer version: the next whole task goes to the user with the
//! lowest weighted dominant share whose task still fits (ties by name).
//!
//! Properties (Ghodsi et al., NSDI 2011; checked by the tests): sharing incentive,
//! envy-freeness, Pareto efficiency and strategy-proofness for [`drf`]; **not** resource
//! monotonicity (adding capacity can lower a user's tasks — the paper's counterexample is an
//! expected-behaviour test).

use crate::error::FairShareError;
use crate::ratio::Ratio;

/// A DRF user.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct DrfUser {
    /// Name (tie-break for [`drf_tasks`]).
    pub name: String,
    /// Weight (> 0).
    pub weight: u32,
    /// Demand per task, one entry per resource (≥ 0, not all 0).
    pub task: Vec<i64>,
    /// Maximum number of tasks (`None` = unbounded).
    pub max_tasks: Option<i64>,
}

impl DrfUser {
    /// An unbounded user.
    pub fn new(name: impl Into<String>, weight: u32, task: Vec<i64>) -> DrfUser {
        DrfUser {
            name: name.into(),
            weight,
            task,
            max_tasks: None,
        }
    }
}

fn validate(capacity: &[i64], users: &[DrfUser]) -> Result<(), FairShareError> {
    for (j, c) in capacity.iter().enumerate() {
        if *c < 0 {
            return Err(FairShareError::Negative {
                object: "DRF".into(),
                field: format!("capacity[{j}]"),
                value: c.to_string(),
            });
        }
    }
    for u in users {
        let object = format!("user \"{}\"", u.name);
        if u.weight == 0 {
            return Err(FairShareError::invalid(
                object,
                "weight",
                "must be greater than 0",
            ));
        }
        if u.task.len() != capacity.len() {
            return Err(FairShareError::invalid(
                object,
                "task",
                format!(
                    "has {} entries, expected one per resource ({})",
                    u.task.len(),
                    capacity.len()
                ),
            ));
        }
        if u.task.iter().any(|d| *d < 0) || u.task.iter().all(|d| *d == 0) {
            return Err(FairShareError::invalid(
                object,
                "task",
                "entries must be ≥ 0 and not all 0",
            ));
        }
        if u.max_tasks.is_some_and(|m| m < 0) {
            return Err(FairShareError::invalid(
                object,
                "maxTasks",
                "must not be negative",
            ));
        }
    }
    Ok(())
}

/// Exact weighted DRF by progressive filling: the number of (divisible) tasks per user.
///
/// ```
/// use gpuquota_fairshare::drf::{drf, DrfUser};
/// use gpuquota_fairshare::ratio::Ratio;
/// // The paper's example: ⟨9 CPU, 18 GB⟩, A = ⟨1, 4⟩, B = ⟨3, 1⟩ → A 3 tasks, B 2 tasks.
/// let users = [DrfUser::new("A", 1, vec![1, 4]), DrfUser::new("B", 1, vec![3, 1])];
/// assert_eq!(drf(&[9, 18], &users)?, vec![Ratio::int(3), Ratio::int(2)]);
/// # Ok::<(), gpuquota_fairshare::FairShareError>(())
/// ```
///
/// # Errors
/// Invalid users or capacities; overflow of the exact arithmetic.
///
/// # Complexity
/// O((n + m) · n · m) rational operations for n users and m resources.
#[allow(clippy::needless_range_loop)]
pub fn drf(capacity: &[i64], users: &[DrfUser]) -> Result<Vec<Ratio>, FairShareError> {
    validate(capacity, users)?;
    let m = capacity.len();
    let n = users.len();
    let cap: Vec<Ratio> = capacity
        .iter()
        .map(|c| Ratio::int(i128::from(*c)))
        .collect();
    // Rate rᵢ = wᵢ / dsᵢ where dsᵢ = maxⱼ Dᵢⱼ / Rⱼ; users needing a zero-capacity resource are
    // blocked from the start.
    let mut x = vec![Ratio::ZERO; n];
    let mut rate = vec![Ratio::ZERO; n];
    let mut active = vec![true; n];
    for (i, u) in users.iter().enumerate() {
        let mut ds = Ratio::ZERO;
        for j in 0..m {
            if u.task[j] > 0 {
                if capacity[j] == 0 {
                    active[i] = false;
                    break;
                }
                ds = ds.max(Ratio::new(i128::from(u.task[j]), i128::from(capacity[j]))?);
            }
        }
        if u.max_tasks == Some(0) {
            active[i] = false;
        }
        if active[i] {
            rate[i] = Ratio::int(i128::from(u.weight)).checked_div(ds)?;
        }
    }
    let mut used = vec![Ratio::ZERO; m];
    while active.iter().any(|a| *a) {
        let mut step: Option<Ratio> = None;
        for j in 0..m {
            let mut s = Ratio::ZERO;
            for i in 0..n {
                if active[i] && users[i].task[j] > 0 {
                    s = s.checked_add(
                        rate[i].checked_mul(Ratio::int(i128::from(users[i].task[j])))?,
                    )?;
                }
            }
            if s > Ratio::ZERO {
                let dt = cap[j].checked_sub(used[j])?.checked_div(s)?;
                step = Some(step.map_or(dt, |t| t.min(dt)));
            }
        }
        for i in 0..n {
            if let (true, Some(mx)) = (active[i], users[i].max_tasks) {
                let dt = Ratio::int(i128::from(mx))
                    .checked_sub(x[i])?
                    .checked_div(rate[i])?;
                step = Some(step.map_or(dt, |t| t.min(dt)));
            }
        }
        let Some(dt) = step else { break };
        for i in 0..n {
            if active[i] {
                let dx = rate[i].checked_mul(dt)?;
                x[i] = x[i].checked_add(dx)?;
                for (j, u) in used.iter_mut().enumerate() {
                    if users[i].task[j] > 0 {
                        *u = u.checked_add(
                            dx.checked_mul(Ratio::int(i128::from(users[i].task[j])))?,
                        )?;
                    }
                }
            }
        }
        for i in 0..n {
            if !active[i] {
                continue;
            }
            let capped = users[i]
                .max_tasks
                .is_some_and(|mx| x[i] >= Ratio::int(i128::from(mx)));
            let blocked = (0..m).any(|j| users[i].task[j] > 0 && used[j] >= cap[j]);
            if capped || blocked {
                active[i] = false;
            }
        }
    }
    Ok(x)
}

/// Online weighted DRF with whole tasks: repeatedly give one task to the user with the lowest
/// weighted dominant share whose next task fits (ties: name, then input position).
///
/// # Errors
/// Invalid users or capacities; overflow.
///
/// # Complexity
/// O(T · n · m) for T tasks handed out.
#[allow(clippy::needless_range_loop)]
pub fn drf_tasks(capacity: &[i64], users: &[DrfUser]) -> Result<Vec<i64>, FairShareError> {
    validate(capacity, users)?;
    let m = capacity.len();
    let mut tasks = vec![0i64; users.len()];
    let mut used = vec![0i64; m];
    // Dominant share per task as a ratio Dᵢⱼ*/Rⱼ* (weighted by 1/wᵢ).
    let mut per_task = Vec::with_capacity(users.len());
    for u in users {
        let mut ds = Ratio::ZERO;
        for j in 0..m {
            if u.task[j] > 0 && capacity[j] > 0 {
                ds = ds.max(Ratio::new(i128::from(u.task[j]), i128::from(capacity[j]))?);
            }
        }
        per_task.push(ds.checked_div(Ratio::int(i128::from(u.weight)))?);
    }
    loop {
        let mut best: Option<(Ratio, usize)> = None;
        for (i, u) in users.iter().enumerate() {
            if u.max_tasks.is_some_and(|mx| tasks[i] >= mx) {
                continue;
            }
            let fits = (0..m).all(|j| {
                used[j]
                    .checked_add(u.task[j])
                    .is_some_and(|v| v <= capacity[j])
            });
            if !fits {
                continue;
            }
            let share = per_task[i].checked_mul(Ratio::int(i128::from(tasks[i])))?;
            let better = match &best {
                None => true,
                Some((s, b)) => share
                    .cmp(s)
                    .then_with(|| u.name.cmp(&users[*b].name))
                    .then(i.cmp(b))
                    .is_lt(),
            };
            if better {
                best = Some((share, i));
            }
        }
        let Some((_, i)) = best else { break };
        tasks[i] += 1;
        for j in 0..m {
            used[j] += users[i].task[j];
        }
    }
    Ok(tasks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_example_discrete() {
        let users = [
            DrfUser::new("A", 1, vec![1, 4]),
            DrfUser::new("B", 1, vec![3, 1]),
        ];
        assert_eq!(drf_tasks(&[9, 18], &users).unwrap(), vec![3, 2]);
    }

    #[test]
    fn weighted() {
        // One resource, weights 1:3 → max-min 25 / 75.
        let users = [DrfUser::new("a", 1, vec![1]), DrfUser::new("b", 3, vec![1])];
        assert_eq!(
            drf(&[100], &users).unwrap(),
            vec![Ratio::int(25), Ratio::int(75)]
        );
    }

    #[test]
    fn max_tasks_cap() {
        let mut a = DrfUser::new("a", 1, vec![1]);
        a.max_tasks = Some(10);
        let users = [a, DrfUser::new("b", 1, vec![1])];
        assert_eq!(
            drf(&[100], &users).unwrap(),
            vec![Ratio::int(10), Ratio::int(90)]
        );
    }
}
