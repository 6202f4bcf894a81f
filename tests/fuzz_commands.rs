//! Property test over the command parser and the manifest loader: thousands of random and
//! mutated command lines and YAML documents from a seeded generator.
//!
//! Properties, for every input:
//! - nothing panics (a panic fails the test);
//! - a failed command says so in kubectl's shape (`error: ...`, `Error from server (...)`,
//!   `The Deployment "x" is invalid: ...`, ...) on stderr;
//! - a failed command that printed nothing on stdout changed nothing: the store's revision and
//!   the simulated clock are where they were.
//!
//! The generator is kubeloop's own seeded PRNG, so a failure reproduces from its seed and index
//! (both are in the message). No external fuzzing crate is needed.

#[path = "support/yaml_check.rs"]
mod yaml_check;

use kubeloop::command::kubectl::{apply, examples};
use kubeloop::command::{parse, yaml, CommandOutput, Scenario, Session};
use kubeloop::model::Duration;
use kubeloop::rng::Rng;

const SEED: u64 = 0x5eed_c0de;

/// Words a line is built from: real commands, flags and values, and the characters that make
/// parsers stumble.
const VOCAB: &[&str] = &[
    "kubectl",
    "get",
    "describe",
    "apply",
    "create",
    "delete",
    "scale",
    "set",
    "image",
    "rollout",
    "status",
    "history",
    "undo",
    "restart",
    "pause",
    "resume",
    "sim",
    "advance",
    "settle",
    "node",
    "add",
    "seed",
    "time",
    "help",
    "version",
    "api-resources",
    "deployment",
    "pods",
    "po",
    "pod",
    "nodes",
    "no",
    "deploy",
    "deployments.apps",
    "rs",
    "replicasets",
    "events",
    "ev",
    "leases",
    "all",
    "pods,deploy",
    "web",
    "nginx",
    "nginx-deployment",
    "deployment/web",
    "pod/nginx",
    "rs/web",
    "node/node-1",
    "-o",
    "wide",
    "json",
    "yaml",
    "name",
    "jsonpath={.items}",
    "-l",
    "app=web",
    "app in (web)",
    "!app",
    "-A",
    "-n",
    "default",
    "kube-system",
    "team-a",
    "nope",
    "-w",
    "--watch-only",
    "--replicas=3",
    "--replicas",
    "-1",
    "abc",
    "0x10",
    "--image=nginx:1.16.1",
    "--image",
    "nginx=nginx:1.16.1",
    "*=busybox",
    "--all",
    "--now",
    "--force",
    "--grace-period=0",
    "--grace-period",
    "-f",
    "-",
    "https://k8s.io/examples/controllers/nginx-deployment.yaml",
    "https://k8s.io/examples/pods/simple-pod.yaml",
    "m.yaml",
    "--dry-run=client",
    "--dry-run=server",
    "--show-labels",
    "--sort-by=.metadata.name",
    "--sort-by={.spec.replicas}",
    "--field-selector",
    "status.phase=Pending",
    "spec.nodeName=node-1",
    "--to-revision=1",
    "--timeout=2s",
    "--watch=false",
    "--current-replicas=3",
    "--cascade=orphan",
    "--ignore-not-found",
    "--no-headers",
    "-L",
    "app",
    "--port=80",
    "--cpu",
    "8",
    "--memory",
    "16Gi",
    "--pods",
    "20",
    "--zone",
    "z",
    "5m",
    "500ms",
    "30s",
    "1h",
    "0",
    "42",
    "99999999999999999999",
    "'",
    "\"",
    "\\",
    "#",
    "|",
    ">",
    ";",
    "&",
    "<<",
    "<<EOF",
    "--",
    "=",
    "é",
    "🙂",
    "\t",
    "$(x)",
    "`x`",
    "--bogus",
    "-z",
    "-Aw",
    "-ojson",
];

/// Lines that are valid on the default cluster, for mutation.
const GOOD_LINES: &[&str] = &[
    "kubectl get pods -o wide",
    "kubectl get deploy web -o yaml",
    "kubectl describe deployment web",
    "kubectl scale deployment web --replicas=5",
    "kubectl set image deployment/web nginx=nginx:1.16.1",
    "kubectl rollout history deployment/web",
    "kubectl rollout undo deployment/web --to-revision=1",
    "kubectl rollout status deployment/web --timeout=3s",
    "kubectl create deployment api --image=nginx --replicas=2",
    "kubectl delete pod nginx --now",
    "kubectl apply -f https://k8s.io/examples/controllers/nginx-deployment.yaml",
    "kubectl get events -A --sort-by=.lastTimestamp",
    "kubectl get pods -l 'app in (web,api)' --show-labels",
    "sim advance 2s",
    "sim node add node-3 --cpu 2 --memory 4Gi",
    "sim status",
    "sim settle 3s",
];

/// Prefixes a failed command's first stderr line may start with: kubectl's error forms.
/// How a failed command's stderr may begin. Besides kubectl's standard forms, `apply -f` and
/// `create -f` of a file with several failed documents print each error raw, one a line
/// (kubectl's `MultipleErrors`): the builder's own errors, or their aggregate as `[a, b]`.
const ERROR_PREFIXES: &[&str] = &[
    "error: ",
    "Error from server (",
    "The ",
    "You must specify",
    "warning: ",
    "Warning: ",
    "unable to decode \"",
    "resource mapping not found for name: ",
    "the namespace from the provided object ",
    "error when retrieving current configuration of:",
    "[",
];

/// The longest simulated span a generated command may ask for, so the test stays fast once
/// every component runs.
const MAX_SPAN: Duration = Duration::mins(10);

fn pick<'a>(rng: &mut Rng, items: &[&'a str]) -> &'a str {
    items[rng.below(items.len() as u64) as usize]
}

fn random_char(rng: &mut Rng) -> char {
    const SPECIAL: &[char] = &[
        '\'', '"', '\\', '#', '|', '<', '>', ';', '&', '$', '(', ')', '{', '}', '[', ']', '=', ',', '-', ':', '/', ' ', '\t', '\n', 'é',
        '🙂', '\u{0}', '*', '!', '~', '%',
    ];
    match rng.below(3) {
        0 => SPECIAL[rng.below(SPECIAL.len() as u64) as usize],
        1 => (b'a' + rng.below(26) as u8) as char,
        _ => (b'0' + rng.below(10) as u8) as char,
    }
}

/// Character-level mutation: delete, insert, duplicate or replace a few characters.
fn mutate_chars(rng: &mut Rng, text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for _ in 0..=rng.below(4) {
        let at = if chars.is_empty() { 0 } else { rng.below(chars.len() as u64) as usize };
        match rng.below(4) {
            0 if !chars.is_empty() => {
                chars.remove(at);
            }
            1 => chars.insert(at, random_char(rng)),
            2 if !chars.is_empty() => {
                let c = chars[at];
                chars.insert(at, c);
            }
            _ if !chars.is_empty() => chars[at] = random_char(rng),
            _ => chars.push(random_char(rng)),
        }
    }
    chars.into_iter().collect()
}

fn random_line(rng: &mut Rng) -> String {
    match rng.below(3) {
        0 => (0..=rng.below(8)).map(|_| pick(rng, VOCAB)).collect::<Vec<_>>().join(" "),
        1 => {
            let good = pick(rng, GOOD_LINES);
            mutate_chars(rng, good)
        }
        _ => {
            let mut words: Vec<String> = pick(rng, GOOD_LINES).split(' ').map(str::to_string).collect();
            let at = rng.below(words.len() as u64) as usize;
            words[at] = pick(rng, VOCAB).to_string();
            words.join(" ")
        }
    }
}

/// Whether a line asks for more simulated time than the test allows.
fn too_long(line: &str) -> bool {
    parse::split(line).map(|w| w.words).unwrap_or_default().iter().any(|w| {
        let value = w.rsplit('=').next().unwrap_or(w);
        Duration::parse(value).is_ok_and(|d| d > MAX_SPAN)
    })
}

fn check(session: &mut Session, line: &str, context: &str) -> CommandOutput {
    let revision = session.sim().api().revision();
    let now = session.sim().now();
    let out = session.execute(line);
    let _ = session.take_stream();
    if !out.ok {
        let first = out.stderr.lines().next().unwrap_or("");
        assert!(
            ERROR_PREFIXES.iter().any(|p| first.starts_with(p)),
            "{context}: {line:?} failed without a kubectl-shaped error:\nstdout: {}\nstderr: {}",
            out.stdout,
            out.stderr
        );
        if out.stdout.is_empty() {
            assert_eq!(session.sim().api().revision(), revision, "{context}: {line:?} failed but changed the store: {}", out.stderr);
            assert_eq!(session.sim().now(), now, "{context}: {line:?} failed but moved the clock: {}", out.stderr);
        }
    }
    assert!(session.sim().now() >= now, "{context}: time went backwards");
    out
}

fn fresh_session() -> Session {
    let mut s = Session::new(Scenario::builtin("default").expect("default scenario"), Some(SEED)).expect("starts");
    s.add_file("m.yaml", examples::NGINX_DEPLOYMENT);
    s
}

#[test]
fn random_command_lines_never_panic_and_fail_cleanly() {
    let mut rng = Rng::new(SEED);
    let mut session = fresh_session();
    let mut failures = 0;
    for i in 0..4000 {
        if i % 250 == 0 {
            session = fresh_session();
        }
        let line = random_line(&mut rng);
        if too_long(&line) {
            continue;
        }
        let out = check(&mut session, &line, &format!("seed {SEED:#x} line {i}"));
        failures += usize::from(!out.ok);
    }
    // The generator is meant to hit errors often; if it stops doing so it has gone blind.
    assert!(failures > 1000, "only {failures} of 4000 lines failed: the generator is too tame");
}

#[test]
fn the_tokenizer_and_flag_parser_accept_any_bytes() {
    let mut rng = Rng::new(SEED ^ 1);
    let specs = [
        parse::FlagSpec::new("output", Some('o'), parse::FlagKind::String),
        parse::FlagSpec::new("all", Some('A'), parse::FlagKind::Bool),
        parse::FlagSpec::new("replicas", None, parse::FlagKind::Int(32)),
        parse::FlagSpec::new("file", Some('f'), parse::FlagKind::StringList),
    ];
    for _ in 0..20_000 {
        let len = rng.below(40) as usize;
        let text: String = (0..len).map(|_| random_char(&mut rng)).collect();
        let _ = parse::needs_more_lines(&text);
        if let Ok(words) = parse::split(&text) {
            let _ = parse::parse_flags(&words.words, &specs);
        }
        let _ = parse::parse_int(&text, 32);
    }
}

/// Base manifests to mutate: the documentation's, plus some with many fields.
fn base_manifests() -> Vec<String> {
    let mut docs: Vec<String> = examples::EXAMPLES.iter().map(|(_, t)| t.to_string()).collect();
    docs.push(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: {app: web}\n  annotations: {a: b}\nspec:\n  replicas: 3\n  minReadySeconds: 5\n  revisionHistoryLimit: 2\n  strategy:\n    type: RollingUpdate\n    rollingUpdate: {maxSurge: 1, maxUnavailable: 25%}\n  selector:\n    matchLabels: {app: web}\n    matchExpressions: [{key: tier, operator: In, values: [a, b]}]\n  template:\n    metadata:\n      labels: {app: web, tier: a}\n    spec:\n      nodeSelector: {disk: ssd}\n      tolerations: [{key: k, operator: Exists, effect: NoSchedule}]\n      containers:\n      - name: c\n        image: nginx:1.14.2\n        command: [sh, -c, 'sleep 1']\n        resources:\n          requests: {cpu: 250m, memory: 64Mi}\n          limits: {cpu: '1', memory: 128Mi}\n"
            .to_string(),
    );
    docs.push(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: bound}\nspec:\n  nodeName: node-1\n  containers:\n  - name: c\n    image: busybox\n    resources:\n      requests: {cpu: '1000000', memory: 8P}\n      limits: {cpu: '2000000', memory: 8P}\n  - name: d\n    image: busybox\n    resources:\n      requests: {cpu: 250m, memory: 7P}\n"
            .to_string(),
    );
    docs.push("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n  spec: {containers: [{name: c, image: busybox}]}\n".to_string());
    docs.push("{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"j\"}, \"spec\": {\"containers\": [{\"name\": \"c\", \"image\": \"busybox\"}]}}".to_string());
    docs
}

/// Line-level and token-level mutation of YAML.
fn mutate_yaml(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for _ in 0..=rng.below(3) {
        if lines.is_empty() {
            lines.push(String::new());
        }
        let at = rng.below(lines.len() as u64) as usize;
        match rng.below(9) {
            0 => {
                lines.remove(at);
            }
            1 => {
                let l = lines[at].clone();
                lines.insert(at, l);
            }
            2 => lines[at] = format!(" {}", lines[at]),
            3 => lines[at] = lines[at].trim_start().to_string(),
            4 => lines.insert(at, "---".into()),
            5 => {
                const TOKENS: &[&str] = &[
                    "&a",
                    "*a",
                    "*nope",
                    "!!binary",
                    "{",
                    "[",
                    "]",
                    "}",
                    "null",
                    "~",
                    "- ",
                    ": ",
                    "\"",
                    "'",
                    "|",
                    ">",
                    "? ",
                    "%YAML 1.2",
                    "\t",
                    "-1",
                    "1e999",
                    "9999999999999999999999",
                    "true",
                    "3.5",
                    "\"\"",
                ];
                let t = TOKENS[rng.below(TOKENS.len() as u64) as usize];
                let pos = rng.below(lines[at].len() as u64 + 1) as usize;
                let pos = (0..=pos).rev().find(|p| lines[at].is_char_boundary(*p)).unwrap_or(0);
                lines[at].insert_str(pos, t);
            }
            6 => lines.truncate(at),
            7 => {
                let other = rng.below(lines.len() as u64) as usize;
                lines.swap(at, other);
            }
            _ => lines[at] = mutate_chars(rng, &lines[at]),
        }
    }
    lines.join("\n") + if rng.chance(0.8) { "\n" } else { "" }
}

#[test]
fn mutated_manifests_load_or_fail_cleanly_and_never_half_apply() {
    let mut rng = Rng::new(SEED ^ 2);
    let bases = base_manifests();
    let mut session = fresh_session();
    let mut loaded = 0;
    let mut differ = Vec::new();
    for i in 0..3000 {
        if i % 300 == 0 {
            session = fresh_session();
        }
        let base = bases[rng.below(bases.len() as u64) as usize].clone();
        let text = if rng.chance(0.2) { format!("{base}---\n{}", mutate_yaml(&mut rng, &base)) } else { mutate_yaml(&mut rng, &base) };
        // The loader alone: decoded objects survive a round trip through JSON.
        match apply::load(&[("m.yaml".to_string(), text.clone())], &Default::default()) {
            Ok(manifests) => {
                loaded += 1;
                for m in manifests {
                    let again = kubeloop::model::Object::from_json(m.object.to_json());
                    assert_eq!(again.as_ref().ok(), Some(&m.object), "manifest {i} does not round-trip:\n{text}");
                }
            }
            Err(e) => assert!(ERROR_PREFIXES.iter().any(|p| e.starts_with(p)), "manifest {i}: not a kubectl-shaped error: {e}\n{text}"),
        }
        let _ = yaml::documents(&text);
        if let Some(why) = yaml_check::disagreement(&text) {
            differ.push(format!("manifest {i}:\n{text}\n{why}"));
        }
        // Through the command language, as a file and as a here-document.
        session.add_file("m.yaml", &text);
        let verb = ["apply", "create", "delete", "apply --dry-run=server"][rng.below(4) as usize];
        check(&mut session, &format!("kubectl {verb} -f m.yaml"), &format!("seed {SEED:#x} manifest {i}"));
        if i % 10 == 0 {
            for line in ["kubectl describe node node-1", "kubectl get pods -A -o wide", "kubectl describe pods", "kubectl get all -o yaml"]
            {
                let out = check(&mut session, line, &format!("seed {SEED:#x} after manifest {i}"));
                assert!(out.ok || line.starts_with("kubectl describe"), "{line} failed: {}", out.stderr);
            }
        }
        if !text.lines().any(|l| l.trim() == "EOF") {
            check(&mut session, &format!("kubectl apply -f - <<EOF\n{text}\nEOF"), &format!("seed {SEED:#x} heredoc {i}"));
        }
    }
    assert!(loaded > 300, "only {loaded} of 3000 mutated manifests loaded: the mutations are too destructive to test apply");
    assert!(differ.is_empty(), "{} of 3000 mutated manifests read differently with yaml_serde:\n\n{}", differ.len(), differ.join("\n\n"));
}

#[test]
fn mutated_scenarios_parse_or_name_their_fault() {
    let mut rng = Rng::new(SEED ^ 3);
    let base = "name: s\nseed: 3\nnodes:\n  - {name: node-1, cpu: \"4\", memory: 8Gi, pods: 110, zone: zone-a}\nmanifests: |\n  apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n  spec: {containers: [{name: c, image: busybox}]}\ntimeline:\n  - {at: 30s, run: kubectl get pods}\n";
    let template = "name: t\nnodes: {count: 3, namePrefix: n-, cpu: 2, memory: 4Gi, zones: [a, b]}\n";
    let mut differ = Vec::new();
    for i in 0..1500 {
        let text = mutate_yaml(&mut rng, if i % 2 == 0 { base } else { template });
        if let Some(why) = yaml_check::disagreement(&text) {
            differ.push(format!("scenario {i}:\n{text}\n{why}"));
        }
        match Scenario::parse(&text) {
            Ok(s) => {
                if s.nodes.len() <= 50 {
                    let _ = s.start(1);
                }
            }
            Err(e) => assert!(e.starts_with("scenario: "), "scenario {i}: error without context: {e}\n{text}"),
        }
    }
    assert!(differ.is_empty(), "{} of 1500 mutated scenarios read differently with yaml_serde:\n\n{}", differ.len(), differ.join("\n\n"));
}
