//! The layout shared by the learned tables (`data/cvt.tsv`, `data/math.tsv`, `data/ops.tsv`):
//! tab-separated rows, a key first, then fixed fields, then one template per SM. The SMs are
//! named by the last comment line (`# variant\tsm_80\tsm_86\t...`), so a table learned for
//! another SM needs no code change here: the generators in `xtask` write the header from the
//! SMs they learned.

use std::collections::HashMap;

/// One learned table: its SMs (the header's `sm_NN` columns, in order) and its rows.
pub(crate) struct Table<R> {
    sms: Vec<u16>,
    pub(crate) rows: HashMap<String, (R, Vec<Option<String>>)>,
}

impl<R> Table<R> {
    /// Parses `text`. `fixed` is the number of fields between the key and the first SM
    /// column; `row` builds a row's value from them (`None` drops the row); `keep` filters
    /// templates (one it refuses reads as `-`). Templates are stored with `; ` turned into
    /// line breaks (the sequence syntax of `seq.rs`).
    pub(crate) fn parse(
        text: &str,
        fixed: usize,
        row: impl Fn(&[&str]) -> Option<R>,
        keep: impl Fn(&str) -> bool,
    ) -> Table<R> {
        let header = text
            .lines()
            .rfind(|l| l.starts_with('#') && l.contains('\t'))
            .unwrap_or("");
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
        let rows = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .filter_map(|l| {
                let fields: Vec<&str> = l.split('\t').collect();
                let key = fields.first()?.to_string();
                let value = row(fields.get(1..1 + fixed)?)?;
                let cols = (0..sms.len())
                    .map(|k| {
                        fields
                            .get(1 + fixed + k)
                            .filter(|t| **t != "-" && keep(t))
                            .map(|t| t.replace("; ", "\n"))
                    })
                    .collect();
                Some((key, (value, cols)))
            })
            .collect();
        Table { sms, rows }
    }

    /// The row of `key` and its template for `sm_<number>`, if the table has both.
    pub(crate) fn get(&self, key: &str, number: u16) -> Option<(&R, &str)> {
        let col = self.sms.iter().position(|&n| n == number)?;
        let (value, cols) = self.rows.get(key)?;
        Some((value, cols[col].as_deref()?))
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
            assert!(
                t.rows.values().all(|(_, c)| c.len() == t.sms().len()),
                "a row without a column per SM"
            );
        }
    }
}
