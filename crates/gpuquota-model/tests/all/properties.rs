//! Properties: quantities round-trip through their canonical form; importing the same
//! documents in any order, split over any number of files, yields the same model; validation
//! and the reference quota tree are total on generated objects.

use gpuquota_model::{Importer, Model, Quantity, import_str, validate};
use gpuquota_testkit::quota_tree::ReferenceTree;
use proptest::prelude::*;
use serde_json::{Value, json};

fn config(cases: u32) -> ProptestConfig {
    let mut c = ProptestConfig::with_cases(cases);
    if std::env::var_os("CI").is_some() {
        c.max_shrink_iters = 0;
    }
    c
}

const SUFFIXES: &[&str] = &[
    "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "e3",
    "E-2", "e0", "e-9",
];

fn quantity_text() -> impl Strategy<Value = String> {
    (
        prop_oneof![Just(""), Just("-"), Just("+")],
        "[0-9]{1,12}",
        proptest::option::of("[0-9]{1,6}"),
        proptest::sample::select(SUFFIXES),
    )
        .prop_map(|(sign, int, frac, suffix)| match frac {
            Some(f) => format!("{sign}{int}.{f}{suffix}"),
            None => format!("{sign}{int}{suffix}"),
        })
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn quantity_parse_format_round_trip(text in quantity_text()) {
        let q = Quantity::parse(&text);
        prop_assume!(q.is_ok());
        let q = q.unwrap();
        let printed = q.to_string();
        let back = Quantity::parse(&printed).unwrap();
        prop_assert_eq!(back, q, "{} printed as {}", text, printed);
        // The canonical form is a fixed point.
        prop_assert_eq!(back.to_string(), printed);
    }

    #[test]
    fn integers_print_as_themselves(n in any::<i64>()) {
        let q = Quantity::parse(&n.to_string()).unwrap();
        prop_assert_eq!(q.value(), Some(n));
        prop_assert_eq!(Quantity::parse(&q.to_string()).unwrap(), q);
    }
}

/// Every document of the examples, the mistakes and a few duplicates, as separate texts.
fn documents() -> Vec<String> {
    let mut texts: Vec<&str> = crate::examples::EXAMPLES.iter().map(|(_, t)| *t).collect();
    texts.push(include_str!("../data/mistakes.yaml"));
    let mut docs = Vec::new();
    for t in texts {
        let mut current = String::new();
        for line in t.lines() {
            if line == "---" {
                docs.push(std::mem::take(&mut current));
            } else {
                current.push_str(line);
                current.push('\n');
            }
        }
        docs.push(current);
    }
    // The same object twice with different content, and an exact repeat.
    docs.push("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: spot}\nspec: {nodeLabels: {x: \"z\"}}\n".into());
    docs.push(docs[1].clone());
    docs
}

fn import_files(files: &[Vec<&String>]) -> Model {
    let mut importer = Importer::new();
    for (i, docs) in files.iter().enumerate() {
        let text: Vec<&str> = docs.iter().map(|d| d.as_str()).collect();
        importer.add_str(&format!("file-{i}.yaml"), &text.join("---\n"));
    }
    importer.finish().unwrap().model
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn import_is_independent_of_document_order(
        order in Just((0..documents().len()).collect::<Vec<usize>>()).prop_shuffle(),
        file_of in proptest::collection::vec(0usize..3, documents().len()),
    ) {
        let docs = documents();
        let reference = import_files(&[docs.iter().collect()]);
        let mut files: Vec<Vec<&String>> = vec![Vec::new(); 3];
        for (k, &i) in order.iter().enumerate() {
            files[file_of[k]].push(&docs[i]);
        }
        let shuffled = import_files(&files);
        prop_assert_eq!(&shuffled, &reference);
        // And validation, which reads only the model, agrees too.
        prop_assert_eq!(validate::problems(&shuffled), validate::problems(&reference));
    }
}

// ---------------------------------------------------------------------------------------------
// Generated objects

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(vec!["a", "b", "c", "platform", "h200-nvl", "rtx"]).prop_map(String::from),
        1 => "[a-zA-Z0-9@._/-]{0,12}",
    ]
}

fn quantity_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        quantity_text().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        Just(Value::from("1e30")),
        Just(Value::from(-1)),
    ]
}

fn resource() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(vec![
            "cpu",
            "memory",
            "nvidia.com/gpu",
            "nvidia.com/mig-1g.24gb",
            "pods"
        ])
        .prop_map(String::from),
        "[a-z@/.]{0,10}",
    ]
}

fn resource_groups() -> impl Strategy<Value = Value> {
    proptest::collection::vec(
        (
            proptest::collection::vec(resource(), 0..3),
            proptest::collection::vec(
                (
                    name(),
                    proptest::collection::vec(
                        (
                            resource(),
                            proptest::option::of(quantity_value()),
                            proptest::option::of(quantity_value()),
                            proptest::option::of(quantity_value()),
                        ),
                        0..3,
                    ),
                ),
                0..3,
            ),
        ),
        0..3,
    )
    .prop_map(|groups| {
        Value::Array(
            groups
                .into_iter()
                .map(|(covered, flavors)| {
                    json!({
                        "coveredResources": covered,
                        "flavors": flavors.into_iter().map(|(n, rs)| json!({
                            "name": n,
                            "resources": rs.into_iter().map(|(r, nominal, bl, ll)| {
                                let mut o = json!({"name": r});
                                if let Some(v) = nominal { o["nominalQuota"] = v; }
                                if let Some(v) = bl { o["borrowingLimit"] = v; }
                                if let Some(v) = ll { o["lendingLimit"] = v; }
                                o
                            }).collect::<Vec<_>>(),
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect(),
        )
    })
}

fn enum_text(known: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(known).prop_map(String::from),
        1 => "[A-Za-z]{0,6}",
    ]
}

fn object() -> impl Strategy<Value = Value> {
    prop_oneof![
        (name(), proptest::option::of(name()), resource_groups(), enum_text(&["Never", "LowerPriority", "Any"]), enum_text(&["Never", "LowerPriority"]), proptest::option::of(quantity_value()))
            .prop_map(|(n, cohort, rg, reclaim, borrow, weight)| {
                let mut spec = json!({"resourceGroups": rg, "preemption": {"reclaimWithinCohort": reclaim, "borrowWithinCohort": {"policy": borrow}}});
                if let Some(c) = cohort { spec["cohortName"] = Value::from(c); }
                if let Some(w) = weight { spec["fairSharing"] = json!({"weight": w}); }
                json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": n}, "spec": spec})
            }),
        (name(), proptest::option::of(name()), resource_groups())
            .prop_map(|(n, parent, rg)| {
                let mut spec = json!({"resourceGroups": rg});
                if let Some(p) = parent { spec["parentName"] = Value::from(p); }
                json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": n}, "spec": spec})
            }),
        name().prop_map(|n| json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": n}})),
        (name(), name(), proptest::collection::vec((name(), any::<i16>(), proptest::option::of(any::<i16>()), resource(), quantity_value()), 0..3), proptest::option::of(name()))
            .prop_map(|(n, queue, sets, wpc)| {
                let mut spec = json!({"queueName": queue, "podSets": sets.into_iter().map(|(ps, count, min, r, q)| {
                    let mut o = json!({"name": ps, "count": count, "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {r: q}}}]}}});
                    if let Some(m) = min { o["minCount"] = Value::from(m); }
                    o
                }).collect::<Vec<_>>()});
                if let Some(w) = wpc { spec["priorityClassRef"] = json!({"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": w}); }
                json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": {"name": n, "namespace": "ns"}, "spec": spec})
            }),
        (name(), proptest::option::of(name()), proptest::option::of((quantity_value(), quantity_value(), quantity_value())))
            .prop_map(|(n, parent, gpu)| {
                let mut spec = json!({});
                if let Some(p) = parent { spec["parentQueue"] = Value::from(p); }
                if let Some((q, w, l)) = gpu { spec["resources"] = json!({"gpu": {"quota": q, "overQuotaWeight": w, "limit": l}}); }
                json!({"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": n}, "spec": spec})
            }),
        (name(), proptest::collection::btree_map("[a-z./-]{0,24}", quantity_value(), 0..4))
            .prop_map(|(n, hard)| json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": n, "namespace": "ns"}, "spec": {"hard": hard}})),
    ]
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn validation_is_total_on_generated_objects(objects in proptest::collection::vec(object(), 0..8)) {
        let text = serde_json::to_string(&json!({"apiVersion": "v1", "kind": "List", "items": objects})).unwrap();
        let Ok(imported) = import_str("generated.json", &text) else {
            // Quantities of the wrong shape are import errors, not validation problems.
            return Ok(());
        };
        let model = imported.model;
        let problems = validate::problems(&model);
        prop_assert_eq!(validate::validate(&model).is_ok(), problems.is_empty());
        for p in &problems {
            prop_assert!(!p.field.is_empty());
            prop_assert!(!p.to_string().is_empty());
        }
        // A cohort cycle is a validation problem exactly when the quota tree refuses.
        let cycle_reported = problems.iter().any(|p| p.to_string().contains("cohort cycle"));
        match ReferenceTree::new(&model) {
            Err(_) => prop_assert!(cycle_reported),
            Ok(tree) => {
                prop_assert!(!cycle_reported);
                for root in tree.roots() {
                    for fr in tree.subtree_flavor_resources(&root) {
                        let _ = tree.available(&root, &fr);
                        for child in tree.children(&root) {
                            let _ = tree.potential_available(&child, &fr);
                        }
                    }
                }
            }
        }
    }
}
