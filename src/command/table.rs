//! Column alignment exactly as kubectl does it: a port of Go's `text/tabwriter`.
//!
//! kubectl never pads columns itself. `kubectl get` writes tab-separated rows into a tabwriter
//! made by cli-runtime's `printers.GetNewTabWriter` (minwidth 6, tabwidth 4, padding 3, pad with
//! spaces); `kubectl describe` and `rollout history` use `tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)`.
//! The alignment rules that learners see every day follow from the algorithm, not from widths:
//! a column is as wide as its widest cell plus the padding, the last cell of a line is never
//! padded, a line without any tab ends the current block (so the next lines align on their
//! own), and an explicit flush (describe's Events table) starts a fresh block. Reproducing the
//! algorithm reproduces all of that. `kubectl get` (and so `get -w`) writes through liggitt's fork
//! of the tabwriter with its `RememberWidths` flag: a column never narrows after a flush, so a
//! watch's rows line up with the list above them and with each other, widening as they must.

/// One tab-terminated (or line-ending) cell.
#[derive(Clone, Debug, Default)]
struct Cell {
    text: String,
    /// Width in characters (Go counts UTF-8 runes).
    width: usize,
}

/// A Go `tabwriter.Writer` with flags 0 and a space pad character.
#[derive(Clone, Debug)]
pub struct TabWriter {
    minwidth: usize,
    padding: usize,
    out: String,
    lines: Vec<Vec<Cell>>,
    cell: String,
    widths: Vec<usize>,
    /// `RememberWidths`: the widest each column has been, kept across flushes.
    remember: Option<Vec<usize>>,
}

impl TabWriter {
    /// `tabwriter.NewWriter(out, minwidth, _tabwidth, padding, ' ', 0)`. With a space pad
    /// character the tab width never matters, so it is not a parameter.
    pub fn new(minwidth: usize, padding: usize) -> Self {
        TabWriter {
            minwidth,
            padding,
            out: String::new(),
            lines: vec![Vec::new()],
            cell: String::new(),
            widths: Vec::new(),
            remember: None,
        }
    }

    /// The writer `kubectl get` prints tables through (cli-runtime `GetNewTabWriter`: minwidth 6,
    /// padding 3, `RememberWidths`).
    pub fn for_tables() -> Self {
        TabWriter { remember: Some(Vec::new()), ..Self::new(6, 3) }
    }

    /// Flushes and takes what was written so far, keeping the remembered widths for what follows.
    pub fn take(&mut self) -> String {
        self.flush();
        std::mem::take(&mut self.out)
    }

    /// The writer `kubectl describe` and `rollout history` use (`tabbedString`).
    pub fn for_describe() -> Self {
        Self::new(0, 2)
    }

    pub fn write(&mut self, text: &str) {
        for ch in text.chars() {
            match ch {
                '\t' | '\n' => {
                    let ncells = self.terminate_cell();
                    if ch == '\n' {
                        self.lines.push(Vec::new());
                        // A line of one cell cannot influence later columns: Go flushes here.
                        if ncells == 1 {
                            self.flush_buffered();
                        }
                    }
                }
                c => self.cell.push(c),
            }
        }
    }

    /// Formats and emits everything buffered (Go's `Flush`).
    pub fn flush(&mut self) {
        if !self.cell.is_empty() {
            self.terminate_cell();
        }
        self.flush_buffered();
    }

    /// Flushes and returns all output written so far.
    pub fn finish(mut self) -> String {
        self.flush();
        self.out
    }

    fn terminate_cell(&mut self) -> usize {
        let text = std::mem::take(&mut self.cell);
        let width = text.chars().count();
        let line = self.lines.last_mut().expect("there is always a current line");
        line.push(Cell { text, width });
        line.len()
    }

    fn flush_buffered(&mut self) {
        let n = self.lines.len();
        self.format(0, n);
        self.lines = vec![Vec::new()];
        self.widths.clear();
    }

    /// Go's recursive `format`: finds each column block, sizes it, and recurses to the right.
    fn format(&mut self, mut line0: usize, line1: usize) {
        let column = self.widths.len();
        let mut this = line0;
        while this < line1 {
            if column + 1 >= self.lines[this].len() {
                this += 1;
                continue;
            }
            self.write_lines(line0, this);
            line0 = this;
            let mut width = self.minwidth;
            while this < line1 && column + 1 < self.lines[this].len() {
                width = width.max(self.lines[this][column].width + self.padding);
                this += 1;
            }
            if let Some(max) = &mut self.remember {
                // liggitt/tabwriter's RememberWidths, step for step.
                if max.len() < self.widths.len() {
                    max.extend_from_slice(&self.widths[max.len()..]);
                }
                if max.len() == column {
                    max.push(width);
                } else if max[column] > width {
                    width = max[column];
                } else {
                    max[column] = width;
                }
            }
            self.widths.push(width);
            self.format(line0, this);
            self.widths.pop();
            line0 = this;
        }
        self.write_lines(line0, line1);
    }

    fn write_lines(&mut self, line0: usize, line1: usize) {
        for i in line0..line1 {
            for (j, cell) in self.lines[i].iter().enumerate() {
                self.out.push_str(&cell.text);
                if let Some(&w) = self.widths.get(j) {
                    let pad = w.saturating_sub(cell.width);
                    self.out.extend(std::iter::repeat_n(' ', pad));
                }
            }
            if i + 1 < self.lines.len() {
                self.out.push('\n');
            }
        }
    }
}

/// Aligns tab-separated text in one go with the given writer settings.
pub fn tabbed(minwidth: usize, padding: usize, text: &str) -> String {
    let mut w = TabWriter::new(minwidth, padding);
    w.write(text);
    w.finish()
}

/// A `kubectl get` table: header and rows, each cell joined by tabs, aligned as kubectl aligns.
pub fn render_table(header: &[&str], rows: &[Vec<String>], with_header: bool) -> String {
    let mut w = TabWriter::for_tables();
    if with_header {
        w.write(&header.join("\t"));
        w.write("\n");
    }
    for row in rows {
        w.write(&row.join("\t"));
        w.write("\n");
    }
    w.finish()
}

/// `describe`'s PrefixWriter: each level indents two spaces. Normally all output goes through
/// one tabwriter; `raw()` writes tabs through untouched, as `rollout history --revision` does.
pub struct PrefixWriter {
    tw: Option<TabWriter>,
    raw: String,
}

impl Default for PrefixWriter {
    fn default() -> Self {
        PrefixWriter { tw: Some(TabWriter::for_describe()), raw: String::new() }
    }
}

impl PrefixWriter {
    pub fn new() -> Self {
        Self::default()
    }
    /// A writer without alignment: tabs stay tabs.
    pub fn raw() -> Self {
        PrefixWriter { tw: None, raw: String::new() }
    }
    fn put(&mut self, text: &str) {
        match &mut self.tw {
            Some(tw) => tw.write(text),
            None => self.raw.push_str(text),
        }
    }
    /// `w.Write(level, text)`: the text after `level` indents.
    pub fn write(&mut self, level: usize, text: &str) {
        for _ in 0..level {
            self.put("  ");
        }
        self.put(text);
    }
    /// `w.WriteLine(text)`: the text and a newline, no indent.
    pub fn line(&mut self, text: &str) {
        self.put(text);
        self.put("\n");
    }
    pub fn flush(&mut self) {
        if let Some(tw) = &mut self.tw {
            tw.flush();
        }
    }
    pub fn finish(self) -> String {
        match self.tw {
            Some(tw) => tw.finish(),
            None => self.raw,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_tables_pad_three_spaces_and_never_pad_the_last_column() {
        let rows = vec![
            vec!["web-7d9f6c5b4-abcde".to_string(), "1/1".into(), "Running".into(), "0".into(), "45s".into()],
            vec!["web-7d9f6c5b4-x".to_string(), "0/1".into(), "ContainerCreating".into(), "0".into(), "1s".into()],
        ];
        let out = render_table(&["NAME", "READY", "STATUS", "RESTARTS", "AGE"], &rows, true);
        assert_eq!(
            out,
            "NAME                  READY   STATUS              RESTARTS   AGE\n\
             web-7d9f6c5b4-abcde   1/1     Running             0          45s\n\
             web-7d9f6c5b4-x       0/1     ContainerCreating   0          1s\n"
        );
    }

    #[test]
    fn short_columns_are_at_least_six_wide() {
        // "AGE" alone would be 3 + 3; minwidth 6 is what makes "A     B" in kubectl output.
        assert_eq!(tabbed(6, 3, "A\tB\nab\tc\n"), "A     B\nab    c\n");
    }

    #[test]
    fn a_line_without_tabs_ends_the_alignment_block() {
        let text = "Name:\tweb\nNamespace:\tdefault\nContainers:\n  nginx:\n    Image:\tnginx:1.14.2\n    Port:\t80/TCP\n";
        assert_eq!(
            tabbed(0, 2, text),
            "Name:       web\nNamespace:  default\nContainers:\n  nginx:\n    Image:  nginx:1.14.2\n    Port:   80/TCP\n"
        );
    }

    #[test]
    fn column_blocks_follow_consecutive_lines_with_that_column() {
        // Go aligns a column only across consecutive lines that have a cell in it.
        let text = "a\tb\tc\nlonger\tx\nq\tr\tsss\tt\n";
        assert_eq!(tabbed(0, 1, text), "a      b c\nlonger x\nq      r sss t\n");
    }

    #[test]
    fn empty_cells_are_padded_like_any_other() {
        assert_eq!(tabbed(0, 2, "Labels:\tapp=web\n\tpod-template-hash=abc\n"), "Labels:  app=web\n         pod-template-hash=abc\n");
    }

    #[test]
    fn flush_starts_a_new_block() {
        let mut w = PrefixWriter::new();
        w.write(0, "Name:\tweb\n");
        w.flush();
        w.write(0, "Events:\n");
        w.write(1, "Type\tReason\n");
        w.write(1, "----\t------\n");
        assert_eq!(w.finish(), "Name:  web\nEvents:\n  Type  Reason\n  ----  ------\n");
    }

    #[test]
    fn widths_count_characters_not_bytes() {
        assert_eq!(tabbed(0, 1, "é\tx\nab\ty\n"), "é  x\nab y\n");
    }
}
