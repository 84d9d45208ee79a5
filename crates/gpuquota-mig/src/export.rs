//! Export of a plan: mig-parted configs (one named config per node) and explicit placements.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::catalogue::Catalogue;
use crate::plan::Plan;

/// One config entry: MIG enabled, profile counts, device indices.
type Entry = (bool, Vec<(String, u32)>, Vec<u32>);

/// `s` as a JSON string, which is a valid YAML double-quoted scalar: the escapes
/// `serde_json::to_string` writes (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00XX` for
/// the other control characters below U+0020), written here so that export needs no JSON
/// library.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn compute_of(profile: &str) -> u32 {
    profile
        .split('g')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The plan as a mig-parted config file (`version: v1`), with one config per node named after
/// the node. GPUs of a node with the same layout share one entry (`devices: [i, ...]`);
/// `mig-devices` lists profile counts big first (mig-parted's creation order). mig-parted
/// applies multisets and lets the driver choose placements; use [`placements_yaml`] for the
/// exact starts.
///
/// # Complexity
/// O(G · n log n).
pub fn mig_parted_config(plan: &Plan) -> String {
    // node -> (enabled, counts) -> devices, in first-appearance order of nodes.
    let mut nodes: Vec<(&str, Vec<Entry>)> = Vec::new();
    for g in &plan.gpus {
        let mut counts: BTreeMap<(std::cmp::Reverse<u32>, &str), u32> = BTreeMap::new();
        for i in &g.instances {
            *counts
                .entry((std::cmp::Reverse(compute_of(&i.profile)), &i.profile))
                .or_insert(0) += 1;
        }
        let counts: Vec<(String, u32)> = counts
            .into_iter()
            .map(|((_, p), n)| (p.to_owned(), n))
            .collect();
        let pos = match nodes.iter().position(|(n, _)| *n == g.node) {
            Some(p) => p,
            None => {
                nodes.push((&g.node, Vec::new()));
                nodes.len() - 1
            }
        };
        let entries = &mut nodes[pos].1;
        match entries
            .iter_mut()
            .find(|(e, c, _)| *e == g.mig_enabled && *c == counts)
        {
            Some(entry) => entry.2.push(g.index),
            None => entries.push((g.mig_enabled, counts, vec![g.index])),
        }
    }
    let mut out = String::from("version: v1\nmig-configs:\n");
    for (node, entries) in &mut nodes {
        let _ = writeln!(out, "  {}:", quote(node));
        for (enabled, counts, devices) in entries.iter_mut() {
            devices.sort_unstable();
            let list: Vec<String> = devices.iter().map(u32::to_string).collect();
            let _ = writeln!(out, "    - devices: [{}]", list.join(", "));
            let _ = writeln!(out, "      mig-enabled: {enabled}");
            if *enabled {
                if counts.is_empty() {
                    out.push_str("      mig-devices: {}\n");
                } else {
                    out.push_str("      mig-devices:\n");
                    for (p, n) in counts.iter() {
                        let _ = writeln!(out, "        {}: {n}", quote(p));
                    }
                }
            }
        }
    }
    out
}

/// The plan's explicit placements, for `nvmlDeviceCreateGpuInstanceWithPlacement`-style
/// managers (HAMi, DRA): per GPU, each instance's profile, NVML id, start and size in the
/// driver's units.
///
/// # Complexity
/// O(G · n).
pub fn placements_yaml(plan: &Plan, catalogue: &Catalogue) -> String {
    let mut out = String::new();
    if plan.gpus.is_empty() {
        return "[]\n".into();
    }
    for g in &plan.gpus {
        let model = catalogue.resolve(&g.model).ok();
        let _ = writeln!(out, "- node: {}", quote(&g.node));
        let _ = writeln!(out, "  index: {}", g.index);
        let _ = writeln!(out, "  model: {}", quote(&g.model));
        let _ = writeln!(out, "  mig-enabled: {}", g.mig_enabled);
        if g.instances.is_empty() {
            out.push_str("  instances: []\n");
            continue;
        }
        out.push_str("  instances:\n");
        for i in &g.instances {
            let p = model.and_then(|m| m.profile(&i.profile).ok());
            let id = p
                .and_then(|p| p.id())
                .map_or_else(|| "null".to_owned(), |v| v.to_string());
            let size = p.map_or(0, |p| p.size());
            let _ = writeln!(
                out,
                "    - {{profile: {}, profile-id: {id}, start: {}, size: {size}, busy: {}}}",
                quote(&i.profile),
                i.start,
                i.busy
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// The hand-written quoting is serde_json's, on every ASCII character and a few others.
    #[cfg(feature = "serde")]
    #[test]
    fn quote_writes_what_serde_json_writes() {
        let mut cases: Vec<String> = (0u8..0x80).map(|b| char::from(b).to_string()).collect();
        cases.extend(
            [
                "",
                "node-a",
                "a\"b\\c\nd",
                "ü\u{7f}\u{2028}€😀",
                "tab\there",
            ]
            .map(String::from),
        );
        for s in cases {
            assert_eq!(
                super::quote(&s),
                serde_json::to_string(&s).unwrap(),
                "{s:?}"
            );
        }
    }
}
