//! The files of `examples/operators/`, built in: lesson 11's resource, objects and operator
//! (its solution and the learner's starting file), and the operator templates a learner may
//! start from. One copy of each file — the one in `examples/operators/`, which real kopf runs
//! in the tests — reaches the lessons, the page and the native check.
//!
//! Two lists, so that what a lesson does not name is not linked into the page unless the page
//! asks for the templates itself.

/// The files lessons may name (`examples:` and `operator:` in a lesson).
pub const LESSON_FILES: [(&str, &str); 5] = [
    ("website-crd.yaml", include_str!("../../examples/operators/website-crd.yaml")),
    ("shop.yaml", include_str!("../../examples/operators/shop.yaml")),
    ("shop-v2.yaml", include_str!("../../examples/operators/shop-v2.yaml")),
    ("website.py", include_str!("../../examples/operators/website.py")),
    ("website_start.py", include_str!("../../examples/operators/website_start.py")),
];

/// Operators to start from besides the lesson's: a config copier and a scheduled scaler.
pub const TEMPLATES: [(&str, &str); 2] = [
    ("config_copy.py", include_str!("../../examples/operators/config_copy.py")),
    ("scheduled_scaling.py", include_str!("../../examples/operators/scheduled_scaling.py")),
];

/// A file lessons may name, by its name in `examples/operators/`.
pub fn lesson_file(name: &str) -> Option<&'static str> {
    LESSON_FILES.iter().find(|(n, _)| *n == name).map(|(_, text)| *text)
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
        let mut built_in: Vec<String> = LESSON_FILES.iter().chain(TEMPLATES.iter()).map(|(n, _)| n.to_string()).collect();
        built_in.sort();
        assert_eq!(built_in, on_disk, "examples/operators and the built-in lists agree");
    }
}
