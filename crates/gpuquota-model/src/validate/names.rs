//! Names and metadata: DNS-1123 subdomains and labels, qualified names, label values,
//! `metadata` of every object and label selectors, with Kubernetes' messages.

use super::*;

#[derive(Clone, Copy)]
pub(super) enum NameRule {
    Subdomain,
    Label,
}

pub(super) const SUBDOMAIN_MSG: &str = "must be a lowercase RFC 1123 subdomain: lower case alphanumeric characters, '-' or '.', starting and ending with an alphanumeric character (regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
pub(super) const LABEL_MSG: &str = "must be a lowercase RFC 1123 label: lower case alphanumeric characters or '-', starting and ending with an alphanumeric character (regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
pub(super) const QUALIFIED_PART_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/// Problems of `s` as a DNS-1123 subdomain (at most 253 characters).
pub fn dns1123_subdomain_problems(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 253 {
        out.push("must be no more than 253 characters".to_owned());
    }
    if s.is_empty() || !s.split('.').all(is_dns_label_part) {
        out.push(SUBDOMAIN_MSG.to_owned());
    }
    out
}

pub(super) fn is_dns_label_part(s: &str) -> bool {
    // Subdomain parts have no length limit of their own.
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Problems of `s` as a DNS-1123 label (at most 63 characters).
pub fn dns1123_label_problems(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push("must be no more than 63 characters".to_owned());
    }
    if s.is_empty() || !is_dns_label_part(s) {
        out.push(LABEL_MSG.to_owned());
    }
    out
}

pub(super) fn is_qualified_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// Problems of `s` as a qualified name (`[prefix/]name`): label keys and resource names.
pub fn qualified_name_problems(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                out.push("prefix part must be non-empty".to_owned());
            } else {
                for p in dns1123_subdomain_problems(prefix) {
                    out.push(format!("prefix part {p}"));
                }
            }
            *name
        }
        _ => {
            out.push(format!(
                "a qualified name {QUALIFIED_PART_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ));
            return out;
        }
    };
    if name.is_empty() {
        out.push("name part must be non-empty".to_owned());
    } else {
        if name.len() > 63 {
            out.push("name part must be no more than 63 characters".to_owned());
        }
        if !is_qualified_part(name) {
            out.push(format!("name part {QUALIFIED_PART_MSG}"));
        }
    }
    out
}

/// Problems of `s` as a label value (empty, or a qualified name part of at most 63 characters).
pub fn label_value_problems(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push("must be no more than 63 characters".to_owned());
    }
    if !s.is_empty() && !is_qualified_part(s) {
        out.push(format!(
            "a valid label must be an empty string or {QUALIFIED_PART_MSG}"
        ));
    }
    out
}

pub(super) fn name_field(cx: &mut Ctx<'_>, field: &str, value: &str, rule: NameRule) {
    if value.is_empty() {
        cx.required(field, "name or generateName is required");
        return;
    }
    let problems = match rule {
        NameRule::Subdomain => dns1123_subdomain_problems(value),
        NameRule::Label => dns1123_label_problems(value),
    };
    for p in problems {
        cx.invalid(field, quote(value), p);
    }
}

/// A reference to another object by name: reported only when set and malformed.
pub(super) fn reference_name(cx: &mut Ctx<'_>, field: &str, value: &str) {
    for p in dns1123_subdomain_problems(value) {
        cx.invalid(field, quote(value), p);
    }
}

pub(super) fn qualified(cx: &mut Ctx<'_>, field: &str, value: &str) {
    for p in qualified_name_problems(value) {
        cx.invalid(field, quote(value), p);
    }
}

pub(super) fn labels(cx: &mut Ctx<'_>, field: &str, labels: &BTreeMap<String, String>) {
    for (k, v) in labels {
        qualified(cx, &format!("{field}[{k}]"), k);
        for p in label_value_problems(v) {
            cx.invalid(format!("{field}[{k}]"), quote(v), p);
        }
    }
}

pub(super) fn object_meta(cx: &mut Ctx<'_>, meta: &ObjectMeta, namespaced: bool) {
    name_field(cx, "metadata.name", &meta.name, NameRule::Subdomain);
    if namespaced && let Some(ns) = &meta.namespace {
        for p in dns1123_label_problems(ns) {
            cx.invalid("metadata.namespace", quote(ns), p);
        }
    }
    labels(cx, "metadata.labels", &meta.labels);
}

pub(super) fn label_selector(cx: &mut Ctx<'_>, field: &str, sel: &LabelSelector) {
    labels(cx, &format!("{field}.matchLabels"), &sel.match_labels);
    for (i, r) in sel.match_expressions.iter().enumerate() {
        let rp = format!("{field}.matchExpressions[{i}]");
        qualified(cx, &format!("{rp}.key"), &r.key);
        match r.operator.as_str() {
            "In" | "NotIn" => {
                if r.values.is_empty() {
                    cx.required(
                        format!("{rp}.values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    );
                }
            }
            "Exists" | "DoesNotExist" => {
                if !r.values.is_empty() {
                    cx.forbidden(
                        format!("{rp}.values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    );
                }
            }
            other => cx.not_supported(
                format!("{rp}.operator"),
                other,
                &["In", "NotIn", "Exists", "DoesNotExist"],
            ),
        }
        for (j, v) in r.values.iter().enumerate() {
            for p in label_value_problems(v) {
                cx.invalid(format!("{rp}.values[{j}]"), quote(v), p);
            }
        }
    }
}
