//! A schema's `pattern`: the regular expressions CustomResourceDefinitions use, matched as
//! kube-apiserver's Go `regexp` (RE2 syntax) decides whether a string matches.
//!
//! Why not a regex crate: the page carries every line of the simulation, and the smallest
//! maintained engine added tens of KB to it for a keyword most definitions use with a handful of
//! constructs. This is a small backtracking matcher over a parsed pattern: literals, `.`,
//! classes (`[a-z0-9-]`, `[^…]`, `\d \w \s` and their negations), anchors `^ $`, groups `( )`,
//! `(?: )`, alternation `|`, and the quantifiers `* + ? {n} {n,} {n,m}` (greedy or lazy). Only
//! whether a string matches is asked, and that answer does not depend on the engine's
//! preference order, so it is RE2's. Anything else (backreferences are not RE2 either; flags,
//! Unicode classes, `\b`) is refused when the definition is read, saying so, and a match that
//! would take more than a fixed budget of steps is refused too — never answered wrongly.

/// A parsed pattern.
#[derive(Clone, Debug)]
pub struct Pattern {
    root: Node,
}

#[derive(Clone, Debug)]
enum Node {
    Empty,
    Char(char),
    Any,
    Class(Vec<(char, char)>, bool),
    Start,
    End,
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat { node: Box<Node>, min: u32, max: Option<u32>, greedy: bool },
}

/// Steps a match may take before it is refused as too costly.
const BUDGET: u64 = 1_000_000;

impl Pattern {
    /// Parses `text`, or says which construct is not modelled or malformed.
    pub fn new(text: &str) -> Result<Pattern, String> {
        let chars: Vec<char> = text.chars().collect();
        let mut p = Parser { chars: &chars, pos: 0 };
        let root = p.alternation()?;
        if p.pos < chars.len() {
            return Err(format!("unexpected ) at position {}", p.pos));
        }
        Ok(Pattern { root })
    }

    /// Whether `text` contains a match (unanchored, as Go's `MatchString`); an error when the
    /// match took more than the budget.
    pub fn is_match(&self, text: &str) -> Result<bool, String> {
        let chars: Vec<char> = text.chars().collect();
        let mut steps = 0u64;
        for start in 0..=chars.len() {
            let mut found = false;
            let mut m = Matcher { text: &chars, steps: &mut steps };
            m.at(&self.root, start, &mut |_| {
                found = true;
                true
            })?;
            if found {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

struct Matcher<'a> {
    text: &'a [char],
    steps: &'a mut u64,
}

impl Matcher<'_> {
    /// Matches `node` at `pos`, calling `k` with each end position until it returns true.
    fn at(&mut self, node: &Node, pos: usize, k: &mut dyn FnMut(usize) -> bool) -> Result<bool, String> {
        *self.steps += 1;
        if *self.steps > BUDGET {
            return Err("the pattern takes too long to match".into());
        }
        let next = self.text.get(pos).copied();
        match node {
            Node::Empty => Ok(k(pos)),
            Node::Char(c) => Ok(next == Some(*c) && k(pos + 1)),
            Node::Any => Ok(next.is_some_and(|c| c != '\n') && k(pos + 1)),
            Node::Class(ranges, negated) => {
                Ok(next.is_some_and(|c| ranges.iter().any(|(a, b)| *a <= c && c <= *b) != *negated) && k(pos + 1))
            }
            Node::Start => Ok(pos == 0 && k(pos)),
            Node::End => Ok(pos == self.text.len() && k(pos)),
            Node::Alt(options) => {
                for o in options {
                    if self.at(o, pos, k)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Node::Concat(items) => self.seq(items, pos, k),
            Node::Repeat { node, min, max, greedy } => self.repeat(node, *min, *max, *greedy, 0, pos, usize::MAX, k),
        }
    }

    fn seq(&mut self, items: &[Node], pos: usize, k: &mut dyn FnMut(usize) -> bool) -> Result<bool, String> {
        self.seq_rec(items, 0, pos, k)
    }

    fn seq_rec(&mut self, items: &[Node], i: usize, pos: usize, k: &mut dyn FnMut(usize) -> bool) -> Result<bool, String> {
        if i == items.len() {
            return Ok(k(pos));
        }
        let ends = self.ends(&items[i], pos)?;
        for end in ends {
            if self.seq_rec(items, i + 1, end, k)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Every end position `node` can match to from `pos`, in the engine's preference order.
    fn ends(&mut self, node: &Node, pos: usize) -> Result<Vec<usize>, String> {
        let mut out = Vec::new();
        self.at(node, pos, &mut |end| {
            if !out.contains(&end) {
                out.push(end);
            }
            false
        })?;
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn repeat(
        &mut self,
        node: &Node,
        min: u32,
        max: Option<u32>,
        greedy: bool,
        count: u32,
        pos: usize,
        last: usize,
        k: &mut dyn FnMut(usize) -> bool,
    ) -> Result<bool, String> {
        let may_stop = count >= min;
        let may_go = max.is_none_or(|m| count < m) && pos != last;
        if !greedy && may_stop && k(pos) {
            return Ok(true);
        }
        if may_go {
            for end in self.ends(node, pos)? {
                // An iteration that matched nothing cannot make progress.
                if end == pos && count >= min {
                    continue;
                }
                if self.repeat(node, min, max, greedy, count + 1, end, pos, k)? {
                    return Ok(true);
                }
            }
        }
        Ok(greedy && may_stop && k(pos))
    }
}

struct Parser<'a> {
    chars: &'a [char],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn alternation(&mut self) -> Result<Node, String> {
        let mut options = vec![self.concat()?];
        while self.peek() == Some('|') {
            self.pos += 1;
            options.push(self.concat()?);
        }
        Ok(if options.len() == 1 { options.remove(0) } else { Node::Alt(options) })
    }

    fn concat(&mut self) -> Result<Node, String> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom()?;
            items.push(self.quantified(atom)?);
        }
        Ok(match items.len() {
            0 => Node::Empty,
            1 => items.remove(0),
            _ => Node::Concat(items),
        })
    }

    fn quantified(&mut self, atom: Node) -> Result<Node, String> {
        let (min, max) = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            // `counted` consumes the braces itself.
            Some('{') => match self.counted()? {
                Some(bounds) => {
                    self.pos -= 1;
                    bounds
                }
                None => return Ok(atom),
            },
            _ => return Ok(atom),
        };
        self.pos += 1;
        if matches!(atom, Node::Start | Node::End) {
            return Err("missing argument to repetition operator".into());
        }
        let greedy = if self.peek() == Some('?') {
            self.pos += 1;
            false
        } else {
            true
        };
        if matches!(self.peek(), Some('*' | '+' | '?')) {
            return Err("invalid nested repetition operator".into());
        }
        Ok(Node::Repeat { node: Box::new(atom), min, max, greedy })
    }

    /// `{n}`, `{n,}`, `{n,m}` (consumed); `None` for a `{` that is a literal, as RE2 reads one.
    fn counted(&mut self) -> Result<Option<(u32, Option<u32>)>, String> {
        let rest: String = self.chars[self.pos..].iter().collect();
        let Some(close) = rest.find('}') else { return Ok(None) };
        let inner = &rest[1..close];
        let number = |s: &str| s.parse::<u32>().ok().filter(|n| *n <= 1000);
        let bounds = match inner.split_once(',') {
            None => number(inner).map(|n| (n, Some(n))),
            Some((a, "")) => number(a).map(|n| (n, None)),
            Some((a, b)) => number(a).zip(number(b)).map(|(a, b)| (a, Some(b))),
        };
        match bounds {
            Some((a, Some(b))) if b < a => Err(format!("invalid repeat count: {{{inner}}}")),
            Some(b) => {
                self.pos += inner.chars().count() + 2;
                Ok(Some(b))
            }
            None => Ok(None),
        }
    }

    fn atom(&mut self) -> Result<Node, String> {
        let Some(c) = self.peek() else { return Err("unexpected end".into()) };
        self.pos += 1;
        match c {
            '.' => Ok(Node::Any),
            '^' => Ok(Node::Start),
            '$' => Ok(Node::End),
            '(' => {
                if self.peek() == Some('?') {
                    if self.chars.get(self.pos + 1) == Some(&':') {
                        self.pos += 2;
                    } else {
                        return Err("group flags and named groups are not modelled".into());
                    }
                }
                let inner = self.alternation()?;
                if self.peek() != Some(')') {
                    return Err("missing closing )".into());
                }
                self.pos += 1;
                Ok(inner)
            }
            '[' => self.class(),
            '\\' => self.escape(false).map(|ranges| match ranges {
                Escape::Char(c) => Node::Char(c),
                Escape::Class(r, neg) => Node::Class(r, neg),
            }),
            '*' | '+' | '?' => Err("missing argument to repetition operator".into()),
            c => Ok(Node::Char(c)),
        }
    }

    fn class(&mut self) -> Result<Node, String> {
        let negated = self.peek() == Some('^');
        if negated {
            self.pos += 1;
        }
        let mut ranges = Vec::new();
        let mut first = true;
        loop {
            let Some(c) = self.peek() else { return Err("missing closing ]".into()) };
            self.pos += 1;
            if c == ']' && !first {
                break;
            }
            first = false;
            let low = match c {
                '\\' => match self.escape(true)? {
                    Escape::Char(c) => c,
                    Escape::Class(r, false) => {
                        ranges.extend(r);
                        continue;
                    }
                    Escape::Class(..) => return Err("negated classes inside a class are not modelled".into()),
                },
                '[' if self.peek() == Some(':') => return Err("POSIX classes are not modelled".into()),
                c => c,
            };
            if self.peek() == Some('-') && self.chars.get(self.pos + 1).is_some_and(|c| *c != ']') {
                self.pos += 1;
                let Some(mut high) = self.peek() else { return Err("missing closing ]".into()) };
                self.pos += 1;
                if high == '\\' {
                    match self.escape(true)? {
                        Escape::Char(c) => high = c,
                        Escape::Class(..) => return Err("invalid character class range".into()),
                    }
                }
                if high < low {
                    return Err(format!("invalid character class range: {low}-{high}"));
                }
                ranges.push((low, high));
            } else {
                ranges.push((low, low));
            }
        }
        Ok(Node::Class(ranges, negated))
    }

    fn escape(&mut self, in_class: bool) -> Result<Escape, String> {
        let Some(c) = self.peek() else { return Err("trailing backslash at end of expression".into()) };
        self.pos += 1;
        let digit = vec![('0', '9')];
        let word = vec![('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')];
        let space = vec![('\t', '\n'), ('\u{c}', '\r'), (' ', ' ')];
        Ok(match c {
            'd' => Escape::Class(digit, false),
            'D' if !in_class => Escape::Class(digit, true),
            'w' => Escape::Class(word, false),
            'W' if !in_class => Escape::Class(word, true),
            's' => Escape::Class(space, false),
            'S' if !in_class => Escape::Class(space, true),
            'n' => Escape::Char('\n'),
            't' => Escape::Char('\t'),
            'r' => Escape::Char('\r'),
            c if c.is_ascii_punctuation() => Escape::Char(c),
            c => return Err(format!("the escape \\{c} is not modelled")),
        })
    }
}

enum Escape {
    Char(char),
    Class(Vec<(char, char)>, bool),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        Pattern::new(pattern).unwrap().is_match(text).unwrap()
    }

    #[test]
    fn the_patterns_definitions_use_match_as_go_matches_them() {
        let cron = r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$";
        assert!(matches(cron, "* * * * */5"));
        assert!(matches(cron, "0 3 * * 1"));
        assert!(!matches(cron, "* * * *"));
        assert!(!matches(cron, "a * * * *"));
        let label = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
        assert!(matches(label, "web-1") && matches(label, "a"));
        assert!(!matches(label, "-web") && !matches(label, "Web") && !matches(label, ""));
        assert!(matches("ab", "xxabyy"), "unanchored: anywhere");
        assert!(!matches("^ab", "xab"));
        assert!(matches("^a{2,3}$", "aaa") && !matches("^a{2,3}$", "aaaa") && !matches("^a{2}$", "a"));
        assert!(matches("^a{2,}$", "aaaaa"));
        assert!(matches(r"^[^0-9]+$", "abc") && !matches(r"^[^0-9]+$", "a1"));
        assert!(matches(r"^\w+\.\w+$", "a_1.b") && !matches(r"^\w+\.\w+$", "a-1.b"));
        assert!(matches("^(?:cat|dog)s?$", "dogs") && !matches("^(?:cat|dog)s?$", "cow"));
        assert!(matches("^a.*?b$", "axxb"));
        assert!(matches("^(a*)*$", "aaaa"), "an empty-matching loop ends");
        assert!(matches("^x{$", "x{"), "a brace that is no count is a literal");
        assert!(matches(r"^[a\-z]+$", "a-z") && !matches(r"^[a\-z]+$", "b"));
    }

    #[test]
    fn what_is_not_modelled_or_malformed_is_refused() {
        for (p, why) in [
            ("a(b", "missing closing )"),
            ("[a-", "missing closing ]"),
            ("*a", "missing argument to repetition operator"),
            ("a**", "invalid nested repetition operator"),
            ("(?i)a", "group flags and named groups are not modelled"),
            (r"\bword", "the escape \\b is not modelled"),
            ("[z-a]", "invalid character class range: z-a"),
            ("a{3,2}", "invalid repeat count: {3,2}"),
        ] {
            assert_eq!(Pattern::new(p).unwrap_err(), why, "{p}");
        }
        // Each node's end positions are gathered once per start, so a pattern that sends a
        // naive backtracker into exponential time is answered.
        let nested = Pattern::new("^(a|a)*(a|a)*(a|a)*b$").unwrap();
        assert_eq!(nested.is_match(&"a".repeat(40)), Ok(false));
    }
}
