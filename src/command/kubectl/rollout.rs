//! `kubectl rollout status|history|undo|restart|pause|resume` for Deployments, and
//! `status|history|undo|restart` for DaemonSets and StatefulSets (their history is their
//! ControllerRevisions).
//!
//! History is read where kubectl reads it: the `deployment.kubernetes.io/revision` annotation
//! of each ReplicaSet the Deployment controls. Undo copies that ReplicaSet's pod template back
//! into the Deployment (without its pod-template-hash label) and lets the Deployment controller
//! roll, as `kubectl rollout undo` does since rollbackTo was removed.
//!
//! `rollout status` prints kubectl's status lines. In a blocking session (scripts, tests, the
//! CLI) it waits as kubectl does: it steps the simulation, printing each new status line, until
//! the rollout completes, the progress deadline passes, or `--timeout` (default 10 minutes of
//! simulated time, since waiting forever is never useful in a simulation) runs out. In the page
//! (non-blocking) it prints the current line and returns, as with `--watch=false`.
//!
//! `pause` and `resume` are refused for DaemonSets and StatefulSets, as kubectl's object pauser
//! refuses them.

use super::describe::{deployment_replica_sets, equal_ignore_hash};
use super::mutate::update_deployment;
use super::{flags, namespace};
use crate::command::parse::{FlagKind, FlagSpec};
use crate::command::resources::{kind_string, select, Selection};
use crate::command::table::tabbed;
use crate::command::{CommandOutput, Session};
use crate::model::*;
use std::rc::Rc;

const SUBCOMMANDS: &[&str] = &["history", "pause", "restart", "resume", "status", "undo"];

pub fn run(session: &mut Session, args: &[String]) -> CommandOutput {
    let Some(sub) = args.first() else {
        return CommandOutput::out(
            "Manage the rollout of one or many resources.\n\nAvailable Commands:\n  history       View rollout history\n  pause         Mark the provided resource as paused\n  restart       Restart a resource\n  resume        Resume a paused resource\n  status        Show the status of the rollout\n  undo          Undo a previous rollout\n",
        );
    };
    let rest = &args[1..];
    match sub.as_str() {
        "status" => status(session, rest),
        "history" => history(session, rest),
        "undo" => undo(session, rest),
        "restart" | "pause" | "resume" => toggle(session, sub, rest),
        other => CommandOutput::err(super::unknown_command(other, "kubectl rollout", SUBCOMMANDS)),
    }
}

/// The deployments named by `deployment/NAME` or `deployment NAME` (and daemon sets, for the
/// subcommands that take them).
fn deployments(session: &Session, command: &str, positional: &[String], ns: &str) -> Result<Vec<Rc<Object>>, CommandOutput> {
    if positional.is_empty() {
        return Err(CommandOutput::err(format!(
            "error: required resource not specified\nSee 'kubectl rollout {command} -h' for help and examples"
        )));
    }
    let named = match select(positional).map_err(CommandOutput::err)? {
        Selection::Named(n) => n,
        Selection::Kinds(_) => return Err(CommandOutput::err("error: resource(s) were provided, but no name was specified")),
    };
    let mut out = Vec::new();
    for (kind, name) in named {
        if kind == Kind::DaemonSet {
            match command {
                "status" | "restart" | "history" | "undo" => {}
                // kubectl's object pauser knows only Deployments; the error names the object.
                _ => {
                    let verb = if command == "pause" { "pausing" } else { "resuming" };
                    return Err(CommandOutput::err(format!("error: {} {name:?} {verb} is not supported", kind.qualified_plural())));
                }
            }
        } else if kind == Kind::StatefulSet && matches!(command, "pause" | "resume") {
            let verb = if command == "pause" { "pausing" } else { "resuming" };
            return Err(CommandOutput::err(format!("error: {} {name:?} {verb} is not supported", kind.qualified_plural())));
        } else if kind != Kind::Deployment && kind != Kind::StatefulSet {
            let (group, k) = match kind.api_version().split_once('/') {
                Some((g, _)) => (g, kind.as_str()),
                None => ("", kind.as_str()),
            };
            let what = if command == "status" {
                "no status viewer"
            } else if command == "history" {
                "no history viewer"
            } else {
                "no rollbacker"
            };
            return Err(CommandOutput::err(format!("error: {what} has been implemented for {{\"{group}\" \"{k}\"}}")));
        }
        match session.sim().api().get(&ObjectKey::new(kind, ns, &name)) {
            Some(o) => out.push(o.clone()),
            None => return Err(CommandOutput::err(crate::api::ApiError::not_found(kind, &name).kubectl_message())),
        }
    }
    Ok(out)
}

/// kubectl's DeploymentStatusViewer: the status line and whether the rollout is done, or an
/// error (progress deadline exceeded).
pub fn status_line(sim: &crate::sim::Sim, d: &Deployment) -> Result<(String, bool), String> {
    let s = &d.status;
    let name = &d.metadata.name;
    if d.metadata.generation <= s.observed_generation {
        if s.conditions.iter().any(|c| c.type_ == "Progressing" && c.reason.as_deref() == Some("ProgressDeadlineExceeded")) {
            return Err(format!("error: deployment {name:?} exceeded its progress deadline"));
        }
        let desired = d.spec.replicas.unwrap_or(1);
        let msg = if s.updated_replicas < desired {
            format!(
                "Waiting for deployment {name:?} rollout to finish: {} out of {desired} new replicas have been updated...",
                s.updated_replicas
            )
        } else if s.replicas > s.updated_replicas {
            format!(
                "Waiting for deployment {name:?} rollout to finish: {} old replicas are pending termination...",
                s.replicas - s.updated_replicas
            )
        } else if s.available_replicas < s.updated_replicas {
            format!(
                "Waiting for deployment {name:?} rollout to finish: {} of {} updated replicas are available...",
                s.available_replicas, s.updated_replicas
            )
        } else {
            return Ok((format!("deployment {name:?} successfully rolled out"), true));
        };
        return Ok((with_warning(sim, d, msg), false));
    }
    Ok((with_warning(sim, d, "Waiting for deployment spec update to be observed...".into()), false))
}

/// `appendWarning`: names the first pod that cannot be scheduled or whose container is stuck.
fn with_warning(sim: &crate::sim::Sim, d: &Deployment, msg: String) -> String {
    for o in sim.api().items(Kind::Pod, Some(&d.metadata.namespace)) {
        let Some(p) = o.as_pod() else { continue };
        if !d.spec.selector.matches(&p.metadata.labels) {
            continue;
        }
        if let Some(c) = p.condition("PodScheduled").filter(|c| c.status == "False" && c.reason.as_deref() == Some("Unschedulable")) {
            return format!("{msg} (Warning: {})", c.message.as_deref().unwrap_or(""));
        }
        for cs in &p.status.container_statuses {
            if let Some(w) = &cs.state.waiting {
                let reason = w.reason.as_deref().unwrap_or("");
                if ["ImagePullBackOff", "ErrImagePull", "CrashLoopBackOff", "CreateContainerConfigError", "CreateContainerError"]
                    .contains(&reason)
                {
                    return format!("{msg} (Warning: {reason} - {})", w.message.as_deref().unwrap_or(""));
                }
            }
        }
    }
    msg
}

/// The longest `rollout status` waits when no `--timeout` is given.
pub const DEFAULT_STATUS_TIMEOUT: Duration = Duration::mins(10);

fn status(session: &mut Session, args: &[String]) -> CommandOutput {
    let specs = [
        FlagSpec::new("watch", Some('w'), FlagKind::Bool),
        FlagSpec::new("timeout", None, FlagKind::String),
        FlagSpec::new("revision", None, FlagKind::Int(64)),
    ];
    let (positional, f) = match flags("rollout status", args, &specs) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let timeout = match f.str("timeout").map(Duration::parse).transpose() {
        Ok(t) => t.filter(|t| t.0 > 0).unwrap_or(DEFAULT_STATUS_TIMEOUT),
        Err(e) => {
            return CommandOutput::err(format!("error: invalid argument {:?} for \"--timeout\" flag: {e}", f.str("timeout").unwrap_or("")))
        }
    };
    let ns = namespace(&f);
    let targets = match deployments(session, "status", &positional, &ns) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let wait = f.bool_or("watch", true) && session.blocking();
    let mut out = CommandOutput::empty();
    for target in targets {
        let key = target.key();
        let deadline = session.sim().now() + timeout;
        let mut last_line = String::new();
        let mut last_rv = 0;
        loop {
            if matches!(key.kind, Kind::DaemonSet | Kind::StatefulSet) {
                match workload_step(session, &key, wait, &mut last_rv, &mut last_line, &mut out) {
                    Some(true) => {}
                    Some(false) | None => break,
                }
                if !step_until(session, deadline) {
                    out.fail("error: timed out waiting for the condition");
                    break;
                }
                continue;
            }
            let Some(d) = session.sim().api().get(&key).and_then(|o| o.as_deployment()).cloned() else {
                out.fail(&crate::api::ApiError::not_found(Kind::Deployment, &key.name).kubectl_message());
                break;
            };
            if let Some(rev) = f.int("revision").filter(|r| *r > 0) {
                let current =
                    d.metadata.annotations.get("deployment.kubernetes.io/revision").and_then(|r| r.parse::<i64>().ok()).unwrap_or(0);
                if current != rev {
                    out.fail(&format!("error: desired revision ({rev}) is different from the running revision ({current})"));
                    break;
                }
            }
            if d.metadata.resource_version != last_rv {
                last_rv = d.metadata.resource_version;
                match status_line(session.sim(), &d) {
                    Ok((line, done)) => {
                        if line != last_line {
                            out.say(&line);
                            last_line = line;
                        }
                        if done || !wait {
                            break;
                        }
                    }
                    Err(e) => {
                        out.fail(&e);
                        break;
                    }
                }
            }
            if !step_until(session, deadline) {
                out.fail("error: timed out waiting for the condition");
                break;
            }
        }
    }
    out
}

/// kubectl's DaemonSetStatusViewer: the status line and whether the rollout is done, or the
/// error for a strategy other than RollingUpdate.
pub fn daemon_set_status_line(ds: &DaemonSet) -> Result<(String, bool), String> {
    if ds.on_delete() {
        return Err("error: rollout status is only available for RollingUpdate strategy type".into());
    }
    let (s, name) = (&ds.status, &ds.metadata.name);
    if ds.metadata.generation > s.observed_generation {
        return Ok(("Waiting for daemon set spec update to be observed...".into(), false));
    }
    if s.updated_number_scheduled < s.desired_number_scheduled {
        let line = format!(
            "Waiting for daemon set {name:?} rollout to finish: {} out of {} new pods have been updated...",
            s.updated_number_scheduled, s.desired_number_scheduled
        );
        return Ok((line, false));
    }
    if s.number_available < s.desired_number_scheduled {
        let line = format!(
            "Waiting for daemon set {name:?} rollout to finish: {} of {} updated pods are available...",
            s.number_available, s.desired_number_scheduled
        );
        return Ok((line, false));
    }
    Ok((format!("daemon set {name:?} successfully rolled out"), true))
}

/// kubectl's StatefulSetStatusViewer. A RollingUpdate set always has a partition once
/// defaulted, so kubectl reports even an unpartitioned rollout as "partitioned roll out".
pub fn stateful_set_status_line(sts: &StatefulSet) -> Result<(String, bool), String> {
    if sts.spec.update_strategy.type_.as_deref() != Some("RollingUpdate") {
        return Err("error: rollout status is only available for RollingUpdate strategy type".into());
    }
    let s = &sts.status;
    if s.observed_generation == 0 || sts.metadata.generation > s.observed_generation {
        return Ok(("Waiting for statefulset spec update to be observed...".into(), false));
    }
    let replicas = sts.spec.replicas;
    if let Some(r) = replicas.filter(|r| s.ready_replicas < *r) {
        return Ok((format!("Waiting for {} pods to be ready...", r - s.ready_replicas), false));
    }
    if let Some(ru) = &sts.spec.update_strategy.rolling_update {
        if let (Some(r), Some(p)) = (replicas, ru.partition) {
            if s.updated_replicas < r - p {
                let line = format!(
                    "Waiting for partitioned roll out to finish: {} out of {} new pods have been updated...",
                    s.updated_replicas,
                    r - p
                );
                return Ok((line, false));
            }
        }
        return Ok((format!("partitioned roll out complete: {} new pods have been updated...", s.updated_replicas), true));
    }
    if s.update_revision != s.current_revision {
        let line =
            format!("waiting for statefulset rolling update to complete {} pods at revision {}...", s.updated_replicas, s.update_revision);
        return Ok((line, false));
    }
    Ok((format!("statefulset rolling update complete {} pods at revision {}...", s.current_replicas, s.current_revision), true))
}

/// One look at a daemon set or stateful set for `rollout status`: prints a new line when the
/// status changed. `Some(true)` to keep waiting, `Some(false)` when done (or not waiting),
/// `None` on an error.
fn workload_step(
    session: &Session,
    key: &ObjectKey,
    wait: bool,
    last_rv: &mut u64,
    last_line: &mut String,
    out: &mut CommandOutput,
) -> Option<bool> {
    let Some(object) = session.sim().api().get(key).cloned() else {
        out.fail(&crate::api::ApiError::not_found(key.kind, &key.name).kubectl_message());
        return None;
    };
    if object.meta().resource_version == *last_rv {
        return Some(true);
    }
    *last_rv = object.meta().resource_version;
    let line = match &*object {
        Object::DaemonSet(ds) => daemon_set_status_line(ds),
        Object::StatefulSet(sts) => stateful_set_status_line(sts),
        _ => return None,
    };
    match line {
        Ok((line, done)) => {
            if line != *last_line {
                out.say(&line);
                *last_line = line;
            }
            Some(!done && wait)
        }
        Err(e) => {
            out.fail(&e);
            None
        }
    }
}

/// Moves the session forward by one delivery, not past `deadline`. False once the deadline is
/// reached.
fn step_until(session: &mut Session, deadline: Time) -> bool {
    match session.sim().next_time() {
        Some(t) if t <= deadline => {
            session.advance_to(t);
            true
        }
        _ => {
            session.advance_to(deadline);
            false
        }
    }
}

/// The revision of each ReplicaSet of a deployment, highest last.
fn revisions(session: &Session, d: &Deployment) -> Vec<(i64, ReplicaSet)> {
    let (old, new) = deployment_replica_sets(session.sim(), d);
    let mut revs: Vec<(i64, ReplicaSet)> = old
        .into_iter()
        .chain(new)
        .filter_map(|o| {
            let rs = o.as_replica_set()?.clone();
            let rev = rs.metadata.annotations.get("deployment.kubernetes.io/revision")?.parse::<i64>().ok()?;
            Some((rev, rs))
        })
        .collect();
    crate::sort::sort_by_key(&mut revs, |(r, _)| *r);
    revs
}

fn history(session: &mut Session, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags("rollout history", args, &[FlagSpec::new("revision", None, FlagKind::Int(64))]) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let revision = f.int("revision").unwrap_or(0);
    if revision < 0 {
        return CommandOutput::err(format!("error: revision must be a positive integer: {revision}"));
    }
    let ns = namespace(&f);
    let targets = match deployments(session, "history", &positional, &ns) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let mut out = CommandOutput::empty();
    for target in targets {
        if let Some(sts) = target.as_stateful_set() {
            stateful_set_history(session, sts, revision, &mut out);
            continue;
        }
        if let Some(ds) = target.as_daemon_set() {
            daemon_set_history(session, ds, revision, &mut out);
            continue;
        }
        let Some(d) = target.as_deployment() else { continue };
        let revs = revisions(session, d);
        let head = format!("{}/{}", kind_string(Kind::Deployment), d.metadata.name);
        if revision > 0 {
            match revs.iter().find(|(r, _)| *r == revision) {
                Some((_, rs)) => {
                    let mut template = rs.spec.template.clone();
                    if let Some(cause) = rs.metadata.annotations.get("kubernetes.io/change-cause") {
                        template.metadata.annotations.insert("kubernetes.io/change-cause".into(), cause.clone());
                    }
                    out.stdout.push_str(&format!("{head} with revision #{revision}\n{}\n", super::describe::pod_template_raw(&template)));
                }
                None => out.fail("error: unable to find the specified revision"),
            }
            continue;
        }
        if revs.is_empty() {
            out.stdout.push_str(&format!("{head} \nNo rollout history found.\n"));
            continue;
        }
        let mut table = String::from("REVISION\tCHANGE-CAUSE\n");
        for (r, rs) in &revs {
            let cause =
                rs.metadata.annotations.get("kubernetes.io/change-cause").filter(|c| !c.is_empty()).map(String::as_str).unwrap_or("<none>");
            table.push_str(&format!("{r}\t{cause}\n"));
        }
        out.stdout.push_str(&format!("{head} \n{}\n", tabbed(0, 2, &table)));
    }
    out
}

/// Annotations a rollback keeps from the Deployment instead of copying from the ReplicaSet.
const ANNOTATIONS_TO_SKIP: &[&str] = &[
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/revision",
    "deployment.kubernetes.io/revision-history",
    "deployment.kubernetes.io/desired-replicas",
    "deployment.kubernetes.io/max-replicas",
    "deprecated.deployment.rollback.to",
];

fn undo(session: &mut Session, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags(
        "rollout undo",
        args,
        &[FlagSpec::new("to-revision", None, FlagKind::Int(64)), FlagSpec::new("dry-run", None, FlagKind::String)],
    ) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let to_revision = f.int("to-revision").unwrap_or(0);
    let ns = namespace(&f);
    let targets = match deployments(session, "undo", &positional, &ns) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let mut out = CommandOutput::empty();
    for target in targets {
        if let Some(ds) = target.as_daemon_set() {
            undo_daemon_set(session, ds.clone(), to_revision, &mut out);
            continue;
        }
        if let Some(sts) = target.as_stateful_set() {
            undo_stateful_set(session, sts.clone(), to_revision, &mut out);
            continue;
        }
        let Some(d) = target.as_deployment().cloned() else { continue };
        let head = format!("{}/{}", kind_string(Kind::Deployment), d.metadata.name);
        if to_revision < 0 {
            out.fail(&format!("error: unable to find specified revision {to_revision} in history"));
            continue;
        }
        let revs = revisions(session, &d);
        let chosen = if to_revision == 0 {
            if revs.len() < 2 {
                out.fail(&format!("error: no rollout history found for deployment {:?}", d.metadata.name));
                continue;
            }
            revs[revs.len() - 2].clone()
        } else {
            match revs.iter().find(|(r, _)| *r == to_revision) {
                Some(r) => r.clone(),
                None => {
                    out.fail(&format!("error: unable to find specified revision {to_revision} in history"));
                    continue;
                }
            }
        };
        let (rev, rs) = chosen;
        if d.spec.paused {
            out.fail(&format!(
                "error: you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume deployment/{}' and try again",
                d.metadata.name
            ));
            continue;
        }
        if equal_ignore_hash(&rs.spec.template, &d.spec.template) {
            out.say(&format!("{head} skipped rollback (current template already matches revision {rev})"));
            continue;
        }
        let mut next = d.clone();
        next.spec.template = rs.spec.template.clone();
        next.spec.template.metadata.labels.remove("pod-template-hash");
        let mut annotations = StringMap::new();
        for k in ANNOTATIONS_TO_SKIP {
            if let Some(v) = d.metadata.annotations.get(*k) {
                annotations.insert(k.to_string(), v.clone());
            }
        }
        for (k, v) in &rs.metadata.annotations {
            if !ANNOTATIONS_TO_SKIP.contains(&k.as_str()) {
                annotations.insert(k.clone(), v.clone());
            }
        }
        next.metadata.annotations = annotations;
        match update_deployment(session, next) {
            Ok(_) => out.say(&format!("{head} rolled back")),
            Err(e) => out.fail(&format!("error: failed restoring revision {rev}: {e}")),
        }
    }
    out
}

/// `rollout restart` (a new `restartedAt` template annotation), `pause` and `resume`.
fn toggle(session: &mut Session, sub: &str, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags(&format!("rollout {sub}"), args, &[]) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let ns = namespace(&f);
    let targets = match deployments(session, sub, &positional, &ns) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let mut out = CommandOutput::empty();
    for target in targets {
        if let Some(ds) = target.as_daemon_set() {
            restart_daemon_set(session, ds.clone(), &mut out);
            continue;
        }
        if let Some(sts) = target.as_stateful_set() {
            restart_stateful_set(session, sts.clone(), &mut out);
            continue;
        }
        let Some(d) = target.as_deployment().cloned() else { continue };
        let head = format!("{}/{}", kind_string(Kind::Deployment), d.metadata.name);
        let mut next = d.clone();
        let verb = match sub {
            "pause" if d.spec.paused => {
                out.fail(&format!("error: {head} is already paused"));
                continue;
            }
            "resume" if !d.spec.paused => {
                out.fail(&format!("error: {head} is not paused"));
                continue;
            }
            "restart" if d.spec.paused => {
                out.fail("error: can't restart paused deployment (run rollout resume first)");
                continue;
            }
            "pause" => {
                next.spec.paused = true;
                "paused"
            }
            "resume" => {
                next.spec.paused = false;
                "resumed"
            }
            _ => {
                let now = session.sim().now().rfc3339();
                next.spec.template.metadata.annotations.insert("kubectl.kubernetes.io/restartedAt".into(), now);
                "restarted"
            }
        };
        match update_deployment(session, next) {
            Ok(_) => out.say(&format!("{head} {verb}")),
            Err(e) => out.fail(&e),
        }
    }
    out
}

/// `rollout restart daemonset/NAME`: the same template annotation, so every pod is replaced
/// within the update strategy's budget.
fn restart_daemon_set(session: &mut Session, mut ds: DaemonSet, out: &mut CommandOutput) {
    let head = format!("{}/{}", kind_string(Kind::DaemonSet), ds.metadata.name);
    let now = session.sim().now().rfc3339();
    ds.spec.template.metadata.annotations.insert("kubectl.kubernetes.io/restartedAt".into(), now);
    match super::submit(session, crate::api::ApiRequest::Update(Object::DaemonSet(ds))) {
        Ok(_) => out.say(&format!("{head} restarted")),
        Err(e) => out.fail(&e.kubectl_message()),
    }
}

/// `rollout restart statefulset/NAME`: the restartedAt template annotation, a new revision the
/// controller rolls out from the highest ordinal down.
fn restart_stateful_set(session: &mut Session, mut sts: StatefulSet, out: &mut CommandOutput) {
    let head = format!("{}/{}", kind_string(Kind::StatefulSet), sts.metadata.name);
    let now = session.sim().now().rfc3339();
    sts.spec.template.metadata.annotations.insert("kubectl.kubernetes.io/restartedAt".into(), now);
    match super::submit(session, crate::api::ApiRequest::Update(Object::StatefulSet(sts))) {
        Ok(_) => out.say(&format!("{head} restarted")),
        Err(e) => out.fail(&e.kubectl_message()),
    }
}

/// The ControllerRevisions an object controls, by revision number (`controlledHistoryV1`,
/// `controlledHistory`): a stateful set's or a daemon set's rollout history.
fn controller_revisions(session: &Session, owner_uid: &str) -> Vec<ControllerRevision> {
    let mut revs: Vec<ControllerRevision> = session
        .sim()
        .objects(Kind::ControllerRevision)
        .filter_map(|o| o.as_controller_revision())
        .filter(|r| r.metadata.controller_ref().is_some_and(|c| c.uid == owner_uid))
        .cloned()
        .collect();
    crate::sort::sort_by_key(&mut revs, |r| r.revision);
    revs
}

/// `printHistory`, shared by kubectl's StatefulSetHistoryViewer and DaemonSetHistoryViewer: each
/// revision's change cause, or one revision's template.
fn revision_history(head: &str, revs: &[ControllerRevision], revision: i64, out: &mut CommandOutput) {
    if revision > 0 {
        match revs.iter().find(|r| r.revision == revision) {
            Some(r) => {
                let template = super::describe::pod_template_raw(&r.data.spec.template);
                out.stdout.push_str(&format!("{head} with revision #{revision}\n{template}\n"));
            }
            None => out.fail("error: unable to find the specified revision"),
        }
        return;
    }
    if revs.is_empty() {
        out.stdout.push_str(&format!("{head} \nNo rollout history found.\n"));
        return;
    }
    let mut table = String::from("REVISION\tCHANGE-CAUSE\n");
    for r in revs {
        let cause =
            r.metadata.annotations.get("kubernetes.io/change-cause").filter(|c| !c.is_empty()).map(String::as_str).unwrap_or("<none>");
        table.push_str(&format!("{}\t{cause}\n", r.revision));
    }
    out.stdout.push_str(&format!("{head} \n{}\n", tabbed(0, 2, &table)));
}

/// `rollout history statefulset/NAME` (StatefulSetHistoryViewer).
fn stateful_set_history(session: &Session, sts: &StatefulSet, revision: i64, out: &mut CommandOutput) {
    let head = format!("{}/{}", kind_string(Kind::StatefulSet), sts.metadata.name);
    revision_history(&head, &controller_revisions(session, &sts.metadata.uid), revision, out);
}

/// `rollout history daemonset/NAME` (DaemonSetHistoryViewer).
fn daemon_set_history(session: &Session, ds: &DaemonSet, revision: i64, out: &mut CommandOutput) {
    let head = format!("{}/{}", kind_string(Kind::DaemonSet), ds.metadata.name);
    revision_history(&head, &controller_revisions(session, &ds.metadata.uid), revision, out);
}

/// The rollbackers' shared choice (StatefulSetRollbacker, DaemonSetRollbacker): the template of
/// the revision to return to, `Ok(None)` when the current template already is that revision's
/// (kubectl skips the rollback, naming the revision as it was asked for: 0 for "the previous"),
/// or kubectl's error.
fn rollback_template(
    revs: &[ControllerRevision],
    to_revision: i64,
    current: &Shared<PodTemplateSpec>,
    head: &str,
    out: &mut CommandOutput,
) -> Option<Shared<PodTemplateSpec>> {
    if to_revision < 0 {
        out.fail(&format!("error: unable to find specified revision {to_revision} in history"));
        return None;
    }
    let chosen = if to_revision == 0 {
        // `findHistory(0, …)`: the second highest revision.
        if revs.len() <= 1 {
            out.fail("error: no last revision to roll back to");
            return None;
        }
        &revs[revs.len() - 2]
    } else {
        match revs.iter().find(|r| r.revision == to_revision) {
            Some(r) => r,
            None => {
                out.fail(&format!("error: unable to find specified revision {to_revision} in history"));
                return None;
            }
        }
    };
    if chosen.data.spec.template == *current {
        out.say(&format!("{head} skipped rollback (current template already matches revision {to_revision})"));
        return None;
    }
    Some(chosen.data.spec.template.clone())
}

/// `rollout undo statefulset/NAME` (StatefulSetRollbacker): the chosen revision's template put
/// back into the set; the controller then takes that revision up again as the newest.
fn undo_stateful_set(session: &mut Session, mut sts: StatefulSet, to_revision: i64, out: &mut CommandOutput) {
    let head = format!("{}/{}", kind_string(Kind::StatefulSet), sts.metadata.name);
    let revs = controller_revisions(session, &sts.metadata.uid);
    let Some(template) = rollback_template(&revs, to_revision, &sts.spec.template, &head, out) else { return };
    sts.spec.template = template;
    match super::submit(session, crate::api::ApiRequest::Update(Object::StatefulSet(sts))) {
        Ok(_) => out.say(&format!("{head} rolled back")),
        Err(e) => out.fail(&format!("error: failed restoring revision {to_revision}: {}", e.message)),
    }
}

/// `rollout undo daemonset/NAME` (DaemonSetRollbacker): the chosen revision's template patched
/// back into the daemon set; its controller renumbers that revision as the newest and rolls the
/// pods back to its hash.
fn undo_daemon_set(session: &mut Session, mut ds: DaemonSet, to_revision: i64, out: &mut CommandOutput) {
    let head = format!("{}/{}", kind_string(Kind::DaemonSet), ds.metadata.name);
    let revs = controller_revisions(session, &ds.metadata.uid);
    let Some(template) = rollback_template(&revs, to_revision, &ds.spec.template, &head, out) else { return };
    ds.spec.template = template;
    match super::submit(session, crate::api::ApiRequest::Update(Object::DaemonSet(ds))) {
        Ok(_) => out.say(&format!("{head} rolled back")),
        Err(e) => out.fail(&format!("error: failed restoring revision {to_revision}: {}", e.message)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stateful_set_status_lines_are_kubectls() {
        let sts = |replicas: i32, partition: Option<i32>, status: StatefulSetStatus| {
            let mut sts = StatefulSet::default();
            sts.metadata.name = "web".into();
            sts.metadata.generation = 2;
            sts.spec.replicas = Some(replicas);
            sts.spec.update_strategy = StatefulSetUpdateStrategy {
                type_: Some("RollingUpdate".into()),
                rolling_update: Some(RollingUpdateStatefulSetStrategy { partition }),
            };
            sts.status = StatefulSetStatus { observed_generation: 2, ..status };
            sts
        };
        let seen =
            |ready, updated| StatefulSetStatus { replicas: 3, ready_replicas: ready, updated_replicas: updated, ..Default::default() };
        let line = |s: &StatefulSet| stateful_set_status_line(s).unwrap();
        let mut unobserved = sts(3, Some(0), seen(3, 3));
        unobserved.status.observed_generation = 1;
        assert_eq!(line(&unobserved), ("Waiting for statefulset spec update to be observed...".into(), false));
        assert_eq!(line(&sts(3, Some(0), seen(1, 1))), ("Waiting for 2 pods to be ready...".into(), false));
        assert_eq!(
            line(&sts(3, Some(1), seen(3, 1))),
            ("Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...".into(), false)
        );
        assert_eq!(line(&sts(3, Some(0), seen(3, 3))), ("partitioned roll out complete: 3 new pods have been updated...".into(), true));
        let mut on_delete = sts(3, None, seen(3, 3));
        on_delete.spec.update_strategy = StatefulSetUpdateStrategy { type_: Some("OnDelete".into()), rolling_update: None };
        assert_eq!(
            stateful_set_status_line(&on_delete).unwrap_err(),
            "error: rollout status is only available for RollingUpdate strategy type"
        );
    }

    fn deployment(generation: i64, observed: i64, replicas: i32, status: DeploymentStatus) -> Deployment {
        let mut d = Deployment::default();
        d.metadata.name = "web".into();
        d.metadata.generation = generation;
        d.spec.replicas = Some(replicas);
        d.status = DeploymentStatus { observed_generation: observed, ..status };
        d
    }

    #[test]
    fn daemon_set_status_lines_are_kubectls() {
        let ds = |generation: i64, status: DaemonSetStatus| {
            let mut ds = DaemonSet::default();
            ds.metadata.name = "agent".into();
            ds.metadata.generation = generation;
            ds.status = status;
            ds
        };
        let line = |d: &DaemonSet| daemon_set_status_line(d);
        let seen = |updated, available| DaemonSetStatus {
            observed_generation: 2,
            desired_number_scheduled: 3,
            updated_number_scheduled: updated,
            number_available: available,
            ..Default::default()
        };
        assert_eq!(line(&ds(3, seen(3, 3))), Ok(("Waiting for daemon set spec update to be observed...".into(), false)));
        assert_eq!(
            line(&ds(2, seen(1, 3))),
            Ok(("Waiting for daemon set \"agent\" rollout to finish: 1 out of 3 new pods have been updated...".into(), false))
        );
        assert_eq!(
            line(&ds(2, seen(3, 2))),
            Ok(("Waiting for daemon set \"agent\" rollout to finish: 2 of 3 updated pods are available...".into(), false))
        );
        assert_eq!(line(&ds(2, seen(3, 3))), Ok(("daemon set \"agent\" successfully rolled out".into(), true)));
        let mut on_delete = ds(2, seen(3, 3));
        on_delete.spec.update_strategy.type_ = Some("OnDelete".into());
        assert_eq!(line(&on_delete), Err("error: rollout status is only available for RollingUpdate strategy type".into()));
    }

    #[test]
    fn status_lines_are_kubectls() {
        let sim = crate::sim::Sim::empty(0);
        let line = |d: &Deployment| status_line(&sim, d).map(|(l, _)| l);
        assert_eq!(line(&deployment(2, 1, 3, Default::default())).unwrap(), "Waiting for deployment spec update to be observed...");
        let s = DeploymentStatus { updated_replicas: 1, replicas: 3, ..Default::default() };
        assert_eq!(
            line(&deployment(2, 2, 3, s)).unwrap(),
            "Waiting for deployment \"web\" rollout to finish: 1 out of 3 new replicas have been updated..."
        );
        let s = DeploymentStatus { updated_replicas: 3, replicas: 4, ..Default::default() };
        assert_eq!(
            line(&deployment(2, 2, 3, s)).unwrap(),
            "Waiting for deployment \"web\" rollout to finish: 1 old replicas are pending termination..."
        );
        let s = DeploymentStatus { updated_replicas: 3, replicas: 3, available_replicas: 1, ..Default::default() };
        assert_eq!(
            line(&deployment(2, 2, 3, s)).unwrap(),
            "Waiting for deployment \"web\" rollout to finish: 1 of 3 updated replicas are available..."
        );
        let s = DeploymentStatus { updated_replicas: 3, replicas: 3, available_replicas: 3, ..Default::default() };
        assert_eq!(status_line(&sim, &deployment(2, 2, 3, s)).unwrap(), ("deployment \"web\" successfully rolled out".to_string(), true));
        let s = DeploymentStatus {
            conditions: vec![DeploymentCondition {
                type_: "Progressing".into(),
                status: "False".into(),
                reason: Some("ProgressDeadlineExceeded".into()),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(status_line(&sim, &deployment(1, 1, 3, s)).unwrap_err(), "error: deployment \"web\" exceeded its progress deadline");
    }
}
