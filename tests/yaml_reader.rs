//! kubeloop reads YAML with its own small reader (`src/command/yaml/reader.rs`), far smaller in
//! the page than a YAML library. This checks it against yaml_serde on every manifest the tests
//! and the product use: the scenario files, the transcripts' here-documents, the golden files,
//! the lessons and the course examples, the documentation examples built into kubectl's URL
//! reader, and the YAML held inside scenario and lesson files. The same value, or both refuse.

#[path = "support/yaml_check.rs"]
mod yaml_check;

use serde_json::Value;
use std::path::Path;
use yaml_check::{compare, disagreement, our_documents, Accepted};

/// Every file under `dir` (relative to the crate) whose name ends in one of `extensions`.
fn files(dir: &str, extensions: &[&str]) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out = Vec::new();
    let mut pending = vec![root];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if extensions.iter().any(|e| path.to_string_lossy().ends_with(e)) {
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                out.push((path.display().to_string(), text));
            }
        }
    }
    out.sort();
    out
}

/// The here-documents of a transcript (`$ kubectl apply -f - <<EOF` … `EOF`).
fn here_documents(transcript: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in transcript.lines() {
        match current.as_mut() {
            Some(doc) if line == "EOF" => out.push(std::mem::take(doc)),
            Some(doc) => {
                doc.push_str(line);
                doc.push('\n');
            }
            None => {}
        }
        if line == "EOF" {
            current = None;
        } else if line.starts_with("$ ") && line.ends_with("<<EOF") {
            current = Some(String::new());
        }
    }
    out
}

/// Manifests held as text inside a YAML file: a scenario's `manifests: |`, a lesson's files.
fn embedded_manifests(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) if s.contains("apiVersion") => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| embedded_manifests(v, out)),
        Value::Object(map) => map.values().for_each(|v| embedded_manifests(v, out)),
        _ => {}
    }
}

/// Every YAML text to check, named by where it comes from.
fn corpus() -> Vec<(String, String)> {
    let mut texts: Vec<(String, String)> = Vec::new();
    for dir in ["scenarios", "lessons", "www/examples", "tests/golden"] {
        texts.extend(files(dir, &[".yaml", ".yml"]));
    }
    for (path, text) in files("tests/transcripts", &[".txt"]) {
        for (i, doc) in here_documents(&text).into_iter().enumerate() {
            texts.push((format!("{path} here-document {}", i + 1), doc));
        }
    }
    for (url, text) in kubeloop::command::kubectl::examples::EXAMPLES {
        texts.push((url.to_string(), text.to_string()));
    }
    let mut inner = Vec::new();
    for (name, text) in &texts {
        let mut found = Vec::new();
        for doc in our_documents(text).unwrap_or_default() {
            embedded_manifests(&doc, &mut found);
        }
        inner.extend(found.into_iter().enumerate().map(|(i, t)| (format!("{name}, manifest text {}", i + 1), t)));
    }
    texts.extend(inner);
    texts
}

#[test]
fn every_manifest_the_tests_use_reads_the_same_as_with_yaml_serde() {
    let corpus = corpus();
    assert!(corpus.len() >= 50, "the corpus lost its files: {} texts", corpus.len());
    let mut differ = Vec::new();
    for (name, text) in &corpus {
        if let Some(why) = disagreement(text) {
            differ.push(format!("{name}:\n{text}\n{why}"));
        }
    }
    println!("{} YAML texts read alike by both readers", corpus.len() - differ.len());
    assert!(differ.is_empty(), "{} of {} texts read differently:\n\n{}", differ.len(), corpus.len(), differ.join("\n\n"));
}

/// The YAML a manifest may be written in, feature by feature, and the corners around it: plain
/// scalars of every core-schema type, tags and `%TAG`, anchors, block and flow collections,
/// block scalars, quoting and escapes, documents and directives, and broken text.
const FEATURES: &[&str] = &[
    "a: &x 1\n---\nb: *x\n",
    "%TAG !e! tag:e,2000:\n---\na: 1\n---\nb: !e!x 1\n",
    "!!str a: b\n",
    "&k a: *k\n",
    "a: !e!x 1\n",
    "a: !!int 0x1F\nb: !!int 0755\nc: !!float .5\nd: !!bool yes\n",
    "a: !!float 1e999\n",
    "a: &b !!str 1\nc: *b\n",
    "- !!map {a: 1}\n- !!seq [1]\n- !!set {a, b}\n- !!omap [a: 1]\n",
    "a: !!timestamp 2001-12-14\n",
    "a: |\n  x\n b: 1\n",
    "a: >2\n   x\n",
    "a: |1\n  x\n",
    "a:\n  |\n  x\n",
    "a: 'x'\n  b\n",
    "a: \"x\"\n  b\n",
    "a: b\n c\n",
    "- a\n -b\n",
    "a:\n- b\n-c\n",
    "a: 1 # c\n# only\nb: 2\n",
    "#!shebang\na: 1\n",
    "a: \"\\u00\"\n",
    "a: \"\\z\"\n",
    "a: '\n",
    "a: [\n",
    "a: {x: [1, {y: z}]}\n",
    "a: [b, c]d\n",
    "a: {b: c}d\n",
    "? [a]\n: 1\n",
    "a: 1\n b: 2\n",
    "a:\n  b: 1\n c: 2\n",
    "- a: 1\n   b: 2\n",
    "a:\n\n\n  b: 1\n",
    "---\na: 1\n--- \nb: 2\n",
    "--- >\n  folded\n  doc\n",
    "a: b\n...\n",
    "a: b\n... # comment\n",
    "--- # c\na: 1\n",
    "---a: 1\n",
    "a: ---\n",
    "- ---\n",
    "a:\t1\n",
    "a: [1,2 ,3 , 4]\n",
    "a: {x:1}\n",
    "a: {\"x\":1}\n",
    "a: [x:1]\n",
    "a: -\n",
    "a: - b\n",
    "a: :b\n",
    "a: b:\n",
    "a: 'b':\n",
    "a:b: c\n",
    "\"a\":b\n",
    "a: 100Mi\nb: 1.5Gi\nc: 250m\nd: 1e3m\n",
    "a: 1:30\nb: 190:20:30\n",
    "a: 0x_1F\nb: 0b_1\n",
    "a: +.inf\nb: +.5\nc: +0x1F\n",
    "a: 1.0e+3\nb: 1.e3\nc: 1e+\n",
    "a: !!foo 1\n",
    "a: !<tag:x,2000:y> 1\n",
    "%TAG !e! tag:example.com,2000:\n---\na: !e!foo [1]\n",
    "%TAG !e! tag:example.com,2000:\n---\na: !e!foo {b: 1}\n",
    "%TAG ! tag:example.com,2000:\n---\na: !foo 1\n",
    "%TAG !! tag:example.com,2000:\n---\na: !!int 1\n",
    "a: !<!> 1\n",
    "a: ! 1\n",
    "a: !!str\n",
    "a: yes\nb: no\nc: on\nd: off\ne: y\nf: n\n",
    "a: 0755\nb: 0o17\nc: 0x1F\nd: 0b101\ne: 1_000\nf: +7\ng: -0\n",
    "a: .5\nb: 1.\nc: -.inf\nd: .NaN\ne: 1e3\nf: 1E-2\ng: 6.02e+23\nh: -1.5\ni: 1e999\n",
    "a: 2026-01-01\nb: 2001-12-14t21:59:43.10-05:00\nc: 12:30:00\n",
    "base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3\n",
    "a: &x 1\nb: *x\nc: [*x, *x]\n",
    "a: |2\n   two\nb: >-\n  folded\n   more\n  back\nc: |+\n  keep\n\n\nd: x\n",
    "a: \"\\x41\\u00e9\\U0001F600\\N\\_\\L\\P\\0\\a\\b\\e\\f\\v\\/\\ \\\t\"\n",
    "a: 'it''s'\nb: 'multi\n\n  line'\n",
    "a: [1, 2,\n  3]\nb: {x: 1, # comment\n  y: 2}\n",
    "a: {b, c: }\nd: [e, f: g]\n",
    "a: b\tc\nd:\tx\n",
    "a: 1\n...\n---\nb: 2\n",
    "%YAML 1.2\n---\na: 1\n",
    "%TAG !e! tag:example.com,2000:\n---\na: !e!foo 1\n",
    "a: !!str 1\nb: !!int \"3\"\nc: !!float 1\nd: !!bool true\ne: !!null ~\n",
    "a: !!binary aGVsbG8=\n",
    "a: !custom x\n",
    "a: 1\na: 2\n",
    "1: a\ntrue: b\n~: c\n1.5: d\n",
    "- a: 1\n  b: 2\n- c\n",
    "a:\n- 1\n- 2\nb:\n  - 3\n",
    "a: plain\n  multi\n  line\n",
    "a: x#y\nb: x #y\nc: 'x: y'\n",
    "a: 1   \nb: 2\t\n",
    "a: 1\r\nb: 2\r\n",
    "\u{feff}a: 1\n",
    "a: é 🙂 日本\n",
    "a: []\nb: {}\nc:\nd: ''\ne: \"\"\n",
    "- \n- x\n-\n",
    "a: -1\nb: +1\nc: - 1\n",
    "? a\n: 1\n",
    "a: 9223372036854775807\nb: 9223372036854775808\nc: 18446744073709551616\nd: -9223372036854775809\n",
    "a: 0x\nb: 0o\nc: 00\nd: 0.0.1\ne: 1.2.3\n",
    "a: Null\nb: NULL\nc: nULL\nd: True\ne: tRUE\n",
    "---\n",
    "~\n",
    "--- |\n  text\n",
    "a: b\n---\n---\n",
    "key with spaces: v\n\"quoted key\": v\n'single': v\n",
    "a:\n  b:\n    c:\n      d: deep\n",
    "a: [a, 'b', \"c\", [d], {e: f}]\n",
    "a: >\n  line one\n\n  line two\n    indented\n  back\n",
    "a: |\n  trailing\n\n",
    "a: |-\n\n  leading blank\n",
    "a:    spaced\nb:  \"q\"  \n",
    "- - a\n  - b\n- - c\n",
    "a: *\n",
    "a: &anchor\nb: *anchor\n",
    "[1, 2]: x\n",
    "a: \"unterminated\n",
    "a:\n  - b\n   - c\n",
    "a: 'x'y\n",
    "a: @x\n",
    "a: `x\n",
    "a: %x\n",
    "a: x: y\n",
];

#[test]
fn every_yaml_feature_reads_the_same_as_with_yaml_serde_or_differs_as_accepted() {
    let mut accepted = Vec::new();
    let mut differ = Vec::new();
    for text in FEATURES {
        match compare(text) {
            Ok(None) => {}
            Ok(Some(why)) => accepted.push((*text, why)),
            Err(why) => differ.push(format!("{text:?}\n{why}")),
        }
    }
    assert!(differ.is_empty(), "{} of {} texts read differently:\n\n{}", differ.len(), FEATURES.len(), differ.join("\n\n"));
    // The accepted differences are exactly these: explicit keys, which kubeloop refuses.
    assert_eq!(accepted, [("? a\n: 1\n", Accepted::ExplicitKey)]);
}

#[test]
fn a_json_stream_is_read_as_kubectl_reads_it() {
    let pod = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "j"}}"#;
    assert_eq!(compare(pod), Ok(None), "a single JSON object is YAML too");
    assert_eq!(compare(&format!("{pod}\n{pod}\n")), Ok(Some(Accepted::JsonStream)), "objects one after another");
    assert_eq!(our_documents(&format!("{pod}\n{pod}\n")).map(|d| d.len()), Ok(2));
    assert_eq!(compare(&format!("{pod}\n---\n")), Ok(Some(Accepted::JsonStream)), "a YAML marker after JSON");
    assert!(our_documents(&format!("{pod}\n---\n")).is_err());
}

/// Where kubectl itself reads differently from both readers: it converts YAML to JSON with
/// sigs.k8s.io/yaml, whose go-yaml v2 resolves plain scalars as YAML 1.1 does and applies
/// merge keys. kubeloop reads YAML 1.2's core schema, as yaml_serde does; these stay as they are
/// and are pinned here so that a change to either reader shows: `yes`/`no`/`on`/`off` (and
/// `y`, `n`) are booleans to kubectl, `0755` is octal 493, `1_000` is 1000, and `<<: *base`
/// merges the base's keys. A manifest that relies on them (a label `enabled: yes` fails to
/// decode at the API server, as a label must be a string) behaves differently in kubeloop.
#[test]
fn yaml_1_1_forms_kubectl_resolves_are_read_as_yaml_1_2() {
    let read = |text: &str| our_documents(text).ok().and_then(|d| d.into_iter().next()).unwrap_or_default();
    assert_eq!(read("a: yes\nb: off\nc: y\n"), serde_json::json!({"a": "yes", "b": "off", "c": "y"}));
    assert_eq!(read("a: 0755\nb: 1_000\n"), serde_json::json!({"a": "0755", "b": "1_000"}));
    assert_eq!(read("base: &b {x: 1}\nuse:\n  <<: *b\n"), serde_json::json!({"base": {"x": 1}, "use": {"<<": {"x": 1}}}));
    for text in ["a: yes\n", "a: 0755\n", "a: 1_000\n", "base: &b {x: 1}\nuse:\n  <<: *b\n"] {
        assert_eq!(compare(text), Ok(None), "yaml_serde reads {text:?} alike");
    }
}
