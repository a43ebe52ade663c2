//! The layout shared by the learned tables (`data/cvt.tsv`, `data/math.tsv`, `data/ops.tsv`):
//! tab-separated rows, a key first, then fixed fields, then one template per SM. The SMs are
//! named by the last comment line (`# variant\tsm_80\tsm_86\t...`), so a table learned for
//! another SM needs no code change here: the generators in `xtask` write the header from the
//! SMs they learned.

use std::collections::HashMap;
use std::sync::Mutex;

/// A row: its fixed fields' value and one template per SM (`None`: none learned, or refused).
pub(crate) type Row<R> = (R, Vec<Option<String>>);

type RowFn<R> = Box<dyn Fn(&[&str]) -> Option<R> + Send + Sync>;
type KeepFn = Box<dyn Fn(&str) -> bool + Send + Sync>;

/// One learned table: its SMs (the header's `sm_NN` columns, in order) and its rows.
///
/// The text is not parsed up front (`data/ops.tsv` is 4 MB, and a kernel asks for a handful
/// of rows): the rows are sorted by key (the generators write them so; the tests check it),
/// so [`Table::get`] finds a key's line by binary search in the text and parses that row on
/// its first use.
pub(crate) struct Table<R: 'static> {
    /// The rows' text: every line after the header.
    body: &'static str,
    sms: Vec<u16>,
    fixed: usize,
    row: RowFn<R>,
    keep: KeepFn,
    /// Rows parsed so far, by the offset of their line in `body` (`None`: the row builder
    /// dropped it). Parsed rows live as long as the process, like the table.
    parsed: Mutex<HashMap<usize, Option<&'static Row<R>>>>,
}

impl<R: Send + Sync + 'static> Table<R> {
    /// A table over `text`. `fixed` is the number of fields between the key and the first SM
    /// column; `row` builds a row's value from them (`None` drops the row); `keep` filters
    /// templates (one it refuses reads as `-`). Templates are stored with `; ` turned into
    /// line breaks (the sequence syntax of `seq.rs`).
    pub(crate) fn parse(
        text: &'static str,
        fixed: usize,
        row: impl Fn(&[&str]) -> Option<R> + Send + Sync + 'static,
        keep: impl Fn(&str) -> bool + Send + Sync + 'static,
    ) -> Table<R> {
        // The header: the leading comment lines, the last of which names the columns.
        let mut body_start = 0;
        let mut header = "";
        for line in text.split_inclusive('\n') {
            if !line.starts_with('#') && !line.trim().is_empty() {
                break;
            }
            if line.starts_with('#') && line.contains('\t') {
                header = line.trim_end();
            }
            body_start += line.len();
        }
        let sms: Vec<u16> = header
            .split('\t')
            .skip(1 + fixed)
            .map(|c| {
                c.trim()
                    .strip_prefix("sm_")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0)
            })
            .collect();
        Table {
            body: &text[body_start..],
            sms,
            fixed,
            row: Box::new(row),
            keep: Box::new(keep),
            parsed: Mutex::new(HashMap::new()),
        }
    }

    /// The line starting at byte `at` of the body, without its line break.
    fn line_at(&self, at: usize) -> &'static str {
        let rest = &self.body[at..];
        rest.split('\n').next().unwrap_or("")
    }

    /// The offset of the line whose key is `key`, by binary search over the sorted lines.
    fn find(&self, key: &str) -> Option<usize> {
        let b = self.body.as_bytes();
        let (mut lo, mut hi) = (0usize, b.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            // The start of the line holding `mid` (never before `lo`, a line start).
            let start = b[lo..mid]
                .iter()
                .rposition(|&c| c == b'\n')
                .map_or(lo, |k| lo + k + 1);
            let line = self.line_at(start);
            let k = line.split('\t').next().unwrap_or("");
            match k.cmp(key) {
                std::cmp::Ordering::Equal if !line.trim().is_empty() => return Some(start),
                std::cmp::Ordering::Less => lo = start + line.len() + 1,
                _ => hi = start,
            }
        }
        None
    }

    /// The row on the line at `at`, parsed on first use.
    fn row_at(&self, at: usize) -> Option<&'static Row<R>> {
        let mut parsed = self.parsed.lock().expect("not poisoned");
        *parsed.entry(at).or_insert_with(|| {
            let fields: Vec<&str> = self.line_at(at).split('\t').collect();
            let value = (self.row)(fields.get(1..1 + self.fixed)?)?;
            let cols = (0..self.sms.len())
                .map(|k| {
                    fields
                        .get(1 + self.fixed + k)
                        .filter(|t| **t != "-" && (self.keep)(t))
                        .map(|t| t.replace("; ", "\n"))
                })
                .collect();
            Some(&*Box::leak(Box::new((value, cols))))
        })
    }

    /// The row of `key` and its template for `sm_<number>`, if the table has both.
    pub(crate) fn get(&self, key: &str, number: u16) -> Option<(&R, &str)> {
        let col = self.sms.iter().position(|&n| n == number)?;
        let (value, cols) = self.row_at(self.find(key)?)?;
        Some((value, cols[col].as_deref()?))
    }

    /// Every row (key and row), parsed: for tests.
    #[cfg(test)]
    pub(crate) fn rows(&self) -> Vec<(&'static str, &'static Row<R>)> {
        let mut out = Vec::new();
        let mut at = 0;
        for line in self.body.split_inclusive('\n') {
            if !line.trim().is_empty()
                && let Some(r) = self.row_at(at)
            {
                out.push((line.split('\t').next().unwrap_or(""), r));
            }
            at += line.len();
        }
        out
    }

    /// The SMs the table has columns for.
    #[cfg(test)]
    pub(crate) fn sms(&self) -> &[u16] {
        &self.sms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_come_from_the_header() {
        let text = "# generated\n# key\tshape\tsm_80\tsm_89\na\tw>w\tMOV %d, %a\t-\n";
        let t = Table::parse(text, 1, |f| Some(f[0].to_string()), |_| true);
        assert_eq!(t.sms(), &[80, 89]);
        assert_eq!(t.get("a", 80), Some((&"w>w".to_string(), "MOV %d, %a")));
        assert_eq!(t.get("a", 89), None);
        assert_eq!(t.get("a", 90), None);
        assert_eq!(t.get("b", 80), None);
    }

    #[test]
    fn every_learned_table_names_its_sms() {
        for text in [
            include_str!("../data/cvt.tsv"),
            include_str!("../data/math.tsv"),
            include_str!("../data/ops.tsv"),
        ] {
            let fixed = usize::from(text.contains("\tshapes"));
            let t = Table::parse(text, fixed, |_| Some(()), |_| true);
            assert!(
                !t.sms().is_empty() && !t.sms().contains(&0),
                "{:?}",
                t.sms()
            );
            let rows = t.rows();
            assert!(
                rows.iter().all(|(_, (_, c))| c.len() == t.sms().len()),
                "a row without a column per SM"
            );
            // Sorted and unique by key: `Table::get` finds rows by binary search.
            assert!(
                rows.windows(2).all(|w| w[0].0 < w[1].0),
                "rows not sorted by key"
            );
            // Every row found by its key.
            for (key, row) in &rows {
                let at = t.find(key).expect("found");
                assert!(std::ptr::eq(t.row_at(at).expect("a row"), *row), "{key}");
            }
            assert_eq!(t.find("zzz.not.a.key"), None);
            assert_eq!(t.find(""), None);
        }
    }
}
