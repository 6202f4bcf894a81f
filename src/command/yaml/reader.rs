//! A YAML reader for what kubectl is fed: Kubernetes manifests and scenario files.
//!
//! Why not a YAML library: the page ships as wasm, and a general YAML parser with its serde
//! deserializer was about a tenth of it. Manifests use a small part of YAML — block mappings and
//! sequences, flow `[...]`/`{...}`, plain, quoted and block (`|`, `>`) scalars, comments, `---`
//! between documents, now and then an anchor — and this reads exactly that part into JSON values,
//! resolving plain scalars the way the YAML 1.2 core schema (and so kubectl) does. Errors carry
//! libyaml's wording and 1-based line and column, as `kubectl apply` prints them. Explicit keys
//! (`? `) and local tags (`!thing`) are refused with an error rather than guessed at; a global
//! tag (`!!thing`, a `%TAG` handle, `!<tag:…>`) leaves a scalar's text as it is. Anchors and
//! `%TAG` handles belong to their document. `tests/yaml_reader.rs` checks all this against
//! yaml_serde, the maintained YAML library it was once, on every manifest the tests use.

use serde_json::{Map, Number, Value};

/// Nesting deeper than this is refused, as yaml_serde's recursion limit did.
const MAX_DEPTH: usize = 128;

/// A place in the text, 0-based; printed 1-based as libyaml does.
#[derive(Clone, Copy, PartialEq)]
struct Mark {
    line: usize,
    column: usize,
}

/// A syntax error: the problem, where, and optionally what was being read and from where.
struct Error {
    problem: String,
    at: Mark,
    context: Option<(&'static str, Mark)>,
}

impl Error {
    fn render(&self) -> String {
        let mut out = self.problem.clone();
        if self.at != (Mark { line: 0, column: 0 }) {
            out.push_str(&format!(" at line {} column {}", self.at.line + 1, self.at.column + 1));
        }
        if let Some((context, mark)) = self.context {
            out.push_str(", ");
            out.push_str(context);
            if mark != (Mark { line: 0, column: 0 }) && mark != self.at {
                out.push_str(&format!(" at line {} column {}", mark.line + 1, mark.column + 1));
            }
        }
        out
    }
}

type Result<T> = std::result::Result<T, Error>;

/// Every document of `text`, `---` alone (an empty document) skipped as kubectl skips it.
pub fn documents(text: &str) -> std::result::Result<Vec<Value>, String> {
    if let Some((at, _)) = text.char_indices().find(|&(_, c)| !printable(c)) {
        return Err(format!("control characters are not allowed at position {at}"));
    }
    let mut reader = Reader { text, pos: 0, line: 0, column: 0, anchors: Vec::new(), depth: 0, path: Vec::new(), tag_handles: Vec::new() };
    reader.stream().map_err(|e| e.render())
}

/// A node's anchor and tag, and where the node (with them) starts.
struct Props {
    start: Mark,
    anchor: Option<String>,
    tag: Option<String>,
}

impl Props {
    fn any(&self) -> bool {
        self.anchor.is_some() || self.tag.is_some()
    }
}

struct Reader<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
    column: usize,
    anchors: Vec<(String, Value)>,
    depth: usize,
    /// Where the reader is in the document (`spec.containers[0]`), for value errors.
    path: Vec<String>,
    /// The document's `%TAG` directives: a handle (`!e!`) and the prefix it stands for.
    tag_handles: Vec<(String, String)>,
}

/// The prefix of the `!!` handle unless a `%TAG` directive says otherwise: YAML's own tags.
const CORE_TAG_PREFIX: &str = "tag:yaml.org,2002:";

/// How a scalar was written: plain ones are resolved to null, bool or number; the rest are strings.
#[derive(PartialEq)]
enum Style {
    Plain,
    Quoted,
}

impl Reader<'_> {
    // ---- the character cursor ----

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }
    fn peek_at(&self, n: usize) -> Option<char> {
        self.text[self.pos..].chars().nth(n)
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.column = 0;
        } else {
            self.column += 1;
        }
        Some(c)
    }
    fn mark(&self) -> Mark {
        Mark { line: self.line, column: self.column }
    }
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }
    /// An error in a value rather than in the syntax: prefixed with where it is, as yaml_serde did.
    fn value_error(&self, problem: &str, at: Mark) -> Error {
        let problem = if self.path.is_empty() { problem.to_string() } else { format!("{}: {problem}", self.path.concat()) };
        Error { problem, at, context: None }
    }
    /// yaml_serde read a local tag (`!thing`) as an enum, which a JSON value cannot hold.
    fn local_tag_error(&self, at: Mark) -> Error {
        self.value_error("invalid type: enum, expected any valid JSON value", at)
    }
    /// The value after an indicator, one level down the path (a mapping key or a sequence index).
    fn value_within(&mut self, segment: String, indent: usize, in_mapping: bool) -> Result<Value> {
        self.path.push(segment);
        let out = self.value_after_indicator(indent, in_mapping);
        self.path.pop();
        out
    }
    /// A flow node, one level down the path.
    fn flow_node_within(&mut self, segment: String) -> Result<(Value, bool)> {
        self.path.push(segment);
        let out = self.flow_node();
        self.path.pop();
        out
    }
    fn key_segment(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!(".{key}")
        }
    }
    fn error(&self, problem: &str, context: Option<(&'static str, Mark)>) -> Error {
        Error { problem: problem.to_string(), at: self.mark(), context }
    }
    /// Blank: a space, a tab, a line break or the end of the text.
    fn blank_at(&self, n: usize) -> bool {
        matches!(self.peek_at(n), None | Some(' ' | '\t' | '\n' | '\r'))
    }
    fn skip_spaces(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.bump();
        }
    }
    /// Past spaces, a comment and the line break, if the rest of the line has nothing else.
    fn at_line_end(&mut self) -> bool {
        self.skip_spaces();
        if self.peek() == Some('#') || self.peek() == Some('\r') {
            while !matches!(self.peek(), None | Some('\n')) {
                self.bump();
            }
        }
        matches!(self.peek(), None | Some('\n'))
    }
    /// Moves to the first character of the next line with content; returns its column, or None
    /// at the end of the text. Tabs may not indent block content.
    fn next_content_line(&mut self) -> Result<Option<usize>> {
        loop {
            if self.column == 0 || self.at_line_end() {
                if self.column != 0 {
                    self.bump();
                }
                while self.peek() == Some(' ') {
                    self.bump();
                }
                let indent = self.column;
                self.tab_in_indentation()?;
                if self.at_line_end() {
                    if self.bump().is_none() {
                        return Ok(None);
                    }
                    continue;
                }
                return Ok(Some(indent));
            }
            return Ok(Some(self.column));
        }
    }
    /// `---` or `...` at the start of a line, followed by a blank.
    fn at_document_marker(&self) -> bool {
        self.column == 0 && (self.rest().starts_with("---") || self.rest().starts_with("...")) && self.blank_at(3)
    }

    // ---- documents ----

    fn stream(&mut self) -> Result<Vec<Value>> {
        if self.peek() == Some('\u{feff}') {
            self.pos += '\u{feff}'.len_utf8();
        }
        let mut docs = Vec::new();
        loop {
            if self.next_content_line()?.is_none() {
                return Ok(docs);
            }
            // Anchors and `%TAG` handles belong to the document they are in.
            self.anchors.clear();
            self.tag_handles.clear();
            if self.column == 0 && self.peek() == Some('%') {
                self.directives()?;
            }
            let value = if self.at_document_marker() && self.rest().starts_with("---") {
                for _ in 0..3 {
                    self.bump();
                }
                if self.at_line_end() {
                    match self.next_content_line()? {
                        Some(_) if !self.at_document_marker() => self.block_node(-1, false)?,
                        _ => Value::Null,
                    }
                } else {
                    self.block_node(-1, false)?
                }
            } else if self.at_document_marker() {
                Value::Null
            } else {
                self.block_node(-1, false)?
            };
            if !value.is_null() {
                docs.push(value);
            }
            if self.next_content_line()?.is_none() {
                return Ok(docs);
            }
            if !self.at_document_marker() {
                return Err(self.error("did not find expected <document start>", None));
            }
            if self.rest().starts_with("...") {
                for _ in 0..3 {
                    self.bump();
                }
                if !self.at_line_end() {
                    return Err(self.error("did not find expected <document start>", None));
                }
            }
        }
    }

    /// `%YAML` and `%TAG` lines, which must be followed by `---`. Only `%TAG` matters: it names
    /// the prefix a tag handle stands for in this document.
    fn directives(&mut self) -> Result<()> {
        while self.column == 0 && self.peek() == Some('%') {
            let start = self.mark();
            let begin = self.pos;
            self.bump();
            let mut name = 0;
            while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_')) {
                self.bump();
                name += 1;
            }
            if name == 0 || !self.blank_at(0) {
                return Err(self.error("found unexpected non-alphabetical character", Some(("while scanning a directive", start))));
            }
            while !matches!(self.peek(), None | Some('\n')) {
                self.bump();
            }
            let mut words = self.text[begin..self.pos].split_whitespace();
            if let (Some("%TAG"), Some(handle), Some(prefix)) = (words.next(), words.next(), words.next()) {
                self.tag_handles.push((handle.to_string(), prefix.to_string()));
            }
            let _ = self.next_content_line()?;
        }
        if self.at_document_marker() && self.rest().starts_with("---") {
            Ok(())
        } else {
            Err(self.error("did not find expected <document start>", None))
        }
    }

    // ---- block context ----

    /// The node starting at the cursor (which is on its first character). `parent` is the indent
    /// of the enclosing block collection (-1 at the top); `after_key` is set for a value on the
    /// same line as its key, where neither a mapping nor a `- ` sequence may begin.
    fn block_node(&mut self, parent: isize, after_key: bool) -> Result<Value> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error("recursion limit exceeded", None));
        }
        let value = self.block_node_inner(parent, after_key);
        self.depth -= 1;
        value
    }

    fn block_node_inner(&mut self, parent: isize, after_key: bool) -> Result<Value> {
        let node_start = self.mark();
        let (anchor, tag) = self.properties()?;
        let props = Props { start: node_start, anchor, tag };
        if props.any() && self.at_line_end() {
            // Properties alone on a line: the node is on the lines below, indented further.
            let value = match self.next_content_line()? {
                Some(indent) if indent as isize > parent && !self.at_document_marker() => self.block_node(parent, false)?,
                _ => return self.finish_scalar(props, String::new(), Style::Plain),
            };
            return self.finish_node(props, value);
        }
        let start = self.mark();
        let value = match self.peek() {
            Some('-') if self.blank_at(1) => {
                if after_key {
                    return Err(self.error("block sequence entries are not allowed in this context", None));
                }
                self.block_sequence(start.column, false)?
            }
            Some('[' | '{') => {
                let value = self.flow_collection()?;
                self.skip_spaces();
                if self.peek() == Some(':') && self.blank_at(1) {
                    return Err(self.error("flow collections as mapping keys are not supported", None));
                }
                value
            }
            Some('|' | '>') => {
                let text = self.block_scalar(parent)?;
                return self.finish_scalar(props, text, Style::Quoted);
            }
            Some('*') => {
                let value = self.alias()?;
                self.skip_spaces();
                if self.peek() == Some(':') && self.blank_at(1) {
                    return Err(self.error("aliases as mapping keys are not supported", None));
                }
                value
            }
            Some('?') if self.blank_at(1) => {
                let problem =
                    if after_key { "mapping keys are not allowed in this context" } else { "complex mapping keys are not supported" };
                return Err(self.error(problem, None));
            }
            _ => {
                let (text, style) = self.key_or_scalar(parent)?;
                self.skip_spaces();
                if self.peek() == Some(':') && self.blank_at(1) {
                    if after_key {
                        return Err(self.error("mapping values are not allowed in this context", None));
                    }
                    // Properties before the first key belong to that key; the mapping starts at them.
                    // Keys are read as strings, so a tag on one changes nothing.
                    self.remember(props.anchor, &Value::String(text.clone()));
                    return self.block_mapping(node_start, text);
                }
                let text = if style == Style::Plain { self.plain_continuation(text, parent)? } else { text };
                return self.finish_scalar(props, text, style);
            }
        };
        self.finish_node(props, value)
    }

    /// A scalar with its properties: tagged ones as yaml_serde read them (YAML's `bool`, `int`,
    /// `float` and `null` tags parse, other global tags keep the text, local tags are refused),
    /// untagged plain ones resolved.
    fn finish_scalar(&mut self, props: Props, text: String, style: Style) -> Result<Value> {
        let value = match props.tag.as_deref() {
            None if style == Style::Plain => self.plain_value(&text, props.start)?,
            None => Value::String(text),
            Some(tag) => {
                let tag = self.full_tag(tag, props.start)?;
                let bad = |expected: &str| self.value_error(&format!("invalid value: string {text:?}, expected {expected}"), props.start);
                match tag.strip_prefix(CORE_TAG_PREFIX) {
                    Some("bool") => match text.as_str() {
                        "true" | "True" | "TRUE" => Value::Bool(true),
                        "false" | "False" | "FALSE" => Value::Bool(false),
                        _ => return Err(bad("a boolean")),
                    },
                    Some("int") => parse_int(&text).map(Value::Number).ok_or_else(|| bad("an integer"))?,
                    Some("float") => {
                        parse_float(&text).map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)).ok_or_else(|| bad("a float"))?
                    }
                    Some("null") => match text.as_str() {
                        "null" | "Null" | "NULL" | "~" => Value::Null,
                        _ => return Err(bad("null")),
                    },
                    _ if tag.starts_with('!') => return Err(self.local_tag_error(props.start)),
                    _ => Value::String(text),
                }
            }
        };
        self.remember(props.anchor, &value);
        Ok(value)
    }

    /// A collection (or alias) with its properties: a global tag changes nothing, a local one
    /// is refused.
    fn finish_node(&mut self, props: Props, value: Value) -> Result<Value> {
        if let Some(tag) = props.tag.as_deref() {
            if self.full_tag(tag, props.start)?.starts_with('!') {
                return Err(self.local_tag_error(props.start));
            }
        }
        self.remember(props.anchor, &value);
        Ok(value)
    }

    /// A tag as written (`!!int`, `!local`, `!e!thing`, `!<tag:x,2000:y>`) made whole, as libyaml
    /// does: the handle replaced by its prefix (`!!` is YAML's own, `!` stays local unless a
    /// `%TAG` directive says otherwise; a named handle must have one).
    fn full_tag(&self, tag: &str, at: Mark) -> Result<String> {
        if let Some(verbatim) = tag.strip_prefix("!<").and_then(|t| t.strip_suffix('>')) {
            return Ok(verbatim.to_string());
        }
        let handle_end = if tag.starts_with("!!") { 2 } else { tag[1..].find('!').map_or(1, |i| i + 2) };
        let (handle, suffix) = tag.split_at(handle_end.min(tag.len()));
        let declared = self.tag_handles.iter().rev().find(|(h, _)| h == handle).map(|(_, p)| p.as_str());
        let prefix = match (declared, handle) {
            (Some(p), _) => p,
            (None, "!!") => CORE_TAG_PREFIX,
            (None, "!") => "!",
            (None, _) => {
                return Err(Error { problem: "found undefined tag handle".into(), at, context: Some(("while parsing a node", at)) });
            }
        };
        Ok([prefix, suffix].concat())
    }

    /// A plain scalar's value; integers too big for JSON are an error, as they were through
    /// yaml_serde (up to 128 bits; longer ones read as floats).
    fn plain_value(&self, text: &str, at: Mark) -> Result<Value> {
        let value = resolve_plain(text);
        if value.is_f64() && parse_wide_int(text) {
            return Err(self.value_error("JSON number out of range", at));
        }
        Ok(value)
    }

    fn remember(&mut self, anchor: Option<String>, value: &Value) {
        if let Some(name) = anchor {
            self.anchors.push((name, value.clone()));
        }
    }

    /// libyaml refuses a tab where block indentation is measured.
    fn tab_in_indentation(&mut self) -> Result<()> {
        if self.peek() == Some('\t') {
            let at = self.mark();
            return Err(Error {
                problem: "found character that cannot start any token".into(),
                at,
                context: Some(("while scanning for the next token", at)),
            });
        }
        Ok(())
    }

    /// `&anchor` and `!tag`, in either order, each followed by blanks.
    fn properties(&mut self) -> Result<(Option<String>, Option<String>)> {
        let (mut anchor, mut tag) = (None, None);
        loop {
            match self.peek() {
                Some('&') if anchor.is_none() => {
                    self.bump();
                    anchor = Some(self.name("while scanning an anchor")?);
                }
                Some('!') if tag.is_none() => {
                    let mut t = String::new();
                    while !self.blank_at(0) {
                        t.extend(self.bump());
                    }
                    tag = Some(t);
                }
                _ => return Ok((anchor, tag)),
            }
            self.skip_spaces();
        }
    }

    fn name(&mut self, context: &'static str) -> Result<String> {
        let start = self.mark();
        let mut name = String::new();
        while let Some(c) = self.peek().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_')) {
            name.push(c);
            self.bump();
        }
        if name.is_empty() || !(self.blank_at(0) || matches!(self.peek(), Some('?' | ':' | ',' | ']' | '}' | '%' | '@' | '`'))) {
            return Err(self.error("did not find expected alphabetic or numeric character", Some((context, start))));
        }
        Ok(name)
    }

    fn alias(&mut self) -> Result<Value> {
        let start = self.mark();
        self.bump();
        let name = self.name("while scanning an alias")?;
        match self.anchors.iter().rev().find(|(n, _)| *n == name) {
            Some((_, v)) => Ok(v.clone()),
            None => Err(Error { problem: "unknown anchor".into(), at: start, context: None }),
        }
    }

    /// One scalar that may be a mapping key: quoted, or plain up to `: `, ` #` or the line end.
    fn key_or_scalar(&mut self, parent: isize) -> Result<(String, Style)> {
        match self.peek() {
            Some(']' | '}' | ',') => {
                let at = self.mark();
                Err(self.error("did not find expected node content", Some(("while parsing a block node", at))))
            }
            Some(':') if self.blank_at(1) => Ok((String::new(), Style::Plain)),
            Some('\'') => Ok((self.single_quoted()?, Style::Quoted)),
            Some('"') => Ok((self.double_quoted()?, Style::Quoted)),
            Some(c) if starts_no_plain(c, self.blank_at(1)) => Err(Error {
                problem: "found character that cannot start any token".into(),
                at: self.mark(),
                context: Some(("while scanning for the next token", self.mark())),
            }),
            _ => Ok((self.plain_line(false, parent)?, Style::Plain)),
        }
    }

    /// The rest of a plain scalar on this line; in flow context also ending at `,[]{}`.
    fn plain_line(&mut self, flow: bool, _parent: isize) -> Result<String> {
        let start = self.pos;
        let start_mark = self.mark();
        let mut end = self.pos;
        while let Some(c) = self.peek() {
            if c == '\n' || c == '\r' {
                break;
            }
            if c == ':' && flow && matches!(self.peek_at(1), Some(',' | '?' | '[' | ']' | '{' | '}')) {
                return Err(self.error("found unexpected ':'", Some(("while scanning a plain scalar", start_mark))));
            }
            if c == ':' && self.blank_at(1) {
                break;
            }
            if flow && matches!(c, ',' | '[' | ']' | '{' | '}') {
                break;
            }
            if c == '#' && self.pos > start && matches!(self.text[..self.pos].chars().next_back(), Some(' ' | '\t')) {
                break;
            }
            self.bump();
            if c != ' ' && c != '\t' {
                end = self.pos;
            }
        }
        Ok(self.text[start..end].to_string())
    }

    /// Further lines of a plain scalar, indented past `parent`, folded into one line.
    fn plain_continuation(&mut self, mut text: String, parent: isize) -> Result<String> {
        loop {
            // A comment ends a plain scalar for good.
            self.skip_spaces();
            if self.peek() == Some('#') || !self.at_line_end() {
                return Ok(text);
            }
            let save = (self.pos, self.line, self.column);
            let mut breaks = 0;
            let mut indent = None;
            while self.peek() == Some('\n') {
                self.bump();
                breaks += 1;
                while self.peek() == Some(' ') {
                    self.bump();
                }
                let col = self.column;
                self.skip_spaces();
                if !matches!(self.peek(), None | Some('\n' | '\r')) {
                    indent = Some(col);
                    break;
                }
            }
            let more = indent.is_some_and(|i| i as isize > parent) && self.peek() != Some('#') && !self.at_document_marker();
            if !more {
                (self.pos, self.line, self.column) = save;
                return Ok(text);
            }
            if breaks == 1 {
                text.push(' ');
            } else {
                text.extend(std::iter::repeat_n('\n', breaks - 1));
            }
            text.push_str(&self.plain_line(false, parent)?);
            self.skip_spaces();
            if self.peek() == Some(':') && self.blank_at(1) {
                return Err(self.error("mapping values are not allowed in this context", None));
            }
        }
    }

    fn block_mapping(&mut self, start: Mark, first_key: String) -> Result<Value> {
        let indent = start.column;
        let mut map = Map::new();
        let mut key = first_key;
        loop {
            self.bump(); // the ':'
            let segment = self.key_segment(&key);
            let value = self.value_within(segment, indent, true)?;
            map.insert(key, value);
            let Some(col) = self.next_content_line()? else { break };
            if col < indent || self.at_document_marker() {
                break;
            }
            if col > indent || (self.peek() == Some('-') && self.blank_at(1)) {
                return Err(self.error("did not find expected key", Some(("while parsing a block mapping", start))));
            }
            let key_start = self.mark();
            let (anchor, tag) = self.properties()?;
            let props = Props { start: key_start, anchor, tag };
            let (text, style) = match self.peek() {
                Some('?') if self.blank_at(1) => return Err(self.error("complex mapping keys are not supported", None)),
                Some('*') => {
                    let key = self.alias()?;
                    (key_text(key, self)?, Style::Quoted)
                }
                Some('|' | '>') => {
                    let at = self.mark();
                    self.block_scalar(indent as isize)?;
                    return Err(Error {
                        problem: "did not find expected key".into(),
                        at,
                        context: Some(("while parsing a block mapping", start)),
                    });
                }
                Some('[' | '{' | ']' | '}' | ',') => {
                    return Err(self.error("did not find expected key", Some(("while parsing a block mapping", start))));
                }
                _ => self.key_or_scalar(indent as isize)?,
            };
            if style == Style::Quoted && !self.blank_at(0) && self.peek() != Some(':') {
                return Err(self.error("did not find expected key", Some(("while parsing a block mapping", start))));
            }
            self.remember(props.anchor, &Value::String(text.clone()));
            key = text;
            self.skip_spaces();
            if self.peek() != Some(':') || !self.blank_at(1) {
                // libyaml notices the missing ':' only at the next token, after a plain key has
                // taken in any further lines it could.
                if style == Style::Plain {
                    self.plain_key_lines(indent);
                } else if matches!(self.peek(), None | Some('\n' | '\r' | '#')) {
                    let _ = self.next_content_line();
                }
                return Err(self.error("could not find expected ':'", Some(("while scanning a simple key", key_start))));
            }
        }
        Ok(Value::Object(map))
    }

    /// A `- ` sequence at `indent`. An indentless one (a mapping's value, at the mapping's own
    /// indent) ends at anything that is not `- `, handing it back to the mapping, as libyaml does.
    fn block_sequence(&mut self, indent: usize, indentless: bool) -> Result<Value> {
        let start = self.mark();
        let mut items = Vec::new();
        loop {
            self.bump(); // the '-'
            let segment = format!("[{}]", items.len());
            items.push(self.value_within(segment, indent, false)?);
            let Some(col) = self.next_content_line()? else { break };
            if col < indent || self.at_document_marker() {
                break;
            }
            if self.peek() == Some('-') && self.blank_at(1) && col == indent {
                continue;
            }
            if indentless {
                break;
            }
            return Err(self.error("did not find expected '-' indicator", Some(("while parsing a block collection", start))));
        }
        Ok(Value::Array(items))
    }

    /// The value after `key:` or `-`: on the same line, or on the lines below, indented further
    /// (a mapping's value may also be a `- ` sequence at the mapping's own indent).
    fn value_after_indicator(&mut self, indent: usize, in_mapping: bool) -> Result<Value> {
        if !self.at_line_end() {
            return self.block_node(indent as isize, in_mapping);
        }
        let save = (self.pos, self.line, self.column);
        match self.next_content_line()? {
            Some(col) if self.at_document_marker() => {
                let _ = col;
            }
            Some(col) if col > indent => return self.block_node(indent as isize, false),
            Some(col) if col == indent && in_mapping && self.peek() == Some('-') && self.blank_at(1) => {
                return self.block_sequence(indent, true);
            }
            _ => {}
        }
        (self.pos, self.line, self.column) = save;
        Ok(Value::Null)
    }

    /// Moves past the lines a plain scalar at a mapping key's place would take in (those indented
    /// past the mapping), stopping at a `: ` or at the next token, for an error's position.
    fn plain_key_lines(&mut self, indent: usize) {
        loop {
            self.skip_spaces();
            if self.peek() == Some('#') || !self.at_line_end() {
                let _ = self.next_content_line();
                return;
            }
            match self.next_content_line() {
                Ok(Some(col)) if col > indent && self.peek() != Some('#') && !self.at_document_marker() => {
                    if self.plain_line(false, -1).is_err() {
                        return;
                    }
                    self.skip_spaces();
                    if self.peek() == Some(':') && self.blank_at(1) {
                        return;
                    }
                }
                _ => return,
            }
        }
    }

    // ---- scalars ----

    fn single_quoted(&mut self) -> Result<String> {
        let start = self.mark();
        self.bump();
        let mut out = String::new();
        loop {
            match self.peek() {
                None => return Err(self.unterminated(start)),
                Some('\'') if self.peek_at(1) == Some('\'') => {
                    self.bump();
                    self.bump();
                    out.push('\'');
                }
                Some('\'') => {
                    self.bump();
                    return Ok(out);
                }
                Some('\n' | '\r') => self.fold_quoted_break(&mut out, start)?,
                Some(c) => {
                    self.bump();
                    out.push(c);
                }
            }
        }
    }

    fn double_quoted(&mut self) -> Result<String> {
        let start = self.mark();
        self.bump();
        let mut out = String::new();
        loop {
            match self.peek() {
                None => return Err(self.unterminated(start)),
                Some('"') => {
                    self.bump();
                    return Ok(out);
                }
                Some('\\') if matches!(self.peek_at(1), Some('\n' | '\r')) => {
                    self.bump();
                    self.skip_line_break();
                    self.skip_spaces();
                }
                Some('\\') => {
                    self.bump();
                    out.push(self.escape(start)?);
                }
                Some('\n' | '\r') => self.fold_quoted_break(&mut out, start)?,
                Some(c) => {
                    self.bump();
                    out.push(c);
                }
            }
        }
    }

    fn unterminated(&self, start: Mark) -> Error {
        self.error("found unexpected end of stream", Some(("while scanning a quoted scalar", start)))
    }

    fn skip_line_break(&mut self) {
        if self.peek() == Some('\r') {
            self.bump();
        }
        if self.peek() == Some('\n') {
            self.bump();
        }
    }

    /// A line break inside quotes: trailing spaces dropped, one break folds to a space, `n` breaks
    /// to `n - 1` newlines, leading spaces of the next line dropped.
    fn fold_quoted_break(&mut self, out: &mut String, start: Mark) -> Result<()> {
        out.truncate(out.trim_end_matches([' ', '\t']).len());
        let mut breaks = 0;
        while matches!(self.peek(), Some('\n' | '\r')) {
            self.skip_line_break();
            breaks += 1;
            self.skip_spaces();
            if self.at_document_marker() {
                return Err(self.error("found unexpected document indicator", Some(("while scanning a quoted scalar", start))));
            }
        }
        if breaks == 1 {
            out.push(' ');
        } else {
            out.extend(std::iter::repeat_n('\n', breaks - 1));
        }
        Ok(())
    }

    fn escape(&mut self, start: Mark) -> Result<char> {
        let context = Some(("while parsing a quoted scalar", start));
        let Some(c) = self.bump() else { return Err(self.unterminated(start)) };
        let digits = match c {
            '0' => return Ok('\0'),
            'a' => return Ok('\x07'),
            'b' => return Ok('\x08'),
            't' | '\t' => return Ok('\t'),
            'n' => return Ok('\n'),
            'v' => return Ok('\x0b'),
            'f' => return Ok('\x0c'),
            'r' => return Ok('\r'),
            'e' => return Ok('\x1b'),
            ' ' | '"' | '/' | '\\' => return Ok(c),
            'N' => return Ok('\u{85}'),
            '_' => return Ok('\u{a0}'),
            'L' => return Ok('\u{2028}'),
            'P' => return Ok('\u{2029}'),
            'x' => 2,
            'u' => 4,
            'U' => 8,
            _ => return Err(self.error("found unknown escape character", context)),
        };
        let mut code = 0u32;
        for _ in 0..digits {
            match self.peek().and_then(|d| d.to_digit(16)) {
                Some(d) => {
                    self.bump();
                    code = code * 16 + d;
                }
                None => return Err(self.error("did not find expected hexdecimal number", context)),
            }
        }
        char::from_u32(code).ok_or_else(|| self.error("found invalid Unicode character escape code", context))
    }

    /// `|` (literal) or `>` (folded), with optional chomping (`-`, `+`) and indentation digit.
    fn block_scalar(&mut self, parent: isize) -> Result<String> {
        let start = self.mark();
        let context = Some(("while scanning a block scalar", start));
        let literal = self.bump() == Some('|');
        let (mut chomp, mut explicit) = (' ', None);
        for _ in 0..2 {
            match self.peek() {
                Some(c @ ('+' | '-')) if chomp == ' ' => {
                    chomp = c;
                    self.bump();
                }
                Some(c @ '1'..='9') if explicit.is_none() => {
                    explicit = c.to_digit(10).map(|d| d as usize);
                    self.bump();
                }
                Some('0') => {
                    return Err(self.error("found an indentation indicator equal to 0", context));
                }
                _ => {}
            }
        }
        if !self.at_line_end() {
            return Err(self.error("did not find expected comment or line break", context));
        }
        let base = parent.max(0) as usize + usize::from(parent >= 0);
        let mut indent = explicit.map(|e| (parent.max(0) as usize) + e);
        // Collect the lines (text past the indent; empty for blank lines) and whether the last ended in a break.
        let mut lines: Vec<String> = Vec::new();
        let mut ends_with_break = false;
        loop {
            // At the break ending the header or the previous line.
            let before_break = (self.pos, self.line, self.column);
            if self.bump().is_none() {
                break;
            }
            ends_with_break = true;
            while self.peek() == Some(' ') && indent.is_none_or(|i| self.column < i) {
                self.bump();
            }
            match self.peek() {
                None => break,
                Some('\n') => {
                    lines.push(String::new());
                    continue;
                }
                Some('\r') if self.peek_at(1) == Some('\n') => {
                    self.bump();
                    lines.push(String::new());
                    continue;
                }
                _ => {}
            }
            let need = *indent.get_or_insert(self.column.max(base));
            if self.column < need || self.at_document_marker() {
                // A line indented less ends the scalar; it belongs to the caller.
                (self.pos, self.line, self.column) = before_break;
                break;
            }
            let from = self.pos;
            while !matches!(self.peek(), None | Some('\n')) {
                self.bump();
            }
            lines.push(self.text[from..self.pos].trim_end_matches('\r').to_string());
            ends_with_break = false;
        }
        let content = lines.iter().rposition(|l| !l.is_empty());
        let trailing = content.map_or(lines.len(), |i| lines.len() - 1 - i);
        let body = &lines[..content.map_or(0, |i| i + 1)];
        let mut out = if literal { body.join("\n") } else { fold_lines(body) };
        match chomp {
            '-' => {}
            '+' => {
                if !body.is_empty() && ends_with_break || trailing > 0 {
                    out.push('\n');
                }
                out.extend(std::iter::repeat_n('\n', trailing));
            }
            _ => {
                if !body.is_empty() && (ends_with_break || trailing > 0) {
                    out.push('\n');
                }
            }
        }
        Ok(out)
    }

    // ---- flow context ----

    fn flow_collection(&mut self) -> Result<Value> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error("recursion limit exceeded", None));
        }
        let value = if self.peek() == Some('[') { self.flow_sequence() } else { self.flow_mapping() };
        self.depth -= 1;
        value
    }

    /// Spaces, line breaks and comments between flow tokens.
    fn skip_flow_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\n' | '\r') => {
                    self.bump();
                }
                Some('#') => {
                    while !matches!(self.peek(), None | Some('\n')) {
                        self.bump();
                    }
                }
                _ => return,
            }
        }
    }

    fn flow_sequence(&mut self) -> Result<Value> {
        let start = self.mark();
        let context = Some(("while parsing a flow sequence", start));
        self.bump();
        let mut items = Vec::new();
        loop {
            self.skip_flow_blanks();
            match self.peek() {
                Some(']') => {
                    self.bump();
                    return Ok(Value::Array(items));
                }
                None => return Err(self.error("did not find expected node content", context)),
                _ => {}
            }
            let segment = format!("[{}]", items.len());
            let (item, multi_line) = self.flow_node_within(segment)?;
            self.skip_flow_blanks();
            if self.peek() == Some(':') && multi_line {
                return Err(self.error("did not find expected ',' or ']'", context));
            }
            if self.peek() == Some(':') {
                // A single-pair mapping inside a sequence: `[a: 1]`.
                self.bump();
                self.skip_flow_blanks();
                let value = if matches!(self.peek(), Some(',' | ']')) { Value::Null } else { self.flow_node()?.0 };
                let mut pair = Map::new();
                pair.insert(key_text(item, self)?, value);
                items.push(Value::Object(pair));
                self.skip_flow_blanks();
            } else {
                items.push(item);
            }
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some(']') => {}
                _ => return Err(self.error("did not find expected ',' or ']'", context)),
            }
        }
    }

    fn flow_mapping(&mut self) -> Result<Value> {
        let start = self.mark();
        let context = Some(("while parsing a flow mapping", start));
        self.bump();
        let mut map = Map::new();
        loop {
            self.skip_flow_blanks();
            match self.peek() {
                Some('}') => {
                    self.bump();
                    return Ok(Value::Object(map));
                }
                None => return Err(self.error("did not find expected node content", context)),
                _ => {}
            }
            let (key, multi_line) = self.flow_node()?;
            let key = key_text(key, self)?;
            self.skip_flow_blanks();
            if self.peek() == Some(':') && multi_line {
                return Err(self.error("did not find expected ',' or '}'", context));
            }
            let value = if self.peek() == Some(':') {
                self.bump();
                self.skip_flow_blanks();
                if matches!(self.peek(), Some(',' | '}')) {
                    Value::Null
                } else {
                    let segment = self.key_segment(&key);
                    self.flow_node_within(segment)?.0
                }
            } else {
                Value::Null
            };
            map.insert(key, value);
            self.skip_flow_blanks();
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some('}') => {}
                _ => return Err(self.error("did not find expected ',' or '}'", context)),
            }
        }
    }

    /// One node inside `[...]` or `{...}`, and whether it ran over more than one line (which a
    /// mapping key may not).
    fn flow_node(&mut self) -> Result<(Value, bool)> {
        let start_line = self.line;
        let node_start = self.mark();
        let (anchor, tag) = self.properties()?;
        let props = Props { start: node_start, anchor, tag };
        self.skip_flow_blanks();
        let value = match self.peek() {
            Some('[' | '{') => {
                let value = self.flow_collection()?;
                self.finish_node(props, value)?
            }
            Some('\'') => {
                let text = self.single_quoted()?;
                self.finish_scalar(props, text, Style::Quoted)?
            }
            Some('"') => {
                let text = self.double_quoted()?;
                self.finish_scalar(props, text, Style::Quoted)?
            }
            Some('*') => {
                let value = self.alias()?;
                self.finish_node(props, value)?
            }
            Some(',' | ']' | '}' | ':') if props.any() => self.finish_scalar(props, String::new(), Style::Plain)?,
            Some('?') if self.blank_at(1) => return Err(self.error("complex mapping keys are not supported", None)),
            Some(c) if starts_no_plain(c, self.blank_at(1)) || matches!(c, ',' | ']' | '}') || self.peek().is_none() => {
                let at = self.mark();
                return Err(self.error("did not find expected node content", Some(("while parsing a flow node", at))));
            }
            _ => {
                let text = self.flow_plain()?;
                self.finish_scalar(props, text, Style::Plain)?
            }
        };
        Ok((value, self.line != start_line))
    }

    /// A plain scalar in flow context; it may go on over line breaks, folded to spaces.
    fn flow_plain(&mut self) -> Result<String> {
        let mut text = self.plain_line(true, -1)?;
        loop {
            let save = (self.pos, self.line, self.column);
            self.skip_spaces();
            if !matches!(self.peek(), Some('\n' | '\r')) {
                (self.pos, self.line, self.column) = save;
                return Ok(text);
            }
            let mut breaks = 0;
            while matches!(self.peek(), Some('\n' | '\r')) {
                self.skip_line_break();
                breaks += 1;
                self.skip_spaces();
            }
            let next = self.peek();
            if next.is_none() || matches!(next, Some(',' | ']' | '}' | '#' | ':' | '[' | '{')) || self.at_document_marker() {
                return Ok(text);
            }
            if breaks == 1 {
                text.push(' ');
            } else {
                text.extend(std::iter::repeat_n('\n', breaks - 1));
            }
            text.push_str(&self.plain_line(true, -1)?);
        }
    }
}

/// What YAML lets a stream hold: tab, line breaks and printable Unicode.
fn printable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
}

/// Characters that cannot begin a plain scalar (`-`, `?` and `:` can, when not followed by a blank).
fn starts_no_plain(c: char, next_blank: bool) -> bool {
    matches!(c, '@' | '`' | '%' | '|' | '>' | '#' | '&' | '*' | '!' | ',' | '[' | ']' | '{' | '}')
        || (matches!(c, '-' | '?' | ':') && next_blank)
}

/// A mapping key as JSON needs it: a string. Scalars keep their written text's value.
fn key_text(key: Value, reader: &Reader<'_>) -> Result<String> {
    match key {
        Value::String(s) => Ok(s),
        Value::Null => Ok(String::new()),
        Value::Bool(_) | Value::Number(_) => Ok(key.to_string()),
        _ => Err(reader.error("invalid type: map, expected a string", None)),
    }
}

/// Folded (`>`) block content: single breaks between plain lines become spaces; lines indented
/// further, and empty lines, keep their breaks.
fn fold_lines(lines: &[String]) -> String {
    let mut out = String::new();
    let mut previous_more_indented: Option<bool> = None;
    let mut empty = 0;
    for line in lines {
        if line.is_empty() {
            empty += 1;
            continue;
        }
        let more_indented = line.starts_with([' ', '\t']);
        match previous_more_indented {
            Some(false) if !more_indented => {
                if empty == 0 {
                    out.push(' ');
                } else {
                    out.extend(std::iter::repeat_n('\n', empty));
                }
            }
            Some(_) => out.extend(std::iter::repeat_n('\n', empty + 1)),
            None => out.extend(std::iter::repeat_n('\n', empty)),
        }
        out.push_str(line);
        previous_more_indented = Some(more_indented);
        empty = 0;
    }
    out
}

/// A plain scalar's value under the YAML 1.2 core schema, as yaml_serde resolved it.
fn resolve_plain(s: &str) -> Value {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let Some(n) = parse_int(s) {
        return Value::Number(n);
    }
    if !digits_but_not_number(s) {
        if let Some(f) = parse_float(s) {
            return Number::from_f64(f).map_or(Value::Null, Value::Number);
        }
    }
    Value::String(s.to_string())
}

/// Leading zeros followed by digits are a string in YAML 1.2 (`0755`).
fn digits_but_not_number(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    s.len() > 1 && s.starts_with('0') && s[1..].bytes().all(|b| b.is_ascii_digit())
}

/// Decimal, `0x`, `0o` and `0b` integers with an optional sign, fitting in i64 or u64.
fn parse_int(s: &str) -> Option<Number> {
    let (negative, unsigned) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if unsigned.starts_with(['+', '-']) {
        return None;
    }
    let (radix, digits) = if let Some(r) = unsigned.strip_prefix("0x") {
        (16, r)
    } else if let Some(r) = unsigned.strip_prefix("0o") {
        (8, r)
    } else if let Some(r) = unsigned.strip_prefix("0b") {
        (2, r)
    } else {
        if digits_but_not_number(s) {
            return None;
        }
        (10, unsigned)
    };
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if !negative {
        return Some(Number::from(magnitude));
    }
    match magnitude {
        0 => Some(Number::from(0u64)),
        m if m <= i64::MAX as u64 => Some(Number::from(-(m as i64))),
        m if m == i64::MAX as u64 + 1 => Some(Number::from(i64::MIN)),
        _ => None,
    }
}

/// Integers that fit in 128 bits but not 64 (yaml_serde handed those to JSON, which refused them).
fn parse_wide_int(s: &str) -> bool {
    let (negative, unsigned) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if unsigned.starts_with(['+', '-']) || digits_but_not_number(s) {
        return false;
    }
    let (radix, digits) = match unsigned.get(..2) {
        Some("0x") => (16, &unsigned[2..]),
        Some("0o") => (8, &unsigned[2..]),
        Some("0b") => (2, &unsigned[2..]),
        _ => (10, unsigned),
    };
    !digits.starts_with(['+', '-'])
        && u128::from_str_radix(digits, radix).is_ok_and(|m| if negative { m <= i128::MAX as u128 + 1 } else { true })
}

/// Finite decimal floats (`1.5`, `1e3`, `.5`) and `.inf`/`.nan` (which JSON holds as null).
fn parse_float(s: &str) -> Option<f64> {
    let unsigned = match s.strip_prefix('+') {
        Some(rest) if rest.starts_with(['+', '-']) => return None,
        Some(rest) => rest,
        None => s,
    };
    match unsigned {
        ".inf" | ".Inf" | ".INF" => return Some(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Some(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Some(f64::NAN),
        _ => {}
    }
    crate::model::parse_f64(unsigned).filter(|f| f.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(text: &str) -> Value {
        let docs = documents(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        assert_eq!(docs.len(), 1, "{text:?}");
        docs.into_iter().next().unwrap_or_default()
    }

    #[test]
    fn reads_a_deployment_manifest() {
        let text = "# a comment\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web   # trailing\n  labels: {app: web, tier: \"front\"}\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.14.2\n        args: [\"-c\", 'it''s', plain words]\n        ports:\n        - containerPort: 80\n      tolerations:\n        - key: k\n          operator: Exists\n";
        assert_eq!(
            one(text),
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"}},
                "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.14.2", "args": ["-c", "it's", "plain words"], "ports": [{"containerPort": 80}]}],
                "tolerations": [{"key": "k", "operator": "Exists"}]}}}})
        );
    }

    #[test]
    fn plain_scalars_resolve_like_the_core_schema() {
        let v = one("a: 1\nb: -2\nc: 0x1F\nd: 0755\ne: 1.5\nf: 1e3\ng: true\nh: ~\ni:\nj: .inf\nk: 100m\nl: 2026-01-01\nm: 'true'\nn: +7\no: 0o17\n");
        assert_eq!(
            v,
            json!({"a": 1, "b": -2, "c": 31, "d": "0755", "e": 1.5, "f": 1000.0, "g": true, "h": null, "i": null, "j": null, "k": "100m", "l": "2026-01-01", "m": "true", "n": 7, "o": 15})
        );
    }

    #[test]
    fn block_scalars_keep_or_fold_lines_and_chomp() {
        let v = one("a: |\n  one\n  two\nb: |-\n  x\n\nc: >\n  folded\n  text\n\n  para\nd: |+\n  keep\n\ne: end\n");
        assert_eq!(v, json!({"a": "one\ntwo\n", "b": "x", "c": "folded text\npara\n", "d": "keep\n\n", "e": "end"}));
        assert_eq!(one("- |\n  in a list\n- x\n"), json!(["in a list\n", "x"]));
        assert_eq!(one("a: |2\n    two more\n"), json!({"a": "  two more\n"}));
    }

    #[test]
    fn quoted_and_multi_line_scalars_fold() {
        let v = one("a: \"tab\\tand \\u00e9\\\"q\\\"\"\nb: 'one\n  two'\nc: plain\n  continued\n\n  again\n");
        assert_eq!(v, json!({"a": "tab\tand é\"q\"", "b": "one two", "c": "plain continued\nagain"}));
    }

    #[test]
    fn documents_anchors_and_compact_sequences() {
        assert_eq!(documents("a: 1\n---\n---\nb: 2\n...\n").unwrap_or_default(), vec![json!({"a": 1}), json!({"b": 2})]);
        assert_eq!(
            one("base: &b {x: 1}\nuse: *b\nlist:\n- a\n- - b\n  - c\n"),
            json!({"base": {"x": 1}, "use": {"x": 1}, "list": ["a", ["b", "c"]]})
        );
        assert_eq!(one("--- text\n"), json!("text"));
        assert_eq!(one("[a, [b], {c: d}, e: f]"), json!(["a", ["b"], {"c": "d"}, {"e": "f"}]));
    }

    #[test]
    fn tags_are_made_whole_with_the_documents_tag_directives() {
        assert_eq!(one("a: !<tag:x,2000:y> 1\n"), json!({"a": "1"}), "a global tag keeps the text");
        assert_eq!(one("%TAG !e! tag:example.com,2000:\n---\na: !e!x [1]\nb: !e!y 2\n"), json!({"a": [1], "b": "2"}));
        assert_eq!(one("%TAG !! tag:example.com,2000:\n---\na: !!int 1\n"), json!({"a": "1"}), "!! is no longer YAML's own");
        assert!(documents("%TAG !e! tag:e,2000:\n---\na: 1\n---\nb: !e!x 1\n").is_err(), "a directive is for its document only");
        assert!(documents("a: !local 1\n").is_err());
    }

    #[test]
    fn anchors_belong_to_their_document() {
        assert_eq!(documents("a: &x 1\n---\nb: *x\n").err().unwrap_or_default(), "unknown anchor at line 3 column 4");
    }

    #[test]
    fn errors_read_like_libyaml() {
        let err = |t: &str| documents(t).err().unwrap_or_default();
        assert_eq!(
            err("apiVersion: v1\nkind: Pod\nmetadata:\n  name: broken\n  labels: [oops\n"),
            "did not find expected ',' or ']' at line 6 column 1, while parsing a flow sequence at line 5 column 11"
        );
        assert_eq!(
            err("a: {b: 1\n"),
            "did not find expected ',' or '}' at line 2 column 1, while parsing a flow mapping at line 1 column 4"
        );
        assert_eq!(err("a: b: c\n"), "mapping values are not allowed in this context at line 1 column 5");
        assert_eq!(err("a: 1\n  b: 2\n"), "mapping values are not allowed in this context at line 2 column 4");
        assert_eq!(err("a: 'x\n"), "found unexpected end of stream at line 2 column 1, while scanning a quoted scalar at line 1 column 4");
        assert_eq!(
            err("a:\n\tb: 1\n"),
            "found character that cannot start any token at line 2 column 1, while scanning for the next token"
        );
        assert_eq!(err("a: {b: 1}\nc: *unknown\n"), "unknown anchor at line 2 column 4");
        assert_eq!(err("a: 1\nb\n"), "could not find expected ':' at line 3 column 1, while scanning a simple key at line 2 column 1");
        assert!(documents("&a [*a]").is_err());
        assert!(documents(&"[".repeat(500)).is_err());
    }

    #[test]
    fn junk_never_panics_or_loops() {
        for text in [
            "-",
            "- -",
            ":",
            "? x",
            "'",
            "\"\\",
            "|",
            ">\n x\ny",
            "&",
            "*",
            "!",
            "a: [",
            "{",
            "]",
            "a:\n- b\n c",
            "\u{feff}a: 1",
            "%YAML 1.2\n---\na: 1",
            "a: |0\n",
        ] {
            let _ = documents(text);
        }
    }
}
