//! The page's own small decisions, kept here so they are tested natively: reading `?scenario=`
//! and `?seed=` from the address, the speeds offered, and the command line each control runs.
//!
//! Every control that changes the cluster becomes a command line run through the one
//! [`crate::command::Session`], exactly as if typed in the console: the page has no other way in.

use crate::command::Scenario;
use crate::sim::Sim;

/// The speeds offered: simulated time per wall-clock time.
pub const SPEEDS: [f64; 9] = [0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 25.0, 50.0, 100.0];

/// The benchmark's cluster: 100 nodes and a Deployment of 3,000 replicas. The page offers it as
/// `?scenario=large`; the command layer's built-ins stay the teaching ones.
pub const LARGE_SCENARIO: &str = r#"name: large
description: 100 nodes and a Deployment "web" of 3,000 nginx replicas (the page's benchmark).
seed: 1
nodes: {count: 100, namePrefix: node-, cpu: "4", memory: 8Gi, pods: 110, zones: [zone-a, zone-b, zone-c]}
manifests: |
  apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web
    labels: {app: web}
  spec:
    replicas: 3000
    selector:
      matchLabels: {app: web}
    template:
      metadata:
        labels: {app: web}
      spec:
        containers:
        - name: nginx
          image: nginx:1.14.2
          ports: [{containerPort: 80}]
          resources:
            requests: {cpu: 100m, memory: 128Mi}
"#;

/// The panels the page can show (`?panels=`); the lesson helper's panels are named here too so
/// one list decides the layout.
pub const PANELS: [&str; 12] =
    ["header", "cluster", "gap", "pod", "hints", "loops", "flow", "events", "commands", "console", "editor", "lesson"];
/// The controls the toolbar can show (`?controls=`).
pub const CONTROLS: [&str; 10] = ["play", "pause", "step", "fast-forward", "speed", "time", "seed", "reset", "add-node", "share"];

/// The colour scheme (`?theme=`): `auto` follows the system.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Theme {
    #[default]
    Auto,
    Light,
    Dark,
}

impl Theme {
    pub fn name(self) -> &'static str {
        match self {
            Theme::Auto => "auto",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }
}

/// One command line the learner ran, at the simulated time it ran (for permalinks and traces).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Recorded {
    /// Simulated milliseconds since the start of the run.
    pub at: u64,
    pub command: String,
}

/// What the address (or the custom element's attributes) asks for. Each field has the default a
/// bare page uses, so a malformed parameter falls back to it alone.
#[derive(Clone, Debug, PartialEq)]
pub struct PageParams {
    /// A built-in scenario name, or the URL of a YAML scenario file on the page's own origin.
    pub scenario: String,
    pub seed: Option<u64>,
    /// Simulated time per wall-clock time, one of [`SPEEDS`].
    pub speed: f64,
    /// Whether the clock runs from the start.
    pub autoplay: bool,
    /// The panels shown; `None` shows every panel.
    pub panels: Option<Vec<String>>,
    /// The toolbar controls shown; `None` shows every control.
    pub controls: Option<Vec<String>>,
    pub theme: Theme,
    /// Presentation mode (`?presentation=on`): labels of at least 18 px, for a projector.
    pub presentation: bool,
    /// A lesson name or URL, read by the lesson engine.
    pub lesson: Option<String>,
    /// Origins whose messages are obeyed and to which events are posted (`*` for any). Empty
    /// means the page's own origin only.
    pub origins: Vec<String>,
    /// Commands to replay, in order, each at its simulated time (a permalink's `cmd=`).
    pub commands: Vec<Recorded>,
    /// The simulated time to run to after the replay (a permalink's `at=`); the clock then waits.
    pub at: Option<u64>,
    /// `?cluster=PATH`: the page draws the Kubernetes API at this path of its own origin (as
    /// `kubectl proxy --www` serves both) instead of running the simulation.
    pub cluster: Option<String>,
}

impl Default for PageParams {
    fn default() -> Self {
        PageParams {
            scenario: "default".into(),
            seed: None,
            speed: 1.0,
            autoplay: true,
            panels: None,
            controls: None,
            theme: Theme::Auto,
            presentation: false,
            lesson: None,
            origins: Vec::new(),
            commands: Vec::new(),
            at: None,
            cluster: None,
        }
    }
}

impl PageParams {
    /// Whether panel `name` is shown.
    pub fn shows_panel(&self, name: &str) -> bool {
        self.panels.as_ref().is_none_or(|p| p.iter().any(|n| n == name))
    }

    /// Whether toolbar control `name` is shown.
    pub fn shows_control(&self, name: &str) -> bool {
        self.controls.as_ref().is_none_or(|c| c.iter().any(|n| n == name))
    }

    /// Whether the scenario is a URL to fetch rather than a built-in name.
    pub fn scenario_is_url(&self) -> bool {
        is_scenario_url(&self.scenario)
    }

    /// Whether a message from `origin` is obeyed, given the page's own origin.
    pub fn allows_origin(&self, origin: &str, own: &str) -> bool {
        if self.origins.is_empty() {
            return origin == own;
        }
        self.origins.iter().any(|o| o == "*" || o == origin)
    }
}

/// The names `?scenario=` accepts.
pub fn scenario_names() -> Vec<&'static str> {
    let mut names = Scenario::builtin_names();
    names.push("large");
    names
}

/// A scenario by the name the page accepts.
pub fn scenario(name: &str) -> Result<Scenario, String> {
    if name == "large" {
        return Scenario::parse(LARGE_SCENARIO);
    }
    Scenario::builtin(name).ok_or_else(|| format!("error: unknown scenario {name:?}; the page knows {}", scenario_names().join(", ")))
}

/// Whether a `scenario` value names a file to fetch (it has a path or a YAML extension).
pub fn is_scenario_url(value: &str) -> bool {
    value.contains('/') || value.ends_with(".yaml") || value.ends_with(".yml")
}

/// Checks that a scenario URL stays on the page's own `origin` (`http://host:port`): a relative
/// path, or an absolute URL on that origin. Anything else is refused before any request is made.
pub fn check_scenario_url(url: &str, origin: &str) -> Result<(), String> {
    check_file_url("scenario", url, origin)
}

/// [`check_scenario_url`] for any file the page loads (`scenario`, `lesson`).
pub fn check_file_url(what: &str, url: &str, origin: &str) -> Result<(), String> {
    let lower = url.to_ascii_lowercase();
    let has_scheme = lower.split(['/', '?', '#']).next().is_some_and(|head| head.contains(':'));
    let same_origin =
        !origin.is_empty() && (lower == origin.to_ascii_lowercase() || lower.starts_with(&format!("{}/", origin.to_ascii_lowercase())));
    if url.starts_with("//") || url.starts_with("\\\\") || (has_scheme && !same_origin) {
        return Err(format!(
            "error: refusing to load {what} {url:?}: it is not on this page's origin ({origin}); serve the YAML file next to the page"
        ));
    }
    Ok(())
}

/// Checks `?cluster=`: a path on the page's own origin (`/`, `/k8s/`), where `kubectl proxy
/// --www` serves the API beside the page. Anything that could leave the origin (a scheme, `//`,
/// a backslash) is refused before any request is made: the page sends no request elsewhere, and
/// a browser would need CORS for it anyway.
pub fn check_cluster_path(value: &str) -> Result<String, String> {
    let on_origin = value.starts_with('/') && !value.starts_with("//") && !value.contains('\\') && !value.contains(['?', '#']);
    if !on_origin {
        return Err(invalid("cluster", value, "must be a path on this page's origin, such as / (see kubectl proxy --www in the README)"));
    }
    Ok(value.to_string())
}

/// Reads the address's query string (`?scenario=NAME&seed=N&...`). See [`parse_pairs`].
pub fn parse_query(query: &str) -> (PageParams, Vec<String>) {
    let pairs = query.trim_start_matches('?').split('&').filter(|p| !p.is_empty()).map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (percent_decode(key), percent_decode(value))
    });
    parse_pairs(pairs)
}

/// Reads parameters given as name/value pairs (the query string's, or a custom element's
/// attributes). A malformed value leaves its default in place and adds an error that says what
/// was wrong and what is accepted; unknown names are left to others.
pub fn parse_pairs(pairs: impl IntoIterator<Item = (String, String)>) -> (PageParams, Vec<String>) {
    let mut params = PageParams::default();
    let mut errors = Vec::new();
    for (key, value) in pairs {
        if let Err(e) = apply(&mut params, &key, value.trim()) {
            errors.push(e);
        }
    }
    (params, errors)
}

fn invalid(name: &str, value: &str, accepted: &str) -> String {
    format!("error: invalid value {value:?} for parameter \"{name}\": {accepted}")
}

fn apply(params: &mut PageParams, key: &str, value: &str) -> Result<(), String> {
    match key {
        "scenario" => {
            if !is_scenario_url(value) && !scenario_names().contains(&value) {
                return Err(format!(
                    "error: unknown scenario {value:?} in parameter \"scenario\"; the page knows {} (or the URL of a YAML file)",
                    scenario_names().join(", ")
                ));
            }
            params.scenario = value.to_string();
        }
        "seed" => {
            params.seed =
                Some(value.parse::<u64>().map_err(|_| invalid("seed", value, "must be a whole number from 0 to 18446744073709551615"))?)
        }
        "speed" => {
            let speed = crate::model::parse_f64(value).filter(|s| s.is_finite() && *s > 0.0);
            params.speed = nearest_speed(speed.ok_or_else(|| invalid("speed", value, "must be a number above 0 (offered: 0.25 to 100)"))?);
        }
        "autoplay" => params.autoplay = parse_bool(value).ok_or_else(|| invalid("autoplay", value, "must be true or false"))?,
        "panels" => params.panels = Some(parse_list("panels", value, &PANELS)?),
        "controls" => params.controls = Some(parse_list("controls", value, &CONTROLS)?),
        "theme" => {
            params.theme = match value {
                "auto" => Theme::Auto,
                "light" => Theme::Light,
                "dark" => Theme::Dark,
                _ => return Err(invalid("theme", value, "must be one of light, dark, auto")),
            }
        }
        "presentation" => {
            params.presentation = match value {
                "on" | "true" | "" => true,
                "off" | "false" => false,
                _ => return Err(invalid("presentation", value, "must be on or off")),
            }
        }
        "lesson" => params.lesson = Some(value.to_string()).filter(|v| !v.is_empty()),
        "origins" => params.origins = parse_origins(value)?,
        "cmd" => {
            let (at, command) = value
                .split_once(':')
                .and_then(|(at, c)| Some((at.parse::<u64>().ok()?, c)))
                .ok_or_else(|| invalid("cmd", value, "must be MILLISECONDS:COMMAND, the simulated time and the command line run then"))?;
            params.commands.push(Recorded { at, command: command.to_string() });
        }
        "at" => params.at = Some(value.parse::<u64>().map_err(|_| invalid("at", value, "must be whole simulated milliseconds"))?),
        "cluster" => params.cluster = Some(check_cluster_path(value)?),
        _ => {}
    }
    Ok(())
}

fn parse_bool(value: &str) -> Option<bool> {
    match value {
        "" | "true" | "1" | "yes" => Some(true),
        "false" | "0" | "no" => Some(false),
        _ => None,
    }
}

/// A comma-separated list of names from `known`; `none` is the empty list.
fn parse_list(name: &str, value: &str, known: &[&str]) -> Result<Vec<String>, String> {
    if value == "none" {
        return Ok(Vec::new());
    }
    let items: Vec<String> = value.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
    match items.iter().find(|i| !known.contains(&i.as_str())) {
        Some(bad) => Err(format!(
            "error: unknown {} {bad:?} in parameter \"{name}\"; known: {}, or none",
            name.trim_end_matches('s'),
            known.join(", ")
        )),
        None => Ok(items),
    }
}

/// A comma-separated list of origins (`scheme://host[:port]`) or `*`.
fn parse_origins(value: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for item in value.split(',').map(|s| s.trim().trim_end_matches('/')).filter(|s| !s.is_empty()) {
        let valid = item == "*"
            || item.split_once("://").is_some_and(|(scheme, rest)| {
                !scheme.is_empty()
                    && scheme.chars().all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '.')
                    && !rest.is_empty()
                    && !rest.contains('/')
            });
        if !valid {
            return Err(invalid("origins", item, "each origin must be scheme://host[:port] with no path, or *"));
        }
        out.push(item.to_string());
    }
    Ok(out)
}

/// Percent-encodes a query value: everything but the unreserved characters.
pub fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `%XX` and `+` decoding for query values, as Go's `url.ParseQuery` reads a query; malformed
/// escapes are kept as they are. The page's address and `kubeloop serve`'s requests both use it.
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The nearest offered speed to `x` (for a speed from elsewhere).
pub fn nearest_speed(x: f64) -> f64 {
    SPEEDS.iter().copied().fold(1.0, |best, s| if (s - x).abs() < (best - x).abs() { s } else { best })
}

/// `kubectl scale deployment NAME --replicas=N` (with `-n` outside `default`).
pub fn scale_command(namespace: &str, deployment: &str, replicas: i64) -> String {
    format!("kubectl scale deployment {deployment} --replicas={replicas}{}", namespace_flag(namespace))
}

/// `kubectl delete pod NAME`: the same DELETE the Kill button sends.
pub fn kill_command(namespace: &str, pod: &str) -> String {
    format!("kubectl delete pod {pod}{}", namespace_flag(namespace))
}

fn namespace_flag(namespace: &str) -> String {
    if namespace.is_empty() || namespace == "default" {
        String::new()
    } else {
        format!(" -n {namespace}")
    }
}

/// `sim node add node-N` with the first free N after the nodes that exist or are starting.
pub fn add_node_command(sim: &Sim) -> String {
    let taken = |name: &str| {
        sim.has_component(&crate::sim::ComponentId::Kubelet(name.to_string()))
            || sim.api().get(&crate::model::ObjectKey::new(crate::model::Kind::Node, "", name)).is_some()
    };
    let n = (1..).find(|n| !taken(&format!("node-{n}"))).unwrap_or(1);
    format!("sim node add node-{n}")
}

/// `sim seed N`: restarts the scenario with seed N (also what Reset runs, with the current seed).
pub fn seed_command(seed: u64) -> String {
    format!("sim seed {seed}")
}

/// The component switch in the room of loops: `sim stop NAME` while it runs, `sim start NAME`
/// while it is stopped.
pub fn switch_command(component: &str, running: bool) -> String {
    format!("sim {} {component}", if running { "stop" } else { "start" })
}

/// A node's fault buttons: `sim node fail|partition|recover NAME`.
pub const NODE_FAULTS: [&str; 3] = ["fail", "partition", "recover"];

/// `sim node VERB NAME` for one of [`NODE_FAULTS`].
pub fn node_fault_command(verb: &str, node: &str) -> String {
    format!("sim node {verb} {node}")
}

/// What one of [`NODE_FAULTS`] does to the machine, for the button's label.
pub fn node_fault_words(verb: &str) -> &'static str {
    match verb {
        "fail" => "power it off",
        "partition" => "cut it off from the network",
        _ => "bring it back",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Session;

    #[test]
    fn cluster_is_a_path_on_the_pages_own_origin_and_nothing_else() {
        assert_eq!(parse_query("?cluster=/").0.cluster.as_deref(), Some("/"));
        assert_eq!(parse_query("?cluster=%2Fk8s%2F").0.cluster.as_deref(), Some("/k8s/"));
        for bad in ["http://evil.example/", "//evil.example/", "evil.example", "", "/\\evil", "javascript:alert(1)"] {
            let (params, errors) = parse_pairs([("cluster".to_string(), bad.to_string())]);
            assert_eq!(params.cluster, None, "{bad}");
            assert_eq!(errors.len(), 1, "{bad}");
            assert!(errors[0].starts_with("error: invalid value") && errors[0].contains("kubectl proxy --www"), "{}", errors[0]);
        }
    }

    #[test]
    fn each_node_fault_is_a_sim_command_with_its_words() {
        let all: Vec<(String, &str)> = NODE_FAULTS.iter().map(|v| (node_fault_command(v, "node-1"), node_fault_words(v))).collect();
        assert_eq!(
            all,
            [
                ("sim node fail node-1".to_string(), "power it off"),
                ("sim node partition node-1".to_string(), "cut it off from the network"),
                ("sim node recover node-1".to_string(), "bring it back"),
            ]
        );
    }

    #[test]
    fn the_address_picks_scenario_and_seed_and_bad_values_say_why() {
        assert_eq!(parse_query(""), (PageParams::default(), vec![]));
        let (p, e) = parse_query("?scenario=large&seed=42");
        assert_eq!((p.scenario.as_str(), p.seed, e.len()), ("large", Some(42), 0));
        let (p, e) = parse_query("?speed=10&scenario=rolling%2Dupdate");
        assert_eq!((p.scenario.as_str(), p.speed, e.len()), ("rolling-update", 10.0, 0));
        let (p, e) = parse_query("?scenario=nope&seed=7");
        assert_eq!(p.scenario, "default", "a bad scenario keeps the default");
        assert_eq!(p.seed, Some(7), "the other parameters still apply");
        assert_eq!(
            e,
            vec!["error: unknown scenario \"nope\" in parameter \"scenario\"; the page knows default, dropped-events, dropped-events-edge, rolling-update, scale-up, service, large (or the URL of a YAML file)"]
        );
        assert_eq!(
            parse_query("?seed=-1").1,
            vec!["error: invalid value \"-1\" for parameter \"seed\": must be a whole number from 0 to 18446744073709551615"]
        );
        assert!(parse_query("?seed=%ZZ&x").1[0].contains("\"%ZZ\""));
        assert_eq!(parse_query("?seed=%").1.len(), 1);
    }

    #[test]
    fn every_embedding_parameter_parses_and_each_bad_one_falls_back_alone() {
        let (p, e) = parse_query(
            "?scenario=scenarios%2Fmine.yaml&speed=7&autoplay=false&panels=cluster,events&controls=play,pause&theme=dark&lesson=scale&origins=https://course.example,http://127.0.0.1:8080/",
        );
        assert_eq!(e, Vec::<String>::new());
        assert!(p.scenario_is_url());
        assert_eq!(p.speed, 5.0, "the nearest offered speed");
        assert!(!p.autoplay);
        assert!(p.shows_panel("events") && !p.shows_panel("flow"));
        assert!(p.shows_control("pause") && !p.shows_control("reset"));
        assert_eq!(p.theme, Theme::Dark);
        assert_eq!(p.lesson.as_deref(), Some("scale"));
        assert_eq!(p.origins, vec!["https://course.example", "http://127.0.0.1:8080"]);
        assert!(p.allows_origin("https://course.example", "http://x") && !p.allows_origin("https://evil.example", "http://x"));
        assert!(PageParams::default().allows_origin("http://x", "http://x"), "no list: the page's own origin");
        assert!(!PageParams::default().allows_origin("http://y", "http://x"));

        let (p, e) = parse_query("?speed=fast&autoplay=maybe&panels=cluster,nope&controls=none&theme=blue&origins=course.example&seed=3");
        assert_eq!(p.speed, 1.0);
        assert!(p.autoplay);
        assert_eq!(p.panels, None);
        assert_eq!(p.controls, Some(vec![]));
        assert!(!p.shows_control("play"));
        assert_eq!(p.theme, Theme::Auto);
        assert_eq!(p.seed, Some(3));
        assert_eq!(
            e,
            vec![
                "error: invalid value \"fast\" for parameter \"speed\": must be a number above 0 (offered: 0.25 to 100)",
                "error: invalid value \"maybe\" for parameter \"autoplay\": must be true or false",
                "error: unknown panel \"nope\" in parameter \"panels\"; known: header, cluster, gap, pod, hints, loops, flow, events, commands, console, editor, lesson, or none",
                "error: invalid value \"blue\" for parameter \"theme\": must be one of light, dark, auto",
                "error: invalid value \"course.example\" for parameter \"origins\": each origin must be scheme://host[:port] with no path, or *",
            ]
        );
        assert_eq!(parse_query("?speed=-2&speed=NaN&speed=inf").1.len(), 3);
    }

    #[test]
    fn presentation_mode_is_on_or_off_and_a_bad_value_leaves_it_off() {
        assert!(!PageParams::default().presentation);
        assert!(parse_query("?presentation=on").0.presentation);
        assert!(parse_query("?presentation").0.presentation, "a bare name turns it on, as autoplay does");
        assert!(!parse_query("?presentation=off").0.presentation);
        let (p, e) = parse_query("?presentation=big&seed=4");
        assert!(!p.presentation);
        assert_eq!(p.seed, Some(4), "the other parameters still apply");
        assert_eq!(e, vec!["error: invalid value \"big\" for parameter \"presentation\": must be on or off"]);
    }

    #[test]
    fn replayed_commands_and_the_final_time_come_from_the_address() {
        let (p, e) = parse_query(
            "?cmd=1500%3Akubectl%20scale%20deployment%20web%20--replicas%3D5&cmd=2000:sim%20node%20add%20node-3&at=9000&cmd=oops",
        );
        assert_eq!(
            p.commands,
            vec![
                Recorded { at: 1500, command: "kubectl scale deployment web --replicas=5".into() },
                Recorded { at: 2000, command: "sim node add node-3".into() }
            ]
        );
        assert_eq!(p.at, Some(9000));
        assert_eq!(e, vec!["error: invalid value \"oops\" for parameter \"cmd\": must be MILLISECONDS:COMMAND, the simulated time and the command line run then"]);
        assert_eq!(percent_decode(&percent_encode("a b/c=d&e:é")), "a b/c=d&e:é");
        assert_eq!(percent_encode("a b"), "a%20b");
    }

    #[test]
    fn scenario_urls_stay_on_the_page_origin() {
        let origin = "http://127.0.0.1:8080";
        assert_eq!(check_scenario_url("scenarios/mine.yaml", origin), Ok(()));
        assert_eq!(check_scenario_url("/course/mine.yaml", origin), Ok(()));
        assert_eq!(check_scenario_url("http://127.0.0.1:8080/mine.yaml", origin), Ok(()));
        assert_eq!(
            check_scenario_url("https://evil.example/x.yaml", origin),
            Err("error: refusing to load scenario \"https://evil.example/x.yaml\": it is not on this page's origin (http://127.0.0.1:8080); serve the YAML file next to the page".into())
        );
        assert!(check_scenario_url("//evil.example/x.yaml", origin).is_err());
        assert!(check_scenario_url("http://127.0.0.1:8080.evil.example/x.yaml", origin).is_err());
        assert!(check_scenario_url("javascript:alert(1)//.yaml", origin).is_err());
        assert!(check_scenario_url("data:text/yaml,x.yaml", origin).is_err());
    }

    #[test]
    fn every_scenario_the_page_names_loads() {
        for name in scenario_names() {
            let s = scenario(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(s.name, name);
        }
        let large = scenario("large").unwrap();
        assert_eq!(large.nodes.len(), 100);
        assert!(scenario("huge").unwrap_err().starts_with("error: unknown scenario \"huge\""));
    }

    #[test]
    fn controls_become_command_lines_that_the_session_accepts() {
        let mut s = Session::new(scenario("default").unwrap(), Some(1)).unwrap();
        assert_eq!(scale_command("default", "web", 5), "kubectl scale deployment web --replicas=5");
        assert_eq!(kill_command("team-a", "web-1"), "kubectl delete pod web-1 -n team-a");
        assert_eq!(add_node_command(s.sim()), "sim node add node-3");
        assert!(s.execute(&scale_command("default", "web", 5)).ok);
        assert!(s.execute(&add_node_command(s.sim())).ok);
        assert_eq!(add_node_command(s.sim()), "sim node add node-4");
        assert_eq!(s.execute(&seed_command(9)).stdout, "scenario \"default\" restarted with seed 9\n");
        assert_eq!(switch_command("kube-scheduler", true), "sim stop kube-scheduler");
        assert_eq!(switch_command("kubelet-node-1", false), "sim start kubelet-node-1");
        assert_eq!(node_fault_command("partition", "node-2"), "sim node partition node-2");
        assert_eq!(nearest_speed(7.0), 5.0);
        assert_eq!(nearest_speed(1000.0), 100.0);
        assert_eq!(nearest_speed(0.0), 0.25);
    }
}
