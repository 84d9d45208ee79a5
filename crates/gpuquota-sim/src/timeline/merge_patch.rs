//! JSON merge patch, RFC 7386 (`application/merge-patch+json`, what `kubectl patch --type
//! merge` sends): a patch object's members replace the target's, `null` removes a member,
//! nested objects merge recursively, and anything that is not an object replaces the target
//! whole (arrays included: a list is never merged item by item).

use serde_json::{Map, Value};

/// Applies `patch` to `target` in place, as RFC 7386 section 2 defines `MergePatch`.
///
/// ```
/// use serde_json::json;
/// let mut cq = json!({"spec": {"cohortName": "research", "stopPolicy": "None"}});
/// gpuquota_sim::timeline::merge_patch(&mut cq, &json!({"spec": {"stopPolicy": "Hold", "cohortName": null}}));
/// assert_eq!(cq, json!({"spec": {"stopPolicy": "Hold"}}));
/// ```
///
/// # Complexity
/// O(size of `patch`) map operations (each O(log members)), plus dropping what it replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(members) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(t) = target {
        for (name, value) in members {
            if value.is_null() {
                t.remove(name);
            } else {
                merge_patch(t.entry(name.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::merge_patch;
    use serde_json::{Value, json};

    fn patched(target: Value, patch: Value) -> Value {
        let mut t = target;
        merge_patch(&mut t, &patch);
        t
    }

    /// RFC 7386 appendix A, every example, each expected value as the RFC prints it.
    #[test]
    fn rfc7386_appendix_a() {
        let cases = [
            (json!({"a":"b"}), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"a":"b"}), json!({"b":"c"}), json!({"a":"b","b":"c"})),
            (json!({"a":"b"}), json!({"a":null}), json!({})),
            (
                json!({"a":"b","b":"c"}),
                json!({"a":null}),
                json!({"b":"c"}),
            ),
            (json!({"a":["b"]}), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"a":"c"}), json!({"a":["b"]}), json!({"a":["b"]})),
            (
                json!({"a":{"b":"c"}}),
                json!({"a":{"b":"d","c":null}}),
                json!({"a":{"b":"d"}}),
            ),
            (json!({"a":[{"b":"c"}]}), json!({"a":[1]}), json!({"a":[1]})),
            (json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"])),
            (json!({"a":"b"}), json!(["c"]), json!(["c"])),
            (json!({"a":"foo"}), json!(null), json!(null)),
            (json!({"a":"foo"}), json!("bar"), json!("bar")),
            (json!({"e":null}), json!({"a":1}), json!({"e":null,"a":1})),
            (json!([1, 2]), json!({"a":"b","c":null}), json!({"a":"b"})),
            (
                json!({}),
                json!({"a":{"bb":{"ccc":null}}}),
                json!({"a":{"bb":{}}}),
            ),
        ];
        for (i, (target, patch, want)) in cases.into_iter().enumerate() {
            assert_eq!(patched(target, patch), want, "appendix A example {}", i + 1);
        }
    }

    /// The RFC's section 3 example: title replaced, author's familyName removed, phoneNumber
    /// added, tags replaced whole.
    #[test]
    fn rfc7386_section_3_example() {
        let target = json!({
            "title": "Goodbye!",
            "author": {"givenName": "John", "familyName": "Doe"},
            "tags": ["example", "sample"],
            "content": "This will be unchanged"
        });
        let patch = json!({
            "title": "Hello!",
            "phoneNumber": "+01-123-456-7890",
            "author": {"familyName": null},
            "tags": ["example"]
        });
        assert_eq!(
            patched(target, patch),
            json!({
                "title": "Hello!",
                "author": {"givenName": "John"},
                "tags": ["example"],
                "content": "This will be unchanged",
                "phoneNumber": "+01-123-456-7890"
            })
        );
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (0i64..4).prop_map(Value::from),
            "[ab]".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                proptest::collection::btree_map("[abc]", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// A merge patch is idempotent (RFC 7386 section 1: applying it twice gives what
        /// applying it once gives), and a patch without `null` members leaves every member
        /// it names equal to the patch's value.
        #[test]
        fn merge_patch_is_idempotent(target in json_value(), patch in json_value()) {
            let once = patched(target, patch.clone());
            let twice = patched(once.clone(), patch.clone());
            proptest::prop_assert_eq!(&once, &twice);
            if let (Value::Object(p), Value::Object(o)) = (&patch, &once) {
                for (k, v) in p {
                    if !v.is_null() && !v.is_object() {
                        proptest::prop_assert_eq!(o.get(k), Some(v));
                    }
                }
            }
        }
    }
}
