//! Resource names as kubectl accepts them (`pods`, `po`, `deploy`, `deployments.apps`,
//! `deployment/web`) and as it prints them (`pod/x`, `deployment.apps/web`).
//!
//! kubectl resolves these through the API server's discovery. kubeloop's server serves a fixed
//! set of kinds, so the table is fixed too, and a name outside it gets the same answer a real
//! server gives for a type it does not have.

use crate::model::Kind;

/// Every spelling of a resource type kubectl accepts for the kinds kubeloop serves.
const ALIASES: &[(Kind, &[&str])] = &[
    (Kind::Pod, &["pods", "pod", "po"]),
    (Kind::Node, &["nodes", "node", "no"]),
    (Kind::Deployment, &["deployments", "deployment", "deploy"]),
    (Kind::ReplicaSet, &["replicasets", "replicaset", "rs"]),
    (Kind::Event, &["events", "event", "ev"]),
    (Kind::Lease, &["leases", "lease"]),
];

/// The API group suffixes a fully qualified name may carry (`deployments.apps`, `rs.v1.apps`).
fn group_suffixes(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Deployment | Kind::ReplicaSet => &["apps", "v1.apps"],
        Kind::Lease => &["coordination.k8s.io", "v1.coordination.k8s.io"],
        Kind::Pod | Kind::Node | Kind::Event => &[],
    }
}

/// The error kubectl prints for a type the server does not serve.
pub fn unknown_type(name: &str) -> String {
    format!("error: the server doesn't have a resource type {name:?}")
}

/// Resolves a resource type as typed (case-insensitive, plural, singular, short or qualified).
pub fn resolve(typed: &str) -> Result<Kind, String> {
    let lower = typed.to_ascii_lowercase();
    for (kind, names) in ALIASES {
        for name in *names {
            if lower == *name {
                return Ok(*kind);
            }
            if group_suffixes(*kind).iter().any(|suffix| lower == format!("{name}.{suffix}")) {
                return Ok(*kind);
            }
        }
    }
    Err(unknown_type(typed))
}

/// The kinds `kubectl get all` lists, in kubectl's order.
pub const ALL_CATEGORY: [Kind; 3] = [Kind::Pod, Kind::Deployment, Kind::ReplicaSet];

/// `pod`, `deployment.apps`, `lease.coordination.k8s.io`: how kubectl names a kind in
/// `TYPE/NAME` output (`-o name`, `created`, `scaled`, multi-type tables).
pub fn kind_string(kind: Kind) -> String {
    let lower = kind.as_str().to_ascii_lowercase();
    match kind.api_version().split_once('/') {
        Some((group, _)) => format!("{lower}.{group}"),
        None => lower,
    }
}

/// One `TYPE NAME...` or `TYPE/NAME` argument list, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// `get pods`, `get pods,deploy`, `get all`: every object of these kinds.
    Kinds(Vec<Kind>),
    /// `get pods a b`, `get pod/a deploy/b`: named objects, in the order given.
    Named(Vec<(Kind, String)>),
}

/// Parses kubectl's resource arguments (`ResourceTypeOrNameArgs`).
pub fn select(args: &[String]) -> Result<Selection, String> {
    let Some(first) = args.first() else {
        return Ok(Selection::Kinds(Vec::new()));
    };
    if args.iter().any(|a| a.contains('/')) {
        let mut named = Vec::new();
        for a in args {
            let Some((t, name)) = a.split_once('/') else {
                return Err("error: there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'".into());
            };
            if name.is_empty() {
                return Err("error: arguments in resource/name form must have a single resource and name".into());
            }
            named.push((resolve(t)?, name.to_string()));
        }
        return Ok(Selection::Named(named));
    }
    let kinds = resolve_types(first)?;
    if args.len() == 1 {
        return Ok(Selection::Kinds(kinds));
    }
    let names = &args[1..];
    let mut named = Vec::new();
    for kind in &kinds {
        for n in names {
            named.push((*kind, n.clone()));
        }
    }
    Ok(Selection::Named(named))
}

/// `pods,deploy` or `all` to kinds, without repeats.
pub fn resolve_types(typed: &str) -> Result<Vec<Kind>, String> {
    let mut kinds = Vec::new();
    for part in typed.split(',') {
        let add: Vec<Kind> = if part.eq_ignore_ascii_case("all") { ALL_CATEGORY.to_vec() } else { vec![resolve(part)?] };
        for k in add {
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
    }
    Ok(kinds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kubectl_spelling_resolves() {
        for (typed, kind) in [
            ("pods", Kind::Pod),
            ("po", Kind::Pod),
            ("Pod", Kind::Pod),
            ("no", Kind::Node),
            ("deploy", Kind::Deployment),
            ("deployments.apps", Kind::Deployment),
            ("deployment.v1.apps", Kind::Deployment),
            ("rs", Kind::ReplicaSet),
            ("ev", Kind::Event),
            ("leases.coordination.k8s.io", Kind::Lease),
        ] {
            assert_eq!(resolve(typed), Ok(kind), "{typed}");
        }
        assert_eq!(resolve("podz").unwrap_err(), r#"error: the server doesn't have a resource type "podz""#);
        assert!(resolve("pods.apps").is_err());
    }

    #[test]
    fn arguments_select_kinds_or_named_objects() {
        let s = |a: &[&str]| select(&a.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(s(&["pods"]), Ok(Selection::Kinds(vec![Kind::Pod])));
        assert_eq!(s(&["all"]), Ok(Selection::Kinds(vec![Kind::Pod, Kind::Deployment, Kind::ReplicaSet])));
        assert_eq!(s(&["po,deploy,pods"]), Ok(Selection::Kinds(vec![Kind::Pod, Kind::Deployment])));
        assert_eq!(s(&["deploy", "a", "b"]), Ok(Selection::Named(vec![(Kind::Deployment, "a".into()), (Kind::Deployment, "b".into())])));
        assert_eq!(s(&["deploy/a", "po/b"]), Ok(Selection::Named(vec![(Kind::Deployment, "a".into()), (Kind::Pod, "b".into())])));
        assert!(s(&["deploy", "po/b"]).is_err());
    }

    #[test]
    fn kinds_print_with_their_group() {
        assert_eq!(kind_string(Kind::Deployment), "deployment.apps");
        assert_eq!(kind_string(Kind::Pod), "pod");
        assert_eq!(kind_string(Kind::Lease), "lease.coordination.k8s.io");
    }
}
