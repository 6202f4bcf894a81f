//! The real kubectl against `kubeloop serve`: the judge of the served API.
//!
//! A served cluster and a console session of the same scenario and seed, moved to the same
//! simulated time, are the same cluster; so what the real kubectl prints from the server must be
//! what kubeloop's console prints for the same command (ages aside where kubectl computes them
//! from its own clock, as `describe` does). The worked example runs end to end at speed. Needs
//! a kubectl (`$KUBECTL`, the PATH, or `scripts/setup.sh`'s): skipped without one, except in CI,
//! where it fails.

#[path = "support/serve.rs"]
mod serve;

use kubeloop::command::{Scenario, Session};
use serve::{kubectl_or_skip, run, Server};

const SEED: &str = "7";

/// A console session of the default scenario at the same simulated time as a paused server.
fn console(advance: &str) -> Session {
    let mut session = Session::new(Scenario::builtin("default").unwrap(), Some(SEED.parse().unwrap())).unwrap();
    let out = session.execute(&format!("sim advance {advance}"));
    assert!(out.ok, "{}", out.stderr);
    session
}

/// A paused server of the default scenario, moved on to `advance`.
fn paused(advance: &str) -> Server {
    let server = Server::start(&["--seed", SEED, "--speed", "0"]);
    server.sim(&format!("advance {advance}"));
    server
}

/// The text with every age (`5s`, `2m30s`, `338d`, `<unknown>`) replaced and runs of spaces
/// collapsed, since an age's width moves the columns after it.
fn without_ages(text: &str) -> String {
    let is_age = |w: &str| {
        let w = w.trim_end_matches(',');
        !w.is_empty()
            && w.chars().next().is_some_and(|c| c.is_ascii_digit())
            && w.chars().all(|c| c.is_ascii_digit() || "smhdy".contains(c))
            && w.chars().last().is_some_and(|c| "smhdy".contains(c))
    };
    text.lines()
        .map(|line| line.split_whitespace().map(|w| if is_age(w) { "AGE" } else { w }).collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn get_prints_what_the_console_prints() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = paused("30s");
    let mut session = console("30s");
    let pod = session.sim().objects(kubeloop::model::Kind::Pod).next().unwrap().meta().name.to_string();
    let commands: Vec<Vec<&str>> = vec![
        vec!["get", "nodes"],
        vec!["get", "nodes", "-o", "wide"],
        vec!["get", "pods"],
        vec!["get", "pods", "-o", "wide"],
        vec!["get", "pods", "-A"],
        vec!["get", "pods", "-l", "app=web"],
        vec!["get", "pods", "--field-selector", "spec.nodeName=node-1"],
        vec!["get", "pod", &pod, "-o", "yaml"],
        vec!["get", "pod", &pod, "-o", "json"],
        vec!["get", "pods", "-o", "yaml"],
        vec!["get", "pods", "-o", "name"],
        vec!["get", "deployments"],
        vec!["get", "deployments", "-o", "wide"],
        vec!["get", "replicasets", "-o", "wide"],
        vec!["get", "services", "-o", "wide"],
        vec!["get", "services", "-A"],
        vec!["get", "namespaces"],
        vec!["get", "pods", "-n", "kube-system"],
        vec!["get", "deployment", "nope"],
    ];
    let mut failures = Vec::new();
    for args in &commands {
        let real = run(&kubectl, &server, args);
        let line = format!("kubectl {}", args.iter().map(|a| if a.contains(' ') { format!("'{a}'") } else { a.to_string() }).collect::<Vec<_>>().join(" "));
        let ours = session.execute(&line);
        if (real.stdout.as_str(), real.stderr.trim_end(), real.ok) != (ours.stdout.as_str(), ours.stderr.trim_end(), ours.ok) {
            failures.push(format!(
                "$ {line}\n--- real kubectl ({}):\n{}{}\n--- console ({}):\n{}{}",
                real.ok, real.stdout, real.stderr, ours.ok, ours.stdout, ours.stderr
            ));
        }
    }
    assert!(failures.is_empty(), "{} of {} differ:\n{}", failures.len(), commands.len(), failures.join("\n"));
}

/// `-o jsonpath`, which the console does not print, reads the served objects' fields.
#[test]
fn jsonpath_reads_the_served_objects() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = paused("30s");
    let session = console("30s");
    let pods: Vec<serde_json::Value> = session.sim().objects(kubeloop::model::Kind::Pod).map(|p| p.to_json()).collect();
    let field = |path: &str| pods.iter().map(|p| p.pointer(path).and_then(|v| v.as_str()).unwrap_or_default().to_string()).collect::<Vec<_>>();
    let expected = format!("{} {}", field("/metadata/name").join(" "), field("/status/podIP").join(" "));
    let real = run(&kubectl, &server, &["get", "pods", "-o=jsonpath={.items[*].metadata.name} {.items[*].status.podIP}"]);
    assert!(real.ok, "{}", real.stderr);
    assert_eq!(real.stdout, expected);
    assert_eq!(pods.len(), 3, "the default scenario's Deployment has three pods by 30s");
    let real = run(&kubectl, &server, &["get", "deployment", "web", "-o=jsonpath={.status.availableReplicas}/{.spec.replicas}"]);
    assert_eq!(real.stdout, "3/3", "{}", real.stderr);
}

#[test]
fn describe_computes_what_the_console_describes() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = paused("30s");
    let mut session = console("30s");
    let pod = session.sim().objects(kubeloop::model::Kind::Pod).next().unwrap().meta().name.to_string();
    for args in [vec!["describe", "pod", pod.as_str()], vec!["describe", "deployment", "web"], vec!["describe", "node", "node-1"]] {
        let real = run(&kubectl, &server, &args);
        assert!(real.ok, "{}", real.stderr);
        let ours = session.execute(&format!("kubectl {}", args.join(" ")));
        // A known difference, left for the model: a real kube-apiserver's ServiceAccount admission
        // sets a pod's `spec.serviceAccountName` (and mounts its token), which kubeloop's pods do
        // not carry, so the real kubectl has no "Service Account:" line to print; the console
        // prints the `default` that admission would have set.
        let ours: String = ours.stdout.lines().filter(|l| !l.starts_with("Service Account:")).map(|l| format!("{l}\n")).collect();
        assert_eq!(without_ages(&real.stdout), without_ages(&ours), "kubectl {}", args.join(" "));
    }
}
