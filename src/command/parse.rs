//! Turning a typed line into words and flags, the way a shell and kubectl's pflag do.
//!
//! The tokenizer follows POSIX shell quoting (single quotes, double quotes, backslashes, `#`
//! comments) and accepts one here-document (`kubectl apply -f - <<EOF`), because learners paste
//! commands from tutorials that are written for a shell. Pipes, redirections and `;` are refused
//! with a clear message rather than misread. The flag parser reproduces spf13/pflag: `--name=v`,
//! `--name v`, `-n v`, `-nv`, grouped boolean shorthands (`-Aw`), `--` to stop, flags anywhere on
//! the line, and pflag's own error messages, which kubectl prints verbatim.

/// A command line split into words, with the body of its here-document if it has one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Words {
    pub words: Vec<String>,
    /// The here-document's text, fed to `-f -`.
    pub stdin: Option<String>,
}

/// Splits `input` (one command line, plus here-document lines if it opens one) into words.
/// A blank or comment-only line gives no words.
pub fn split(input: &str) -> Result<Words, String> {
    let (first, rest, _) = logical_first_line(input);
    let (words, heredoc) = split_words(&first)?;
    let stdin = match heredoc {
        Some(h) => Some(heredoc_body(&h, rest.unwrap_or(""))?),
        None if rest.is_some_and(|r| !r.trim().is_empty()) => {
            return Err("error: one command per line: the line continues after a newline without a here-document".into())
        }
        None => None,
    };
    Ok(Words { words, stdin })
}

/// Whether `buffer` is an unfinished command: an open here-document or a trailing backslash.
/// The interactive shell and the transcript reader keep reading lines while this holds.
pub fn needs_more_lines(buffer: &str) -> bool {
    let (first, rest, continued) = logical_first_line(buffer);
    if continued {
        return true;
    }
    match split_words(&first) {
        Ok((_, Some(h))) => !rest.unwrap_or("").split('\n').any(|l| heredoc_line_ends(&h, l)),
        _ => false,
    }
}

/// Joins backslash-newline continuations of the first line. Returns the logical line, the text
/// after it, and whether the input ended in the middle of a continuation.
fn logical_first_line(input: &str) -> (String, Option<&str>, bool) {
    let mut line = String::new();
    let mut rest = input;
    loop {
        let (physical, after) = match rest.split_once('\n') {
            Some((p, a)) => (p, Some(a)),
            None => (rest, None),
        };
        let trailing = physical.len() - physical.trim_end_matches('\\').len();
        if trailing % 2 == 1 {
            line.push_str(&physical[..physical.len() - 1]);
            match after {
                Some(a) => rest = a,
                None => return (line, None, true),
            }
        } else {
            line.push_str(physical);
            return (line, after, false);
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Heredoc {
    delimiter: String,
    /// `<<-`: leading tabs are stripped from body lines and the delimiter line.
    strip_tabs: bool,
}

fn heredoc_line_ends(h: &Heredoc, line: &str) -> bool {
    let l = if h.strip_tabs { line.trim_start_matches('\t') } else { line };
    l.trim_end_matches('\r') == h.delimiter
}

fn heredoc_body(h: &Heredoc, rest: &str) -> Result<String, String> {
    let mut body = String::new();
    for line in rest.split('\n') {
        if heredoc_line_ends(h, line) {
            return Ok(body);
        }
        body.push_str(if h.strip_tabs { line.trim_start_matches('\t') } else { line });
        body.push('\n');
    }
    Err(format!("error: here-document delimited by end-of-file (wanted `{}')", h.delimiter))
}

const OPERATOR_ERROR: &str = "error: kubeloop runs one command per line: pipes, redirections, '&' and ';' are not supported";

/// Splits one physical line into words, noting a here-document operator if present.
fn split_words(line: &str) -> Result<(Vec<String>, Option<Heredoc>), String> {
    let mut words = Vec::new();
    let mut heredoc = None;
    let mut chars = line.chars().peekable();
    let mut word = String::new();
    let mut in_word = false;
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\r' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '#' if !in_word => break,
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => word.push(ch),
                        None => return Err("error: unterminated ' quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => word.push(e),
                            Some(other) => {
                                word.push('\\');
                                word.push(other);
                            }
                            None => return Err("error: unterminated \" quote".into()),
                        },
                        Some(ch) => word.push(ch),
                        None => return Err("error: unterminated \" quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(next) = chars.next() {
                    word.push(next);
                }
            }
            '<' if chars.peek() == Some(&'<') => {
                chars.next();
                if heredoc.is_some() {
                    return Err(OPERATOR_ERROR.into());
                }
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
                let strip_tabs = chars.peek() == Some(&'-');
                if strip_tabs {
                    chars.next();
                }
                while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
                    chars.next();
                }
                let mut delimiter = String::new();
                while let Some(&ch) = chars.peek() {
                    if ch == ' ' || ch == '\t' {
                        break;
                    }
                    chars.next();
                    if ch != '\'' && ch != '"' {
                        delimiter.push(ch);
                    }
                }
                if delimiter.is_empty() {
                    return Err("error: syntax error near unexpected token `newline'".into());
                }
                heredoc = Some(Heredoc { delimiter, strip_tabs });
            }
            '|' | '>' | '<' | ';' | '&' | '`' => return Err(OPERATOR_ERROR.into()),
            '$' if chars.peek() == Some(&'(') => return Err("error: command substitution is not supported".into()),
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok((words, heredoc))
}

/// What a flag takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagKind {
    Bool,
    String,
    /// A signed integer of at most this many bits (pflag's Int32, Int64...).
    Int(u32),
    /// A string flag that may repeat (`-f a.yaml -f b.yaml`, `--image=a --image=b`).
    StringList,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlagSpec {
    pub long: &'static str,
    pub short: Option<char>,
    pub kind: FlagKind,
}

impl FlagSpec {
    pub const fn new(long: &'static str, short: Option<char>, kind: FlagKind) -> Self {
        FlagSpec { long, short, kind }
    }
    /// The name as pflag prints it in "invalid argument" errors: `-o, --output` or `--image`.
    fn display(&self) -> String {
        match self.short {
            Some(s) => format!("-{s}, --{}", self.long),
            None => format!("--{}", self.long),
        }
    }
}

/// The flags a command received, by long name. Values are already checked against their kind.
/// A list sorted by name rather than a map: a command has a handful of flags, and a B-tree of
/// this one key/value pair would be a few KB of the page's wasm on its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    values: Vec<(&'static str, Vec<String>)>,
}

impl Flags {
    fn get(&self, long: &str) -> Option<&Vec<String>> {
        self.values.binary_search_by(|(k, _)| (*k).cmp(long)).ok().map(|i| &self.values[i].1)
    }
    /// The values of `long`, created empty at its place in the order when first given.
    fn entry(&mut self, long: &'static str) -> &mut Vec<String> {
        let i = match self.values.binary_search_by(|(k, _)| (*k).cmp(long)) {
            Ok(i) => i,
            Err(i) => {
                self.values.insert(i, (long, Vec::new()));
                i
            }
        };
        &mut self.values[i].1
    }
    pub fn has(&self, long: &str) -> bool {
        self.get(long).is_some()
    }
    /// The last value given (pflag: a repeated scalar flag keeps the last).
    pub fn str(&self, long: &str) -> Option<&str> {
        self.get(long).and_then(|v| v.last()).map(String::as_str)
    }
    pub fn list(&self, long: &str) -> Vec<String> {
        self.get(long).cloned().unwrap_or_default()
    }
    pub fn bool(&self, long: &str) -> bool {
        self.str(long).and_then(parse_bool).unwrap_or(false)
    }
    /// A bool flag whose default is true (`--wait`, `--watch` of rollout status).
    pub fn bool_or(&self, long: &str, default: bool) -> bool {
        self.str(long).and_then(parse_bool).unwrap_or(default)
    }
    pub fn int(&self, long: &str) -> Option<i64> {
        self.str(long).and_then(|v| parse_int(v, 64).ok())
    }
}

/// Go's `strconv.ParseBool`.
pub fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// Go's `strconv.ParseInt(v, 0, bits)`, with its error text.
pub fn parse_int(v: &str, bits: u32) -> Result<i64, String> {
    let syntax = || format!("strconv.ParseInt: parsing {v:?}: invalid syntax");
    let range = || format!("strconv.ParseInt: parsing {v:?}: value out of range");
    let (negative, body) = match v.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, v.strip_prefix('+').unwrap_or(v)),
    };
    let (radix, digits) = if let Some(d) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        (16, d)
    } else if let Some(d) = body.strip_prefix("0o").or_else(|| body.strip_prefix("0O")) {
        (8, d)
    } else if let Some(d) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
        (2, d)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(syntax());
    }
    let magnitude = i128::from_str_radix(digits, radix).map_err(|_| range())?;
    let value = if negative { -magnitude } else { magnitude };
    let limit = 1i128 << (bits.clamp(1, 64) - 1);
    if value < -limit || value >= limit {
        return Err(range());
    }
    Ok(value as i64)
}

/// Parses flags out of `args` the way pflag does, returning the positional arguments and the
/// flags. Errors are pflag's messages (kubectl adds its "See ... --help" line).
pub fn parse_flags(args: &[String], specs: &[FlagSpec]) -> Result<(Vec<String>, Flags), String> {
    let mut positional = Vec::new();
    let mut flags = Flags::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            positional.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let spec = specs.iter().find(|s| s.long == name).ok_or_else(|| format!("unknown flag: --{name}"))?;
            let value = match (inline, spec.kind) {
                (Some(v), _) => v,
                (None, FlagKind::Bool) => "true".into(),
                (None, _) => {
                    let v = args.get(i).cloned().ok_or_else(|| format!("flag needs an argument: --{name}"))?;
                    i += 1;
                    v
                }
            };
            set(&mut flags, spec, value)?;
        } else if arg.len() > 1 && arg.starts_with('-') {
            let shorts: Vec<char> = arg[1..].chars().collect();
            let mut k = 0;
            while k < shorts.len() {
                let c = shorts[k];
                k += 1;
                let spec = specs.iter().find(|s| s.short == Some(c)).ok_or_else(|| format!("unknown shorthand flag: '{c}' in {arg}"))?;
                let rest: String = shorts[k..].iter().collect();
                if spec.kind == FlagKind::Bool {
                    match rest.strip_prefix('=') {
                        Some(v) => {
                            set(&mut flags, spec, v.to_string())?;
                            break;
                        }
                        None => set(&mut flags, spec, "true".into())?,
                    }
                    continue;
                }
                let value = if !rest.is_empty() {
                    rest.strip_prefix('=').unwrap_or(&rest).to_string()
                } else {
                    let v = args.get(i).cloned().ok_or_else(|| format!("flag needs an argument: '{c}' in -{c}"))?;
                    i += 1;
                    v
                };
                set(&mut flags, spec, value)?;
                break;
            }
        } else {
            positional.push(arg.clone());
        }
    }
    Ok((positional, flags))
}

fn set(flags: &mut Flags, spec: &FlagSpec, value: String) -> Result<(), String> {
    let invalid = |why: String| format!("invalid argument {value:?} for {:?} flag: {why}", spec.display());
    match spec.kind {
        FlagKind::Bool => {
            if parse_bool(&value).is_none() {
                return Err(invalid(format!("strconv.ParseBool: parsing {value:?}: invalid syntax")));
            }
        }
        FlagKind::Int(bits) => {
            parse_int(&value, bits).map_err(invalid)?;
        }
        FlagKind::String | FlagKind::StringList => {}
    }
    let entry = flags.entry(spec.long);
    if spec.kind != FlagKind::StringList {
        entry.clear();
    }
    entry.push(value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        split(s).unwrap().words
    }

    #[test]
    fn quotes_and_escapes_split_like_a_shell() {
        assert_eq!(words("kubectl get pods -l 'app in (web, api)'"), ["kubectl", "get", "pods", "-l", "app in (web, api)"]);
        assert_eq!(words(r#"echo "a \"b\" c" d\ e"#), ["echo", "a \"b\" c", "d e"]);
        assert_eq!(words("get pods # all of them"), ["get", "pods"]);
        assert_eq!(words("get a#b"), ["get", "a#b"]);
        assert!(words("   # just a comment").is_empty());
        assert!(words("").is_empty());
    }

    #[test]
    fn shell_operators_are_refused_not_misread() {
        for line in ["kubectl get pods | grep web", "kubectl get pods > out.txt", "a; b", "a && b", "echo `x`"] {
            assert_eq!(split(line).unwrap_err(), OPERATOR_ERROR, "{line}");
        }
        assert_eq!(split("get 'pods").unwrap_err(), "error: unterminated ' quote");
    }

    #[test]
    fn a_here_document_becomes_stdin() {
        let w = split("kubectl apply -f - <<EOF\napiVersion: v1\nkind: Pod\nEOF\n").unwrap();
        assert_eq!(w.words, ["kubectl", "apply", "-f", "-"]);
        assert_eq!(w.stdin.as_deref(), Some("apiVersion: v1\nkind: Pod\n"));
        let quoted = split("apply -f - <<'END'\nx: 1\nEND").unwrap();
        assert_eq!(quoted.stdin.as_deref(), Some("x: 1\n"));
        assert!(split("apply -f - <<EOF\nx: 1\n").unwrap_err().contains("wanted `EOF'"));
        assert!(needs_more_lines("apply -f - <<EOF\nx: 1"));
        assert!(!needs_more_lines("apply -f - <<EOF\nx: 1\nEOF"));
        assert!(needs_more_lines("kubectl get \\"));
        assert!(!needs_more_lines("kubectl get pods"));
    }

    const SPECS: &[FlagSpec] = &[
        FlagSpec::new("output", Some('o'), FlagKind::String),
        FlagSpec::new("all-namespaces", Some('A'), FlagKind::Bool),
        FlagSpec::new("watch", Some('w'), FlagKind::Bool),
        FlagSpec::new("replicas", None, FlagKind::Int(32)),
        FlagSpec::new("filename", Some('f'), FlagKind::StringList),
    ];

    fn parse(args: &[&str]) -> Result<(Vec<String>, Flags), String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        parse_flags(&args, SPECS)
    }

    #[test]
    fn flags_parse_in_every_pflag_form() {
        let (pos, f) = parse(&["pods", "-o", "wide", "web", "-Aw", "--replicas=3", "-fa.yaml", "-f=b.yaml", "--", "-x"]).unwrap();
        assert_eq!(pos, ["pods", "web", "-x"]);
        assert_eq!(f.str("output"), Some("wide"));
        assert!(f.bool("all-namespaces") && f.bool("watch"));
        assert_eq!(f.int("replicas"), Some(3));
        assert_eq!(f.list("filename"), ["a.yaml", "b.yaml"]);
        let (_, f) = parse(&["-ojson", "--watch=false", "--output", "yaml"]).unwrap();
        assert_eq!(f.str("output"), Some("yaml"));
        assert!(!f.bool("watch"));
    }

    #[test]
    fn flag_errors_are_pflags_messages() {
        assert_eq!(parse(&["--bogus"]).unwrap_err(), "unknown flag: --bogus");
        assert_eq!(parse(&["-z"]).unwrap_err(), "unknown shorthand flag: 'z' in -z");
        assert_eq!(parse(&["-Az"]).unwrap_err(), "unknown shorthand flag: 'z' in -Az");
        assert_eq!(parse(&["-o"]).unwrap_err(), "flag needs an argument: 'o' in -o");
        assert_eq!(parse(&["--output"]).unwrap_err(), "flag needs an argument: --output");
        assert_eq!(
            parse(&["--replicas=abc"]).unwrap_err(),
            r#"invalid argument "abc" for "--replicas" flag: strconv.ParseInt: parsing "abc": invalid syntax"#
        );
        assert_eq!(
            parse(&["--replicas", "9999999999"]).unwrap_err(),
            r#"invalid argument "9999999999" for "--replicas" flag: strconv.ParseInt: parsing "9999999999": value out of range"#
        );
        assert_eq!(
            parse(&["-A=maybe"]).unwrap_err(),
            r#"invalid argument "maybe" for "-A, --all-namespaces" flag: strconv.ParseBool: parsing "maybe": invalid syntax"#
        );
    }

    #[test]
    fn integers_parse_with_go_base_prefixes() {
        assert_eq!(parse_int("0x10", 32), Ok(16));
        assert_eq!(parse_int("010", 32), Ok(8));
        assert_eq!(parse_int("-5", 32), Ok(-5));
        assert_eq!(parse_int("2147483648", 32).unwrap_err(), r#"strconv.ParseInt: parsing "2147483648": value out of range"#);
        assert!(parse_int("", 32).is_err() && parse_int("1.5", 32).is_err() && parse_int("08", 32).is_err());
    }
}
