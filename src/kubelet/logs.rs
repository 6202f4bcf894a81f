//! A container's log, as the kubelet serves it to `kubectl logs` (`pods/log`): what the
//! container model says the container's program wrote (`container_model`), from the start of
//! its current instance (or, with `previous`, of the one before) to now or to its end, and the
//! kubelet's refusals when there is no such container to read.
//!
//! The log follows from the pod's status alone (each instance's start and finish), so it needs
//! no state of its own and reads the same whichever node or kubelet process served it.

use super::container_model::Program;
use crate::model::{Pod, Time};

/// A container's log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerLog {
    pub text: String,
    /// False when the program printed something the model does not know (a mounted file's
    /// contents): the text then holds only what the model does know.
    pub complete: bool,
}

/// The log of `container` (or of the pod's only container) in `pod` at `now`; the error is
/// kube-apiserver's or the kubelet's message for a 400.
pub fn container_log(pod: &Pod, container: Option<&str>, previous: bool, now: Time) -> Result<ContainerLog, String> {
    let name = &pod.metadata.name;
    let spec = match container {
        Some(c) => pod.spec.containers.iter().find(|x| x.name == c).ok_or_else(|| format!("container {c} is not valid for pod {name}"))?,
        None => match pod.spec.containers.as_slice() {
            [only] => only,
            all => {
                let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
                return Err(format!("a container name must be specified for pod {name}, choose one of: [{}]", names.join(" ")));
            }
        },
    };
    if pod.spec.node_name.as_deref().unwrap_or_default().is_empty() {
        return Err(format!("pod {name} does not have a host assigned"));
    }
    let status = pod.status.container_statuses.iter().find(|s| s.name == spec.name);
    let (started, until) = if previous {
        let last = status.and_then(|s| s.last_state.terminated.as_ref());
        let last = last.ok_or_else(|| format!("previous terminated container \"{}\" in pod \"{name}\" not found", spec.name))?;
        (last.started_at, last.finished_at.unwrap_or(now))
    } else {
        let state = status.map(|s| &s.state);
        if let Some(running) = state.and_then(|s| s.running.as_ref()) {
            (running.started_at, now)
        } else if let Some(done) = state.and_then(|s| s.terminated.as_ref()) {
            (done.started_at, done.finished_at.unwrap_or(now))
        } else {
            let reason = state.and_then(|s| s.waiting.as_ref()).and_then(|w| w.reason.as_deref()).unwrap_or("ContainerCreating");
            return Err(format!("container \"{}\" in pod \"{name}\" is waiting to start: {reason}", spec.name));
        }
    };
    let elapsed = started.map_or(crate::model::Duration(0), |s| until.since(s));
    let (text, complete) = Program::of(spec).output_at(elapsed, !spec.volume_mounts.is_empty());
    Ok(ContainerLog { text, complete })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Container, ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStatus};

    fn pod(command: &[&str], started: Option<Time>) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.name = "hello".into();
        pod.spec.node_name = Some("node-1".into());
        let c = Container {
            name: "box".into(),
            image: "busybox:1.36".into(),
            command: command.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        pod.spec.containers = vec![c].into();
        let mut status = ContainerStatus { name: "box".into(), ..Default::default() };
        match started {
            Some(at) => {
                status.state = ContainerState { running: Some(ContainerStateRunning { started_at: Some(at) }), ..Default::default() }
            }
            None => {
                status.state.waiting = Some(crate::model::ContainerStateWaiting { reason: Some("ContainerCreating".into()), message: None })
            }
        }
        pod.status.container_statuses = vec![status];
        pod
    }

    #[test]
    fn a_script_has_written_what_it_echoed_by_now() {
        let p = pod(&["sh", "-c", "echo one; sleep 10; echo two; sleep 3600"], Some(Time(1000)));
        assert_eq!(container_log(&p, None, false, Time(5000)).unwrap().text, "one\n");
        assert_eq!(container_log(&p, Some("box"), false, Time(12_000)).unwrap().text, "one\ntwo\n");
        assert_eq!(container_log(&p, Some("nope"), false, Time(0)).unwrap_err(), "container nope is not valid for pod hello");
        assert_eq!(
            container_log(&p, None, true, Time(5000)).unwrap_err(),
            "previous terminated container \"box\" in pod \"hello\" not found"
        );
        let waiting = pod(&["sh", "-c", "echo one"], None);
        assert_eq!(
            container_log(&waiting, None, false, Time(0)).unwrap_err(),
            "container \"box\" in pod \"hello\" is waiting to start: ContainerCreating"
        );
    }

    #[test]
    fn previous_is_the_instance_before_and_mounted_reads_are_not_invented() {
        let mut p = pod(&["sh", "-c", "echo starting; sleep 5; echo crashing; exit 1"], Some(Time(40_000)));
        p.status.container_statuses[0].last_state.terminated = Some(ContainerStateTerminated {
            exit_code: 1,
            started_at: Some(Time(30_000)),
            finished_at: Some(Time(35_020)),
            ..Default::default()
        });
        assert_eq!(container_log(&p, None, true, Time(41_000)).unwrap().text, "starting\ncrashing\n");
        assert_eq!(container_log(&p, None, false, Time(41_000)).unwrap().text, "starting\n");
        // A script that reads a file a volume projects: what the model knows, marked incomplete.
        let mut mounted = pod(&["sh", "-c", "echo config:; cat /etc/config/app.conf; sleep 3600"], Some(Time(0)));
        mounted.spec.containers[0].volume_mounts =
            vec![crate::model::VolumeMount { name: "config".into(), mount_path: "/etc/config".into(), ..Default::default() }];
        let log = container_log(&mounted, None, false, Time(1000)).unwrap();
        assert_eq!((log.text.as_str(), log.complete), ("config:\n", false));
        let mut unscheduled = pod(&["sh", "-c", "echo one"], None);
        unscheduled.spec.node_name = None;
        assert_eq!(container_log(&unscheduled, None, false, Time(0)).unwrap_err(), "pod hello does not have a host assigned");
    }
}
