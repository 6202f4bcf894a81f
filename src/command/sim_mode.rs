//! `sim mode level|edge [CONTROLLER]`: switch controllers between level-triggered
//! reconciliation and edge-triggered handlers (see `controllers::edge`).
//!
//! Without a CONTROLLER, `edge` switches every controller that has an edge handler (replicaset
//! and deployment) and `level` switches them all back. `sim mode` alone lists the modes.

use super::{CommandOutput, Session};
use crate::controllers::edge::{self, Mode};
use crate::controllers::manager::ControllerManager;

const USAGE: &str = "error: sim mode takes level or edge and optionally a controller: sim mode edge replicaset";

/// The controllers `sim mode` switches when none is named.
const SWITCHABLE: [&str; 2] = ["replicaset-controller", "deployment-controller"];

pub fn run(session: &mut Session, args: &[String]) -> CommandOutput {
    let Some(manager) = session.sim().controller_manager() else {
        return CommandOutput::err("error: this cluster has no kube-controller-manager");
    };
    match args {
        [] => CommandOutput::out(listing(manager)),
        [word] | [word, _] => {
            let Some(mode) = Mode::parse(word) else {
                return CommandOutput::err(format!("{USAGE}\nunknown mode {word:?}"));
            };
            let names: Vec<String> = match args.get(1) {
                Some(c) => vec![edge::loop_name(c).to_string()],
                None => SWITCHABLE.iter().map(|s| s.to_string()).collect(),
            };
            // Back to level re-queues every object: the Sim asks the manager for its wake-up
            // again after the switch, so it turns now, not at its next timer.
            session.sim_mut().update_controller_manager(|manager| switch(manager, &names, mode)).unwrap_or_else(CommandOutput::empty)
        }
        _ => CommandOutput::err(USAGE),
    }
}

fn switch(manager: &mut ControllerManager, names: &[String], mode: Mode) -> CommandOutput {
    let mut out = CommandOutput::empty();
    for name in names {
        match manager.set_mode(name, mode) {
            Ok(()) => out.say(&format!("{name}: {}-triggered", mode.as_str())),
            Err(e) => out.fail(&format!("error: {e}")),
        }
    }
    out
}

fn listing(manager: &ControllerManager) -> String {
    SWITCHABLE.iter().map(|name| format!("{name}: {}-triggered", manager.mode(name).as_str())).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use crate::command::{CommandOutput, Scenario, Session};

    fn mode(s: &mut Session, line: &str) -> CommandOutput {
        let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        super::run(s, &args)
    }

    #[test]
    fn modes_switch_and_bad_words_change_nothing() {
        let mut s = Session::new(Scenario::builtin("default").expect("scenario"), Some(1)).expect("session");
        assert_eq!(mode(&mut s, "").stdout, "replicaset-controller: level-triggered\ndeployment-controller: level-triggered\n");
        assert_eq!(mode(&mut s, "edge replicaset").stdout, "replicaset-controller: edge-triggered\n");
        let bad = mode(&mut s, "edge garbagecollector");
        assert!(!bad.ok);
        assert_eq!(bad.stderr, "error: garbage-collector-controller has no edge-triggered mode (replicaset and deployment have)\n");
        assert!(!mode(&mut s, "sideways").ok);
        assert!(!mode(&mut s, "edge nosuch").ok);
        assert!(!mode(&mut s, "edge replicaset extra").ok);
        assert_eq!(mode(&mut s, "").stdout, "replicaset-controller: edge-triggered\ndeployment-controller: level-triggered\n");
        assert_eq!(mode(&mut s, "level").stdout, "replicaset-controller: level-triggered\ndeployment-controller: level-triggered\n");
    }
}
