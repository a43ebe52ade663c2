//! Byte offsets ↔ LSP positions (line, UTF-16 code unit), as the protocol's default
//! `positionEncoding` counts them.

use db::{TextRange, TextSize};
use lsp_types::{Position, Range};

/// Line starts of one text, for converting positions both ways.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    text: std::sync::Arc<str>,
    /// Byte offset of the start of each line.
    starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        LineIndex {
            text: std::sync::Arc::from(text),
            starts,
        }
    }

    /// The position of byte offset `offset` (clamped to the text; an offset inside a
    /// character counts from the character's start).
    pub fn position(&self, offset: TextSize) -> Position {
        let offset = u32::from(offset).min(self.text.len() as u32);
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line] as usize;
        let mut end = offset as usize;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let character = self.text[start..end].encode_utf16().count() as u32;
        Position::new(line as u32, character)
    }

    pub fn range(&self, range: TextRange) -> Range {
        Range::new(self.position(range.start()), self.position(range.end()))
    }

    /// The byte offset of a position; `None` past the last line (a client out of sync). A
    /// column past the end of its line means the line's end (the protocol's rule); one
    /// inside a surrogate pair counts from the character's start.
    pub fn offset(&self, position: Position) -> Option<TextSize> {
        let line = position.line as usize;
        let start = *self.starts.get(line)? as usize;
        let mut end = self
            .starts
            .get(line + 1)
            .map_or(self.text.len(), |&s| s as usize);
        let content = &self.text[start..end];
        end -= content.len() - content.trim_end_matches(['\n', '\r']).len();
        let mut units = 0u32;
        for (i, c) in self.text[start..end].char_indices() {
            if units >= position.character {
                return Some(TextSize::from((start + i) as u32));
            }
            units += c.len_utf16() as u32;
        }
        Some(TextSize::from(end as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_round_trip() {
        let text = "add.u32 %r1;\n// π and 😀 here\nret;";
        let index = LineIndex::new(text);
        for (offset, _) in text.char_indices() {
            let offset = TextSize::from(offset as u32);
            let p = index.position(offset);
            assert_eq!(index.offset(p), Some(offset), "{p:?}");
        }
        // `😀` is two UTF-16 units: the `h` of `here` is column 12 of line 1.
        let h = text.find("here").unwrap() as u32;
        assert_eq!(index.position(TextSize::from(h)), Position::new(1, 12));
        assert_eq!(index.offset(Position::new(3, 0)), None);
        assert_eq!(index.offset(Position::new(0, 99)), Some(TextSize::from(12)));
        let end = Some(TextSize::from(text.len() as u32));
        assert_eq!(index.offset(Position::new(2, 4)), end);
        assert_eq!(index.offset(Position::new(2, 9)), end);
    }
}
