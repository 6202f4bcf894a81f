//! The `-l` label selector language (`app=web,tier!=db,env in (a,b),!canary,release`) and
//! `--field-selector`, parsed into what the API server filters with.
//!
//! Mirrors k8s.io/apimachinery/pkg/labels' parser: `=`/`==` become equality, `!=` and `notin`
//! also match objects without the key, a bare key means "exists", `!key` "does not exist".

use crate::model::{LabelSelector, LabelSelectorRequirement};

/// Parses a label selector. Errors read as kubectl prints them.
pub fn parse_label_selector(text: &str) -> Result<LabelSelector, String> {
    let mut selector = LabelSelector::default();
    for term in split_terms(text)? {
        let term = term.trim();
        if term.is_empty() {
            if text.trim().is_empty() {
                continue;
            }
            return Err(requirement_error("found ',', expected: identifier"));
        }
        parse_term(term, &mut selector)?;
    }
    Ok(selector)
}

fn requirement_error(detail: &str) -> String {
    format!("error: unable to parse requirement: {detail}")
}

/// Splits on commas that are not inside `( )`.
fn split_terms(text: &str) -> Result<Vec<&str>, String> {
    let mut terms = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return Err(requirement_error("found ')', expected: identifier"));
        }
    }
    if depth != 0 {
        return Err(requirement_error("found '', expected: ',', ')'"));
    }
    terms.push(&text[start..]);
    Ok(terms)
}

fn parse_term(term: &str, selector: &mut LabelSelector) -> Result<(), String> {
    let requirement = |key: &str, operator: &str, values: Vec<String>| -> Result<LabelSelectorRequirement, String> {
        check_key(key)?;
        for v in &values {
            check_value(v)?;
        }
        Ok(LabelSelectorRequirement { key: key.to_string(), operator: operator.into(), values })
    };
    if let Some(key) = term.strip_prefix('!') {
        let r = requirement(key.trim(), "DoesNotExist", vec![])?;
        selector.match_expressions.push(r);
        return Ok(());
    }
    for (op, operator) in [("!=", "NotIn"), ("==", "="), ("=", "=")] {
        if let Some((key, value)) = term.split_once(op) {
            let (key, value) = (key.trim(), value.trim());
            if operator == "=" {
                check_key(key)?;
                check_value(value)?;
                selector.match_labels.insert(key.to_string(), value.to_string());
            } else {
                let r = requirement(key, operator, vec![value.to_string()])?;
                selector.match_expressions.push(r);
            }
            return Ok(());
        }
    }
    let words: Vec<&str> = term.splitn(2, char::is_whitespace).collect();
    if let [key, rest] = words[..] {
        let rest = rest.trim();
        let (operator, list) = if let Some(l) = rest.strip_prefix("notin") {
            ("NotIn", l)
        } else if let Some(l) = rest.strip_prefix("in") {
            ("In", l)
        } else {
            return Err(requirement_error(&format!("found '{rest}', expected: in, notin, =, ==, !=, gt, lt")));
        };
        let inner =
            list.trim().strip_prefix('(').and_then(|l| l.strip_suffix(')')).ok_or_else(|| requirement_error("found '', expected: '('"))?;
        let values: Vec<String> = inner.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect();
        let r = requirement(key, operator, values)?;
        selector.match_expressions.push(r);
        return Ok(());
    }
    let r = requirement(term, "Exists", vec![])?;
    selector.match_expressions.push(r);
    Ok(())
}

/// A label key: an optional DNS-subdomain prefix and a name of at most 63 characters.
fn check_key(key: &str) -> Result<(), String> {
    let name = key.rsplit_once('/').map(|(_, n)| n).unwrap_or(key);
    let prefix_ok = key.rsplit_once('/').is_none_or(|(p, _)| crate::api::validation::is_dns1123_subdomain(p));
    if name.is_empty() || name.len() > 63 || !prefix_ok || !is_label_value(name) {
        return Err(format!(
            "error: unable to parse requirement: <nil>: Invalid value: {key:?}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        ));
    }
    Ok(())
}

fn check_value(value: &str) -> Result<(), String> {
    if value.is_empty() || (value.len() <= 63 && is_label_value(value)) {
        return Ok(());
    }
    Err(format!(
        "error: unable to parse requirement: values[0][{value}]: Invalid value: {value:?}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    ))
}

fn is_label_value(v: &str) -> bool {
    let b = v.as_bytes();
    !b.is_empty()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

pub use crate::model::FieldSelector;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StringMap;

    fn labels(pairs: &[(&str, &str)]) -> StringMap {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn every_operator_of_the_selector_language_parses() {
        let s = parse_label_selector("app=web,tier!=db,env in (prod, staging),!canary,release").unwrap();
        assert!(s.matches(&labels(&[("app", "web"), ("env", "prod"), ("release", "1")])));
        assert!(!s.matches(&labels(&[("app", "web"), ("env", "prod")])), "release must exist");
        assert!(!s.matches(&labels(&[("app", "web"), ("env", "prod"), ("release", "1"), ("canary", "y")])));
        assert!(!s.matches(&labels(&[("app", "web"), ("env", "dev"), ("release", "1")])));
        assert!(!s.matches(&labels(&[("app", "web"), ("tier", "db"), ("env", "prod"), ("release", "1")])));
        assert_eq!(parse_label_selector("app==web").unwrap().match_labels, labels(&[("app", "web")]));
        assert!(parse_label_selector("").unwrap().is_empty());
    }

    #[test]
    fn malformed_selectors_are_rejected() {
        for bad in ["app in (a", "app=(", "a b c", "-bad=x", "app=va lue", ",", "app=x,"] {
            let err = parse_label_selector(bad).unwrap_err();
            assert!(err.starts_with("error: unable to parse requirement: "), "{bad}: {err}");
        }
    }

    #[test]
    fn field_selectors_filter_on_supported_fields() {
        let f = FieldSelector::parse("spec.nodeName=node-1,status.phase!=Failed", "/v1, Resource=pods", &["spec.nodeName", "status.phase"])
            .unwrap();
        assert!(f.matches(&serde_json::json!({"spec": {"nodeName": "node-1"}, "status": {"phase": "Running"}})));
        assert!(!f.matches(&serde_json::json!({"spec": {"nodeName": "node-2"}})));
        let err = FieldSelector::parse("spec.foo=x", "/v1, Resource=pods", &["spec.nodeName"]).unwrap_err();
        assert!(err.ends_with("field label not supported: spec.foo"), "{err}");
    }
}
