//! The certified upper bound on `W`.

use super::prepare::*;

impl<'p, 'c> Prepared<'p, 'c> {
    /// A certified upper bound on the weighted satisfied demand of any plan.
    ///
    /// # Complexity
    /// O(iterations · Σ_classes |options| · Q), 60 iterations.
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) fn upper_bound(&self) -> u64 {
        let (choice, mu) = self.lp_choice();
        let plain = self.greedy_choice();
        self.bound(self.value_of(&choice).max(self.value_of(&plain)), mu)
    }

    /// Lagrangian (LP) bound: for μ in [0, w], W ≤ Σ (w − μ)·d + Σ_g max_o μ·s_o. μ is kept
    /// as integers over 2¹⁶ so the bound is exact; subgradient steps improve it.
    pub(crate) fn bound(&self, lower: u64, start: Option<Vec<i128>>) -> u64 {
        const K: i128 = 1 << 16;
        let caps = self.caps();
        let nq = caps.len();
        let trivial: i128 = caps
            .iter()
            .zip(&self.weight)
            .map(|(c, w)| i128::from(*c) * i128::from(*w))
            .sum();
        let w: Vec<i128> = self.weight.iter().map(|&w| i128::from(w) * K).collect();
        let mut mu: Vec<i128> = start.unwrap_or_else(|| w.iter().map(|x| x / 2).collect());
        let eval = |mu: &[i128], grad: &mut Vec<i128>| -> i128 {
            let mut total: i128 = (0..nq).map(|q| (w[q] - mu[q]) * i128::from(caps[q])).sum();
            grad.clear();
            grad.extend(caps.iter().map(|c| -i128::from(*c)));
            for c in &self.classes {
                let (mut best, mut arg) = (-1i128, 0usize);
                for (oi, o) in c.supply_opts.iter().enumerate() {
                    let v: i128 = (0..nq)
                        .map(|q| mu[q] * i128::from(o.s[q].min(caps[q])))
                        .sum();
                    if v > best {
                        best = v;
                        arg = oi;
                    }
                }
                let n = c.gpus.len() as i128;
                total += best.max(0) * n;
                if let Some(o) = c.supply_opts.get(arg) {
                    for q in 0..nq {
                        grad[q] += i128::from(o.s[q].min(caps[q])) * n;
                    }
                }
            }
            total
        };
        let mut grad = Vec::with_capacity(nq);
        let mut best = trivial * K;
        let mut theta = 1.0f64;
        for _ in 0..60 {
            let ub = eval(&mu, &mut grad);
            if ub < best {
                best = ub;
            } else {
                theta /= 2.0;
            }
            let norm: f64 = grad.iter().map(|g| (*g as f64) * (*g as f64)).sum();
            let gap = (ub as f64) - (lower as f64) * (K as f64);
            if norm == 0.0 || gap <= 0.0 {
                break;
            }
            let step = theta * gap / norm;
            for q in 0..nq {
                let next = (mu[q] as f64) - step * (grad[q] as f64);
                mu[q] = (next.round() as i128).clamp(0, w[q]);
            }
        }
        let ub = (best / K).min(trivial);
        u64::try_from(ub.max(i128::from(lower))).unwrap_or(u64::MAX)
    }
}
