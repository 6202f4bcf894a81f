//! Resource names as kubectl accepts them (`pods`, `po`, `deploy`, `deployments.apps`,
//! `deployment/web`) and as it prints them (`pod/x`, `deployment.apps/web`).
//!
//! kubectl resolves these through the API server's discovery. kubeloop's server serves the kinds
//! of the table in `model/kinds.rs`, so every spelling is derived from that table's rows, and a
//! name outside it gets the same answer a real server gives for a type it does not have.

use crate::model::Kind;

/// The error kubectl prints for a type the server does not serve.
pub fn unknown_type(name: &str) -> String {
    format!("error: the server doesn't have a resource type {name:?}")
}

/// Resolves a resource type as typed (case-insensitive, plural, singular, short or qualified:
/// `deployments.apps`, `rs.v1.apps`, `leases.coordination.k8s.io`).
pub fn resolve(typed: &str) -> Result<Kind, String> {
    let lower = typed.to_ascii_lowercase();
    let (name, suffix) = lower.split_once('.').unwrap_or((&lower, ""));
    Kind::ALL.into_iter().find(|kind| names_kind(*kind, name) && in_group(*kind, suffix)).ok_or_else(|| unknown_type(typed))
}

/// Whether `name` is the kind's plural, singular or one of its short names.
fn names_kind(kind: Kind, name: &str) -> bool {
    let info = kind.info();
    info.plural == name || info.singular == name || info.short_names.contains(&name)
}

/// Whether a qualified name's suffix fits the kind: none, its group, or `version.group`. The
/// core group has no suffix to give (`pods.apps` is no pod).
fn in_group(kind: Kind, suffix: &str) -> bool {
    let info = kind.info();
    let group = info.group();
    suffix.is_empty()
        || (!group.is_empty() && (suffix == group || suffix.strip_suffix(group).and_then(|v| v.strip_suffix('.')) == Some(info.version())))
}

/// The kinds `kubectl get all` lists, in kubectl's order: those in the `all` category, the core
/// group first and then by group, each group's resources alphabetically, as discovery lists them.
pub fn all_category() -> Vec<Kind> {
    let mut kinds: Vec<Kind> = Kind::ALL.into_iter().filter(|k| k.info().categories.contains(&"all")).collect();
    kinds.sort_by_key(|k| (!k.info().group().is_empty(), k.info().group(), k.plural()));
    kinds
}

/// `pod`, `deployment.apps`, `lease.coordination.k8s.io`: how kubectl names a kind in
/// `TYPE/NAME` output (`-o name`, `created`, `scaled`, multi-type tables).
pub fn kind_string(kind: Kind) -> String {
    match kind.info().group() {
        "" => kind.lower().to_string(),
        group => format!("{}.{group}", kind.lower()),
    }
}

/// `kind_string` of an object: a custom object's kind and group (`crontab.stable.example.com`).
pub fn object_kind_string(object: &crate::model::Object) -> String {
    match object.as_custom_object() {
        Some(o) => format!("{}.{}", o.kind().to_ascii_lowercase(), o.group()),
        None => kind_string(object.kind()),
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
        let add: Vec<Kind> = if part.eq_ignore_ascii_case("all") { all_category() } else { vec![resolve(part)?] };
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
    fn every_row_of_the_kind_table_resolves_by_each_of_its_names() {
        for kind in Kind::ALL {
            let info = kind.info();
            let mut names = vec![info.plural, info.singular];
            names.extend(info.short_names);
            for name in names {
                assert_eq!(resolve(name), Ok(kind), "{name}");
                assert_eq!(resolve(&name.to_ascii_uppercase()), Ok(kind), "{name}");
                if !info.group().is_empty() {
                    assert_eq!(resolve(&format!("{name}.{}", info.group())), Ok(kind), "{name}");
                    assert_eq!(
                        resolve(&format!("{name}.{}", kind.api_version().replace('/', "."))).ok(),
                        None,
                        "group.version is no suffix"
                    );
                    assert_eq!(resolve(&format!("{name}.{}.{}", info.version(), info.group())), Ok(kind), "{name}");
                }
            }
            assert_eq!(Kind::from_kind_str(kind.as_str()), Some(kind));
            assert_eq!(kind.info().kind, kind, "the table is in Kind's order");
        }
    }

    #[test]
    fn arguments_select_kinds_or_named_objects() {
        let s = |a: &[&str]| select(&a.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(s(&["pods"]), Ok(Selection::Kinds(vec![Kind::Pod])));
        // kubectl's order: core first, then by group: apps/v1 by name (daemonsets, deployments,
        // replicasets, statefulsets), then autoscaling, then batch (cronjobs, jobs).
        assert_eq!(
            s(&["all"]),
            Ok(Selection::Kinds(vec![
                Kind::Pod,
                Kind::ReplicationController,
                Kind::Service,
                Kind::DaemonSet,
                Kind::Deployment,
                Kind::ReplicaSet,
                Kind::StatefulSet,
                Kind::HorizontalPodAutoscaler,
                Kind::CronJob,
                Kind::Job
            ]))
        );
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
