//! Sweepable timeline values: `timeline[N].at=VALUE` and
//! `timeline[N].patch[M].mergePatch.PATH=VALUE`, set in the scenario's `spec` before it is
//! read.

use serde_json::Value;

/// Sets one timeline value in `spec` (a scenario's `spec` as a JSON value), as `sim sweep
/// --set PATH=VALUE` gives it. `path` starts with `timeline[N]` and is either `.at` or goes
/// through `.patch[M].mergePatch` to any member below (`.spec.resourceGroups[0].flavors[0]`
/// steps included). `value` is read as JSON when it is a number, `true`, `false` or `null`
/// (a merge patch's `null` removes the member), else it is a string; `at` is always a string.
/// Members missing under `mergePatch` are created; a list index must exist.
///
/// ```
/// use serde_json::json;
/// let mut spec = json!({"timeline": [{"at": "1h", "patch": [
///     {"kind": "ClusterQueue", "name": "batch", "mergePatch": {"spec": {}}}]}]});
/// gpuquota_sim::timeline::set(&mut spec, "timeline[0].at", "36h")?;
/// gpuquota_sim::timeline::set(&mut spec, "timeline[0].patch[0].mergePatch.spec.stopPolicy", "Hold")?;
/// assert_eq!(spec["timeline"][0]["at"], "36h");
/// assert_eq!(spec["timeline"][0]["patch"][0]["mergePatch"]["spec"]["stopPolicy"], "Hold");
/// # Ok::<(), String>(())
/// ```
///
/// # Errors
/// A message naming the path when it does not name a timeline value of the document.
///
/// # Complexity
/// O(path length × log members).
pub fn set(spec: &mut Value, path: &str, value: &str) -> Result<(), String> {
    let steps = steps(path).ok_or_else(|| format!("{path:?}: not a path (`a.b[0].c`)"))?;
    let bad = || {
        format!(
            "{path:?}: a timeline value is timeline[N].at or timeline[N].patch[M].mergePatch.FIELD..."
        )
    };
    let is_at = matches!(
        steps.as_slice(),
        [Step::Key(t), Step::Index(_), Step::Key(a)] if t == "timeline" && a == "at"
    );
    let is_patch = matches!(
        steps.as_slice(),
        [Step::Key(t), Step::Index(_), Step::Key(p), Step::Index(_), Step::Key(m), _, ..]
            if t == "timeline" && p == "patch" && m == "mergePatch"
    );
    if !is_at && !is_patch {
        return Err(bad());
    }
    let new = if is_at {
        Value::String(value.to_owned())
    } else {
        match serde_json::from_str::<Value>(value) {
            Ok(v @ (Value::Number(_) | Value::Bool(_) | Value::Null)) => v,
            _ => Value::String(value.to_owned()),
        }
    };
    let mut copy = spec.clone();
    let mut at = &mut copy;
    for (k, step) in steps.iter().enumerate() {
        let inside_patch = is_patch && k >= 5;
        at = match step {
            Step::Key(name) => {
                if !at.is_object() && inside_patch {
                    *at = Value::Object(serde_json::Map::new());
                }
                let Value::Object(m) = at else {
                    return Err(format!("{path:?}: {name:?} is not inside an object"));
                };
                if !inside_patch && !m.contains_key(name) {
                    return Err(format!("{path:?}: no {name:?} in the document"));
                }
                m.entry(name.clone()).or_insert(Value::Null)
            }
            Step::Index(i) => at
                .as_array_mut()
                .and_then(|a| a.get_mut(*i))
                .ok_or_else(|| format!("{path:?}: no item [{i}] in the document"))?,
        };
    }
    *at = new;
    *spec = copy;
    Ok(())
}

#[derive(Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// `a.b[0].c` into steps; `None` when malformed.
fn steps(path: &str) -> Option<Vec<Step>> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (name, mut rest) = part.split_once('[').map_or((part, ""), |(n, r)| (n, r));
        if name.is_empty() {
            return None;
        }
        out.push(Step::Key(name.to_owned()));
        while !rest.is_empty() {
            let (idx, after) = rest.split_once(']')?;
            out.push(Step::Index(idx.parse().ok()?));
            rest = match after {
                "" => "",
                a => a.strip_prefix('[')?,
            };
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::set;
    use serde_json::json;

    #[test]
    fn sets_at_and_patch_values_with_their_json_types() {
        let mut spec = json!({"timeline": [
            {"at": "1h"},
            {"at": "2h", "patch": [{"kind": "ClusterQueue", "name": "a",
              "mergePatch": {"spec": {"resourceGroups": [{"flavors": [{"resources": [{"nominalQuota": 4}]}]}]}}}]}
        ]});
        set(&mut spec, "timeline[1].at", "48h").unwrap();
        set(
            &mut spec,
            "timeline[1].patch[0].mergePatch.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
            "6",
        )
        .unwrap();
        set(
            &mut spec,
            "timeline[1].patch[0].mergePatch.spec.cohortName",
            "null",
        )
        .unwrap();
        assert_eq!(spec["timeline"][1]["at"], "48h");
        assert_eq!(spec["timeline"][0]["at"], "1h");
        let p = &spec["timeline"][1]["patch"][0]["mergePatch"]["spec"];
        assert_eq!(
            p["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"],
            json!(6)
        );
        assert_eq!(p["cohortName"], json!(null));
    }

    #[test]
    fn refuses_paths_outside_the_timeline_values() {
        let mut spec = json!({"timeline": [{"at": "1h"}]});
        assert!(set(&mut spec, "timeline[0].apply", "x.yaml").is_err());
        assert!(set(&mut spec, "timeline[3].at", "2h").is_err());
        assert!(set(&mut spec, "timeline[0].patch[0].mergePatch.spec", "1").is_err());
        assert!(set(&mut spec, "timeline[0.at", "2h").is_err());
        assert_eq!(spec, json!({"timeline": [{"at": "1h"}]}));
    }
}
