//! The files of `examples/operators/`, built in: lesson 11's resource, objects and operator
//! (its solution and the learner's starting file), and the operator templates a learner may
//! start from. One copy of each file — the one in `examples/operators/`, which real kopf runs
//! in the tests — reaches the lessons, the page and the native check.
//!
//! Two lists, so that what a lesson does not name is not linked into the page unless the page
//! asks for the templates itself.

/// The files lessons may name (`examples:` and `operator:` in a lesson).
pub const LESSON_FILE_NAMES: [&str; 5] = ["website-crd.yaml", "shop.yaml", "shop-v2.yaml", "website.py", "website_start.py"];

/// Their texts, in the same order. Natively only: the page fetches the files a lesson names from
/// its own build ([`url`]; Trunk copies `examples/operators/` to `dist/operators/`) once the
/// lesson's own file has arrived, so none of this text is in the page's first load (the wasm
/// splitter moves code, never data).
#[cfg(not(target_arch = "wasm32"))]
const LESSON_FILE_TEXTS: [&str; 5] = [
    include_str!("../../examples/operators/website-crd.yaml"),
    include_str!("../../examples/operators/shop.yaml"),
    include_str!("../../examples/operators/shop-v2.yaml"),
    include_str!("../../examples/operators/website.py"),
    include_str!("../../examples/operators/website_start.py"),
];

/// Operators to start from besides the lesson's: a config copier and a scheduled scaler.
pub const TEMPLATE_NAMES: [&str; 2] = ["config_copy.py", "scheduled_scaling.py"];

/// Their texts, natively (the page fetches them as it fetches the lesson's files).
#[cfg(not(target_arch = "wasm32"))]
const TEMPLATE_TEXTS: [&str; 2] =
    [include_str!("../../examples/operators/config_copy.py"), include_str!("../../examples/operators/scheduled_scaling.py")];

/// A file lessons may name, by its name in `examples/operators/` (natively; None in the page,
/// which fetches it from [`url`]).
pub fn lesson_file(name: &str) -> Option<&'static str> {
    let at = LESSON_FILE_NAMES.iter().position(|n| *n == name)?;
    #[cfg(not(target_arch = "wasm32"))]
    return Some(LESSON_FILE_TEXTS[at]);
    #[cfg(target_arch = "wasm32")]
    {
        let _ = at;
        None
    }
}

/// A template, by its name in `examples/operators/` (natively; the page fetches it from [`url`]).
pub fn template(name: &str) -> Option<&'static str> {
    let at = TEMPLATE_NAMES.iter().position(|n| *n == name)?;
    #[cfg(not(target_arch = "wasm32"))]
    return Some(TEMPLATE_TEXTS[at]);
    #[cfg(target_arch = "wasm32")]
    {
        let _ = at;
        None
    }
}

/// Where the page's build keeps an example file, relative to the page.
pub fn url(name: &str) -> String {
    format!("operators/{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_file_is_built_in_once() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/operators");
        let mut on_disk: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        on_disk.sort();
        let mut built_in: Vec<String> = LESSON_FILE_NAMES.iter().chain(TEMPLATE_NAMES.iter()).map(|n| n.to_string()).collect();
        built_in.sort();
        assert_eq!(built_in, on_disk, "examples/operators and the built-in lists agree");
        for name in LESSON_FILE_NAMES {
            let text = std::fs::read_to_string(format!("{dir}/{name}")).unwrap();
            assert_eq!(lesson_file(name), Some(text.as_str()), "{name}: the text in its slot");
        }
        for name in TEMPLATE_NAMES {
            let text = std::fs::read_to_string(format!("{dir}/{name}")).unwrap();
            assert_eq!(template(name), Some(text.as_str()), "{name}: the text in its slot");
        }
    }
}
