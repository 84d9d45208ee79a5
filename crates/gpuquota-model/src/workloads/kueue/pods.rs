//! Plain Pods and pod groups (kubernetes-sigs/kueue: `pkg/controller/jobs/pod`).

use super::*;

impl Ctx<'_> {
    /// The priority the API server's admission gives a pod of this spec.
    pub(super) fn pod_priority(&self, spec: &crate::core::PodSpec) -> Option<i32> {
        if let Some(p) = spec.priority {
            return Some(p);
        }
        match spec
            .priority_class_name
            .as_deref()
            .filter(|s| !s.is_empty())
        {
            Some(c) => self.model.priority_classes.get(c).map(|c| c.value),
            None => Some(
                self.model
                    .priority_classes
                    .values()
                    .filter(|c| c.global_default)
                    .map(|c| c.value)
                    .min()
                    .unwrap_or(0),
            ),
        }
    }

    /// Plain Pods and pod groups (the `pod` integration).
    pub(super) fn pods(&mut self) {
        if !self.settings.pods_enabled() {
            return;
        }
        let model = self.model;
        let mut groups: BTreeMap<(String, String), Vec<(&String, &Pod)>> = BTreeMap::new();
        for (key, pod) in &model.pods {
            let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
            if let Some((group, kind, _)) = controller_owner(&pod.metadata)
                && ObjectKind::from_group_kind(&group, &kind).is_some_and(|k| {
                    self.settings.enabled(k)
                        && !matches!(k, ObjectKind::Deployment | ObjectKind::StatefulSet)
                })
            {
                continue;
            }
            // Pods of a Deployment (through its ReplicaSet) or StatefulSet given in the files
            // are counted by the Deployment or StatefulSet conversion.
            if let Some((_, kind, owner)) = controller_owner(&pod.metadata)
                && ((kind == "StatefulSet"
                    && model
                        .workload_objects
                        .contains_key(&format!("StatefulSet/{ns}/{owner}")))
                    || (kind == "ReplicaSet"
                        && owner.rsplit_once('-').is_some_and(|(d, _)| {
                            model
                                .workload_objects
                                .contains_key(&format!("Deployment/{ns}/{d}"))
                        })))
            {
                continue;
            }
            let labels = namespace_labels(model, ns);
            if !self
                .settings
                .managed_jobs_namespace_selector
                .matches(&labels)
            {
                continue;
            }
            let queue = match pod
                .metadata
                .labels
                .get(QUEUE_LABEL)
                .filter(|q| !q.is_empty())
            {
                Some(q) => q.clone(),
                None => match self.unlabelled_queue(ns) {
                    Some(q) => q,
                    None => continue,
                },
            };
            if let Some(g) = pod.metadata.labels.get(POD_GROUP_NAME_LABEL) {
                groups
                    .entry((ns.to_owned(), g.clone()))
                    .or_default()
                    .push((key, pod));
                continue;
            }
            let finished = pod
                .status
                .as_ref()
                .and_then(|s| s.phase.as_deref())
                .is_some_and(|p| matches!(p, "Succeeded" | "Failed"));
            let ps = PodSet {
                name: "main".into(),
                template: PodTemplateSpec {
                    metadata: None,
                    spec: pod.spec.clone(),
                },
                count: 1,
                min_count: None,
                topology_request: None,
            };
            let name = workload_name(
                "Pod",
                "",
                &pod.metadata.name,
                pod.metadata.uid.as_deref().unwrap_or(""),
            );
            self.emit_meta(
                &pod.metadata,
                ns,
                None,
                "Pod",
                name,
                &queue,
                vec![ps],
                None,
                finished,
                &[],
            );
        }
        for ((ns, group), pods) in groups {
            self.pod_group(&ns, &group, &pods);
        }
    }

    pub(super) fn pod_group(&mut self, ns: &str, group: &str, pods: &[(&String, &Pod)]) {
        let Some(&(_, first)) = pods.first() else {
            return;
        };
        let name = format!("{ns}/{group}");
        let total: Option<i32> = first
            .metadata
            .annotations
            .get(POD_GROUP_TOTAL_COUNT_ANNOTATION)
            .and_then(|v| v.parse().ok());
        let mut pod_sets: Vec<PodSet> = Vec::new();
        let mut all_finished = true;
        for &(_, pod) in pods {
            let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
            if phase == Some("Failed") {
                continue;
            }
            all_finished &= phase == Some("Succeeded");
            let role = match pod.metadata.annotations.get(ROLE_HASH_ANNOTATION) {
                Some(r) => r.clone(),
                None => match role_hash(&pod.spec, self.pod_priority(&pod.spec)) {
                    Some(r) => r,
                    None => {
                        self.warnings.push(
                            None,
                            codes::NOT_MODELLED,
                            "Pod",
                            &format!("{ns}/{}", pod.metadata.name),
                            "sets a field whose role hash is not reproduced (affinity, \
                             topology spread, resource claims or pod-level resources) and has \
                             no kueue.x-k8s.io/role-hash annotation; its PodSet is named \
                             \"main\""
                                .into(),
                        );
                        "main".into()
                    }
                },
            };
            match pod_sets.iter_mut().find(|p| p.name == role) {
                Some(p) => p.count += 1,
                None => pod_sets.push(PodSet {
                    name: role,
                    template: PodTemplateSpec {
                        metadata: None,
                        spec: pod.spec.clone(),
                    },
                    count: 1,
                    min_count: None,
                    topology_request: None,
                }),
            }
        }
        let present: i32 = pod_sets.iter().map(|p| p.count).sum();
        if let Some(t) = total {
            if pod_sets.len() == 1 {
                pod_sets[0].count = t;
            } else if present < t {
                self.warnings.push(
                    None,
                    codes::NOT_MODELLED,
                    "Pod",
                    &name,
                    format!(
                        "pod group {group:?} has {present} of its {t} pods in the files, in \
                         several roles; each role counts only the pods given"
                    ),
                );
            }
        }
        let queue = match first.metadata.labels.get(QUEUE_LABEL) {
            Some(q) if !q.is_empty() => q.clone(),
            _ => self.unlabelled_queue(ns).unwrap_or_default(),
        };
        let mut meta = first.metadata.clone();
        meta.name = group.to_owned();
        meta.uid = None;
        self.emit_meta(
            &meta,
            ns,
            None,
            "Pod",
            group.to_owned(),
            &queue,
            pod_sets,
            None,
            all_finished && present > 0,
            &[(IS_GROUP_WORKLOAD_ANNOTATION, "true")],
        );
    }
}
