//! Cross-object lint: parent cycles of Cohorts and KAI Queues.

use super::*;

/// The most names a cycle message shows.
pub(super) const CYCLE_SHOWN: usize = 10;

/// Every name on a cycle of `parent` links, mapped to the cycle as walked from it.
///
/// # Complexity
/// `O(n log n)` to find the cycles, plus `O(CYCLE_SHOWN)` per name on a cycle.
pub(super) fn parent_cycles<'a>(
    names: impl Iterator<Item = &'a str>,
    parent: impl Fn(&'a str) -> Option<&'a str>,
) -> BTreeMap<&'a str, Vec<&'a str>> {
    let mut done: BTreeSet<&str> = BTreeSet::new();
    let mut out = BTreeMap::new();
    for start in names {
        let mut stack: Vec<&str> = Vec::new();
        let mut on_stack: BTreeMap<&str, usize> = BTreeMap::new();
        let mut current = Some(start);
        while let Some(n) = current {
            if let Some(&at) = on_stack.get(n) {
                let cycle = &stack[at..];
                for (k, m) in cycle.iter().enumerate() {
                    let walk: Vec<&str> = cycle[k..]
                        .iter()
                        .chain(&cycle[..k])
                        .take(CYCLE_SHOWN)
                        .copied()
                        .collect();
                    out.insert(*m, walk);
                }
                break;
            }
            if done.contains(n) {
                break;
            }
            on_stack.insert(n, stack.len());
            stack.push(n);
            current = parent(n);
        }
        done.extend(stack);
    }
    out
}

pub(super) fn show_cycle(walk: &[&str]) -> String {
    match walk.first() {
        Some(first) if walk.len() < CYCLE_SHOWN => format!("{} -> {first}", walk.join(" -> ")),
        _ => format!("{} -> ...", walk.join(" -> ")),
    }
}

/// Objects seen more than once: one problem per duplicate.
pub(super) fn duplicates(out: &mut Vec<ValidationError>, model: &Model) {
    for d in &model.duplicates {
        let mut cx = Ctx::new(out, d.kind, &d.name);
        let shown = d.name.rsplit('/').next().unwrap_or(&d.name);
        let detail = format!(
            "more than one {} has this name; one of them is ignored",
            d.kind
        );
        cx.push(
            "metadata.name",
            ErrorType::Duplicate,
            Some(quote(shown)),
            detail,
        );
    }
}
