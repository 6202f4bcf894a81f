//! The stage: the page's one live picture, where the architecture diagram is the interface.
//!
//! The control plane sits across the top (kube-apiserver, etcd, kube-controller-manager with a
//! row per controller, kube-scheduler), the nodes below with their kubelet and pods, and the
//! pods no node has yet wait in between. Messages travel between the boxes as labelled tokens.
//!
//! This module decides, as plain data, what the page would otherwise have to decide while
//! drawing: which component sits where (so a new loop — a kube-proxy per node, another
//! controller — slots into the layout it belongs to instead of needing a new one), what a
//! token says and which boxes it joins, what the caption strip says when story mode has no
//! caption, the pod colour legend, and the replicas box's command line. The page only renders.

use crate::lesson::Lesson;
use crate::view::cluster::ClusterView;
use crate::view::flow::Hop;
use crate::view::loops::ComponentView;
use crate::view::page::scale_command;
use crate::view::story::{Caption, Replacement};

/// Processes that run once per node, named `PROCESS-NODE`: they are drawn inside their node's
/// box, not on the control plane row. kube-proxy joins the kubelet here when it arrives.
pub const PER_NODE: [&str; 2] = ["kubelet", "kube-proxy"];

/// Whether component `name` runs on a node (and so belongs in a node box).
pub fn is_per_node(name: &str) -> bool {
    PER_NODE.iter().any(|p| name.strip_prefix(p).is_some_and(|rest| rest.starts_with('-')))
}

/// The control plane row: every component that is not per node, in the order given (the
/// library's: kube-apiserver, etcd, kube-controller-manager, kube-scheduler, then any other).
pub fn plane(components: &[ComponentView]) -> Vec<&ComponentView> {
    components.iter().filter(|c| !is_per_node(&c.name)).collect()
}

/// The processes of node `node`, in [`PER_NODE`] order.
pub fn on_node(components: &[ComponentView], node: &str) -> Vec<ComponentView> {
    let mut out: Vec<ComponentView> = Vec::new();
    for p in PER_NODE {
        let name = format!("{p}-{node}");
        out.extend(components.iter().filter(|c| c.name == name).cloned());
    }
    out
}

/// What a component is, in a sentence: the hover title of its box.
pub fn role_words(role: &str) -> &'static str {
    match role {
        "apiserver" => "the front door: validates every request, stores it in etcd, tells every watcher",
        "etcd" => "the cluster's memory: every write bumps its revision",
        "controller-manager" => "runs the controllers, each a loop that compares a claim with what is and acts on the gap",
        "scheduler" => "picks a node for every pod that has none, and binds it there",
        "kubelet" => "runs the pods bound to its node and reports their status",
        "kube-proxy" => "programs its node's network for Services",
        "operator" => "an operator written in Python: kopf's handlers, run when what it watches changes",
        _ => "a loop of its own",
    }
}

/// The anchor of a component's box (`--c-kube-apiserver`), or of the nodes area for the kubelets'
/// shared lane (`kubelets`): the box bears it as `data-anchor`, and a token names its two ends by
/// it (`--from`, `--to` in its inline style, a CSS custom property's value, so characters an
/// identifier cannot hold become `_`).
pub fn anchor(component: &str) -> String {
    let name = if component == "kubelets" { "nodes" } else { component };
    let mut out = String::from("--c-");
    out.extend(name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }));
    out
}

/// One end of the trail between a pod deleted from under its ReplicaSet and the pod created in
/// its place: the words its chip shows, so the learner sees which new pod answers which kill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trail {
    /// `replaced-by` on the killed pod, `replaces` on its replacement.
    pub role: &'static str,
    /// The pod at the other end (empty while the ReplicaSet controller has not created it).
    pub other: String,
    /// What the chip says: `→ web-…-x7k2p`, `← web-…-abc12`, `→ replacement coming`.
    pub text: String,
    /// The same in a sentence, for the pod's label and hover title.
    pub words: String,
}

/// Pod `namespace/name`'s end of the latest trail it is on, if any.
pub fn trail(replacements: &[Replacement], namespace: &str, name: &str) -> Option<Trail> {
    let r = replacements.iter().rev().find(|r| r.namespace == namespace && (r.killed == name || r.replacement == name))?;
    Some(if r.killed == name {
        let (text, words) = if r.replacement.is_empty() {
            ("→ replacement coming".to_string(), format!("deleted; ReplicaSet {} is creating a pod in its place", r.replica_set))
        } else {
            (format!("→ {}", short_pod(&r.replacement)), format!("deleted; replaced by {}", r.replacement))
        };
        Trail { role: "replaced-by", other: r.replacement.clone(), text, words }
    } else {
        Trail {
            role: "replaces",
            other: r.killed.clone(),
            text: format!("← {}", short_pod(&r.killed)),
            words: format!("created by ReplicaSet {} in place of {}", r.replica_set, r.killed),
        }
    })
}

/// A message travelling on the stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// The hop's sequence number: the token's key, so it keeps its element (and its animation).
    pub key: u64,
    /// The sender's and receiver's `data-name` (or `kubectl`, `kubelets`).
    pub from: String,
    pub to: String,
    pub from_anchor: String,
    pub to_anchor: String,
    /// `request`, `response`, `etcd-write` or `watch`.
    pub kind: String,
    /// What it carries, short: `create pod web-…-x7k2p`, `bind → node-2`, `watch: pod added`.
    pub label: String,
    /// What it is in full, for its hover title.
    pub title: String,
    /// The pod it is about, as kubectl names it (`pod/web-…`), if any.
    pub object: Option<String>,
    /// Bookkeeping a learner can skip (leases, events, responses, opening watches): drawn small.
    pub quiet: bool,
    /// Several messages folded into one (`×11 responses`): traffic, not a step of a story.
    pub folded: bool,
}

/// Whether a token shows its words, or travels as an unlabelled dot so that it does not cover
/// the boxes' names. With a caption (story mode telling a hop), only the tokens of that hop are
/// labelled: those about the caption's object and those to or from the captioned component; the
/// rest of the traffic still moves, as dots. Without one, everything but bookkeeping is labelled.
pub fn labelled(token: &Token, caption: Option<&Caption>) -> bool {
    if token.quiet {
        return false;
    }
    let Some(c) = caption else { return true };
    let process = c.component.split('/').next().unwrap_or_default();
    token.object.as_deref() == Some(c.object.as_str()) || (!token.folded && (token.from == process || token.to == process))
}

/// The tokens for `hops`, oldest first. `cluster` says where a bound pod went, for the
/// scheduler's `bind → NODE`.
pub fn tokens(hops: &[Hop], cluster: &ClusterView) -> Vec<Token> {
    hops.iter().map(|h| token(h, cluster)).collect()
}

fn token(h: &Hop, cluster: &ClusterView) -> Token {
    let object = pod_object(&h.object);
    let node = object.as_ref().and_then(|_| h.object.strip_prefix("pod/")).and_then(|key| {
        let (ns, name) = key.split_once('/')?;
        cluster.pod(ns, name).map(|p| p.node.clone()).filter(|n| !n.is_empty())
    });
    // A folded hop (even of one message) says only its count: `3 watchs`.
    let folded = h.object.is_empty() && h.what.starts_with(&format!("{} {}", h.count, h.kind.replace('-', " ")));
    let label = if folded { folded_label(&h.kind, h.count) } else { label(&h.kind, &h.what, node.as_deref()) };
    Token {
        key: h.seq,
        from_anchor: anchor(&h.from),
        to_anchor: anchor(&h.to),
        title: format!("{} → {}: {}", h.from, h.to, if h.what.is_empty() { &label } else { &h.what }),
        quiet: !folded && is_quiet(&h.kind, &h.what),
        folded,
        from: h.from.clone(),
        to: h.to.clone(),
        kind: h.kind.clone(),
        label,
        object,
    }
}

/// `pod/NAMESPACE/NAME` as kubectl names it, `pod/NAME`; None for anything but a named pod.
pub fn pod_object(object: &str) -> Option<String> {
    let (_, name) = object.strip_prefix("pod/")?.split_once('/')?;
    (!name.is_empty() && !name.ends_with('*')).then(|| format!("pod/{name}"))
}

/// A generated pod name with its template hash elided (`web-7d9f6c5b4-x2kqp` → `web-…-x2kqp`;
/// still unnamed, `web-7d9f6c5b4-*` → `web-…`); other names as they are.
pub fn short_pod(name: &str) -> String {
    let parts: Vec<&str> = name.split('-').collect();
    match parts.as_slice() {
        [head @ .., hash, suffix] if !head.is_empty() && hash.len() >= 8 && hash.chars().all(|c| c.is_ascii_alphanumeric()) => {
            if *suffix == "*" {
                format!("{}-…", head.join("-"))
            } else {
                format!("{}-…-{suffix}", head.join("-"))
            }
        }
        _ => name.to_string(),
    }
}

/// A message's words, short enough for a token (see [`Token::label`]).
pub fn label(kind: &str, what: &str, bound_to: Option<&str>) -> String {
    match kind {
        "watch" => watch_label(what),
        "etcd-write" => format!("write → {what}"),
        "response" => response_label(what),
        _ => request_label(what, bound_to),
    }
}

fn watch_label(what: &str) -> String {
    let Some((verb, object)) = what.split_once(' ') else { return format!("watch: {}", what.to_lowercase()) };
    let kind = object.split('/').next().unwrap_or(object);
    format!("watch: {kind} {}", verb.to_lowercase())
}

fn response_label(what: &str) -> String {
    match what {
        "200" => "200 OK".to_string(),
        "201" => "201 Created".to_string(),
        _ => what.to_string(),
    }
}

fn request_label(what: &str, bound_to: Option<&str>) -> String {
    let Some((verb, object)) = what.split_once(' ') else { return what.to_string() };
    let mut parts = object.split('/');
    let kind = parts.next().unwrap_or_default();
    // `kind/name` for cluster-scoped objects, `kind/namespace/name` otherwise.
    let name = parts.next_back().unwrap_or(kind);
    match (verb, kind) {
        ("bind", _) => match bound_to {
            Some(node) => format!("bind → {node}"),
            None => format!("bind pod {}", short_pod(name)),
        },
        (_, "lease") => format!("{verb} lease {name}"),
        (_, "event") => format!("{verb} event"),
        ("update-status", "pod") => format!("status pod {}", short_pod(name)),
        ("update-status", _) => format!("status {kind} {name}"),
        (_, "pod") => format!("{verb} pod {}", short_pod(name)),
        _ if name == kind => what.to_string(),
        _ => format!("{verb} {kind} {name}"),
    }
}

/// The label of `count` messages folded into one token.
pub fn folded_label(kind: &str, count: u32) -> String {
    let what = match kind {
        "request" => "requests",
        "response" => "responses",
        "etcd-write" => "etcd writes",
        _ => "watch notifications",
    };
    format!("×{count} {what}")
}

/// Whether a message is bookkeeping rather than a step of the story: a response, a lease
/// renewal, an event written, a list or a watch being opened.
pub fn is_quiet(kind: &str, what: &str) -> bool {
    let verb = what.split(' ').next().unwrap_or_default();
    kind == "response"
        || what.contains("lease/")
        || what.contains("event/")
        || (kind == "request" && matches!(verb, "list" | "watch" | "get"))
        || (kind == "watch" && (what.contains(" lease/") || what.contains(" event/")))
}

/// What the caption strip says when story mode has no caption: the latest thing any loop did,
/// with who did it. None before anything has acted.
pub fn last_action(components: &[ComponentView]) -> Option<String> {
    let mut best: Option<(u64, String)> = None;
    for c in components {
        for l in &c.loops {
            let Some(at) = l.last_action_at else { continue };
            if !l.last_action.is_empty() && best.as_ref().is_none_or(|(t, _)| at > *t) {
                // A process whose one loop bears its own name (kube-scheduler, a kubelet) is
                // named once: `kubelet-node-2: …`, not `kubelet-node-2 · kubelet-node-2: …`.
                let who = if l.name == c.name { c.name.clone() } else { format!("{} · {}", c.name, l.name) };
                best = Some((at, format!("{who}: {}", l.last_action)));
            }
        }
    }
    best.map(|(_, text)| text)
}

/// The component box and the loop row a caption names: `kube-controller-manager/replicaset-controller`
/// is the controller manager's ReplicaSet row; `kube-scheduler` the scheduler's box.
pub fn caption_target(caption: &Caption) -> (&str, Option<&str>) {
    match caption.component.split_once('/') {
        Some((component, loop_name)) => (component, Some(loop_name)),
        None => (caption.component.as_str(), None),
    }
}

/// The pod colour legend: each colour (the pod's CSS tone, as `PodView::tone` gives it) and the
/// kubectl STATUS it stands for.
pub const POD_LEGEND: [(&str, &str); 7] = [
    ("running", "Running, ready"),
    ("starting", "Running, not ready"),
    ("pending", "Pending"),
    ("creating", "ContainerCreating"),
    ("terminating", "Terminating"),
    ("succeeded", "Completed"),
    ("failed", "Error, CrashLoopBackOff"),
];

/// The command the replicas box runs for what the learner typed: `kubectl scale` with the text
/// as typed, so a bad value gets kubectl's own error (and changes nothing). Text a shell would
/// split is quoted, so it arrives as one value.
pub fn typed_scale_command(deployment: &str, typed: &str) -> String {
    let (namespace, name) = deployment.split_once('/').unwrap_or(("default", deployment));
    let typed = typed.trim();
    let bare = !typed.is_empty() && typed.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.' | '_'));
    let value = if bare { typed.to_string() } else { format!("'{}'", typed.replace('\'', "'\\''")) };
    scale_command(namespace, name, 0).replacen("--replicas=0", &format!("--replicas={value}"), 1)
}

/// The built-in lessons for the picker: name and title, in the course's order.
pub fn lesson_choices() -> Vec<(&'static str, String)> {
    Lesson::builtin_names().into_iter().map(|name| (name, Lesson::builtin_title(name).unwrap_or(name).to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Scenario, Session};
    use crate::model::{Duration, Kind};
    use crate::view::cluster::PodView;
    use crate::view::flow::{hops, FlowLayout};
    use crate::view::loops::components;

    fn text(out: &crate::command::CommandOutput) -> String {
        format!("{}{}", out.stdout, out.stderr)
    }

    fn settled() -> Session {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        s
    }

    #[test]
    fn kubelets_go_in_their_node_box_and_everything_else_on_the_control_plane_row() {
        let s = settled();
        let c = components(s.sim());
        let names: Vec<&str> = plane(&c).iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler"]);
        let node2: Vec<String> = on_node(&c, "node-2").into_iter().map(|c| c.name).collect();
        assert_eq!(node2, ["kubelet-node-2", "kube-proxy-node-2"]);
        assert!(on_node(&c, "node-20").is_empty(), "node-2's kubelet is not node-20's");
        assert!(is_per_node("kube-proxy-node-1") && !is_per_node("kube-scheduler") && !is_per_node("kubelet"));
    }

    #[test]
    fn a_kill_and_its_replacement_are_joined_by_a_trail_read_from_either_end() {
        let link = |killed: &str, replacement: &str| Replacement {
            namespace: "default".into(),
            replica_set: "web-7d9f6c5b4".into(),
            killed: killed.into(),
            replacement: replacement.into(),
        };
        let waiting = [link("web-7d9f6c5b4-abc12", "")];
        let t = trail(&waiting, "default", "web-7d9f6c5b4-abc12").unwrap();
        assert_eq!((t.role, t.text.as_str()), ("replaced-by", "→ replacement coming"));
        assert!(t.words.contains("ReplicaSet web-7d9f6c5b4"), "{}", t.words);

        let both = [link("web-7d9f6c5b4-abc12", "web-7d9f6c5b4-x7k2p")];
        let killed = trail(&both, "default", "web-7d9f6c5b4-abc12").unwrap();
        assert_eq!((killed.role, killed.other.as_str(), killed.text.as_str()), ("replaced-by", "web-7d9f6c5b4-x7k2p", "→ web-…-x7k2p"));
        let new = trail(&both, "default", "web-7d9f6c5b4-x7k2p").unwrap();
        assert_eq!((new.role, new.other.as_str(), new.text.as_str()), ("replaces", "web-7d9f6c5b4-abc12", "← web-…-abc12"));
        assert_eq!(trail(&both, "other", "web-7d9f6c5b4-x7k2p"), None, "namespaces are apart");
        assert_eq!(trail(&both, "default", "web-7d9f6c5b4-zzzzz"), None);

        // Killed again: the replacement's newest trail is the one it is on now.
        let chain = [link("web-7d9f6c5b4-abc12", "web-7d9f6c5b4-x7k2p"), link("web-7d9f6c5b4-x7k2p", "web-7d9f6c5b4-q9w8e")];
        assert_eq!(trail(&chain, "default", "web-7d9f6c5b4-x7k2p").unwrap().role, "replaced-by");
        assert_eq!(trail(&chain, "default", "web-7d9f6c5b4-q9w8e").unwrap().other, "web-7d9f6c5b4-x7k2p");
    }

    #[test]
    fn with_a_caption_only_its_hops_tokens_carry_words() {
        let token = |from: &str, to: &str, object: Option<&str>, quiet: bool| Token {
            key: 1,
            from: from.into(),
            to: to.into(),
            from_anchor: anchor(from),
            to_anchor: anchor(to),
            kind: "request".into(),
            label: "x".into(),
            title: "x".into(),
            object: object.map(str::to_string),
            quiet,
            folded: false,
        };
        let caption = Caption {
            text: "kube-scheduler: web-…-x7k2p → node-2".into(),
            component: "kube-scheduler".into(),
            object: "pod/web-7d9f6c5b4-x7k2p".into(),
            seq: 9,
        };
        let bind = token("kube-scheduler", "kube-apiserver", Some("pod/web-7d9f6c5b4-x7k2p"), false);
        let watch_about_it = token("kube-apiserver", "kubelets", Some("pod/web-7d9f6c5b4-x7k2p"), false);
        let other_pod = token("kube-apiserver", "kubelets", Some("pod/web-7d9f6c5b4-abc12"), false);
        let ok = token("kube-apiserver", "kube-scheduler", None, true);
        assert!(labelled(&bind, Some(&caption)) && labelled(&watch_about_it, Some(&caption)));
        assert!(!labelled(&other_pod, Some(&caption)), "another pod's traffic is a dot while this hop is told");
        assert!(!labelled(&ok, Some(&caption)) && !labelled(&ok, None), "bookkeeping is never labelled");
        assert!(labelled(&other_pod, None), "without a caption every step of the story is labelled");
        // The ReplicaSet controller creating a pod that has no name yet: its process's token.
        let rs = Caption {
            component: "kube-controller-manager/replicaset-controller".into(),
            object: "replicaset/web-7d9f6c5b4".into(),
            ..caption
        };
        assert!(labelled(&token("kube-controller-manager", "kube-apiserver", None, false), Some(&rs)));
        let folded = Token { folded: true, ..token("kube-apiserver", "kube-controller-manager", None, false) };
        assert!(!labelled(&folded, Some(&rs)) && labelled(&folded, None), "folded traffic is a dot while a hop is told");
    }

    #[test]
    fn anchors_are_css_identifiers() {
        assert_eq!(anchor("kube-apiserver"), "--c-kube-apiserver");
        assert_eq!(anchor("kubelet-node.example.com"), "--c-kubelet-node_example_com");
        assert_eq!(anchor("kubelets"), "--c-nodes");
    }

    #[test]
    fn generated_pod_names_are_shortened_to_what_tells_them_apart() {
        assert_eq!(short_pod("web-7d9f6c5b4-x2kqp"), "web-…-x2kqp");
        assert_eq!(short_pod("my-app-97f4f98bc-bk5jj"), "my-app-…-bk5jj");
        assert_eq!(short_pod("web-97f4f98bc-*"), "web-…");
        assert_eq!(short_pod("standalone"), "standalone");
        assert_eq!(short_pod("web-x"), "web-x");
    }

    #[test]
    fn a_token_says_what_it_carries() {
        assert_eq!(label("request", "create pod/default/web-97f4f98bc-x7k2p", None), "create pod web-…-x7k2p");
        assert_eq!(label("request", "create pod/default/web-97f4f98bc-*", None), "create pod web-…");
        assert_eq!(label("request", "bind pod/default/web-97f4f98bc-x7k2p", Some("node-2")), "bind → node-2");
        assert_eq!(label("request", "bind pod/default/web-97f4f98bc-x7k2p", None), "bind pod web-…-x7k2p");
        assert_eq!(label("watch", "ADDED pod/default/web-97f4f98bc-x7k2p", None), "watch: pod added");
        assert_eq!(label("watch", "MODIFIED deployment/default/web", None), "watch: deployment modified");
        assert_eq!(label("request", "update lease/kube-node-lease/node-1", None), "update lease node-1");
        assert_eq!(label("request", "create event/default/web.1886", None), "create event");
        assert_eq!(label("request", "update-status pod/default/web-97f4f98bc-bk5jj", None), "status pod web-…-bk5jj");
        assert_eq!(label("request", "create node/node-1", None), "create node node-1");
        assert_eq!(label("request", "list pods", None), "list pods");
        assert_eq!(label("etcd-write", "rev 42", None), "write → rev 42");
        assert_eq!(label("response", "200", None), "200 OK");
        assert_eq!(label("response", "409 Conflict", None), "409 Conflict");
        assert_eq!(folded_label("watch", 12), "×12 watch notifications");
        assert!(is_quiet("request", "update lease/kube-node-lease/node-1"));
        assert!(is_quiet("response", "200"));
        assert!(!is_quiet("request", "create pod/default/web-97f4f98bc-*"));
        assert!(!is_quiet("watch", "ADDED pod/default/web-x"));
    }

    #[test]
    fn after_a_kill_the_tokens_join_the_boxes_and_name_the_pod_and_the_node() {
        let mut s = settled();
        let seen = s.sim().trace().count();
        let victim = s.sim().objects(Kind::Pod).next().unwrap().meta().name.clone();
        s.execute(&format!("kubectl delete pod {victim}"));
        s.advance(Duration::millis(200));
        let layout = FlowLayout::new(&["node-1".to_string(), "node-2".to_string()]);
        let hs = hops(&layout, s.sim().trace().since(seen), 10_000);
        let mut tracker = crate::view::ClusterTracker::new();
        tracker.update(s.sim());
        let t = tokens(&hs, tracker.view());
        let first = &t[0];
        assert_eq!((first.from.as_str(), first.to.as_str()), ("kubectl", "kube-apiserver"));
        assert_eq!((first.from_anchor.as_str(), first.to_anchor.as_str()), ("--c-kubectl", "--c-kube-apiserver"));
        assert_eq!(first.label, format!("delete pod {}", short_pod(&victim)));
        assert_eq!(first.object.as_deref(), Some(format!("pod/{victim}").as_str()));
        let bind = t.iter().find(|t| t.from == "kube-scheduler" && t.label.starts_with("bind")).expect("the replacement is bound");
        let pod = bind.object.as_deref().and_then(|o| o.strip_prefix("pod/")).unwrap();
        let node = s
            .sim()
            .objects(Kind::Pod)
            .find(|o| o.meta().name.as_str() == pod)
            .and_then(|o| o.as_pod().and_then(|p| p.spec.node_name.clone()));
        assert_eq!(bind.label, format!("bind → {}", node.expect("bound")));
        // A graceful delete first marks the pod: the watchers hear it modified.
        let victim_key = format!("pod/{victim}");
        assert!(t.iter().any(|t| t.to == "kube-controller-manager"
            && t.label == "watch: pod modified"
            && t.object.as_deref() == Some(victim_key.as_str())));
        assert!(t.iter().all(|t| t.title.contains(" → ")));
        // Folded, even one message says only its count.
        let folded = hops(&layout, s.sim().trace().since(seen), 1);
        let t = tokens(&folded, tracker.view());
        assert!(t.iter().all(|t| t.label.starts_with('×') && t.object.is_none() && !t.quiet), "{t:?}");
    }

    #[test]
    fn the_placeholder_caption_is_the_latest_action_and_a_caption_names_its_row() {
        let mut s = settled();
        assert!(last_action(&[]).is_none());
        let victim = s.sim().objects(Kind::Pod).next().unwrap().meta().name.clone();
        s.execute(&format!("kubectl delete pod {victim}"));
        s.advance(Duration::millis(40));
        let text = last_action(&components(s.sim())).unwrap();
        assert!(text.starts_with("kube-controller-manager · "), "{text}");
        let c =
            Caption { text: "x".into(), component: "kube-controller-manager/replicaset-controller".into(), object: String::new(), seq: 0 };
        assert_eq!(caption_target(&c), ("kube-controller-manager", Some("replicaset-controller")));
        let c = Caption { component: "kube-scheduler".into(), ..c };
        assert_eq!(caption_target(&c), ("kube-scheduler", None));
    }

    #[test]
    fn the_legend_matches_the_colours_pods_are_drawn_in() {
        let pod = |status: &str, ready: bool| PodView {
            namespace: "default".into(),
            name: "p".into(),
            node: String::new(),
            phase: String::new(),
            status: status.into(),
            ready: String::new(),
            is_ready: ready,
            restarts: 0,
            owner: String::new(),
            created: 0,
            cpu_milli: 0,
            memory: 0,
            terminal: false,
        };
        let samples = [
            pod("Running", true),
            pod("Running", false),
            pod("Pending", false),
            pod("ContainerCreating", false),
            pod("Terminating", false),
            pod("Completed", false),
            pod("CrashLoopBackOff", false),
        ];
        for ((tone, words), p) in POD_LEGEND.iter().zip(&samples) {
            assert_eq!(p.tone(), *tone, "{words}");
        }
    }

    #[test]
    fn the_replicas_box_runs_kubectl_scale_with_what_was_typed() {
        assert_eq!(typed_scale_command("default/web", " 5 "), "kubectl scale deployment web --replicas=5");
        assert_eq!(typed_scale_command("default/web", "5 6"), "kubectl scale deployment web --replicas='5 6'");
        let mut s = settled();
        let out = s.execute(&typed_scale_command("default/web", "-1"));
        assert!(!out.ok);
        assert_eq!(text(&out).trim(), "error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0");
        let out = s.execute(&typed_scale_command("default/web", "abc"));
        assert!(!out.ok && text(&out).contains("invalid argument \"abc\" for \"--replicas\" flag"), "{}", text(&out));
        let out = s.execute(&typed_scale_command("default/web", "it's"));
        assert!(!out.ok && text(&out).contains("\"it's\""), "{}", text(&out));
        let out = s.execute(&typed_scale_command("default/web", "5"));
        assert!(out.ok, "{}", text(&out));
        let replicas = s.sim().objects(Kind::Deployment).find_map(|o| o.as_deployment().map(|d| d.spec.replicas));
        assert_eq!(replicas, Some(Some(5)));
    }

    #[test]
    fn the_picker_lists_every_built_in_lesson_by_title() {
        let choices = lesson_choices();
        assert_eq!(choices.iter().map(|(n, _)| *n).collect::<Vec<_>>(), Lesson::builtin_names());
        let which = choices.iter().find(|(n, _)| *n == "which-loop").unwrap();
        assert_eq!(which.1, Lesson::builtin("which-loop").unwrap().title);
    }
}
