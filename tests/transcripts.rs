//! Transcript tests for the command language: files of commands and the exact output expected.
//!
//! Each `tests/transcripts/*.txt` runs in a fresh session. Format:
//!
//! ```text
//! # scenario: default        (optional; `empty` for no nodes or manifests; default: default)
//! # seed: 1                  (optional)
//! # any other line starting with `#` is a comment
//! $ kubectl get nodes
//! NAME     STATUS    ROLES    AGE   VERSION
//! ...
//! $ kubectl apply -f - <<EOF
//! (here-document lines belong to the command)
//! EOF
//! deployment.apps/web created
//! $ kubectl get podz
//! error: the server doesn't have a resource type "podz"
//! [exit 1]
//! ```
//!
//! The expected text of a command is everything up to the next `$ ` line, except comments:
//! its stdout, its stderr, `[exit 1]` if it failed, then what streamed meanwhile (watch lines,
//! timeline commands). Comparison is exact, blank lines included.
//!
//! `tests/transcripts/pending/` holds transcripts that need the controllers, scheduler and
//! kubelets wired into `Sim::new`; the runner skips that directory.
//!
//! `UPDATE_TRANSCRIPTS=1 cargo test --test transcripts` rewrites the files with the actual
//! output. Review every change it makes before committing it: the files are the specification.

use kubeloop::command::{parse, Scenario, Session};
use std::fs;
use std::path::{Path, PathBuf};

/// One command of a transcript and the output written under it.
struct Case {
    /// The command as written, here-document lines included.
    command: String,
    expected: String,
    /// Comment lines that followed the expected output, kept when rewriting.
    trailing_comments: Vec<String>,
}

struct Transcript {
    header: Vec<String>,
    cases: Vec<Case>,
}

fn parse_transcript(text: &str) -> Transcript {
    let mut header = Vec::new();
    let mut cases: Vec<Case> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(cmd) = line.strip_prefix("$ ") {
            let mut command = cmd.to_string();
            while parse::needs_more_lines(&command) {
                match lines.next() {
                    Some(l) => {
                        command.push('\n');
                        command.push_str(l);
                    }
                    None => break,
                }
            }
            cases.push(Case { command, expected: String::new(), trailing_comments: Vec::new() });
        } else if line.starts_with('#') {
            match cases.last_mut() {
                Some(c) => c.trailing_comments.push(line.to_string()),
                None => header.push(line.to_string()),
            }
        } else if let Some(c) = cases.last_mut() {
            c.expected.push_str(line);
            c.expected.push('\n');
        } else {
            header.push(line.to_string());
        }
    }
    Transcript { header, cases }
}

fn directive(header: &[String], name: &str) -> Option<String> {
    header.iter().find_map(|l| l.strip_prefix('#')?.trim().strip_prefix(name)?.strip_prefix(':').map(|v| v.trim().to_string()))
}

fn run_case(session: &mut Session, command: &str) -> String {
    let out = session.execute(command);
    let stream = session.take_stream();
    let mut text = out.stdout + &out.stderr;
    if !out.ok {
        text.push_str("[exit 1]\n");
    }
    text + &stream.stdout + &stream.stderr
}

/// A line diff (longest common subsequence), `-` expected, `+` actual.
fn diff(expected: &str, actual: &str) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out.push_str(&format!("   {}\n", a[i]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push_str(&format!(" + {}\n", b[j].replace(' ', "·")));
            j += 1;
        } else {
            out.push_str(&format!(" - {}\n", a[i].replace(' ', "·")));
            i += 1;
        }
    }
    if expected.ends_with('\n') != actual.ends_with('\n') || expected.lines().count() == actual.lines().count() && out.is_empty() {
        out.push_str(" (the outputs differ in their final newline)\n");
    }
    out
}

fn render(t: &Transcript, outputs: &[String]) -> String {
    let mut text = String::new();
    for h in &t.header {
        text.push_str(h);
        text.push('\n');
    }
    for (case, output) in t.cases.iter().zip(outputs) {
        text.push_str("$ ");
        text.push_str(&case.command);
        text.push('\n');
        text.push_str(output);
        for c in &case.trailing_comments {
            text.push_str(c);
            text.push('\n');
        }
    }
    text
}

fn transcript_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "txt")).collect())
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn transcripts_match_their_expected_output() {
    let update = std::env::var("UPDATE_TRANSCRIPTS").is_ok_and(|v| v == "1");
    let files = transcript_files();
    assert!(!files.is_empty(), "no transcripts found in tests/transcripts");
    let mut failures = Vec::new();
    let mut checked = 0;
    for path in files {
        let text = fs::read_to_string(&path).expect("transcript is readable");
        let t = parse_transcript(&text);
        let scenario_name = directive(&t.header, "scenario").unwrap_or_else(|| "default".into());
        let scenario =
            if scenario_name == "empty" { Scenario::empty() } else { Scenario::builtin(&scenario_name).expect("known scenario") };
        let seed = directive(&t.header, "seed").map(|s| s.parse().expect("seed is a number"));
        let mut session = Session::new(scenario, seed).expect("scenario starts");
        let mut outputs = Vec::new();
        for case in &t.cases {
            let actual = run_case(&mut session, &case.command);
            checked += 1;
            if actual != case.expected && !update {
                failures.push(format!(
                    "{}: $ {}\n--- expected\n{}--- actual\n{}--- diff (- expected, + actual, · marks a space)\n{}",
                    path.file_name().and_then(|n| n.to_str()).unwrap_or("?"),
                    case.command.lines().next().unwrap_or(""),
                    case.expected,
                    actual,
                    diff(&case.expected, &actual)
                ));
            }
            outputs.push(actual);
        }
        if update {
            let rendered = render(&t, &outputs);
            if rendered != text {
                fs::write(&path, rendered).expect("transcript is writable");
                eprintln!("updated {} — review the change before committing it", path.display());
            }
        }
    }
    assert!(failures.is_empty(), "{} of {checked} transcript commands differ:\n\n{}", failures.len(), failures.join("\n\n"));
}

#[test]
fn the_transcript_format_round_trips() {
    let text = "# scenario: empty\n$ kubectl apply -f - <<EOF\nkind: x\nEOF\nout\n\n# note\n$ sim time\n0ms\n";
    let t = parse_transcript(text);
    assert_eq!(directive(&t.header, "scenario").as_deref(), Some("empty"));
    assert_eq!(t.cases.len(), 2);
    assert_eq!(t.cases[0].command, "kubectl apply -f - <<EOF\nkind: x\nEOF");
    assert_eq!(t.cases[0].expected, "out\n\n");
    let outputs: Vec<String> = t.cases.iter().map(|c| c.expected.clone()).collect();
    assert_eq!(render(&t, &outputs), text);
    assert!(diff("a\nb\n", "a\nc\n").contains(" - b\n + c\n") || diff("a\nb\n", "a\nc\n").contains(" + c\n - b\n"));
}

/// Runs the `kubeloop` binary with `args` and `stdin`, returning (status, stdout, stderr).
fn kubeloop(args: &[&str], stdin: &str) -> (i32, String, String) {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubeloop"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the kubeloop binary runs");
    if let Some(mut input) = child.stdin.take() {
        input.write_all(stdin.as_bytes()).expect("stdin accepts the script");
    }
    let out = child.wait_with_output().expect("kubeloop finishes");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn cli_shell_prints_each_commands_output_and_the_last_status() {
    let script = "# a comment\nkubectl apply -f - <<EOF\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: busybox\nEOF\nget pod p -o name\nsim advance 5s\nkubectl get podz\n";
    let (status, stdout, stderr) = kubeloop(&["shell", "default"], script);
    assert_eq!(stdout, "pod/p created\npod/p\nadvanced 5s to 5s\n");
    assert_eq!(stderr, "error: the server doesn't have a resource type \"podz\"\n");
    assert_eq!(status, 1, "the last command failed");
    let (status, _, _) = kubeloop(&["shell"], "sim time\n");
    assert_eq!(status, 0);
}

#[test]
fn cli_run_plays_the_timeline_then_prints_the_final_state() {
    let (status, stdout, _) = kubeloop(&["run", "rolling-update", "--until", "40s"], "");
    assert_eq!(status, 0);
    assert!(stdout.contains("$ kubectl set image deployment/web nginx=nginx:1.16.1\ndeployment.apps/web image updated\n"), "{stdout}");
    for section in ["\n$ kubectl get nodes\n", "\n$ kubectl get deployments\n", "\n$ kubectl get pods\n"] {
        assert!(stdout.contains(section), "missing {section:?} in {stdout}");
    }
    let (status, stdout, _) = kubeloop(&["run", "default", "--until", "1s", "--trace", "json"], "");
    assert_eq!(status, 0);
    let messages: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).expect("each line is JSON")).collect();
    assert!(messages.iter().all(|m| ["seq", "sentMs", "arrivesMs", "from", "to", "kind", "what"].iter().all(|k| m.get(k).is_some())));
    assert!(
        messages.iter().any(|m| m["from"] == "kubectl" && m["what"] == "create deployment/default/web"),
        "the scenario's manifest is applied as kubectl: {stdout}"
    );
}

#[test]
fn cli_rejects_bad_arguments_with_a_usage_error() {
    for args in [
        &["run"][..],
        &["run", "nope"],
        &["run", "default", "--seed", "x"],
        &["run", "default", "--trace", "xml"],
        &["frobnicate"],
        &["shell", "default", "--until", "1s"],
    ] {
        let (status, stdout, stderr) = kubeloop(args, "");
        assert_eq!(status, 2, "{args:?}");
        assert!(stdout.is_empty(), "{args:?}");
        assert!(stderr.starts_with("error: ") && stderr.contains("Usage:"), "{args:?}: {stderr}");
    }
    let (status, stdout, _) = kubeloop(&["--version"], "");
    assert_eq!((status, stdout), (0, format!("kubeloop {}\n", kubeloop::VERSION)));
}
