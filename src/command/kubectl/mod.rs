//! kubectl's command tree: which subcommand a line names, its flags, and the errors kubectl
//! gives for a command, flag or namespace it does not know.
//!
//! Each subcommand lives in its own file; this module finds it and provides what they share:
//! namespaces, flag parsing with kubectl's "See ... --help" suffix, and the write path through
//! the simulation.

pub mod apply;
pub mod create;
pub mod custom;
pub mod describe;
pub mod examples;
pub mod expose;
pub mod failures;
pub mod generic;
pub mod get;
pub mod mutate;
pub mod nodes;
pub mod rollout;
pub mod unmodelled;

use super::parse::{parse_flags, FlagKind, FlagSpec, Flags};
use super::{CommandOutput, Session};
use crate::api::{ApiError, ApiRequest, ApiResponse};
use crate::model::Object;
use std::rc::Rc;

/// Every top-level command of real kubectl, for "Did you mean" suggestions and to tell a
/// command kubeloop does not simulate apart from a typo.
const KUBECTL_COMMANDS: &[&str] = &[
    "annotate",
    "api-resources",
    "api-versions",
    "apply",
    "attach",
    "auth",
    "autoscale",
    "certificate",
    "cluster-info",
    "completion",
    "config",
    "cordon",
    "cp",
    "create",
    "debug",
    "delete",
    "describe",
    "diff",
    "drain",
    "edit",
    "events",
    "exec",
    "explain",
    "expose",
    "get",
    "help",
    "kustomize",
    "label",
    "logs",
    "options",
    "patch",
    "plugin",
    "port-forward",
    "proxy",
    "replace",
    "rollout",
    "run",
    "scale",
    "set",
    "taint",
    "top",
    "uncordon",
    "version",
    "wait",
];

/// Flags every command accepts.
pub const GLOBAL_FLAGS: &[FlagSpec] =
    &[FlagSpec::new("namespace", Some('n'), FlagKind::String), FlagSpec::new("help", Some('h'), FlagKind::Bool)];

/// Runs `kubectl ARGS...` (without the word `kubectl`).
/// The field manager (and subresource) the real kubectl 1.32 writes with for a command, as
/// kube-apiserver records it: its `--field-manager` default (`kubectl-create`,
/// `kubectl-client-side-apply`, `kubectl-set` …), or, for the commands that send none (`scale`,
/// on the scale subresource, `cordon`, `drain`), its User-Agent's `kubectl`.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn field_manager(args: &[String]) -> Option<(&'static str, &'static str)> {
    let args = hoist_global_flags(args);
    Some(match args.first()?.as_str() {
        "apply" => ("kubectl-client-side-apply", ""),
        "create" => ("kubectl-create", ""),
        "autoscale" => ("kubectl-autoscale", ""),
        "expose" => ("kubectl-expose", ""),
        "set" => ("kubectl-set", ""),
        "rollout" => ("kubectl-rollout", ""),
        "taint" => ("kubectl-taint", ""),
        "scale" => ("kubectl", "scale"),
        _ => ("kubectl", ""),
    })
}

pub fn run(session: &mut Session, args: &[String], stdin: Option<String>) -> CommandOutput {
    let args = hoist_global_flags(args);
    let Some(command) = args.first() else {
        return CommandOutput::out(usage());
    };
    let rest = &args[1..];
    match command.as_str() {
        "get" => get::run(session, rest),
        "describe" => describe::run(session, rest),
        "apply" => apply::run_apply(session, rest, stdin),
        "create" => apply::run_create(session, rest, stdin),
        "delete" => mutate::run_delete(session, rest, stdin),
        "scale" => mutate::run_scale(session, rest),
        "autoscale" => create::autoscale(session, rest),
        "expose" => expose::run(session, rest),
        "set" => mutate::run_set(session, rest),
        "rollout" => rollout::run(session, rest),
        "cordon" => nodes::run_cordon(session, rest, true),
        "uncordon" => nodes::run_cordon(session, rest, false),
        "drain" => nodes::run_drain(session, rest),
        "taint" => nodes::run_taint(session, rest),
        "version" => version(session, rest),
        "api-resources" => api_resources(session, rest),
        "help" | "--help" | "-h" => CommandOutput::out(usage()),
        other if other.starts_with('-') => CommandOutput::err(format!("error: unknown flag: {other}\nSee 'kubectl --help' for usage.")),
        other if KUBECTL_COMMANDS.contains(&other) => {
            CommandOutput::err(format!("error: kubeloop does not simulate \"kubectl {other}\"; try: {}", supported().join(", ")))
        }
        other => CommandOutput::err(unknown_command(other, "kubectl", KUBECTL_COMMANDS)),
    }
}

fn supported() -> Vec<&'static str> {
    vec![
        "get",
        "describe",
        "apply",
        "create",
        "delete",
        "scale",
        "autoscale",
        "expose",
        "set image",
        "rollout",
        "cordon",
        "uncordon",
        "drain",
        "taint",
    ]
}

/// Moves `-n NS` written before the subcommand (`kubectl -n kube-system get pods`) after it.
fn hoist_global_flags(args: &[String]) -> Vec<String> {
    let mut front = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "-n" || a == "--namespace" {
            front.push(a.clone());
            if let Some(v) = args.get(i + 1) {
                front.push(v.clone());
            }
            i += 2;
        } else if a.starts_with("--namespace=") || (a.starts_with("-n") && a.len() > 2 && !a.starts_with("--")) {
            front.push(a.clone());
            i += 1;
        } else {
            break;
        }
    }
    if front.is_empty() || i >= args.len() {
        return args.to_vec();
    }
    let mut out = vec![args[i].clone()];
    out.extend(front);
    out.extend(args[i + 1..].iter().cloned());
    out
}

/// cobra's message for an unknown (sub)command, with its Levenshtein/prefix suggestions.
pub fn unknown_command(typed: &str, path: &str, candidates: &[&str]) -> String {
    let lower = typed.to_ascii_lowercase();
    let suggestions: Vec<&str> = if lower.is_empty() {
        Vec::new()
    } else {
        candidates.iter().copied().filter(|c| levenshtein(&lower, c) <= 2 || c.starts_with(&lower)).collect()
    };
    let mut msg = format!("error: unknown command {typed:?} for {path:?}");
    if !suggestions.is_empty() {
        msg.push_str("\n\nDid you mean this?\n");
        for s in suggestions {
            msg.push_str(&format!("\t{s}\n"));
        }
    }
    msg
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Parses a subcommand's flags plus the global ones. Errors come back as kubectl prints them.
pub fn flags(command: &str, args: &[String], specs: &[FlagSpec]) -> Result<(Vec<String>, Flags), CommandOutput> {
    let all: Vec<FlagSpec> = specs.iter().chain(GLOBAL_FLAGS).copied().collect();
    parse_flags(args, &all).map_err(|e| CommandOutput::err(format!("error: {e}\nSee 'kubectl {command} --help' for usage.")))
}

/// A usage error: the message and kubectl's pointer to the command's help.
pub fn usage_error(command: &str, message: &str) -> CommandOutput {
    CommandOutput::err(format!("error: {message}\nSee 'kubectl {command} -h' for help and examples"))
}

/// The namespace a command works in (`-n`, else `default`).
pub fn namespace(flags: &Flags) -> String {
    flags.str("namespace").filter(|n| !n.is_empty()).unwrap_or("default").to_string()
}

/// The error a write into a namespace that does not exist gets (NamespaceLifecycle admission,
/// asked before a dry run too; a real write is checked by the API server itself).
pub fn check_namespace(session: &Session, ns: &str) -> Result<(), ApiError> {
    // The API server makes this check as it admits the write: a write that cannot reach it
    // fails as the write itself would.
    if let Some(error) = session.sim().control_plane_refusal() {
        return Err(error);
    }
    match session.sim().api().get(&crate::model::ObjectKey::new(crate::model::Kind::Namespace, "", ns)) {
        Some(_) => Ok(()),
        None => Err(ApiError::not_found(crate::model::Kind::Namespace, ns)),
    }
}

/// Sends a write as the person at the keyboard and returns the stored object.
pub fn submit(session: &mut Session, request: ApiRequest) -> Result<Rc<Object>, ApiError> {
    match session.sim_mut().submit(request)? {
        ApiResponse::Object(o) => Ok(o),
        _ => Err(ApiError::new(crate::api::Reason::InternalError, "unexpected response")),
    }
}

fn usage() -> String {
    "kubectl controls the Kubernetes cluster manager (here: kubeloop's simulated cluster).\n\
     \n\
     Basic Commands:\n  \
       create          Create a resource from a file or from stdin\n  \
       get             Display one or many resources\n  \
       delete          Delete resources by file names, stdin, resources and names, or by resources and label selector\n  \
       set             Set specific features on objects\n\
     \n\
     Deploy Commands:\n  \
       rollout         Manage the rollout of a resource\n  \
       scale           Set a new size for a deployment or replica set\n\
     \n\
     Cluster Management Commands:\n  \
       cordon          Mark node as unschedulable\n  \
       uncordon        Mark node as schedulable\n  \
       drain           Drain node in preparation for maintenance\n  \
       taint           Update the taints on one or more nodes\n\
     \n\
     Troubleshooting and Debugging Commands:\n  \
       describe        Show details of a specific resource or group of resources\n\
     \n\
     Advanced Commands:\n  \
       apply           Apply a configuration to a resource by file name or stdin\n\
     \n\
     Other Commands:\n  \
       api-resources   Print the supported API resources on the server\n  \
       version         Print the client and server version information\n"
        .to_string()
}

fn version(session: &mut Session, args: &[String]) -> CommandOutput {
    if let Err(e) =
        flags("version", args, &[FlagSpec::new("client", None, FlagKind::Bool), FlagSpec::new("output", Some('o'), FlagKind::String)])
    {
        return e;
    }
    let _ = session;
    CommandOutput::out(format!(
        "Client Version: {KUBE_VERSION}\nKustomize Version: v5.5.0\nServer Version: {KUBE_VERSION} (kubeloop {})",
        crate::VERSION
    ))
}

/// The Kubernetes version kubeloop's kubectl and API server present.
pub const KUBE_VERSION: &str = "v1.32.0";

fn api_resources(session: &Session, args: &[String]) -> CommandOutput {
    if let Err(e) = flags(
        "api-resources",
        args,
        &[FlagSpec::new("namespaced", None, FlagKind::Bool), FlagSpec::new("output", Some('o'), FlagKind::String)],
    ) {
        return e;
    }
    // kubectl sorts by group (core first), then by name; the resources established
    // CustomResourceDefinitions serve are listed with the built-in ones.
    let mut rows: Vec<(bool, String, Vec<String>)> = crate::model::Kind::ALL
        .into_iter()
        .filter(|k| k.is_named())
        .map(|k| {
            let namespaced = if k.namespaced() { "true" } else { "false" };
            let short = k.info().short_names.join(",");
            let row = vec![k.plural().to_string(), short, k.api_version().to_string(), namespaced.to_string(), k.as_str().to_string()];
            (k.api_version().contains('/'), k.info().group().to_string(), row)
        })
        .collect();
    for d in session.sim().api().definitions().iter().filter(|d| d.established) {
        let Some(v) = d.preferred() else { continue };
        let namespaced = if d.namespaced { "true" } else { "false" };
        let row =
            vec![d.plural.clone(), d.short_names.join(","), format!("{}/{}", d.group, v.name), namespaced.to_string(), d.kind.clone()];
        rows.push((true, d.group.clone(), row));
    }
    // metrics-server's resources, served through the aggregation layer.
    let metrics = format!("{}/{}", crate::sim::metrics::API_GROUP, crate::sim::metrics::API_VERSION);
    for (plural, _, kind, namespaced) in crate::sim::metrics::RESOURCES {
        let row = vec![plural.to_string(), String::new(), metrics.clone(), namespaced.to_string(), kind.to_string()];
        rows.push((true, crate::sim::metrics::API_GROUP.to_string(), row));
    }
    rows.sort_by(|a, b| (a.0, &a.1, &a.2[0]).cmp(&(b.0, &b.1, &b.2[0])));
    let rows: Vec<Vec<String>> = rows.into_iter().map(|(_, _, r)| r).collect();
    CommandOutput::out(super::table::render_table(&["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"], &rows, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_commands_get_cobras_suggestions() {
        assert_eq!(
            unknown_command("gte", "kubectl", KUBECTL_COMMANDS),
            "error: unknown command \"gte\" for \"kubectl\"\n\nDid you mean this?\n\tget\n"
        );
        // cobra suggests anything within two edits, so even "foo" gets "top".
        assert_eq!(
            unknown_command("foo", "kubectl", KUBECTL_COMMANDS),
            "error: unknown command \"foo\" for \"kubectl\"\n\nDid you mean this?\n\ttop\n"
        );
        assert_eq!(unknown_command("xyzzy", "kubectl", KUBECTL_COMMANDS), "error: unknown command \"xyzzy\" for \"kubectl\"");
        assert!(unknown_command("desc", "kubectl", KUBECTL_COMMANDS).contains("\tdescribe\n"));
    }

    #[test]
    fn a_namespace_before_the_subcommand_moves_after_it() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(hoist_global_flags(&v(&["-n", "kube-system", "get", "pods"])), v(&["get", "-n", "kube-system", "pods"]));
        assert_eq!(hoist_global_flags(&v(&["get", "pods"])), v(&["get", "pods"]));
        assert_eq!(hoist_global_flags(&v(&["-n"])), v(&["-n"]));
    }
}
