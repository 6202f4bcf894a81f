//! What the process inside a container does, so that probe outcomes follow from the manifest.
//!
//! A real node runs the image; the simulation has no images, so this is a small, documented
//! model of the programs the documentation's examples run:
//! - a busybox-style shell, `sh -c SCRIPT` (or `/bin/sh -c`), whose script is made of `touch`,
//!   `rm [-f]`, `cat`, `echo`, `sleep N` (or `infinity`), `true`, `false` and `exit N`, joined by
//!   `;`, `&&` or new lines. Its files live in the container and start empty with each instance,
//!   so an exec probe sees what the script has done by then. When the script ends the container
//!   exits with its status. As PID 1 the shell ignores SIGTERM, so a stop waits for the grace
//!   period and ends in SIGKILL (137), as on a real node;
//! - `sleep N` run directly;
//! - programs that compute and exit, run directly or in a script: `perl` (the documentation's
//!   pi Job, `perl -Mbignum=bpi -wle 'print bpi(2000)'`, takes about 6 s; other perl one-liners
//!   about 1 s), `date`, `echo`, `hostname`, `uname`, `env`, `printenv`, `true` and `false`. Each
//!   runs for its own nominal time, drawn ±25% from the simulation's seed when the container
//!   starts (`draw_work`), and exits 0 (`false`: 1);
//! - the liveness test image (`registry.k8s.io/e2e-test-images/agnhost … liveness`, and the older
//!   `registry.k8s.io/liveness`, also under its old name `k8s.gcr.io/liveness`, one image for
//!   `images::canonical`): an HTTP server on 8080 whose `/healthz` answers 200 for the
//!   first 10 s of its life and 500 after, as agnhost's `liveness` subcommand does. A Go program
//!   as PID 1 exits with status 2 on SIGTERM;
//! - nginx: HTTP on 80, 200 for `/`, 404 for other paths; it exits 0 on SIGTERM;
//! - anything else (goproxy, etcd, an unknown image, a script this model cannot read): listens
//!   on its declared container ports, answers HTTP 200 and gRPC health SERVING there, and runs
//!   until stopped.
//!
//! Files a container's volume mounts project (a ConfigMap's or Secret's keys under the mount
//! path) are there from the start, so `cat /etc/config/KEY` and `ls /etc/config/` find them.
//!
//! Exec probe commands run against the container's files: `cat`, `test -e|-f`, `ls`, `true`,
//! `false`, `echo` and `sh -c` scripts of the commands above. A command outside the model is
//! taken to succeed: the model knows nothing that would make it fail (`sim fail-probe` does).

use crate::model::{Container, Duration};
use std::collections::BTreeSet;

/// The container's program, read from its image, command and args.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Program {
    Script(Vec<Step>),
    LivenessServer,
    Nginx,
    Server(Vec<i64>),
}

/// One simple command of a script, and whether it runs only if the previous one succeeded.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Step {
    op: Op,
    after_success: bool,
}

#[derive(Clone, Debug, PartialEq)]
enum Op {
    Touch(Vec<String>),
    Rm {
        force: bool,
        paths: Vec<String>,
    },
    Cat(Vec<String>),
    Test(String),
    Ls(Vec<String>),
    Echo(String),
    /// `None` is `sleep infinity`.
    Sleep(Option<u64>),
    Exit(i32),
    Status(i32),
    /// A program computing for this many milliseconds (nominal until `draw_work`), then 0.
    Work(u64),
    /// A command outside the model: assumed to succeed, silently.
    Other,
}

/// How long agnhost's liveness server answers 200 before it turns to 500.
pub(crate) const LIVENESS_HEALTHY_FOR: Duration = Duration::secs(10);

/// What a command printed and the status it ended with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ExecResult {
    pub exit_code: i32,
    pub output: String,
}

/// `sh -c SCRIPT` or `/bin/sh -c SCRIPT`: the script.
fn shell_script(argv: &[String]) -> Option<&str> {
    match argv {
        [sh, c, script, ..] if ["sh", "/bin/sh", "bash", "/bin/bash"].contains(&sh.as_str()) && c == "-c" => Some(script),
        _ => None,
    }
}

/// The last path segment of an image's repository, without tag or digest.
fn image_base(image: &str) -> &str {
    let name = image.split('@').next().unwrap_or(image);
    let last = name.rsplit('/').next().unwrap_or(name);
    last.split(':').next().unwrap_or(last)
}

impl Program {
    pub(crate) fn of(c: &Container) -> Program {
        let argv: Vec<String> = c.command.iter().chain(&c.args).cloned().collect();
        if let Some(steps) = shell_script(&argv).and_then(parse_script) {
            return Program::Script(steps);
        }
        if let [sleep, n] = &argv[..] {
            if let Some(op) = parse_sleep(n).filter(|_| sleep == "sleep" || sleep == "/bin/sleep") {
                return Program::Script(vec![Step { op, after_success: false }]);
            }
        }
        if let Some(steps) = finite_command(&argv) {
            return Program::Script(steps);
        }
        let base = image_base(&c.image);
        let agnhost_liveness = base == "agnhost" && c.args.first().is_some_and(|a| a == "liveness");
        let liveness = base == "liveness" && super::images::canonical_repository(&c.image) == "registry.k8s.io/liveness";
        if agnhost_liveness || liveness {
            return Program::LivenessServer;
        }
        if base == "nginx" && c.command.is_empty() {
            return Program::Nginx;
        }
        Program::Server(c.ports.iter().filter(|p| p.protocol.as_deref().is_none_or(|p| p == "TCP")).map(|p| p.container_port).collect())
    }

    /// The exit the program makes on its own, `elapsed` after its start, with its status.
    #[cfg(test)]
    pub(crate) fn own_exit(&self) -> Option<(Duration, i32)> {
        self.own_exit_with(&BTreeSet::new())
    }

    /// The same, in a container whose volume mounts hold `mounted` (files by absolute path).
    pub(crate) fn own_exit_with(&self, mounted: &BTreeSet<String>) -> Option<(Duration, i32)> {
        match self {
            Program::Script(steps) => run(steps, &mut mounted.clone(), None).end,
            _ => None,
        }
    }

    /// Draws how long each computing step of this run takes: its nominal time ±25%, from the
    /// simulation's seed. Only a program that computes draws, so other containers leave the
    /// seeded sequence as it was.
    pub(crate) fn draw_work(mut self, rng: &mut crate::rng::Rng) -> Self {
        if let Program::Script(steps) = &mut self {
            for step in steps.iter_mut() {
                if let Op::Work(ms) = &mut step.op {
                    *ms = rng.jitter(*ms, 0.25);
                }
            }
        }
        self
    }

    /// The status the process exits with on SIGTERM; `None`: it ignores SIGTERM (a shell as
    /// PID 1), so only the SIGKILL at the end of the grace period stops it.
    pub(crate) fn on_sigterm(&self) -> Option<i32> {
        match self {
            Program::Script(_) => None,
            Program::LivenessServer => Some(2),
            Program::Nginx | Program::Server(_) => Some(0),
        }
    }

    /// Whether it accepts TCP connections on `port`.
    pub(crate) fn listens(&self, port: i64) -> bool {
        match self {
            Program::Script(_) => false,
            Program::LivenessServer => port == 8080,
            Program::Nginx => port == 80,
            Program::Server(ports) => ports.contains(&port),
        }
    }

    /// The HTTP status of `GET path` on `port`, `elapsed` after the start; `None` if nothing
    /// listens there.
    pub(crate) fn http_status(&self, port: i64, path: &str, elapsed: Duration) -> Option<u16> {
        if !self.listens(port) {
            return None;
        }
        Some(match self {
            // agnhost: `if duration.Seconds() > 10 { 500 } else { 200 }`.
            Program::LivenessServer if path == "/healthz" && elapsed > LIVENESS_HEALTHY_FOR => 500,
            Program::LivenessServer if path == "/healthz" => 200,
            Program::LivenessServer => 404,
            Program::Nginx if path == "/" || path == "/index.html" => 200,
            Program::Nginx => 404,
            _ => 200,
        })
    }

    /// Whether a gRPC health check on `port` is answered SERVING (`None`: no gRPC server there).
    pub(crate) fn grpc_serving(&self, port: i64) -> Option<bool> {
        (matches!(self, Program::Server(_)) && self.listens(port)).then_some(true)
    }

    /// What the program has written to its standard output and error `elapsed` after its start
    /// (a script's `echo` lines and its commands' error messages; servers write nothing), and
    /// whether that is all of it: a script that reads files from its volume mounts (`cat`, `ls`)
    /// prints their contents, which this model does not know.
    pub(crate) fn output_at(&self, elapsed: Duration, mounts: bool) -> (String, bool) {
        match self {
            Program::Script(steps) => {
                let reads = steps.iter().any(|s| matches!(s.op, Op::Cat(_) | Op::Ls(_) | Op::Test(_)));
                if reads && mounts {
                    let echoes = run(steps, &mut BTreeSet::new(), Some(elapsed.0)).echoed;
                    return (echoes, false);
                }
                (run(steps, &mut BTreeSet::new(), Some(elapsed.0)).output, true)
            }
            _ => (String::new(), true),
        }
    }

    /// The files in the container `elapsed` after its start.
    #[cfg(test)]
    pub(crate) fn files_at(&self, elapsed: Duration) -> BTreeSet<String> {
        self.files_at_with(elapsed, &BTreeSet::new())
    }

    /// The same, starting from the files its volume mounts hold (a ConfigMap's keys).
    pub(crate) fn files_at_with(&self, elapsed: Duration, mounted: &BTreeSet<String>) -> BTreeSet<String> {
        let mut files = mounted.clone();
        if let Program::Script(steps) = self {
            run(steps, &mut files, Some(elapsed.0));
        }
        files
    }
}

/// Runs `argv` (an exec probe's command) against `files`, which it does not keep.
pub(crate) fn exec(argv: &[String], files: &BTreeSet<String>) -> ExecResult {
    let steps = match shell_script(argv) {
        Some(script) => parse_script(script).unwrap_or_default(),
        None => vec![Step { op: parse_command(argv).unwrap_or(Op::Other), after_success: false }],
    };
    let mut files = files.clone();
    let outcome = run(&steps, &mut files, Some(0));
    ExecResult { exit_code: outcome.status, output: outcome.output }
}

struct Outcome {
    status: i32,
    output: String,
    /// What `echo` alone wrote.
    echoed: String,
    /// When and how the script ended; `None` if it is still running (or sleeps for ever).
    end: Option<(Duration, i32)>,
}

/// Interprets steps from the start; with `until`, stops at the first sleep that reaches past it.
fn run(steps: &[Step], files: &mut BTreeSet<String>, until: Option<u64>) -> Outcome {
    let (mut t, mut status, mut output, mut echoed) = (0u64, 0, String::new(), String::new());
    for step in steps {
        if step.after_success && status != 0 {
            continue;
        }
        status = match &step.op {
            Op::Touch(paths) => {
                files.extend(paths.iter().cloned());
                0
            }
            Op::Rm { force, paths } => {
                let mut code = 0;
                for p in paths {
                    if !files.remove(p) && !force {
                        output.push_str(&format!("rm: can't remove '{p}': No such file or directory\n"));
                        code = 1;
                    }
                }
                code
            }
            Op::Cat(paths) => {
                let mut code = 0;
                for p in paths.iter().filter(|p| !files.contains(*p)) {
                    output.push_str(&format!("cat: can't open '{p}': No such file or directory\n"));
                    code = 1;
                }
                code
            }
            Op::Test(p) => i32::from(!files.contains(p) && directory(files, p).is_none()),
            Op::Ls(paths) => {
                let mut code = 0;
                for p in paths {
                    if files.contains(p) {
                        output.push_str(&format!("{p}\n"));
                    } else if let Some(entries) = directory(files, p) {
                        entries.iter().for_each(|e| output.push_str(&format!("{e}\n")));
                    } else {
                        output.push_str(&format!("ls: {p}: No such file or directory\n"));
                        code = 1;
                    }
                }
                code
            }
            Op::Echo(text) => {
                output.push_str(text);
                output.push('\n');
                echoed.push_str(text);
                echoed.push('\n');
                0
            }
            Op::Sleep(None) => return Outcome { status, output, echoed, end: None },
            Op::Sleep(Some(ms)) => {
                if until.is_some_and(|u| t + ms > u) {
                    return Outcome { status, output, echoed, end: None };
                }
                t += ms;
                0
            }
            Op::Exit(code) => return Outcome { status: *code, output, echoed, end: Some((Duration(t), *code)) },
            Op::Work(ms) => {
                if until.is_some_and(|u| t + ms > u) {
                    return Outcome { status, output, echoed, end: None };
                }
                t += ms;
                0
            }
            Op::Status(code) => *code,
            Op::Other => 0,
        };
    }
    Outcome { status, output, echoed, end: Some((Duration(t), status)) }
}

/// The entries of directory `p` (a mount path such as `/etc/config/`), if any file lies under it.
fn directory(files: &BTreeSet<String>, p: &str) -> Option<BTreeSet<String>> {
    let prefix = format!("{}/", p.trim_end_matches('/'));
    let entries: BTreeSet<String> =
        files.iter().filter_map(|f| f.strip_prefix(&prefix)).map(|rest| rest.split('/').next().unwrap_or(rest).to_string()).collect();
    (!entries.is_empty()).then_some(entries)
}

/// A script of simple commands joined by `;`, `&&` and new lines; `None` if it uses anything
/// else (pipes, loops, redirections, `||`), which the model does not pretend to run.
fn parse_script(script: &str) -> Option<Vec<Step>> {
    if script.contains(['|', '>', '<', '`', '$', '(']) {
        return None;
    }
    let mut steps = Vec::new();
    for statement in script.split([';', '\n']) {
        for (j, part) in statement.split("&&").enumerate() {
            let argv = words(part)?;
            if argv.is_empty() {
                if j > 0 {
                    return None;
                }
                continue;
            }
            steps.push(Step { op: parse_command(&argv)?, after_success: j > 0 });
        }
    }
    Some(steps)
}

/// Splits on blanks, honouring single and double quotes; `None` on an unclosed quote.
fn words(text: &str) -> Option<Vec<String>> {
    let (mut out, mut word, mut quote, mut in_word) = (Vec::new(), String::new(), None, false);
    for ch in text.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(ch);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return None;
    }
    if in_word {
        out.push(word);
    }
    Some(out)
}

fn parse_sleep(arg: &str) -> Option<Op> {
    if arg == "infinity" {
        return Some(Op::Sleep(None));
    }
    let secs: f64 = crate::model::parse_f64(arg.trim_end_matches('s')).filter(|s| *s >= 0.0 && s.is_finite())?;
    Some(Op::Sleep(Some((secs * 1000.0) as u64)))
}

/// How long a computing command takes, nominally: the pi digits of the documentation's Job
/// about 6 s, another perl program about 1 s, the small utilities 20 ms.
fn work_time(name: &str, rest: &[String]) -> Option<u64> {
    match name {
        "perl" if rest.iter().any(|a| a.contains("bpi(")) => Some(6_000),
        "perl" => Some(1_000),
        "date" | "hostname" | "uname" | "env" | "printenv" | "echo" | "true" | "false" => Some(20),
        _ => None,
    }
}

/// A computing command run directly (no shell): it works for its time, then exits as it would.
fn finite_command(argv: &[String]) -> Option<Vec<Step>> {
    let (name, rest) = argv.split_first()?;
    let base = name.rsplit('/').next().unwrap_or(name);
    let ms = work_time(base, rest)?;
    let mut steps = vec![Step { op: Op::Work(ms), after_success: false }];
    match base {
        "false" => steps.push(Step { op: Op::Status(1), after_success: false }),
        "echo" => steps.push(Step { op: Op::Echo(rest.join(" ")), after_success: false }),
        _ => {}
    }
    Some(steps)
}

/// One simple command; `None` for a shell keyword the model cannot run (`while`, `if`…).
fn parse_command(argv: &[String]) -> Option<Op> {
    let (name, rest) = argv.split_first()?;
    let name = name.rsplit('/').next().unwrap_or(name);
    let paths = || rest.iter().filter(|a| !a.starts_with('-')).cloned().collect::<Vec<_>>();
    Some(match name {
        "touch" => Op::Touch(paths()),
        "rm" => Op::Rm { force: rest.iter().any(|a| a.starts_with('-') && a.contains('f')), paths: paths() },
        "cat" => Op::Cat(paths()),
        "ls" => Op::Ls(paths()),
        "test" | "[" => Op::Test(paths().into_iter().find(|p| p != "]").unwrap_or_default()),
        "echo" => Op::Echo(rest.join(" ")),
        "sleep" => parse_sleep(rest.first()?)?,
        "exit" => Op::Exit(rest.first().map_or(Some(0), |c| c.parse().ok())?),
        "perl" | "date" | "hostname" | "uname" | "env" | "printenv" => Op::Work(work_time(name, rest).unwrap_or(0)),
        "true" | ":" => Op::Status(0),
        "false" => Op::Status(1),
        "while" | "until" | "for" | "if" | "do" | "done" | "then" | "fi" | "case" | "esac" | "else" | "{" | "}" => return None,
        _ => Op::Other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(image: &str, command: &[&str], args: &[&str]) -> Container {
        Container {
            name: "c".into(),
            image: image.into(),
            command: command.iter().map(|s| s.to_string()).collect(),
            args: args.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    const EXEC_LIVENESS: &str = "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600";

    #[test]
    fn the_exec_liveness_script_keeps_its_file_for_30_seconds_then_runs_600_more() {
        let p = Program::of(&container("registry.k8s.io/busybox:1.27.2", &[], &["/bin/sh", "-c", EXEC_LIVENESS]));
        let cat = |t: u64| exec(&["cat".into(), "/tmp/healthy".into()], &p.files_at(Duration::secs(t)));
        assert_eq!(cat(29).exit_code, 0);
        let failed = cat(31);
        assert_eq!((failed.exit_code, failed.output.as_str()), (1, "cat: can't open '/tmp/healthy': No such file or directory\n"));
        assert_eq!(p.own_exit(), Some((Duration::secs(630), 0)), "the script ends after 630 s");
        assert_eq!(p.on_sigterm(), None, "sh as PID 1 ignores SIGTERM");
    }

    #[test]
    fn a_script_ends_with_its_status_and_and_skips_after_a_failure() {
        let p = Program::of(&container("busybox", &["sh", "-c", "echo hi && sleep 5 && exit 3"], &[]));
        assert_eq!(p.own_exit(), Some((Duration::secs(5), 3)));
        let p = Program::of(&container("busybox", &["sh", "-c", "cat /nope && sleep 100"], &[]));
        assert_eq!(p.own_exit(), Some((Duration::ZERO, 1)));
        let p = Program::of(&container("busybox", &["sh", "-c", "while true; do sleep 1; done"], &[]));
        assert_eq!(p, Program::Server(vec![]), "a loop is beyond the model: it runs until stopped");
        assert_eq!(Program::of(&container("busybox", &["sleep", "3600"], &[])).own_exit(), Some((Duration::secs(3600), 0)));
        assert_eq!(Program::of(&container("busybox", &["sh", "-c", "sleep infinity"], &[])).own_exit(), None);
    }

    #[test]
    fn computing_commands_exit_on_their_own_after_a_drawn_time() {
        let pi = Program::of(&container("perl:5.34.0", &["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"], &[]));
        assert_eq!(pi.own_exit(), Some((Duration::secs(6), 0)), "nominally 6 s, then 0");
        let mut rng = crate::rng::Rng::new(7);
        let (after, code) = pi.draw_work(&mut rng).own_exit().unwrap();
        assert!((4_500..=7_500).contains(&after.0) && code == 0, "drawn within ±25%: {after:?}");
        assert_eq!(Program::of(&container("busybox", &["date"], &[])).own_exit(), Some((Duration(20), 0)));
        assert_eq!(Program::of(&container("busybox", &["echo", "hi"], &[])).own_exit(), Some((Duration(20), 0)));
        assert_eq!(Program::of(&container("busybox", &["false"], &[])).own_exit(), Some((Duration(20), 1)));
        let script = Program::of(&container("busybox", &["sh", "-c", "date; echo done; exit 3"], &[]));
        assert_eq!(script.own_exit(), Some((Duration(20), 3)));
        // A program the model does not know still runs until stopped.
        assert_eq!(Program::of(&container("busybox", &["my-server"], &[])).own_exit(), None);
    }

    #[test]
    fn agnhost_liveness_serves_healthz_200_for_10_seconds_then_500() {
        let p = Program::of(&container("registry.k8s.io/e2e-test-images/agnhost:2.40", &[], &["liveness"]));
        assert_eq!(p.http_status(8080, "/healthz", Duration::secs(10)), Some(200));
        assert_eq!(p.http_status(8080, "/healthz", Duration(10_001)), Some(500));
        assert_eq!(p.http_status(80, "/healthz", Duration::ZERO), None);
        assert_eq!(Program::of(&container("registry.k8s.io/liveness", &[], &["/server"])), Program::LivenessServer);
        assert_eq!(Program::of(&container("k8s.gcr.io/liveness", &[], &["/server"])), Program::LivenessServer);
        assert_eq!(Program::of(&container("k8s.gcr.io/liveness:latest", &[], &["/server"])), Program::LivenessServer);
        assert_ne!(Program::of(&container("example.com/liveness", &[], &["/server"])), Program::LivenessServer);
        assert_eq!(p.on_sigterm(), Some(2));
    }

    #[test]
    fn nginx_answers_on_80_and_unknown_images_on_their_declared_ports() {
        let nginx = Program::of(&container("nginx:1.14.2", &[], &[]));
        assert_eq!((nginx.http_status(80, "/", Duration::ZERO), nginx.listens(8080)), (Some(200), false));
        let mut goproxy = container("registry.k8s.io/goproxy:0.1", &[], &[]);
        goproxy.ports = vec![crate::model::ContainerPort { container_port: 8080, ..Default::default() }];
        let p = Program::of(&goproxy);
        assert!(p.listens(8080) && !p.listens(80));
        assert_eq!(p.grpc_serving(8080), Some(true));
        assert_eq!(p.own_exit(), None);
    }

    #[test]
    fn exec_probe_commands_see_the_files_and_unknown_ones_succeed() {
        let files: BTreeSet<String> = ["/tmp/ready".to_string()].into();
        let sh = |s: &str| exec(&["sh".into(), "-c".into(), s.into()], &files);
        assert_eq!(sh("test -e /tmp/ready").exit_code, 0);
        assert_eq!(sh("cat /tmp/ready && exit 4").exit_code, 4);
        assert_eq!(exec(&["pg_isready".into()], &files).exit_code, 0);
        assert_eq!(exec(&["ls".into(), "/x".into()], &files).output, "ls: /x: No such file or directory\n");
    }

    #[test]
    fn mounted_files_are_there_from_the_start_for_scripts_and_probes() {
        let mounted: BTreeSet<String> = ["/etc/config/SPECIAL_LEVEL".to_string()].into();
        let p = Program::of(&container("busybox", &["sh", "-c", "cat /etc/config/SPECIAL_LEVEL && sleep 3600"], &[]));
        assert_eq!(p.own_exit_with(&mounted), Some((Duration::secs(3600), 0)));
        assert_eq!(p.own_exit(), Some((Duration(0), 1)));
        let files = p.files_at_with(Duration::secs(1), &mounted);
        assert_eq!(exec(&["cat".into(), "/etc/config/SPECIAL_LEVEL".into()], &files).exit_code, 0);
        assert_eq!(exec(&["ls".into(), "/etc/config/".into()], &files).output, "SPECIAL_LEVEL\n");
    }
}
